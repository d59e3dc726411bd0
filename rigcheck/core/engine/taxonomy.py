"""The rule taxonomy, defined once: a code's prefix names its family (``PWR001`` is ``power``).

The family is where a rule lives and how reports group it: SARIF tags, JUnit class names
(``rigcheck.power``), the rule index in ``docs/rules/``. rigcheck's own prefixes are listed here;
a plugin's own prefix belongs to the first segment of its checker's name (``site.consumer-gpus``
is ``site``), else to the prefix in lower case.
"""

from __future__ import annotations

#: rigcheck's rule prefixes and their families. The core's own (SPEC, SUP, LINT, ENGINE, CONFIG,
#: DRIFT) are about the input and the run; the rest are families of built-in checkers.
FAMILIES: dict[str, str] = {
    "BW": "throughput",
    "CONFIG": "config",
    "CUDA": "cuda",
    "DRIFT": "drift",
    "ENGINE": "engine",
    "EVD": "evidence",
    "ICX": "interconnect",
    "LINT": "lint",
    "MEM": "memory",
    "NET": "network",
    "PLT": "platform",
    "PWR": "power",
    "REL": "reliability",
    "ROCM": "rocm",
    "SPEC": "spec",
    "STO": "storage",
    "SUP": "suppression",
}


def code_prefix(code: str) -> str:
    """``PWR`` for ``PWR001``."""
    return code.rstrip("0123456789") or code


def rule_family(code: str, checker: str = "") -> str:
    """``power`` for PWR001; for a plugin's prefix, the first segment of its checker's name."""
    prefix = code_prefix(code)
    if prefix in FAMILIES:
        return FAMILIES[prefix]
    if "." in checker:
        return checker.split(".", 1)[0]
    return prefix.lower()

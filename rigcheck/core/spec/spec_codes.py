"""The codes of the SPEC rules (what is wrong with an input file), as constants: the loader, the
discovery, lint and the estimators refer to them by name. Their rules (docs, default severity) are in
:mod:`rigcheck.core.spec.spec_rules`; this module imports nothing, so that anything may import it."""

from __future__ import annotations

DUPLICATE_KEY = "SPEC001"
YAML11_BOOLEAN = "SPEC002"
OCTAL_LOOKING_NUMBER = "SPEC003"
UNSAFE_TAG = "SPEC004"
ALIAS_BOMB = "SPEC005"
DECIMAL_MEMORY_SIZE = "SPEC006"
INVALID_VALUE = "SPEC010"
UNKNOWN_FIELD = "SPEC011"
UNREADABLE_FILE = "SPEC012"
UNKNOWN_HARDWARE = "SPEC013"
OUTSIDE_ROOT = "SPEC014"

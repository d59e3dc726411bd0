"""The tracing estimator: one real step of a workload on fake tensors (``rigcheck estimate --trace``).

The analytic estimate (``rigcheck.core.estimate.memory``) is what every check uses; this package
runs the model code itself - transformers' modelling code, PEFT's adapters, bitsandbytes' 4-bit
layers, PyTorch's FSDP2 - on ``FakeTensorMode`` tensors on the CPU and counts what is alive at the
peak. It is the analytic model's oracle (``benchmarks/trace_grid.py``, ``tests/data/traced/``).

It needs the extra ``trace`` (torch, transformers, peft), plus bitsandbytes for QLoRA and NF4/FP4
(``pip install bitsandbytes``: not every package index carries it), and is imported only by
``estimate --trace`` and the grid benchmark, never by ``check`` or ``lint``::

    from rigcheck.core.estimate.estimate import estimate_workload
    from rigcheck.trace import trace_memory

    estimate = estimate_workload(workload)
    traced = trace_memory(estimate.inputs)           # a TraceResult
    traced.peak_gib, traced.categories["activations"]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rigcheck.core.engine.errors import UsageError
from rigcheck.core.estimate.memory.quantized import FOUR_BIT

if TYPE_CHECKING:
    from rigcheck.core.estimate.memory import MemoryInputs
    from rigcheck.trace.result import TraceResult

#: What ``pip install 'rigcheck[trace]'`` brings, by import name; bitsandbytes (QLoRA, NF4/FP4 only) is
#: not in the extra and is installed on its own.
REQUIRED = ("torch", "transformers", "peft")
INSTALL_HINT = (
    "pip install 'rigcheck[trace]' (torch, transformers, peft); "
    "QLoRA and NF4/FP4 also need pip install bitsandbytes"
)


def missing_modules(names: tuple[str, ...] = REQUIRED) -> list[str]:
    """The trace extra's modules that cannot be found (nothing is imported)."""
    import importlib.util

    missing = []
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def trace_memory(inputs: MemoryInputs, *, progress: Any = None) -> TraceResult:
    """Trace one step of ``inputs`` (see :mod:`rigcheck.trace.step`). Raises :class:`UsageError`
    (one line, exit code 2) without the extra or for a workload the tracer cannot run."""
    four_bit = inputs.task == "qlora" or inputs.quantization in FOUR_BIT
    missing = missing_modules(REQUIRED + (("bitsandbytes",) if four_bit else ()))
    if missing:
        raise UsageError(f"rigcheck estimate --trace needs {', '.join(missing)}: {INSTALL_HINT}")
    from rigcheck.trace.step import trace_step

    return trace_step(inputs, progress=progress)

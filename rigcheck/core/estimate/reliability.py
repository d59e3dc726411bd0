"""Failure arithmetic shared by the REL checkers (docs/research/rules_facts.md REL-1, REL-2, REL-4, REL-5).

- A job's mean time between interruptions: ``M = 1 / (lambda x GPUs)``, with lambda per GPU-hour
  from Llama 3 (419 unexpected interruptions on 16,384 H100s in 54 days, arXiv:2407.21783) or
  OPT-175B as the pessimistic prior.
- Young (1974): the checkpoint interval that loses the least time is ``tau = sqrt(2 delta M)`` for a
  checkpoint that takes ``delta`` to write; Daly (2006) adds the higher-order terms.
- Expected share of the run lost: ``delta / I + (I / 2 + R) / M`` for an interval ``I`` and a
  restart time ``R``: the writes, plus half an interval of work and a restart per failure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def failure_rate(workload: Any, facts: Mapping[str, Any]) -> tuple[float, str]:
    """Interruptions per GPU-hour, and where the number comes from."""
    run = workload.run
    if run is not None and run.failure_rate_per_gpu_hour:
        return float(run.failure_rate_per_gpu_hour), "run.failure_rate_per_gpu_hour"
    prior = run.failure_prior if run is not None else "default"
    rate = float(facts["failure_rate"][prior])
    label = "Llama 3 on H100s" if prior == "default" else "OPT-175B, pessimistic"
    return rate, f"{prior} prior ({label})"


def job_mtbf_hours(rate_per_gpu_hour: float, gpus: int) -> float:
    """``1 / (lambda x n)``: 1.97e-5 per GPU-hour on 16,384 GPUs gives 3.1 h."""
    return 1.0 / (rate_per_gpu_hour * gpus)


def young_tau(write_seconds: float, mtbf_seconds: float) -> float:
    """Young (1974): the optimum checkpoint interval is sqrt(2 delta M)."""
    return math.sqrt(2 * write_seconds * mtbf_seconds)


def young_daly_tau(write_seconds: float, mtbf_seconds: float) -> float:
    """Daly (2006): sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + delta / 18M] - delta for delta < 2M, else M."""
    if write_seconds >= 2 * mtbf_seconds:
        return mtbf_seconds
    ratio = write_seconds / (2 * mtbf_seconds)
    return (
        math.sqrt(2 * write_seconds * mtbf_seconds) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - write_seconds
    )


def lost_fraction(interval_s: float, write_s: float, mtbf_s: float, restart_s: float) -> float:
    """Expected share of the run lost to writing checkpoints and to failures: delta/I + (I/2 + R)/M."""
    return write_s / interval_s + (interval_s / 2 + restart_s) / mtbf_s

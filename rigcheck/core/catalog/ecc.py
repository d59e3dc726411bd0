"""Whether a GPU's memory is ECC-protected as the rig configures it (docs/research/rules_facts.md REL-6).

Data-center HBM GPUs (A100, H100, H200, B200) correct memory errors on HBM and on-die SRAM with ECC
that is on by default; data-center GDDR boards (T4, A10, L40S) ship with it on; workstation GDDR
cards (RTX A6000, RTX 6000 Ada) can switch it on (``nvidia-smi -e 1``); GeForce cards have at most
an optional soft-ECC, off by default, or none.
"""

from __future__ import annotations

from rigcheck.core.engine.context import GpuView


def ecc_state(gpu: GpuView) -> tuple[bool, str]:
    """Whether the GPU's memory is ECC-protected as configured, and why rigcheck thinks so."""
    capable = gpu.facts.ecc
    if gpu.spec.ecc is not None:
        if gpu.spec.ecc and capable is False:
            return False, "set to true in the rig, but the GPU has no ECC"
        return bool(gpu.spec.ecc), f"set to {str(gpu.spec.ecc).lower()} in the rig"
    if capable is True:
        return True, "HBM ECC, on by default"
    if capable == "optional":
        if gpu.facts.segment == "datacenter":
            return True, "GDDR ECC, on by default on data-center boards"
        return False, "optional GDDR ECC, off by default"
    return False, "no ECC"

"""What the installed torch was built for: its version, bundled CUDA and compiled GPU architectures.

torch is imported inside :func:`torch_facts` only (importing it takes seconds and loads the CUDA
libraries). ``torch.version.cuda`` is ``None`` on CPU builds; ``torch.cuda.get_arch_list()`` lists the
``sm_XY`` kernels in the wheel, which decides whether a new GPU runs at all; ``torch.cuda.is_available()``
is ``False`` when the driver is too old for the bundled CUDA, or when no GPU is visible.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

#: ``torch_module=AUTO`` means "import torch if it is installed".
AUTO: Any = ...


def torch_facts(torch_module: Any = AUTO) -> dict[str, Any] | None:
    """``{"version", "cuda", "cuda_available", "arch_list", "device_capabilities", "nccl", "error"}``, or
    ``None`` when torch is not installed (or ``torch_module`` is ``None``: ``--no-torch``).

    A torch that fails to import (a broken CUDA library) gives ``{"error": ...}`` instead of raising."""
    torch = torch_module
    if torch is AUTO:
        try:
            torch = importlib.import_module("torch")
        except ImportError:
            return None
        except Exception as exc:  # a broken install: say so instead of failing the probe
            return {"error": f"import torch failed: {type(exc).__name__}: {exc}"}
    if torch is None:
        return None
    facts: dict[str, Any] = {"version": _attempt(lambda: str(torch.__version__))}
    facts["cuda"] = _attempt(lambda: torch.version.cuda)
    cuda = getattr(torch, "cuda", None)
    available = _attempt(lambda: bool(cuda.is_available())) if cuda is not None else None
    facts["cuda_available"] = available
    arch_list = _attempt(lambda: list(cuda.get_arch_list())) if cuda is not None else None
    facts["arch_list"] = [str(arch) for arch in arch_list] if arch_list else None
    capabilities = None
    if available and cuda is not None:  # available is None without torch.cuda
        count = _attempt(lambda: int(cuda.device_count())) or 0
        found = [_attempt(lambda index=index: cuda.get_device_capability(index)) for index in range(count)]
        capabilities = [f"{cap[0]}.{cap[1]}" for cap in found if cap] or None
    facts["device_capabilities"] = capabilities
    nccl = _attempt(lambda: _nccl_module(torch, cuda).version()) if cuda is not None else None
    if isinstance(nccl, tuple | list) and nccl:
        nccl = ".".join(str(part) for part in nccl)
    elif isinstance(nccl, int) and nccl > 0:  # torch < 1.9: an int such as 2708
        nccl = f"{nccl // 1000}.{nccl % 1000 // 100}.{nccl % 100}"
    facts["nccl"] = nccl or None
    return facts


def _nccl_module(torch: Any, cuda: Any) -> Any:
    """``torch.cuda.nccl``, imported when ``torch.cuda`` did not import it already."""
    nccl = getattr(cuda, "nccl", None)
    if nccl is None and isinstance(torch, types.ModuleType):
        nccl = importlib.import_module(f"{torch.__name__}.cuda.nccl")
    return nccl


def _attempt(read: Any) -> Any:
    """``read()``, or None when torch raises (a missing attribute on an old torch, a CUDA error)."""
    try:
        value = read()
    except Exception:
        return None
    return value if value not in ("", []) else None

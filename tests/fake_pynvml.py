"""A fake ``pynvml`` module for testing ``rigcheck probe`` without a GPU or a driver.

It mirrors ``pynvml.py`` of nvidia-ml-py 13.615.71 (read from the wheel on PyPI): the function names
and signatures the probe calls, the constants it reads (``NVML_TOPOLOGY_*``, ``NVML_P2P_*``,
``NVML_NVLINK_MAX_LINKS = 36``, ``NVML_FEATURE_*``) and the exception hierarchy: ``NVMLError`` with
one generated subclass per ``NVML_ERROR_*`` code (``NVMLError_NotSupported``...), built the way
``_extractNVMLErrorsAsClasses`` builds them, and raised the way ``_nvmlCheckReturn`` raises them
(``raise NVMLError(code)``, which ``NVMLError.__new__`` turns into the subclass).

Quirks of the real module that the fake keeps on purpose:

* ``NVML_P2P_CAPS_INDEX_READ = 0,`` is a one-element tuple (a stray comma in pynvml.py); passing it to
  ``nvmlDeviceGetP2PStatus`` makes ctypes raise ``ctypes.ArgumentError``, and so does the fake.
* Strings come back as ``str`` (``@convertStrBytes``, ``_PrintableStructure.__getattribute__``);
  nvidia-ml-py before 11.515 returned ``bytes``: ``bytes_strings=True`` reproduces that.
* Power values are milliwatts, memory is bytes, compute capability a ``(major, minor)`` tuple, the ECC
  mode a ``[current, pending]`` list, the CUDA driver version an int (12040 = 12.4).
* Calls before ``nvmlInit`` (or after the last ``nvmlShutdown``) raise ``NVMLError_Uninitialized``.

Each GPU is a dict; every key is optional::

    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-...", "serial": "...", "vbios": "96.00.99.00.01",
     "bus_id": "00000000:18:00.0", "pci_device_id": 0x233010DE, "memory_mib": 81559, "memory_used_mib": 0,
     "compute_capability": (9, 0), "ecc": (1, 1), "power_limit_w": 700, "power_default_w": 700,
     "power_min_w": 200, "power_max_w": 700, "pcie_gen": 5, "pcie_gen_max": 5, "pcie_gen_device_max": 5,
     "pcie_width": 16, "pcie_width_max": 16, "replay_counter": 0, "nvlinks": [1] * 18,
     "processes": [(1234, 512)],  # (pid, used MiB)
     "errors": {"nvmlDeviceGetEccMode": "NotSupported"}}

A value left out raises ``NVMLError_NotSupported`` from its function. ``errors`` names functions that
raise for this GPU, with an error given as a short name (``"NotSupported"``), a class name
(``"NVMLError_NoPermission"``) or an ``NVML_ERROR_*`` code. ``nvlinks`` lists the state of each link
(1 = ``NVML_FEATURE_ENABLED``); links past the list raise ``NVMLError_InvalidArgument``, and a GPU
without ``nvlinks`` raises ``NVMLError_NotSupported`` (GeForce cards).
"""

from __future__ import annotations

import ctypes
import string
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: The nvidia-ml-py release whose pynvml.py this fake mirrors.
MIRRORS_NVIDIA_ML_PY = "13.615.71"

MIB = 1024 * 1024

# -- constants, as in pynvml.py 13.615.71 -------------------------------------------------------------
_ERROR_CODES = {
    "NVML_SUCCESS": 0,
    "NVML_ERROR_UNINITIALIZED": 1,
    "NVML_ERROR_INVALID_ARGUMENT": 2,
    "NVML_ERROR_NOT_SUPPORTED": 3,
    "NVML_ERROR_NO_PERMISSION": 4,
    "NVML_ERROR_ALREADY_INITIALIZED": 5,
    "NVML_ERROR_NOT_FOUND": 6,
    "NVML_ERROR_INSUFFICIENT_SIZE": 7,
    "NVML_ERROR_INSUFFICIENT_POWER": 8,
    "NVML_ERROR_DRIVER_NOT_LOADED": 9,
    "NVML_ERROR_TIMEOUT": 10,
    "NVML_ERROR_IRQ_ISSUE": 11,
    "NVML_ERROR_LIBRARY_NOT_FOUND": 12,
    "NVML_ERROR_FUNCTION_NOT_FOUND": 13,
    "NVML_ERROR_CORRUPTED_INFOROM": 14,
    "NVML_ERROR_GPU_IS_LOST": 15,
    "NVML_ERROR_RESET_REQUIRED": 16,
    "NVML_ERROR_OPERATING_SYSTEM": 17,
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": 18,
    "NVML_ERROR_IN_USE": 19,
    "NVML_ERROR_MEMORY": 20,
    "NVML_ERROR_NO_DATA": 21,
    "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED": 22,
    "NVML_ERROR_INSUFFICIENT_RESOURCES": 23,
    "NVML_ERROR_FREQ_NOT_SUPPORTED": 24,
    "NVML_ERROR_ARGUMENT_VERSION_MISMATCH": 25,
    "NVML_ERROR_DEPRECATED": 26,
    "NVML_ERROR_NOT_READY": 27,
    "NVML_ERROR_GPU_NOT_FOUND": 28,
    "NVML_ERROR_INVALID_STATE": 29,
    "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED": 30,
    "NVML_ERROR_UNKNOWN": 999,
}

_ERROR_STRINGS = {
    1: "Uninitialized",
    2: "Invalid Argument",
    3: "Not Supported",
    4: "Insufficient Permissions",
    5: "Already Initialized",
    6: "Not Found",
    7: "Insufficient Size",
    8: "Insufficient External Power",
    9: "Driver Not Loaded",
    10: "Timeout",
    11: "Interrupt Request Issue",
    12: "NVML Shared Library Not Found",
    13: "Function Not Found",
    14: "Corrupted infoROM",
    15: "GPU is lost",
    16: "GPU requires restart",
    17: "The operating system has blocked the request.",
    18: "RM has detected an NVML/RM version mismatch.",
    20: "Insufficient Memory",
    999: "Unknown Error",
}

_CONSTANTS: dict[str, Any] = {
    "NVML_FEATURE_DISABLED": 0,
    "NVML_FEATURE_ENABLED": 1,
    "NVML_NVLINK_MAX_LINKS": 36,
    "NVML_NVLINK_MAX_LANES": 36,
    "NVML_TOPOLOGY_INTERNAL": 0,
    "NVML_TOPOLOGY_SINGLE": 10,
    "NVML_TOPOLOGY_MULTIPLE": 20,
    "NVML_TOPOLOGY_HOSTBRIDGE": 30,
    "NVML_TOPOLOGY_NODE": 40,
    "NVML_TOPOLOGY_CPU": 40,
    "NVML_TOPOLOGY_SYSTEM": 50,
    "NVML_P2P_CAPS_INDEX_READ": (0,),  # sic: "NVML_P2P_CAPS_INDEX_READ = 0," in pynvml.py
    "NVML_P2P_CAPS_INDEX_WRITE": 1,
    "NVML_P2P_CAPS_INDEX_NVLINK": 2,
    "NVML_P2P_CAPS_INDEX_ATOMICS": 3,
    "NVML_P2P_CAPS_INDEX_PROP": 4,
    "NVML_P2P_CAPS_INDEX_PCI": 4,
    "NVML_P2P_CAPS_INDEX_UNKNOWN": 5,
    "NVML_P2P_STATUS_OK": 0,
    "NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED": 1,
    "NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED": 1,
    "NVML_P2P_STATUS_GPU_NOT_SUPPORTED": 2,
    "NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED": 3,
    "NVML_P2P_STATUS_DISABLED_BY_REGKEY": 4,
    "NVML_P2P_STATUS_NOT_SUPPORTED": 5,
    "NVML_P2P_STATUS_UNKNOWN": 6,
    "NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE": 32,
    "NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE": 16,
}


class _FakeHandle:
    """Stands in for ``c_nvmlDevice_t`` (an opaque pointer)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"<c_nvmlDevice_t fake GPU {self.index}>"


class _Struct:
    """Stands in for ``_PrintableStructure`` results (``c_nvmlMemory_t``, ``nvmlPciInfo_t``)."""

    def __init__(self, type_name: str, **fields: Any) -> None:
        self._type_name = type_name
        self.__dict__.update(fields)

    def __str__(self) -> str:
        fields = ", ".join(f"{key}: {value}" for key, value in self.__dict__.items() if key != "_type_name")
        return f"{self._type_name}({fields})"


def make_fake_pynvml(
    gpus: Sequence[Mapping[str, Any]] = (),
    driver: str = "550.54.15",
    cuda_driver: int = 12040,
    nvml_version: str = "12.550.54.15",
    init_error: Any = None,
    topology: int | Mapping[tuple[int, int], int] | Callable[[int, int], int] | None = None,
    p2p: Mapping[Any, Any] | Callable[[int, int, int], int] | None = None,
    errors: Mapping[str, Any] | None = None,
    bytes_strings: bool = False,
) -> types.ModuleType:
    """A module object that behaves like ``import pynvml`` on a machine with ``gpus``.

    ``init_error`` makes ``nvmlInit`` raise (``"LibraryNotFound"``, ``"DriverNotLoaded"``, ...).
    ``topology`` is the ``nvmlDeviceGetTopologyCommonAncestor`` level of every pair, a mapping
    ``{(i, j): level}`` or a function of ``(i, j)`` (default ``NVML_TOPOLOGY_SYSTEM``).
    ``p2p`` gives ``nvmlDeviceGetP2PStatus``: ``{caps_index: status}`` for every pair, or
    ``{(i, j): {caps_index: status}}``, or a function of ``(i, j, caps_index)``. By default READ, WRITE,
    ATOMICS and PCI are OK, and NVLINK is OK when both GPUs have an active link.
    ``errors`` names system-level functions that raise (``{"nvmlSystemGetCudaDriverVersion_v2":
    "FunctionNotFound"}``).
    """
    module = types.ModuleType("pynvml")
    module.__file__ = "<fake pynvml mirroring nvidia-ml-py 13.615.71>"
    namespace = module.__dict__
    namespace.update(_ERROR_CODES)
    namespace.update(_CONSTANTS)
    state = {"refcount": 0, "loaded": False}
    lock = threading.Lock()

    # -- the exception hierarchy, built as pynvml builds it -------------------------------------------
    class NVMLError(Exception):
        _valClassMapping: dict[int, type] = {}
        _errcode_to_string = dict(_ERROR_STRINGS)

        def __new__(typ, value):  # type: ignore[no-untyped-def]
            if typ == NVMLError:
                typ = NVMLError._valClassMapping.get(value, typ)
            obj = Exception.__new__(typ)
            obj.value = value
            return obj

        def __str__(self) -> str:
            try:
                if self.value not in NVMLError._errcode_to_string:
                    NVMLError._errcode_to_string[self.value] = str(nvmlErrorString(self.value))
                return NVMLError._errcode_to_string[self.value]
            except NVMLError:
                return f"NVML Error with code {self.value}"

        def __eq__(self, other: object) -> bool:
            return self.value == other.value  # type: ignore[attr-defined]

    NVMLError.__module__ = "pynvml"
    namespace["NVMLError"] = NVMLError

    class NVMLLibraryMismatchError(Exception):
        pass

    NVMLLibraryMismatchError.__module__ = "pynvml"
    namespace["NVMLLibraryMismatchError"] = NVMLLibraryMismatchError

    for err_name in sorted(name for name in namespace if name.startswith("NVML_ERROR_")):
        class_name = "NVMLError_" + string.capwords(err_name.replace("NVML_ERROR_", ""), "_").replace("_", "")
        err_val = namespace[err_name]

        def gen_new(val: int) -> Callable[..., Any]:
            def new(typ, *args):  # type: ignore[no-untyped-def]
                return NVMLError.__new__(typ, val)

            return new

        new_error_class = type(class_name, (NVMLError,), {"__new__": gen_new(err_val)})
        new_error_class.__module__ = "pynvml"
        namespace[class_name] = new_error_class
        NVMLError._valClassMapping[err_val] = new_error_class

    def nvmlExceptionClass(nvmlErrorCode: int) -> type:
        if nvmlErrorCode not in NVMLError._valClassMapping:
            raise ValueError(f"nvmlErrorCode {nvmlErrorCode} is not valid")
        return NVMLError._valClassMapping[nvmlErrorCode]

    def _code(error: Any) -> int:
        """An NVML_ERROR_* code from 3, "NotSupported", "NVMLError_NotSupported" or the class."""
        if isinstance(error, int):
            return error
        if isinstance(error, type):
            error = error.__name__
        name = str(error).removeprefix("NVMLError_")
        for err_name, value in _ERROR_CODES.items():
            short = string.capwords(err_name.replace("NVML_ERROR_", ""), "_").replace("_", "")
            if short == name and err_name != "NVML_SUCCESS":
                return value
        raise ValueError(f"unknown NVML error {error!r}")

    def _nvmlCheckReturn(ret: int) -> int:
        if ret != 0:
            raise NVMLError(ret)
        return ret

    def _require_init(function: str) -> None:
        if not state["loaded"] or state["refcount"] == 0:
            raise NVMLError(_ERROR_CODES["NVML_ERROR_UNINITIALIZED"])
        if errors and function in errors:
            raise NVMLError(_code(errors[function]))

    def _text(value: str) -> str | bytes:
        return value.encode() if bytes_strings else value

    def _gpu(handle: Any, function: str) -> Mapping[str, Any]:
        _require_init(function)
        if not isinstance(handle, _FakeHandle) or not 0 <= handle.index < len(gpus):
            raise NVMLError(_ERROR_CODES["NVML_ERROR_INVALID_ARGUMENT"])
        gpu = gpus[handle.index]
        gpu_errors = gpu.get("errors") or {}
        if function in gpu_errors:
            raise NVMLError(_code(gpu_errors[function]))
        return gpu

    def _value(gpu: Mapping[str, Any], key: str) -> Any:
        if gpu.get(key) is None:
            raise NVMLError(_ERROR_CODES["NVML_ERROR_NOT_SUPPORTED"])
        return gpu[key]

    # -- init and system ------------------------------------------------------------------------------
    def nvmlInitWithFlags(flags: int) -> None:
        if init_error is not None:
            _nvmlCheckReturn(_code(init_error))
        with lock:
            state["loaded"] = True
            state["refcount"] += 1

    def nvmlInit() -> None:
        nvmlInitWithFlags(0)

    def nvmlShutdown() -> None:
        _require_init("nvmlShutdown")
        with lock:
            if state["refcount"] > 0:
                state["refcount"] -= 1

    def nvmlErrorString(result: int) -> str:
        return _ERROR_STRINGS.get(result, "Unknown Error")

    def nvmlSystemGetDriverVersion() -> str | bytes:
        _require_init("nvmlSystemGetDriverVersion")
        return _text(driver)

    def nvmlSystemGetNVMLVersion() -> str | bytes:
        _require_init("nvmlSystemGetNVMLVersion")
        return _text(nvml_version)

    def nvmlSystemGetCudaDriverVersion() -> int:
        _require_init("nvmlSystemGetCudaDriverVersion")
        return cuda_driver

    def nvmlSystemGetCudaDriverVersion_v2() -> int:
        _require_init("nvmlSystemGetCudaDriverVersion_v2")
        return cuda_driver

    # -- devices --------------------------------------------------------------------------------------
    def nvmlDeviceGetCount() -> int:
        _require_init("nvmlDeviceGetCount")
        return len(gpus)

    def nvmlDeviceGetHandleByIndex(index: int) -> _FakeHandle:
        _require_init("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(gpus):
            raise NVMLError(_ERROR_CODES["NVML_ERROR_INVALID_ARGUMENT"])
        gpu_errors = gpus[index].get("errors") or {}
        if "nvmlDeviceGetHandleByIndex" in gpu_errors:
            raise NVMLError(_code(gpu_errors["nvmlDeviceGetHandleByIndex"]))
        return _FakeHandle(index)

    def nvmlDeviceGetName(handle: Any) -> str | bytes:
        return _text(_value(_gpu(handle, "nvmlDeviceGetName"), "name"))

    def nvmlDeviceGetUUID(handle: Any) -> str | bytes:
        gpu = _gpu(handle, "nvmlDeviceGetUUID")
        return _text(gpu.get("uuid") or f"GPU-00000000-0000-0000-0000-{handle.index:012x}")

    def nvmlDeviceGetSerial(handle: Any) -> str | bytes:
        return _text(_value(_gpu(handle, "nvmlDeviceGetSerial"), "serial"))

    def nvmlDeviceGetVbiosVersion(handle: Any) -> str | bytes:
        return _text(_value(_gpu(handle, "nvmlDeviceGetVbiosVersion"), "vbios"))

    def nvmlDeviceGetPciInfo(handle: Any) -> _Struct:
        gpu = _gpu(handle, "nvmlDeviceGetPciInfo")
        bus_id = gpu.get("bus_id") or f"00000000:{0x18 + handle.index:02X}:00.0"
        domain, bus, rest = bus_id.split(":")
        return _Struct(
            "nvmlPciInfo_t",
            busIdLegacy=_text(bus_id[4:]),
            domain=int(domain, 16),
            bus=int(bus, 16),
            device=int(rest.split(".")[0], 16),
            pciDeviceId=int(gpu.get("pci_device_id", 0)),
            pciSubSystemId=int(gpu.get("pci_subsystem_id", 0)),
            busId=_text(bus_id),
        )

    def nvmlDeviceGetMemoryInfo(handle: Any, version: Any = None) -> _Struct:
        gpu = _gpu(handle, "nvmlDeviceGetMemoryInfo")
        total = int(_value(gpu, "memory_mib") * MIB)
        used = int(gpu.get("memory_used_mib", 0) * MIB)
        return _Struct("c_nvmlMemory_t", total=total, free=total - used, used=used)

    def nvmlDeviceGetEccMode(handle: Any) -> list[int]:
        current, pending = _value(_gpu(handle, "nvmlDeviceGetEccMode"), "ecc")
        return [int(current), int(pending)]

    def _milliwatts(handle: Any, function: str, key: str) -> int:
        return round(float(_value(_gpu(handle, function), key)) * 1000)

    def nvmlDeviceGetPowerManagementLimit(handle: Any) -> int:
        return _milliwatts(handle, "nvmlDeviceGetPowerManagementLimit", "power_limit_w")

    def nvmlDeviceGetPowerManagementDefaultLimit(handle: Any) -> int:
        return _milliwatts(handle, "nvmlDeviceGetPowerManagementDefaultLimit", "power_default_w")

    def nvmlDeviceGetPowerManagementLimitConstraints(handle: Any) -> list[int]:
        gpu = _gpu(handle, "nvmlDeviceGetPowerManagementLimitConstraints")
        low, high = _value(gpu, "power_min_w"), _value(gpu, "power_max_w")
        return [round(low * 1000), round(high * 1000)]

    def nvmlDeviceGetCurrPcieLinkGeneration(handle: Any) -> int:
        return int(_value(_gpu(handle, "nvmlDeviceGetCurrPcieLinkGeneration"), "pcie_gen"))

    def nvmlDeviceGetMaxPcieLinkGeneration(handle: Any) -> int:
        return int(_value(_gpu(handle, "nvmlDeviceGetMaxPcieLinkGeneration"), "pcie_gen_max"))

    def nvmlDeviceGetGpuMaxPcieLinkGeneration(handle: Any) -> int:
        return int(_value(_gpu(handle, "nvmlDeviceGetGpuMaxPcieLinkGeneration"), "pcie_gen_device_max"))

    def nvmlDeviceGetCurrPcieLinkWidth(handle: Any) -> int:
        return int(_value(_gpu(handle, "nvmlDeviceGetCurrPcieLinkWidth"), "pcie_width"))

    def nvmlDeviceGetMaxPcieLinkWidth(handle: Any) -> int:
        return int(_value(_gpu(handle, "nvmlDeviceGetMaxPcieLinkWidth"), "pcie_width_max"))

    def nvmlDeviceGetPcieReplayCounter(handle: Any) -> int:
        return int(_value(_gpu(handle, "nvmlDeviceGetPcieReplayCounter"), "replay_counter"))

    def nvmlDeviceGetNvLinkState(device: Any, link: int) -> int:
        gpu = _gpu(device, "nvmlDeviceGetNvLinkState")
        states = gpu.get("nvlinks")
        if states is None:
            raise NVMLError(_ERROR_CODES["NVML_ERROR_NOT_SUPPORTED"])
        if not 0 <= link < len(states):
            raise NVMLError(_ERROR_CODES["NVML_ERROR_INVALID_ARGUMENT"])
        return int(states[link])

    def nvmlDeviceGetCudaComputeCapability(handle: Any) -> tuple[int, int]:
        major, minor = _value(_gpu(handle, "nvmlDeviceGetCudaComputeCapability"), "compute_capability")
        return (int(major), int(minor))

    def nvmlDeviceGetComputeRunningProcesses(handle: Any) -> list[Any]:
        gpu = _gpu(handle, "nvmlDeviceGetComputeRunningProcesses")
        return [
            types.SimpleNamespace(pid=pid, usedGpuMemory=int(mib * MIB), gpuInstanceId=0xFFFFFFFF)
            for pid, mib in gpu.get("processes", ())
        ]

    def _pair(device1: Any, device2: Any, function: str) -> tuple[int, int]:
        _gpu(device1, function)
        _gpu(device2, function)
        return device1.index, device2.index

    def nvmlDeviceGetTopologyCommonAncestor(device1: Any, device2: Any) -> int:
        i, j = _pair(device1, device2, "nvmlDeviceGetTopologyCommonAncestor")
        if i == j:
            return _CONSTANTS["NVML_TOPOLOGY_INTERNAL"]
        if callable(topology):
            return int(topology(i, j))
        if isinstance(topology, Mapping):
            level = topology.get((i, j), topology.get((j, i)))
            if level is None:
                raise NVMLError(_ERROR_CODES["NVML_ERROR_NOT_SUPPORTED"])
            return int(level)
        return int(topology if topology is not None else _CONSTANTS["NVML_TOPOLOGY_SYSTEM"])

    def nvmlDeviceGetP2PStatus(device1: Any, device2: Any, p2pIndex: Any) -> int:
        if not isinstance(p2pIndex, int):  # what ctypes says when handed NVML_P2P_CAPS_INDEX_READ as is
            raise ctypes.ArgumentError("argument 3: TypeError: Don't know how to convert parameter 3")
        i, j = _pair(device1, device2, "nvmlDeviceGetP2PStatus")
        if callable(p2p):
            return int(p2p(i, j, p2pIndex))
        if isinstance(p2p, Mapping):
            table = p2p.get((i, j), p2p.get((j, i), p2p))
            if p2pIndex in table:
                return int(table[p2pIndex])
            return _CONSTANTS["NVML_P2P_STATUS_NOT_SUPPORTED"]
        if p2pIndex == _CONSTANTS["NVML_P2P_CAPS_INDEX_NVLINK"]:
            linked = all(any(gpus[k].get("nvlinks") or ()) for k in (i, j))
            return _CONSTANTS["NVML_P2P_STATUS_OK" if linked else "NVML_P2P_STATUS_NOT_SUPPORTED"]
        return _CONSTANTS["NVML_P2P_STATUS_OK"]

    for function in (
        nvmlExceptionClass,
        _nvmlCheckReturn,
        nvmlInitWithFlags,
        nvmlInit,
        nvmlShutdown,
        nvmlErrorString,
        nvmlSystemGetDriverVersion,
        nvmlSystemGetNVMLVersion,
        nvmlSystemGetCudaDriverVersion,
        nvmlSystemGetCudaDriverVersion_v2,
        nvmlDeviceGetCount,
        nvmlDeviceGetHandleByIndex,
        nvmlDeviceGetName,
        nvmlDeviceGetUUID,
        nvmlDeviceGetSerial,
        nvmlDeviceGetVbiosVersion,
        nvmlDeviceGetPciInfo,
        nvmlDeviceGetMemoryInfo,
        nvmlDeviceGetEccMode,
        nvmlDeviceGetPowerManagementLimit,
        nvmlDeviceGetPowerManagementDefaultLimit,
        nvmlDeviceGetPowerManagementLimitConstraints,
        nvmlDeviceGetCurrPcieLinkGeneration,
        nvmlDeviceGetMaxPcieLinkGeneration,
        nvmlDeviceGetGpuMaxPcieLinkGeneration,
        nvmlDeviceGetCurrPcieLinkWidth,
        nvmlDeviceGetMaxPcieLinkWidth,
        nvmlDeviceGetPcieReplayCounter,
        nvmlDeviceGetNvLinkState,
        nvmlDeviceGetCudaComputeCapability,
        nvmlDeviceGetComputeRunningProcesses,
        nvmlDeviceGetTopologyCommonAncestor,
        nvmlDeviceGetP2PStatus,
    ):
        function.__module__ = "pynvml"
        namespace[function.__name__] = function
    return module

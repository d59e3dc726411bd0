"""A thin wrapper around NVML through ``pynvml`` (the nvidia-ml-py package), imported lazily.

Every query goes through :meth:`NvmlSession.call`: NVML answers many queries with
``NVML_ERROR_NOT_SUPPORTED`` on some boards (ECC and power constraints on GeForce, NVLink on cards
without it), ``NVML_ERROR_NO_PERMISSION`` for unprivileged users, ``NVML_ERROR_FUNCTION_NOT_FOUND``
when the driver is older than the function, and ``NVML_ERROR_GPU_IS_LOST`` when a GPU fell off the
bus (https://docs.nvidia.com/deploy/nvml-api/group__nvmlReturn.html). None of these stops the probe:
the call returns ``None`` and ``"<function> on GPU <i>: <error class>"`` is added to
``not_supported``, so the spec says what could not be read instead of guessing.

Only ``nvmlInit`` failing stops it: without the library (``NVML_ERROR_LIBRARY_NOT_FOUND``) or the
kernel driver (``NVML_ERROR_DRIVER_NOT_LOADED``) there is nothing to probe, and
:class:`~rigcheck.core.engine.errors.UsageError` says so in one line (exit code 2).

Checked against pynvml.py of nvidia-ml-py 13.615.71, where the ``NVMLError_*`` classes are generated
subclasses of ``NVMLError`` and strings come back as ``str``; releases before 11.515 returned
``bytes``, which :func:`text` decodes.
"""

from __future__ import annotations

import importlib
from types import TracebackType
from typing import Any

from rigcheck.core.engine.errors import UsageError

#: NVML errors that mean "this device or driver does not have it"; anything else is recorded too.
NOT_SUPPORTED_ERRORS = (
    "NVMLError_NotSupported",
    "NVMLError_NoPermission",
    "NVMLError_FunctionNotFound",
    "NVMLError_GpuIsLost",
)
#: ``nvmlInit`` errors that mean there is no usable driver on this machine.
NO_DRIVER_ERRORS = ("NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded")

_MANUAL = "write the rig spec by hand"


def text(value: Any) -> str | None:
    """``value`` as ``str``: pynvml before 11.515 returns ``bytes`` (C char arrays), later ``str``."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    value = str(value).strip().rstrip("\x00")
    return value or None


class NvmlSession:
    """An initialised NVML: ``with NvmlSession() as nvml: nvml.call("nvmlDeviceGetCount")``.

    ``module`` is the ``pynvml`` module to use (tests pass a fake); by default it is imported when the
    session opens.
    """

    def __init__(self, module: Any = None) -> None:
        self._module = module
        self.not_supported: list[str] = []
        self._open = False

    # -- lifetime -----------------------------------------------------------------------------------

    @property
    def module(self) -> Any:
        if self._module is None:
            self._module = import_pynvml()
        return self._module

    def open(self) -> NvmlSession:
        """``nvmlInit`` (https://docs.nvidia.com/deploy/nvml-api/group__nvmlInitializationAndCleanup.html);
        raises :class:`UsageError` when NVML cannot start."""
        module = self.module
        try:
            module.nvmlInit()
        except Exception as exc:
            if not self.is_nvml_error(exc):
                raise
            name = self.error_name(exc)
            if name in NO_DRIVER_ERRORS:
                raise UsageError(
                    f"no NVIDIA driver: NVML could not be loaded ({name}); install the driver, or {_MANUAL}"
                ) from None
            raise UsageError(
                f"NVML could not be initialized ({name}: {exc}); check the driver with nvidia-smi, or {_MANUAL}"
            ) from None
        self._open = True
        return self

    def close(self) -> None:
        """``nvmlShutdown``; errors on the way out are ignored."""
        if not self._open:
            return
        self._open = False
        try:
            self.module.nvmlShutdown()
        except Exception as exc:
            if not self.is_nvml_error(exc):
                raise

    def __enter__(self) -> NvmlSession:
        return self.open()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    # -- calls --------------------------------------------------------------------------------------

    def call(self, function: str, *args: Any, gpu: int | str | None = None) -> Any:
        """``pynvml.<function>(*args)``, with ``bytes`` decoded; ``None`` when NVML refuses, and the
        refusal recorded as ``"<function> on GPU <gpu>: <error>"`` in :attr:`not_supported`."""
        value, error = self.try_call(function, *args)
        if error is not None:
            self.record(function, error, gpu)
        return value

    def try_call(self, function: str, *args: Any) -> tuple[Any, str | None]:
        """``(value, None)``, or ``(None, error name)`` without recording it (for loops over links and
        GPU pairs, which summarise their errors)."""
        method = getattr(self.module, function, None)
        if method is None:
            return None, "missing from this pynvml"
        try:
            value = method(*args)
        except Exception as exc:
            if not self.is_nvml_error(exc):
                raise
            return None, self.error_name(exc)
        if isinstance(value, bytes):
            value = text(value)
        return value, None

    def record(
        self, function: str, error: str, gpu: int | str | None = None, *, where: str | None = None
    ) -> None:
        """Add ``"<function> on GPU <gpu>: <error>"`` (or ``on <where>``) once."""
        place = f" on {where}" if where else (f" on GPU {gpu}" if gpu is not None else "")
        entry = f"{function}{place}: {error}"
        if entry not in self.not_supported:
            self.not_supported.append(entry)

    # -- helpers ------------------------------------------------------------------------------------

    def is_nvml_error(self, exc: BaseException) -> bool:
        """An ``NVMLError`` (any code), or the ``NVMLLibraryMismatchError`` that pynvml's unversioned
        wrappers raise when the library lacks the function."""
        classes = tuple(
            cls
            for cls in (
                getattr(self.module, "NVMLError", None),
                getattr(self.module, "NVMLLibraryMismatchError", None),
            )
            if isinstance(cls, type)
        )
        return bool(classes) and isinstance(exc, classes)

    @staticmethod
    def error_name(exc: BaseException) -> str:
        """``NVMLError_NotSupported``; a bare ``NVMLError`` with an unknown code gets the code."""
        name = type(exc).__name__
        if name == "NVMLError":
            return f"NVMLError({getattr(exc, 'value', '?')})"
        return name

    def constant(self, name: str, default: int) -> int:
        """A pynvml constant as an int. ``NVML_P2P_CAPS_INDEX_READ`` is the tuple ``(0,)`` in pynvml.py
        (``= 0,``), which ctypes cannot pass to the C function: take its first item."""
        value = getattr(self.module, name, default)
        if isinstance(value, tuple | list):
            value = value[0] if value else default
        try:
            return int(value)
        except (TypeError, ValueError):
            return default


def import_pynvml() -> Any:
    """``import pynvml``, or a :class:`UsageError` saying how to get it."""
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        raise UsageError(
            "no NVML bindings: the Python package nvidia-ml-py (module pynvml) is not installed; "
            f"pip install 'rigcheck[live]', or {_MANUAL}"
        ) from None

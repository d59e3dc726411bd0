"""rigcheck's own evidence parsers, one module per tool output format.

Each module defines a parser object with ``name``, ``detect(text) -> bool`` (cheap and based on
the content, never on the file name) and ``parse(text, path) -> Evidence`` (which never raises: it
returns what it could read and lists what it expected and did not find in ``problems``). Parsers
import only the standard library, pydantic and :mod:`rigcheck.evidence.model`.

``BUILTIN_PARSERS`` names them as ``"module:ATTR"`` strings, imported only when used, in the
order that detection tries them: the most specific formats first, the ``nvidia-smi`` default
table last among the nvidia-smi formats (``-q -x`` and ``-q`` outputs can quote a table line).
"""

from __future__ import annotations

_PACKAGE = "rigcheck.evidence.parsers"

BUILTIN_PARSERS: tuple[str, ...] = (
    f"{_PACKAGE}.evidence_json:PARSER",
    f"{_PACKAGE}.fio:PARSER",
    f"{_PACKAGE}.nvidia_smi_xml:PARSER",
    f"{_PACKAGE}.dcgmi_diag:PARSER",
    f"{_PACKAGE}.nccl_tests:PARSER",
    f"{_PACKAGE}.p2p_bandwidth:PARSER",
    f"{_PACKAGE}.bandwidth_test:PARSER",
    f"{_PACKAGE}.nvbandwidth:PARSER",
    f"{_PACKAGE}.ibstat:IBSTAT",
    f"{_PACKAGE}.ibstat:IBV_DEVINFO",
    f"{_PACKAGE}.nvcc:PARSER",
    f"{_PACKAGE}.torch_env:COLLECT_ENV",
    f"{_PACKAGE}.torch_env:VERSION",
    f"{_PACKAGE}.df:PARSER",
    f"{_PACKAGE}.pip:PIP_SHOW",
    f"{_PACKAGE}.pip:PIP_LIST",
    f"{_PACKAGE}.pip:PIP_FREEZE",
    f"{_PACKAGE}.nvidia_smi_topo:PARSER",
    f"{_PACKAGE}.nvlink_status:PARSER",
    f"{_PACKAGE}.nvidia_smi_query:PARSER",
    f"{_PACKAGE}.nvidia_smi_csv:PARSER",
    f"{_PACKAGE}.nvidia_smi_table:PARSER",
)

__all__ = ["BUILTIN_PARSERS"]

"""``ibstat`` and ``ibv_devinfo``: one ``IbPort`` per port of each channel adapter.

ibstat: ``CA 'mlx5_0'`` blocks (``CA type: MT4129``, ``Firmware version``) with ``Port N:``
sub-blocks (``State``, ``Physical state``, ``Rate`` in Gb/s, ``Link layer``), indented with tabs
or spaces depending on the version; the output can end in an ``ibpanic`` error after partial
blocks. ibv_devinfo: ``hca_id:`` blocks (``fw_ver``, ``vendor_part_id`` in decimal) with ``port:``
sub-blocks (``state: PORT_ACTIVE (4)``, ``link_layer``; with ``-v`` also ``active_width`` and
``active_speed``, whose product is the rate).
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Evidence, IbPort

_CA = re.compile(r"^CA\s+'([^']+)'\s*$")
_PORT = re.compile(r"^Port\s+(\d+):\s*$")
_FIELD = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*(.*?)\s*$")


def _float(value: str | None) -> float | None:
    match = re.search(r"\d+(?:\.\d+)?", value or "")
    return float(match.group()) if match else None


class IbstatParser:
    name = "ibstat"

    def detect(self, text: str) -> bool:
        return bool(re.search(r"(?m)^CA '[^']+'\s*$", text)) and ("CA type" in text or "Port 1:" in text)

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        ports: list[IbPort] = []
        cas: dict[str, dict[str, str]] = {}
        ca: str | None = None
        port: dict[str, Any] | None = None
        port_lists: dict[str, list[dict[str, Any]]] = {}
        for raw in text.splitlines():
            line = raw.strip()
            if not line:
                continue
            if match := _CA.match(line):
                ca = match.group(1)
                cas[ca] = {}
                port_lists[ca] = []
                port = None
                continue
            if "ibpanic" in line or line.lower().startswith("ibwarn"):
                problems.append(f"ibstat reported an error: {line}")
                continue
            if ca is None:
                continue
            if match := _PORT.match(line):
                port = {"port": int(match.group(1))}
                port_lists[ca].append(port)
                continue
            if match := _FIELD.match(line):
                key, value = match.group(1).lower(), match.group(2)
                if port is not None:
                    port[key] = value
                else:
                    cas[ca][key] = value
        for name, info in cas.items():
            if not port_lists[name]:
                problems.append(f"CA {name} has no 'Port N:' section (cut off?)")
            for fields in port_lists[name]:
                for key in ("state", "rate"):
                    if key not in fields:
                        problems.append(f"CA {name} port {fields['port']} has no '{key.capitalize()}' line")
                ports.append(
                    IbPort(
                        ca=name,
                        port=fields["port"],
                        ca_type=info.get("ca type") or None,
                        firmware=info.get("firmware version") or None,
                        state=fields.get("state") or None,
                        physical_state=fields.get("physical state") or None,
                        rate_gbps=_float(fields.get("rate")),
                        link_layer=fields.get("link layer") or None,
                    )
                )
        if not cas:
            problems.append("no \"CA 'name'\" block")
        return Evidence(source=path, tool=self.name, ib_ports=ports, problems=problems)


_HCA = re.compile(r"^hca_id:\s*(\S+)")
_DEVINFO_PORT = re.compile(r"^port:\s*(\d+)")
_DEVINFO_FIELD = re.compile(r"^(\w+):\s*(.*?)\s*$")


class IbvDevinfoParser:
    name = "ibv_devinfo"

    def detect(self, text: str) -> bool:
        return bool(re.search(r"(?m)^hca_id:\s*\S+", text)) and "port:" in text

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        ports: list[IbPort] = []
        mtu: dict[str, str] = {}
        hcas: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = []
        port: dict[str, Any] | None = None
        for raw in text.splitlines():
            line = raw.strip()
            if match := _HCA.match(line):
                hcas.append((match.group(1), {}, []))
                port = None
                continue
            if not hcas or not line:
                continue
            if match := _DEVINFO_PORT.match(line):
                port = {"port": int(match.group(1))}
                hcas[-1][2].append(port)
                continue
            if match := _DEVINFO_FIELD.match(line):
                target = port if port is not None else hcas[-1][1]
                target[match.group(1)] = match.group(2)
        for name, info, port_list in hcas:
            if not port_list:
                problems.append(f"hca {name} has no 'port:' section (cut off?)")
            for fields in port_list:
                state = fields.get("state")
                if state is None:
                    problems.append(f"hca {name} port {fields['port']} has no 'state' line")
                rate = None
                width = re.match(r"(\d+)X", fields.get("active_width", ""))
                speed = _float(fields.get("active_speed"))
                if width and speed is not None:
                    rate = int(width.group(1)) * speed
                if fields.get("active_mtu"):
                    mtu[f"{name}:{fields['port']}"] = fields["active_mtu"].split()[0]
                ports.append(
                    IbPort(
                        ca=name,
                        port=fields["port"],
                        ca_type=info.get("vendor_part_id") or None,
                        firmware=info.get("fw_ver") or None,
                        state=state.split()[0] if state else None,
                        physical_state=fields["phys_state"].split()[0] if fields.get("phys_state") else None,
                        rate_gbps=rate,
                        link_layer=fields.get("link_layer") or None,
                    )
                )
        if not hcas:
            problems.append("no 'hca_id:' block")
        extra: dict[str, Any] = {"active_mtu": mtu} if mtu else {}
        return Evidence(source=path, tool=self.name, ib_ports=ports, problems=problems, extra=extra)


IBSTAT = IbstatParser()
IBV_DEVINFO = IbvDevinfoParser()

"""``rigcheck merge``: fold per-node probe files into one cluster rig, and report drift between nodes.

Nodes whose specs are the same apart from their name (GPUs, CPU, RAM, storage, network, software)
become one node group with ``count:`` and ``hostnames:``; nodes that differ form their own groups,
so the merged rig stays true to every node. Drift is then reported per fact that should be equal
across a cluster: the GPUs (count and model), the driver, the CUDA the driver supports, the torch
build, ECC modes and GPU firmware (VBIOS). The majority value is taken as the norm, and each node
that differs gets a finding at its own probe file. Nodes are compared probe file by probe file, and a
hostname that more than one probe file reports is a finding of its own (DRIFT006).

Probe files are untrusted input: hostnames and other strings from them are shown escaped in messages
(no terminal escapes or line breaks), and :func:`rigcheck.core.spec.yaml_writer.dump_yaml` writes the
merged rig so that it reads back exactly as merged.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rigcheck.core.engine.findings import Finding
from rigcheck.core.engine.rules import Rule
from rigcheck.core.lint.merge_rules import (
    DRIVER_DRIFT,
    ECC_DRIFT,
    FIRMWARE_DRIFT,
    GPU_DRIFT,
    HOSTNAME_REPEATED,
    SOFTWARE_DRIFT,
)
from rigcheck.core.spec.documents import SpecDocument

_NODE_ONLY = ("name", "hostnames", "labels")


@dataclass(frozen=True)
class Probe:
    doc: SpecDocument

    @property
    def host(self) -> str:
        probe = self.doc.model.probe
        return (
            (probe.hostname if probe and probe.hostname else None)
            or self.doc.model.nodes[0].name
            or self.doc.name
        )

    @property
    def host_key(self) -> str:
        """The hostname as DNS compares it: case, surrounding spaces and a trailing dot ignored."""
        return self.host.strip().rstrip(".").casefold()

    @property
    def node(self) -> dict[str, Any]:
        return self.doc.yaml.data["nodes"][0]


def merge_probes(docs: Sequence[SpecDocument], name: str = "cluster") -> tuple[dict[str, Any], list[Finding]]:
    """The merged rig as a plain dict, and the drift findings."""
    probes = [Probe(doc) for doc in docs]
    groups: dict[str, list[Probe]] = {}
    for probe in probes:
        groups.setdefault(_shape(probe.node), []).append(probe)
    nodes = []
    for index, members in enumerate(sorted(groups.values(), key=lambda group: (-len(group), group[0].host))):
        node = {key: value for key, value in members[0].node.items() if key not in _NODE_ONLY}
        nodes.append(
            {
                "name": members[0].node.get("name", f"group{index}") if len(groups) > 1 else "node",
                "count": len(members),
                "hostnames": sorted(probe.host for probe in members),
                **{key: value for key, value in node.items() if key != "count"},
            }
        )
    times = sorted(probe.doc.model.probed_at or "" for probe in probes if probe.doc.model.probed_at)
    merged = {
        "apiVersion": "rigcheck/v1",
        "kind": "Rig",
        "name": name,
        "description": f"Merged by rigcheck merge from {len(probes)} probe file(s)"
        + (f", probed {times[0]} to {times[-1]}" if times else ""),
        "nodes": nodes,
    }
    return merged, drift_findings(probes)


def _shape(node: dict[str, Any]) -> str:
    return json.dumps(
        {key: value for key, value in node.items() if key not in _NODE_ONLY}, sort_keys=True, default=str
    )


def drift_findings(probes: Sequence[Probe]) -> list[Finding]:
    checks: list[tuple[Rule, str, str, Callable[[Probe], Any]]] = [
        (GPU_DRIFT, "GPUs", "/nodes/0/gpus", _gpus),
        (DRIVER_DRIFT, "driver", "/nodes/0/software/driver", lambda p: _software(p, "driver")),
        (SOFTWARE_DRIFT, "driver CUDA", "/probe/cuda_driver_version", _cuda),
        (SOFTWARE_DRIFT, "torch", "/nodes/0/software/torch", lambda p: _software(p, "torch")),
        (ECC_DRIFT, "ECC modes", "/probe/gpus", _ecc),
        (FIRMWARE_DRIFT, "VBIOS", "/probe/gpus", _vbios),
    ]
    findings: list[Finding] = []
    for rule, what, pointer, read in checks:
        known = [(probe, value) for probe in probes if (value := read(probe)) not in (None, "", ())]
        if not known:
            continue
        counts = Counter(_key(value) for _, value in known)
        norm_key, norm_count = counts.most_common(1)[0]
        norm = next(value for _, value in known if _key(value) == norm_key)
        odd = [(probe, value) for probe, value in known if _key(value) != norm_key]
        if not odd:
            location = probes[0].doc.locate(pointer)
            findings.append(
                _stamp(
                    rule.passed(
                        f"{what} the same on {len(known)} node(s): {_show(norm)}",
                        location=location,
                        subject=f"merge of {len(probes)} probes",
                    )
                )
            )
            continue
        for probe, value in odd:
            host = _printable(probe.host)
            detail = {
                "node": probe.host,
                "value": _show(value),
                "majority": _show(norm),
                "majority_nodes": norm_count,
                "nodes": len(known),
            }
            message = (
                f"{host}: {what} {_show(value)}, while {norm_count} of {len(known)} nodes have {_show(norm)}"
            )
            fix = f"bring {host} in line ({_show(norm)}), or keep it out of jobs that span the other nodes"
            findings.append(
                _stamp(
                    rule.finding(
                        rule.severity,
                        message,
                        location=probe.doc.locate(pointer),
                        evidence=detail,
                        fix=fix,
                        subject=f"merge of {len(probes)} probes",
                    )
                )
            )
    return findings + hostname_findings(probes)


def hostname_findings(probes: Sequence[Probe]) -> list[Finding]:
    """DRIFT006: a finding at each probe file that repeats a hostname an earlier probe file reported."""
    subject = f"merge of {len(probes)} probes"
    by_host: dict[str, list[Probe]] = {}
    for probe in probes:
        by_host.setdefault(probe.host_key, []).append(probe)
    findings: list[Finding] = []
    for same in by_host.values():
        files = [probe.doc.path for probe in same]
        differ = len({_shape(probe.node) for probe in same}) > 1
        for probe in same[1:]:
            host = _printable(probe.host)
            listed = _capped([_printable(path) for path in files], ", ")
            findings.append(
                _stamp(
                    HOSTNAME_REPEATED.finding(
                        HOSTNAME_REPEATED.severity,
                        f"{host}: {len(same)} probe files report this hostname ({listed}), "
                        + ("with different node specs" if differ else "with the same node specs"),
                        location=probe.doc.locate("/probe/hostname"),
                        evidence={"hostname": probe.host, "files": files, "specs_differ": differ},
                        fix=f"merge {host}'s probe file once; if these are different machines, give each its "
                        "own hostname and probe them again",
                        subject=subject,
                    )
                )
            )
    if not findings and probes:
        findings.append(
            _stamp(
                HOSTNAME_REPEATED.passed(
                    f"hostnames unique across {len(probes)} probe files",
                    location=probes[0].doc.locate("/probe/hostname"),
                    subject=subject,
                )
            )
        )
    return findings


def _gpus(probe: Probe) -> tuple[tuple[str, int], ...]:
    gpus = probe.node.get("gpus") or []
    gpus = [gpus] if isinstance(gpus, dict) else gpus
    return tuple(sorted((str(gpu.get("model")), int(gpu.get("count", 1))) for gpu in gpus))


def _software(probe: Probe, field: str) -> Any:
    return (probe.node.get("software") or {}).get(field)


def _cuda(probe: Probe) -> Any:
    info = probe.doc.model.probe
    return info.cuda_driver_version if info else None


def _ecc(probe: Probe) -> tuple[Any, ...]:
    info = probe.doc.model.probe
    return tuple(gpu.ecc_current for gpu in info.gpus) if info and info.gpus else ()


def _vbios(probe: Probe) -> tuple[Any, ...]:
    info = probe.doc.model.probe
    return tuple(sorted({gpu.vbios for gpu in info.gpus if gpu.vbios})) if info and info.gpus else ()


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


#: The most parts a drift message lists of one value (a probe of thousands of GPUs once made a 1.7 MB
#: message): repeats are folded first ("on x 8"), the rest counted.
MAX_SHOWN = 20


def _show(value: Any) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return _capped([f"{count} x {_printable(model)}" for model, count in value], ", ")
    if isinstance(value, tuple):
        words = ["on" if v is True else "off" if v is False else _printable(str(v)) for v in value]
        runs: list[list[Any]] = []
        for word in words:  # consecutive repeats folded: on/on/on/off -> on x 3/off
            if runs and runs[-1][0] == word:
                runs[-1][1] += 1
            else:
                runs.append([word, 1])
        return _capped([word if count == 1 else f"{word} x {count}" for word, count in runs], "/")
    return _printable(str(value)[:300])


def _capped(parts: list[str], separator: str) -> str:
    """``parts`` joined, at most :data:`MAX_SHOWN` of them, the rest counted."""
    if len(parts) <= MAX_SHOWN:
        return separator.join(parts)
    return separator.join(parts[:MAX_SHOWN]) + f"{separator}... ({len(parts) - MAX_SHOWN:,} more)"


def _printable(text: str) -> str:
    """``text`` with what a terminal or CI log would act on (escapes, line breaks, bidi controls) escaped."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _stamp(finding: Finding) -> Finding:
    return finding.with_changes(checker="merge", plugin="rigcheck")

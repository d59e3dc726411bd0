"""EVD001, EVD002: the GPUs and the software a machine reports against what the rig declares.

Counts come from the tool's GPU list (``nvidia-smi -q -x`` ``<gpu>`` elements, table rows, NVML),
not from a header such as ``attached_gpus`` that a trimmed file still carries. Versions are
compared as written: the driver the rig names, the toolkit ``nvcc -V`` reports, and the torch build
``collect_env`` prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from rigcheck.core.catalog.catalog import CatalogLookupError
from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.evidence.match import where
from rigcheck.evidence.model import Evidence

_SMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"

GPU_INVENTORY = Rule(
    code="EVD001",
    name="measured-gpus-differ-from-spec",
    summary="The machine reports fewer, more or different GPUs than the rig declares",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Counts the GPUs in each evidence file (nvidia-smi XML/text/CSV/table, a rigcheck probe, nccl-tests "
        "rank devices) by catalog model, and compares them with the node group the evidence belongs to (by host "
        "name, else the only group): fail when a GPU is missing or the model differs, warn when there are more.",
        why="A GPU that fell off the bus (Xid 79), a riser that lost a card, or a node built with the wrong SKU "
        "shows up first as a missing device; every plan built on the declared count is then wrong.",
        example="```yaml\ngpus: {model: H100 SXM, count: 8}\n# nvidia-smi -q -x on the node lists 7 <gpu>: EVD001\n```",
        fix="Reseat or replace the missing GPU (check `dmesg` for Xid 79, 'fallen off the bus'), or correct the rig "
        "spec to what was delivered.",
        references=(_SMI, "https://docs.nvidia.com/deploy/xid-errors/index.html"),
    ),
)

SOFTWARE = Rule(
    code="EVD002",
    name="measured-software-differs-from-spec",
    summary="The driver, CUDA toolkit or PyTorch build on the machine differs from the rig spec",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares the driver version the tools report with `software.driver`, the `nvcc -V` release with "
        "`software.cuda_toolkit`, and the torch build `collect_env` prints with `software.torch`; warns on any "
        "difference (the CUDA rules check the declared versions, not the ones found).",
        why="The CUDA compatibility verdicts are only as good as the versions they were given; a node upgraded by "
        "hand, or an image built with another toolkit, silently invalidates them.",
        example="```yaml\nsoftware: {driver: '550.54.15'}\n# nvidia-smi says Driver Version: 535.129.03: EVD002\n```",
        fix="Update the rig spec to the versions installed (and re-run the CUDA rules), or reinstall the declared "
        "versions.",
        references=(_SMI, "https://pytorch.org/docs/stable/notes/cuda.html"),
    ),
)


class EvidenceInventoryChecker(EvidenceChecker):
    name = "evidence.inventory"
    rules = (GPU_INVENTORY, SOFTWARE)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        if node is None:
            return
        names = [gpu.name for gpu in evidence.gpus if gpu.name]
        if not names and evidence.torch is not None and evidence.torch.gpus:
            names = list(evidence.torch.gpus)
        if names:
            yield self._inventory(ctx, evidence, node, names)
        yield from self._software(ctx, evidence, node)

    @staticmethod
    def _inventory(ctx: CheckContext, evidence: Evidence, node: NodeView, names: list[str]) -> Finding:
        found: Counter[str] = Counter()
        unknown: list[str] = []
        for name in names:
            try:
                found[ctx.catalog.lookup(name).id] += 1
            except CatalogLookupError:
                unknown.append(name)
        declared = Counter({gpu.facts.id: gpu.count for gpu in node.gpus})
        label = {gpu.facts.id: gpu.facts.name for gpu in node.gpus}
        location = ctx.rig_at(f"{node.pointer}/gpus")
        measured_total = sum(found.values()) + len(unknown)
        evidence_dict = {
            "evidence": evidence.source,
            "tool": evidence.tool,
            "declared": dict(declared),
            "measured": dict(found),
            "unmatched_names": unknown,
        }
        told = (
            f"{node.label}: {where(evidence)} lists {measured_total} GPU(s) "
            f"({', '.join(f'{n} x {label.get(k, k)}' for k, n in found.items()) or 'none the catalog knows'})"
            f" against {node.gpus_per_node} declared"
        )
        missing = {k: n - found.get(k, 0) for k, n in declared.items() if found.get(k, 0) < n}
        if unknown and not found:
            return GPU_INVENTORY.skipped(
                f"{told}; names not in the catalog: {', '.join(sorted(set(unknown)))}",
                location=location,
                evidence=evidence_dict,
            )
        if missing:
            gone = ", ".join(f"{n} x {label[k]}" for k, n in missing.items())
            return GPU_INVENTORY.failed(
                f"{told}: missing {gone}",
                location=location,
                evidence=evidence_dict,
                fix="reseat or replace the missing GPU (dmesg: Xid 79), or correct the spec",
            )
        if measured_total > node.gpus_per_node:
            return GPU_INVENTORY.warned(
                f"{told}: more than declared",
                location=location,
                evidence=evidence_dict,
                fix="add the extra GPUs to the rig spec",
            )
        return GPU_INVENTORY.passed(told, location=location, evidence=evidence_dict)

    @staticmethod
    def _software(ctx: CheckContext, evidence: Evidence, node: NodeView) -> Iterator[Finding]:
        software = node.spec.software
        pairs = [
            (
                "driver",
                evidence.driver_version or (evidence.torch.driver_version if evidence.torch else None),
                software.driver if software else None,
                "driver",
            ),
            (
                "CUDA toolkit (nvcc)",
                evidence.toolkit_version,
                software.cuda_toolkit if software else None,
                "cuda_toolkit",
            ),
            (
                "torch",
                evidence.torch.version if evidence.torch else None,
                software.torch if software else None,
                "torch",
            ),
        ]
        for what, measured, declared, field in pairs:
            if measured is None:
                continue
            location = ctx.rig_at(f"{node.pointer}/software/{field}")
            detail = {"evidence": evidence.source, "measured": measured, "declared": declared}
            if declared is None:
                yield SOFTWARE.passed(
                    f"{node.label}: {where(evidence)} reports {what} {measured}; the spec does "
                    f"not declare one",
                    location=location,
                    evidence=detail,
                )
            elif _same(what, measured, str(declared)):
                yield SOFTWARE.passed(
                    f"{node.label}: {what} {measured} as declared", location=location, evidence=detail
                )
            else:
                yield SOFTWARE.warned(
                    f"{node.label}: {where(evidence)} reports {what} {measured}, the spec says {declared}",
                    location=location,
                    evidence=detail,
                    fix=f"set software.{field} to {measured!r} (and re-check CUDA), or install {declared}",
                )


def _same(what: str, measured: str, declared: str) -> bool:
    if what.startswith("CUDA toolkit"):  # nvcc gives 12.4.131; a spec may say 12.4
        return measured == declared or measured.startswith(declared + ".")
    return measured.strip() == declared.strip()


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceInventoryChecker())

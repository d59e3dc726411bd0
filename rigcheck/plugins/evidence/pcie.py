"""EVD004, EVD010, EVD011: PCIe links as measured (docs/research/rules_facts.md NET-8;
docs/research/tool_formats.md section 1).

The current link generation drops to Gen1 at idle, so generations are judged on the *maximum*
the link can train to (``max_link_gen``, the lower of the device's and the host's maxima); widths
on the negotiated width. Copy bandwidth (bandwidthTest, nvbandwidth, ``rigcheck measure``) is
judged against the per-direction rate of that link.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import pcie_link, pcie_x16_gbps
from rigcheck.core.spec.numbers import fmt
from rigcheck.evidence.match import evidence_node, gpu_view_for, where, with_gpus
from rigcheck.evidence.model import Evidence, GpuEvidence

_SMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html (GPU Link Info)"

LINK = Rule(
    code="EVD004",
    name="pcie-link-below-expected",
    summary="A GPU's PCIe link trains narrower or at a lower generation than the rig expects",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares each GPU's negotiated link width, and the highest generation the link can reach "
        "(`max_link_gen` = the lower of device and host maxima; the idle current generation is ignored), with "
        "what slot and card reach together: the lower of `pcie.gen` / `pcie.lanes_per_gpu` and the card's own "
        "generation and width (a Gen4 card in a Gen5 slot is expected at Gen4). Fails on fewer lanes or a lower "
        "generation than that, warns when an undeclared host holds back a faster card.",
        why="A Gen4 card in a Gen3 slot, or at x8 in an x16 slot (a riser, a bifurcation setting, a badly seated "
        "card), halves host-device bandwidth and, without NVLink, all-reduce bandwidth.",
        example="```yaml\npcie: {gen: 4, lanes_per_gpu: 16}\n"
        "# nvidia-smi: max_link_gen 3, current_link_width 8x: EVD004\n```",
        fix="Reseat the card or the riser, move it to an x16 CPU slot, set the slot's generation and bifurcation in "
        "the BIOS; or correct `pcie:` in the rig to what the board provides.",
        references=(_SMI, "docs/research/rules_facts.md NET-8, CPU-2"),
    ),
)

REPLAYS = Rule(
    code="EVD010",
    name="pcie-replays",
    summary="A GPU's PCIe link has retried transfers (replay counter above zero)",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Reports GPUs whose PCIe replay counter (nvidia-smi 'Replays Since Reset', NVML "
        "`nvmlDeviceGetPcieReplayCounter`) is above zero.",
        why="Replays are link-level retries after transmission errors: signal-integrity trouble (risers, cables, "
        "slot contacts) that costs bandwidth and can become Xid errors. DCGM treats more than 8 a minute as a "
        "fault; the counter alone has no time base, so watch the rate.",
        example="```\nnvidia-smi -q: Replays Since Reset : 82   -> EVD010\n```",
        fix="Watch the rate (`dcgmi dmon -e 202` or the counter over a minute under load); reseat risers and "
        "cables; run `dcgmi diag -r 2` (PCIe test).",
        references=("NVIDIA/DCGM dcgm_gpu_hardware_limits.h (8 replays per minute)", _SMI),
    ),
)

COPY_BANDWIDTH = Rule(
    code="EVD011",
    name="host-device-bandwidth-low",
    summary="Measured host-device copy bandwidth is far below the PCIe link's rate",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares measured host-to-device and device-to-host bandwidth (bandwidthTest, nvbandwidth, rigcheck "
        "measure; pinned memory) with the per-direction rate of the declared link (`pcie.gen` x `lanes_per_gpu`): "
        "warn below {facts:evidence.pcie_bandwidth.warn_below_fraction:.0%}, fail below "
        "{facts:evidence.pcie_bandwidth.fail_below_fraction:.0%}. A Gen5 x16 link measures about 55 of 63 GB/s.",
        why="Data loading, CPU offload and checkpoint reads go through this link; a link at half its rate is a "
        "trained-down link, a card in a chipset slot or a NUMA-remote buffer.",
        example="```\nbandwidthTest H2D pinned: 12.4 GB/s on a Gen4 x16 slot (31.5 GB/s): EVD011\n```",
        fix="Check the link (EVD004), pin the process to the GPU's NUMA node (`numactl`, `nvidia-smi topo -m`), "
        "and use pinned memory.",
        references=("docs/research/rules_facts.md NET-8", "https://github.com/NVIDIA/nvbandwidth"),
    ),
)


class EvidencePcieChecker(Checker):
    """A plain checker: it walks the evidence twice (every GPU's link first, then copy bandwidth), so
    that findings keep their order."""

    name = "evidence.pcie"
    rules = (LINK, REPLAYS, COPY_BANDWIDTH)
    needs_evidence = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        for evidence, node in with_gpus(ctx):
            for gpu in evidence.gpus:
                view = gpu_view_for(ctx, node, gpu)
                if view is None:
                    continue
                yield from self._link(ctx, evidence, node, view, gpu)
                if gpu.pcie_replay_counter is not None:
                    yield self._replays(ctx, evidence, node, view, gpu, gpu.pcie_replay_counter)
        facts = ctx.facts("evidence")["pcie_bandwidth"]
        for evidence in ctx.evidence:
            yield from self._copies(ctx, evidence, evidence_node(ctx, evidence), facts)

    @staticmethod
    def _link(
        ctx: CheckContext, evidence: Evidence, node: NodeView, view: GpuView, gpu: GpuEvidence
    ) -> Iterator[Finding]:
        pcie = node.spec.pcie
        card = view.facts.pcie
        # what the link should train to: the lower of slot and card (links.pcie_link)
        link_gen, link_lanes = pcie_link(node, view)
        want_lanes = link_lanes if (pcie or card) else None
        want_gen = link_gen if pcie else None
        card_gen = card.gen if card else None
        label = f"{node.label}: GPU {gpu.index if gpu.index is not None else '?'} ({gpu.name})"
        location = ctx.rig_at(f"{node.pointer}/pcie" if pcie else f"{view.pointer}/model")
        detail = {
            "evidence": evidence.source,
            "gen_current": gpu.pcie_gen_current,
            "gen_max": gpu.pcie_gen_max,
            "gen_device_max": gpu.pcie_gen_device_max,
            "gen_host_max": gpu.pcie_gen_host_max,
            "width_current": gpu.pcie_width_current,
            "width_max": gpu.pcie_width_max,
            "declared_gen": want_gen,
            "declared_lanes": want_lanes,
            "card_gen": card_gen,
        }
        if gpu.pcie_gen_max is None and gpu.pcie_width_current is None:
            return
        problems: list[str] = []
        if want_lanes and gpu.pcie_width_current and gpu.pcie_width_current < want_lanes:
            problems.append(f"x{gpu.pcie_width_current} of x{want_lanes}")
        if want_gen and gpu.pcie_gen_max and gpu.pcie_gen_max < want_gen:
            slot = (
                f"a Gen{pcie.gen} slot" if pcie and pcie.gen == want_gen else f"Gen{want_gen}, slot and card"
            )
            problems.append(f"Gen{gpu.pcie_gen_max} at most, in {slot}")
        idle = ""
        if gpu.pcie_gen_current and gpu.pcie_gen_max and gpu.pcie_gen_current < gpu.pcie_gen_max:
            idle = f" (now Gen{gpu.pcie_gen_current}: idle links train down, not counted)"
        told = f"{label}: link Gen{gpu.pcie_gen_max or '?'} x{gpu.pcie_width_current or '?'}{idle} in {where(evidence)}"
        if problems:
            yield LINK.failed(
                f"{told}: {'; '.join(problems)}",
                location=location,
                evidence=detail,
                fix="reseat the card or riser, use an x16 CPU slot, check BIOS link settings; or "
                "correct pcie: in the rig",
            )
        elif not want_gen and card_gen and gpu.pcie_gen_max and gpu.pcie_gen_max < card_gen:
            host = f" (host max Gen{gpu.pcie_gen_host_max})" if gpu.pcie_gen_host_max else ""
            yield LINK.warned(
                f"{told}: the Gen{card_gen} card runs at Gen{gpu.pcie_gen_max}{host}",
                location=location,
                evidence=detail,
                fix=f"a Gen{card_gen} slot, or declare pcie: {{gen: {gpu.pcie_gen_max}}} if intended",
            )
        else:
            yield LINK.passed(told, location=location, evidence=detail)

    @staticmethod
    def _replays(
        ctx: CheckContext, evidence: Evidence, node: NodeView, view: GpuView, gpu: GpuEvidence, replays: int
    ) -> Finding:
        facts = ctx.facts("evidence")["pcie_replay"]
        label = f"{node.label}: GPU {gpu.index if gpu.index is not None else '?'} ({gpu.name})"
        detail = {"evidence": evidence.source, "replays": replays, **facts.cite()}
        location = ctx.rig_at(f"{view.pointer}/model")
        if REPLAYS.graded(replays, warn_at=int(facts["warn_above"])) is Severity.WARN:
            return REPLAYS.warned(
                f"{label}: {replays} PCIe replays since reset in {where(evidence)} (DCGM flags more "
                f"than {facts['dcgm_max_rate_per_minute']} a minute)",
                location=location,
                evidence=detail,
                fix="measure the rate under load (dcgmi dmon), reseat risers/cables, run dcgmi diag -r 2",
            )
        return REPLAYS.passed(f"{label}: no PCIe replays", location=location, evidence=detail)

    @staticmethod
    def _copies(
        ctx: CheckContext, evidence: Evidence, node: NodeView | None, facts: FactSection
    ) -> Iterator[Finding]:
        """Pinned host-device copies against the per-direction rate of the declared (else the card's) link."""
        copies = [b for b in evidence.bandwidth if b.kind in ("h2d", "d2h") and b.pinned is not False]
        if node is None or not copies:
            return
        pcie, card = node.spec.pcie, node.gpus[0].facts.pcie
        if pcie is None and card is None:
            return
        gen, lanes = pcie_link(node, node.gpus[0])
        link = pcie_x16_gbps(gen) * lanes / 16
        location = ctx.rig_at(f"{node.pointer}/pcie" if pcie else f"{node.pointer}/gpus")
        warn, fail = float(facts["warn_below_fraction"]), float(facts["fail_below_fraction"])
        for kind in ("h2d", "d2h"):
            measured = [b.gbps for b in copies if b.kind == kind]
            if not measured:
                continue
            best = max(measured)
            share = best / link
            detail = {
                "evidence": evidence.source,
                "direction": kind,
                "measured_gbps": best,
                "link_gbps": link,
                "share": round(share, 3),
                **facts.cite(),
            }
            told = (
                f"{node.label}: {kind.upper()} {fmt(best, 1)} GB/s in {where(evidence)} against Gen{gen} "
                f"x{lanes} = {fmt(link, 1)} GB/s each way ({share:.0%})"
            )
            yield COPY_BANDWIDTH.judged(
                COPY_BANDWIDTH.graded(share, warn_at=warn, fail_at=fail, higher_is_worse=False),
                told,
                location=location,
                evidence=detail,
                fix="check the link (EVD004), NUMA placement (numactl) and pinned memory",
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidencePcieChecker())

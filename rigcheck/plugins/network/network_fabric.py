"""NET001, NET002: a job that spans nodes needs a network between them, and ZeRO-3 / FSDP full
sharding needs one fast enough for its per-micro-batch traffic (docs/research/rules_facts.md NET-3, NET-6; the
traffic is timed by rigcheck.core.estimate.steptime).

NET-6 is DeepSpeed's field report for ZeRO-3 on 64+ V100s: "100 Gbps is not enough, 200-400 Gbps is
ok, 800-1000 Gbps is ideal" per node; newer GPUs compute faster and need more, so NET002 judges the
traffic's time against the step's compute and quotes the field report beside it.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Location, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import job_nodes, rig_gpu_nodes
from rigcheck.core.estimate.links import link_gbit_per_s
from rigcheck.core.estimate.network import carries_gpu_traffic, nccl_choice
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

NO_FABRIC = Rule(
    code="NET001",
    name="no-network-between-nodes",
    summary="The job spans nodes but the nodes declare no network for GPU traffic",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="When the workload's ranks (dp x tp x pp x cp) need more than one node, looks for network links "
        "with role `compute`, `any` or no role (management, storage and frontend links do not count). Fails "
        "when there are none; cannot check when none gives a rate (`gbps` or an InfiniBand `rate`), or when "
        "the job needs more nodes than the rig describes (MEM002 reports that; no nodes are made up).",
        why="NCCL then falls back to whatever TCP interface it finds first, often a 1 Gb/s management port, "
        "or fails to connect at all.",
        example="```yaml\nnodes: [{count: 2, gpus: {model: H100 SXM, count: 8}}]   # no network: NET001 for dp 16\n```",
        fix="Declare the compute fabric (`network: [{kind: infiniband, rate: ndr, count: 8, role: compute}]`), "
        "or keep the job on one node.",
        references=(
            "docs/research/rules_facts.md NET-3",
            "https://github.com/stas00/ml-engineering/blob/master/network/README.md",
        ),
    ),
)

SHARDED_BANDWIDTH = Rule(
    code="NET002",
    name="sharded-data-parallel-network-too-slow",
    summary="ZeRO-3 / FSDP full sharding across nodes on a network that stretches each step",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For ZeRO stage 3 or FSDP `full_shard` across nodes: the all-gathers and reduce-scatters that cross "
        "the nodes' compute network each micro-batch (2 x the 16-bit parameters and the gradients, (n-1)/n x "
        "each), timed at the network's bus bandwidth (ports x line rate x the transport's efficiency: RDMA with "
        "GPUDirect, RDMA through host memory, TCP), less what compute hides. Fails when what is left is more "
        "than the compute (the network more than doubles the step), warns above "
        "{facts:network.sharded_data_parallel.warn_above_share:.0%} of it. The message also "
        "gives DeepSpeed's field report for context (100 Gb/s per node is not enough, 200-400 ok, 800-1000 "
        "ideal, on V100s: newer GPUs compute faster and need more).",
        why="Full sharding moves 3 x the model's 16-bit size per micro-batch; on a slow network the GPUs wait. "
        "Two 8 x H100 nodes on one 100 GbE port each run FSDP of an 8B model at a tenth of their compute.",
        example="```yaml\nnetwork: [{kind: ethernet, gbps: 100}]\n"
        "# with parallelism: {dp: 16, fsdp: full_shard} on 8 x H100 nodes: NET002 fail\n```",
        fix="A faster fabric (InfiniBand/RoCE/EFA with GPUDirect RDMA, a port per GPU), FSDP `hybrid_shard` "
        "(shard within a node, all-reduce across nodes), more gradient accumulation, or ZeRO-2 if the model fits.",
        references=(
            "https://github.com/stas00/ml-engineering/blob/master/network/benchmarks/README.md",
            "https://github.com/deepspeedai/DeepSpeed/issues/2928",
            "Rajbhandari et al., ZeRO, arXiv:1910.02054 section 5.2",
        ),
    ),
)


class NetworkFabricChecker(WorkloadOnRigChecker):
    name = "network.fabric"
    rules = (NO_FABRIC, SHARDED_BANDWIDTH)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        found = job_nodes(ctx)  # (the first GPU node group, how many of its nodes the job takes)
        where = ctx.workload_at("/parallelism")
        if node is None or found is None:
            yield NO_FABRIC.skipped("no node with GPUs", location=where, subject=ctx.subject)
            return
        used = found[1]
        par = workload.parallelism
        if used <= 1:
            told = f"{par.world_size} rank(s) fit on one node of {node.gpus_per_node} GPUs: no inter-node traffic"
            yield NO_FABRIC.passed(told, location=where, subject=ctx.subject)
            yield SHARDED_BANDWIDTH.passed(told, location=where, subject=ctx.subject)
            return
        available = rig_gpu_nodes(ctx)
        if used > available:
            told = (
                f"{par.world_size} ranks need {used} nodes of {node.gpus_per_node} GPUs, but the rig has "
                f"{available}: there is no network between nodes that do not exist to judge (MEM002 reports "
                f"the missing GPUs)"
            )
            fix = f"describe all {used} nodes (nodes[].count: {used}) and their network, or lower the world size"
            yield NO_FABRIC.skipped(told, location=where, subject=ctx.subject, fix=fix)
            yield SHARDED_BANDWIDTH.skipped(told, location=where, subject=ctx.subject, fix=fix)
            return
        choice = nccl_choice(node)  # the links NCCL's traffic takes (the step-time model's path too)
        links = list(enumerate(choice.links))
        node_at = ctx.rig_at(f"{node.pointer}/network")
        if not links:
            declared = ", ".join(f"{link.kind} ({link.role})" for link in node.spec.network or ()) or "none"
            yield NO_FABRIC.failed(
                f"{par.world_size} ranks need {used} nodes of {node.gpus_per_node} GPUs, but {node.label} declares "
                f"no compute network (links: {declared})",
                location=node_at,
                related=[where],
                subject=ctx.subject,
                fix="declare the compute fabric with role: compute, or keep the job on one node",
            )
            return
        rates = [(link_gbit_per_s(link), link) for _, link in links]
        known = [(rate, link) for rate, link in rates if rate]
        total = sum(rate * link.count for rate, link in known)
        described = " + ".join(
            f"{link.count} x {fmt(rate)} Gb/s {link.kind}"
            + ("" if carries_gpu_traffic(link) else f" {link.role} port")
            for rate, link in known
        ) + (f", chosen by {choice.why}" if "NCCL_" in choice.why else "")
        if not known:
            yield NO_FABRIC.skipped(
                f"{used} nodes joined by {', '.join(link.kind for _, link in rates)} of unknown rate",
                location=node_at,
                subject=ctx.subject,
                fix="add gbps (or an InfiniBand rate) to the network links",
            )
        else:
            yield NO_FABRIC.passed(
                f"{used} nodes joined by {described} = {fmt(total)} Gb/s per node",
                location=node_at,
                subject=ctx.subject,
            )
        yield self._sharded(ctx, workload, node, node_at, where, used, total if known else None, described)

    @staticmethod
    def _sharded(
        ctx: CheckContext,
        workload: Workload,
        node: NodeView,
        node_at: Location,
        where: Location,
        used: int,
        total: float | None,
        described: str,
    ) -> Finding:
        """NET002: the inter-node traffic of full sharding that compute does not hide, against the compute."""
        par = workload.parallelism
        sharded = par.zero == 3 or par.fsdp == "full_shard"
        if not sharded:
            return SHARDED_BANDWIDTH.passed(
                "no ZeRO-3 / FSDP full sharding across nodes (gradient all-reduce time: ICX005)",
                location=where,
                subject=ctx.subject,
            )
        if total is None:
            return SHARDED_BANDWIDTH.skipped("network rate unknown", location=node_at, subject=ctx.subject)
        speed = ctx.estimate_on(node, node.gpus[0]).estimate.training
        if speed is None:
            return SHARDED_BANDWIDTH.skipped(
                f"{node.gpus[0].facts.name}: dense TFLOPS unknown", location=node_at, subject=ctx.subject
            )
        step = speed.step
        crossing = [item for item in step.collectives if item.group == "data" and item.inter_node]
        exposed = step.exposed_for(lambda item: item.group == "data" and item.inter_node)
        share = exposed / step.compute_seconds if step.compute_seconds else 0.0
        facts = ctx.facts("network")["sharded_data_parallel"]
        fail_share, warn_share = float(facts["fail_above_share"]), float(facts["warn_above_share"])
        how = "ZeRO-3" if par.zero == 3 else "FSDP full_shard"
        evidence = {
            "gbps_per_node": total,
            "links": described,
            "nodes": used,
            "collectives": [item.describe() for item in crossing],
            "exposed_seconds": round(exposed, 4),
            "compute_seconds": round(step.compute_seconds, 4),
            "share": round(share, 3),
            "fail_above_share": fail_share,
            "warn_above_share": warn_share,
            "field_report_gbps_per_node": {
                "not_enough_below": float(facts["fail_below_gbps_per_node"]),
                "works_from": float(facts["warn_below_gbps_per_node"]),
            },
            **facts.cite(),
        }
        moved = sum(item.bytes_per_gpu for item in crossing)
        told = (
            f"{how} over {used} nodes on {fmt(total)} Gb/s per node ({described}): {fmt(moved / 1e9, 3)} GB per GPU "
            f"per step cross the network, {fmt(exposed, 3)} s of it not hidden behind {fmt(step.compute_seconds, 3)} s "
            f"of compute ({share:.0%}); field reports: below {fmt(float(facts['fail_below_gbps_per_node']))} Gb/s per "
            f"node is not enough"
        )
        fix = (
            "a faster fabric (RDMA with GPUDirect), FSDP hybrid_shard (shard within a node), or ZeRO-2 if the "
            "model fits"
        )
        severity = SHARDED_BANDWIDTH.graded(share, warn_at=warn_share, fail_at=fail_share)
        if severity is Severity.PASS:
            return SHARDED_BANDWIDTH.passed(told, location=node_at, evidence=evidence, subject=ctx.subject)
        return SHARDED_BANDWIDTH.finding(
            severity, told, location=node_at, related=[where], evidence=evidence, fix=fix, subject=ctx.subject
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(NetworkFabricChecker())

"""NET001, NET002: a job that spans nodes needs a network between them, and ZeRO-3 / FSDP full
sharding needs a fast one (rules_facts.md NET-3, NET-6).

NET-6 is DeepSpeed's field report for ZeRO-3 on 64+ V100s: "100 Gbps is not enough, 200-400 Gbps is
ok, 800-1000 Gbps is ideal" per node; newer GPUs compute faster and need more. The time the traffic
takes against the step's compute is ICX005's job; these rules check that the fabric is there and in
the range that has been seen to work.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.checker import Checker
from rigcheck.core.context import CheckContext
from rigcheck.core.estimation.links import link_gbit_per_s
from rigcheck.core.estimation.network import job_nodes
from rigcheck.core.findings import Finding, Severity
from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.numbers import fmt
from rigcheck.core.rules import Rule, RuleDocs

NO_FABRIC = Rule(
    code="NET001",
    name="no-network-between-nodes",
    summary="The job spans nodes but the nodes declare no network for GPU traffic",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="When the workload's ranks (dp x tp x pp x cp) need more than one node, looks for network links "
        "with role `compute`, `any` or no role (management, storage and frontend links do not count). Fails "
        "when there are none; cannot check when none gives a rate (`gbps` or an InfiniBand `rate`).",
        why="NCCL then falls back to whatever TCP interface it finds first, often a 1 Gb/s management port, "
        "or fails to connect at all.",
        example="```yaml\nnodes: [{count: 2, gpus: {model: H100 SXM, count: 8}}]   # no network: NET001 for dp 16\n```",
        fix="Declare the compute fabric (`network: [{kind: infiniband, rate: ndr, count: 8, role: compute}]`), "
        "or keep the job on one node.",
        references=(
            "rules_facts.md NET-3",
            "https://github.com/stas00/ml-engineering/blob/master/network/README.md",
        ),
    ),
)

SHARDED_BANDWIDTH = Rule(
    code="NET002",
    name="sharded-data-parallel-network-too-slow",
    summary="ZeRO-3 / FSDP full sharding across nodes on less network bandwidth than has been seen to work",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For ZeRO stage 3 or FSDP `full_shard` across nodes, adds up each node's compute links (ports x "
        "Gb/s) and compares with DeepSpeed's field report: fail below 100 Gb/s per node, warn below 400 Gb/s.",
        why="Full sharding all-gathers the parameters in forward and in backward and reduce-scatters the "
        "gradients every step: 3 x the model's 16-bit size per step crosses the network. 'With 100 Gbps "
        "... not enough, 200-400 Gbps is ok, 800-1000 Gbps is ideal' (ZeRO-3 on 64+ V100s); H100s need more.",
        example="```yaml\nnetwork: [{kind: ethernet, gbps: 100}]\n"
        "# with parallelism: {dp: 16, zero: 3}: NET002 warn\n```",
        fix="A faster fabric (InfiniBand/RoCE/EFA, several ports per node), FSDP `hybrid_shard` (shard inside "
        "a node, all-reduce across nodes), or ZeRO-2 if the model fits.",
        references=(
            "https://github.com/stas00/ml-engineering/blob/master/network/benchmarks/README.md",
            "https://github.com/deepspeedai/DeepSpeed/issues/2928",
        ),
    ),
)


class NetworkFabricChecker(Checker):
    name = "network.fabric"
    rules = (NO_FABRIC, SHARDED_BANDWIDTH)
    needs_workload = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        found = job_nodes(ctx)
        where = ctx.workload_at("/parallelism")
        if found is None:
            yield NO_FABRIC.skipped("no node with GPUs", location=where, subject=ctx.subject)
            return
        node, used = found
        par = ctx.workload.parallelism
        if used <= 1:
            told = f"{par.world_size} rank(s) fit on one node of {node.gpus_per_node} GPUs: no inter-node traffic"
            yield NO_FABRIC.passed(told, location=where, subject=ctx.subject)
            yield SHARDED_BANDWIDTH.passed(told, location=where, subject=ctx.subject)
            return
        links = [
            (index, link)
            for index, link in enumerate(node.spec.network or ())
            if link.role in (None, "compute", "any")
        ]
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
        described = " + ".join(f"{link.count} x {fmt(rate)} Gb/s {link.kind}" for rate, link in known)
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
        yield self._sharded(ctx, node_at, where, used, total if known else None, described)

    def _sharded(self, ctx, node_at, where, used, total, described):  # type: ignore[no-untyped-def]
        par = ctx.workload.parallelism
        sharded = par.zero == 3 or par.fsdp == "full_shard"
        if not sharded:
            return SHARDED_BANDWIDTH.passed(
                "no ZeRO-3 / FSDP full sharding across nodes (gradient all-reduce time: ICX005)",
                location=where,
                subject=ctx.subject,
            )
        if total is None:
            return SHARDED_BANDWIDTH.skipped("network rate unknown", location=node_at, subject=ctx.subject)
        facts = ctx.facts("network")["sharded_data_parallel"]
        fail_below = float(facts["fail_below_gbps_per_node"])
        warn_below = float(facts["warn_below_gbps_per_node"])
        how = "ZeRO-3" if par.zero == 3 else "FSDP full_shard"
        evidence = {
            "gbps_per_node": total,
            "links": described,
            "nodes": used,
            "fail_below": fail_below,
            "warn_below": warn_below,
            **facts.cite(),
        }
        told = (
            f"{how} over {used} nodes on {fmt(total)} Gb/s per node ({described}); field reports: below "
            f"{fmt(fail_below)} Gb/s is not enough, {fmt(warn_below)} Gb/s and up works"
        )
        fix = "a faster fabric, FSDP hybrid_shard (shard within a node), or ZeRO-2 if the model fits"
        if total < fail_below:
            return SHARDED_BANDWIDTH.failed(
                told, location=node_at, related=[where], evidence=evidence, fix=fix, subject=ctx.subject
            )
        if total < warn_below:
            return SHARDED_BANDWIDTH.warned(
                told, location=node_at, related=[where], evidence=evidence, fix=fix, subject=ctx.subject
            )
        return SHARDED_BANDWIDTH.passed(told, location=node_at, evidence=evidence, subject=ctx.subject)


@hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(NetworkFabricChecker())

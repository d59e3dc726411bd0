"""NET005: the ports a multi-node launch needs are open in the declared firewall (docs/research/rules_facts.md NET-2).

torchrun's static rendezvous listens on ``--master-port`` (default 29500), the c10d rendezvous
backend on the ``--rdzv-endpoint`` port (default 29400); DeepSpeed's and Accelerate's launchers use
29500 too. NCCL then opens ephemeral TCP ports for its bootstrap and socket transport, so the
kernel's ``ip_local_port_range`` (or a range NCCL is pinned to) must be open between the nodes.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import job_nodes
from rigcheck.core.estimate.network import open_ports, port_open
from rigcheck.core.spec.models.workload import Launcher, Workload

PORTS = Rule(
    code="NET005",
    name="rendezvous-port-closed",
    summary="The rendezvous port or NCCL's ephemeral port range is closed in the nodes' firewall",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For a job that spans nodes, whose nodes declare `firewall.open_tcp_ports`: the launcher's port "
        "(`launcher.master_port`, default 29500 for torchrun, DeepSpeed and Accelerate; `launcher.rdzv_port`, "
        "default 29400, with `rdzv_backend: c10d`) must be open (fail), and a range of at least 100 ports for "
        "NCCL's bootstrap and socket connections should be (warn). Nodes without a declared firewall are "
        "assumed open and not checked.",
        why="A closed rendezvous port makes every rank wait for the master until the launcher times out; closed "
        "ephemeral ports make NCCL hang at its first collective, with no error naming the firewall.",
        example="```yaml\nfirewall: {open_tcp_ports: [22]}\n# with launcher: {kind: torchrun} on 2 nodes: NET005\n```",
        fix="Open the rendezvous port and the range in `net.ipv4.ip_local_port_range` (or pin NCCL's and the "
        "kernel's range to, say, 50000-51000 and open that) between the nodes.",
        references=(
            "https://pytorch.org/docs/1.10/elastic/quickstart.html",
            "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/networking_troubleshooting.html",
            "docs/research/rules_facts.md NET-2",
        ),
    ),
)


class RendezvousPortsChecker(WorkloadOnRigChecker):
    name = "network.rendezvous-ports"
    rules = (PORTS,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        found = job_nodes(ctx)  # (the first GPU node group, how many of its nodes the job takes)
        launcher = workload.launcher
        where = ctx.workload_at("/launcher" if launcher else "/parallelism")
        if node is None or found is None or found[1] <= 1:
            yield PORTS.passed(
                "the job runs on one node: rendezvous over loopback", location=where, subject=ctx.subject
            )
            return
        used = found[1]
        firewall = node.spec.firewall
        if firewall is None or firewall.open_tcp_ports is None:
            yield PORTS.skipped(
                f"{node.label} declares no firewall: ports assumed open between the {used} nodes",
                location=ctx.rig_at(node.pointer),
                subject=ctx.subject,
                fix="add firewall.open_tcp_ports to check the rendezvous port and NCCL's range",
            )
            return
        facts = ctx.facts("network")["ports"]
        port, port_how = self._port(launcher, facts)
        ranges = open_ports(firewall.open_tcp_ports)
        fw_at = ctx.rig_at(f"{node.pointer}/firewall/open_tcp_ports")
        listed = ", ".join(str(entry) for entry in firewall.open_tcp_ports) or "none"
        evidence = {"port": port, "port_from": port_how, "open": listed, **facts.cite()}
        if port is not None and not port_open(port, ranges):
            yield PORTS.failed(
                f"{port_how} port {port} is not among the open ports ({listed})",
                location=fw_at,
                related=[where],
                evidence=evidence,
                subject=ctx.subject,
                fix=f"open TCP {port} between the nodes",
            )
            return
        minimum = int(facts["min_ephemeral_range"])
        widest = max((end - start + 1 for start, end in ranges), default=0)
        evidence["widest_range"] = widest
        told = f"{port_how} port {port} open" if port is not None else f"{port_how}: no fixed port"
        if PORTS.graded(widest, warn_at=minimum, higher_is_worse=False) is Severity.WARN:
            yield PORTS.warned(
                f"{told}, but no range of {minimum}+ ports is open for NCCL's bootstrap and socket connections "
                f"(open: {listed})",
                location=fw_at,
                evidence=evidence,
                subject=ctx.subject,
                fix="open the ip_local_port_range between the nodes, or pin it (e.g. 50000-51000) and open that",
            )
            return
        yield PORTS.passed(
            f"{told}; a {widest}-port range is open for NCCL ({listed})",
            location=fw_at,
            evidence=evidence,
            subject=ctx.subject,
        )

    @staticmethod
    def _port(launcher: Launcher | None, facts: FactSection) -> tuple[int | None, str]:
        """The port the launcher's rendezvous listens on (None: no fixed port), and where it comes from."""
        master = int(facts["torchrun_master_port"])
        if launcher is None:
            return master, "torchrun's default master"
        if launcher.rdzv_backend == "c10d":
            port = launcher.rdzv_port or int(facts["c10d_rendezvous_port"])
            return port, "the c10d rendezvous" + ("" if launcher.rdzv_port else " (default)")
        if launcher.kind in ("slurm", "mpirun", "ray", "python", "other") and launcher.master_port is None:
            return None, f"{launcher.kind} launch"
        port = launcher.master_port or master
        return port, f"{launcher.kind}'s master" + ("" if launcher.master_port else " (default)")


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(RendezvousPortsChecker())

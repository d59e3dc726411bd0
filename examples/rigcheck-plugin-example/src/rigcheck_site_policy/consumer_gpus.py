"""SITE001: production rigs use data-center or workstation GPUs only (a site policy)."""

from __future__ import annotations

from collections.abc import Iterator

import rigcheck

NO_CONSUMER_GPUS = rigcheck.Rule(
    code="SITE001",
    name="consumer-gpu-in-production",
    summary="A production rig uses consumer (GeForce) GPUs",
    severity="fail",
    docs=rigcheck.RuleDocs(
        what="Fails any rig labelled `env: production` that has GPUs the catalog marks as consumer or laptop parts "
        "(GeForce); passes data-center and workstation GPUs. Rigs without the label are not checked.",
        why="The site's support contracts and NVIDIA's data-center driver licence terms cover data-center GPUs "
        "only; consumer cards also lack ECC and remote management.",
        example="```yaml\nlabels: {env: production}\nnodes:\n  - gpus: {model: RTX 4090, count: 8}   # SITE001\n```",
        fix="Use data-center (L40S, H100) or workstation (RTX 6000 Ada) GPUs in production rigs, or label the rig "
        "env: lab.",
        references=("https://www.nvidia.com/en-us/drivers/geforce-license/ (data-center deployment clause)",),
    ),
)


class ConsumerGpuPolicy(rigcheck.Checker):
    name = "site.consumer-gpus"
    rules = (NO_CONSUMER_GPUS,)

    def check(self, ctx: rigcheck.CheckContext) -> Iterator[rigcheck.Finding]:
        env = (ctx.rig.labels or {}).get("env")
        if env != "production":
            yield NO_CONSUMER_GPUS.skipped(
                f"rig is labelled env={env or 'none'}, not production", location=ctx.rig_at("/labels")
            )
            return
        for node in ctx.nodes:
            for gpu in node.gpus:
                where = ctx.rig_at(f"{gpu.pointer}/model")
                evidence = {"segment": gpu.facts.segment, "catalog_id": gpu.facts.id}
                if gpu.facts.segment in ("consumer", "laptop"):
                    yield NO_CONSUMER_GPUS.failed(
                        f"{node.label}: {gpu.facts.name} is a {gpu.facts.segment} GPU",
                        location=where,
                        evidence=evidence,
                        fix="choose a data-center or workstation GPU",
                    )
                else:
                    yield NO_CONSUMER_GPUS.passed(
                        f"{node.label}: {gpu.facts.name} is a {gpu.facts.segment} GPU",
                        location=where,
                        evidence=evidence,
                    )

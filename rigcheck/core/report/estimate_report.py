"""``rigcheck estimate``: the memory breakdown, the fit on a rig's GPU, and the speed, as a table or JSON."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from rigcheck.core.engine.errors import RigcheckError
from rigcheck.core.estimate.estimate import (
    GIB,
    WorkloadEstimate,
    beside_budget,
    estimate_workload,
    fit_verdict,
    largest_micro_batch,
    usable_bytes,
)

if TYPE_CHECKING:
    from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
    from rigcheck.core.estimate.memory.inputs import MemoryInputs
    from rigcheck.core.spec.documents import SpecDocument
    from rigcheck.trace.result import TraceResult


def _first_gpu(rig_ctx: CheckContext | None) -> tuple[NodeView, GpuView] | None:
    if rig_ctx is not None:
        for candidate in rig_ctx.nodes:
            if candidate.gpus:
                return candidate, candidate.gpus[0]
    return None


def _estimate(workload_doc: SpecDocument, rig_ctx: CheckContext | None) -> WorkloadEstimate:
    first = _first_gpu(rig_ctx)
    if rig_ctx is not None and first is not None and rig_ctx.arch is not None:
        from rigcheck.core.engine.rig_estimate import estimate_on

        return estimate_on(rig_ctx, *first).estimate
    return estimate_workload(workload_doc.model, arch=None, document=workload_doc)


def inputs_for(workload_doc: SpecDocument, rig_ctx: CheckContext | None) -> MemoryInputs:
    """The estimator inputs ``build`` uses (what ``--trace`` traces)."""
    return _estimate(workload_doc, rig_ctx).inputs


def build(
    workload_doc: SpecDocument, rig_ctx: CheckContext | None, *, trace: TraceResult | None = None
) -> dict[str, Any]:
    """The estimate as a JSON-ready dict; ``rig_ctx`` is a CheckContext when a rig was given,
    ``trace`` a :class:`~rigcheck.trace.result.TraceResult` to show beside the estimate."""
    workload = workload_doc.model
    first = _first_gpu(rig_ctx)
    estimate = _estimate(workload_doc, rig_ctx)
    result: dict[str, Any] = {
        "workload": {
            "name": workload.name,
            "path": workload_doc.path,
            "task": workload.task,
            "precision": workload.precision,
        },
        "model": _model(estimate),
        "inputs": _inputs(estimate),
        "memory": {"per_gpu": estimate.memory.as_dict()},
        "rig": None,
        "fit": None,
        "speed": None,
    }
    if trace is not None:
        from rigcheck.trace.result import side_by_side

        result["trace"] = {
            **trace.as_dict(),
            "compared": [
                {key: round(value, 4) if isinstance(value, float) else value for key, value in row.items()}
                for row in side_by_side(trace, estimate.memory)
            ],
        }
    if rig_ctx is not None and first is not None:
        _node, gpu_view = first
        usable, why = usable_bytes(
            gpu_view.facts, memory_gib=gpu_view.spec.memory_gib, ecc_enabled=gpu_view.spec.ecc
        )
        verdict = fit_verdict(estimate.memory, usable)
        result["rig"] = {
            "name": rig_ctx.rig.name,
            "gpu": gpu_view.facts.name,
            "usable_gib": round(usable / GIB, 3),
            "usable_from": why,
        }
        result["fit"] = {
            "budget_gib": round(verdict.capacity / GIB, 3),
            "device_gib": round(verdict.need / GIB, 3),
            "range_gib": [round(verdict.low / GIB, 3), round(verdict.high / GIB, 3)],
            "verdict": verdict.severity,
            "why": verdict.reason,
            "share": round(verdict.share, 3),
            "beside_budget": list(beside_budget(estimate.memory)),
            "fits": verdict.severity != "fail",
            (
                "largest_micro_batch" if estimate.inputs.training else "largest_concurrency"
            ): largest_micro_batch(estimate.inputs, usable),
        }
        if estimate.training is not None:
            result["speed"] = {"training": estimate.training.as_dict()}
        elif estimate.decode is not None:
            result["speed"] = {"decode": estimate.decode.as_dict()}
    return ensure_finite(result)


def ensure_finite(value: Any, pointer: str = "") -> Any:
    """``value`` unchanged when every number in it is finite; else a one-line error naming where.

    Bounded spec fields keep the estimate finite (issue 15); this guard keeps ``inf`` and ``NaN``, which
    JSON does not have (RFC 8259 section 6), out of the output should an estimator still overflow.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise RigcheckError(
            f"rigcheck: the estimate came out as {value} at {pointer or '/'}: an input is out of range "
            f"(please report it with the spec)"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            ensure_finite(item, f"{pointer}/{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            ensure_finite(item, f"{pointer}/{index}")
    return value


def _model(estimate: WorkloadEstimate) -> dict[str, Any]:
    arch = estimate.arch
    return {
        "name": arch.name,
        "family": arch.family,
        "params_b": round(arch.params / 1e9, 4),
        "published_params_b": round(arch.published_params / 1e9, 4) if arch.published_params else None,
        "layers": arch.layers,
        "hidden": arch.hidden,
        "heads": arch.heads,
        "kv_heads": arch.kv_heads,
        "head_dim": arch.head_dim,
        "ffn": arch.ffn,
        "vocab": arch.vocab,
        "mlp": arch.mlp,
        "tied_embeddings": arch.tied_embeddings,
        "experts": arch.experts,
        "source": arch.source,
    }


def _inputs(estimate: WorkloadEstimate) -> dict[str, Any]:
    values = asdict(estimate.inputs)
    values.pop("arch", None)
    return {key: (list(value) if isinstance(value, tuple) else value) for key, value in values.items()}


def render_text(result: dict[str, Any]) -> str:
    model, memory = result["model"], result["memory"]["per_gpu"]
    inputs = result["inputs"]
    lines = [
        f"{result['workload']['name']}: {inputs['task']} of {model['name']} ({model['params_b']:g}B params), "
        f"{inputs['precision']}, micro-batch {inputs['micro_batch']} x {inputs['seq_len']} tokens",
        "",
        f"{'per GPU':<24} {'GiB':>8}  how",
    ]
    for name, item in memory["components"].items():
        lines.append(f"{name:<24} {item['gib']:>8.2f}  {item['formula']}")
    lines.append("")
    lines.append(
        f"{'allocated':<24} {memory['allocated_gib']:>8.2f}  peak during the {memory['peak_phase']} "
        f"(torch.cuda.max_memory_allocated)"
    )
    lines.append(f"{'reserved':<24} {memory['reserved_gib']:>8.2f}  torch.cuda.max_memory_reserved")
    lines.append(f"{'device':<24} {memory['device_gib']:>8.2f}  what nvidia-smi shows")
    for note in memory["notes"]:
        lines.append(f"  note: {note}")
    if result.get("trace"):
        lines += ["", *_trace_lines(result["trace"])]
    fit_and_speed = _fit_and_speed_lines(result)
    if result["fit"]:
        fit_and_speed.insert(0, "")
    return "\n".join(lines + fit_and_speed) + "\n"


def _fit_and_speed_lines(result: dict[str, Any]) -> list[str]:
    """The fit on the rig's first GPU and the speed, a line each (with the communication and step
    detail of training)."""
    lines: list[str] = []
    fit = result["fit"]
    if fit:
        rig = result["rig"]
        verdict = {"pass": "fits", "warn": "may not fit", "fail": "does NOT fit"}[fit["verdict"]]
        if fit["why"]:
            verdict += f" ({fit['why']})"
        largest = fit.get("largest_micro_batch", fit.get("largest_concurrency"))
        what = "micro-batch" if "largest_micro_batch" in fit else "concurrency"
        lines += [
            f"on {rig['name']} ({rig['gpu']}, {rig['usable_gib']:g} GiB usable): {verdict}, "
            f"{fit['device_gib']:.1f} of {fit['budget_gib']:.1f} GiB ({fit['share']:.0%}); "
            f"largest {what} that fits: {largest}",
        ]
    speed = result["speed"]
    if speed and "training" in speed:
        train = speed["training"]
        tps = train["tokens_per_second"]
        lines.append(
            f"speed: {tps['default']:,.0f} tokens/s ({tps['low']:,.0f}-{tps['high']:,.0f}), bound by "
            f"{train['binds']}; {train['formula']}"
        )
        parts = ", ".join(f"{name} {seconds:.3g} s" for name, seconds in train["parts_seconds"].items())
        lines.append(f"step: {train['step_seconds']['default']:.3g} s = {parts}")
        for item in train["communication"]:
            hidden = "overlaps compute" if item["overlappable"] else "on the critical path"
            lines.append(
                f"  {item['what']}: {item['bytes_per_gpu'] / 1e9:.3g} GB per GPU per step over {item['over']} "
                f"({item['busbw_gbps']:.3g} GB/s) = {item['seconds']:.3g} s, {hidden}"
            )
        if not train["topology_known"]:
            lines.append("  communication not estimated: give --rig for the links between the GPUs")
        if train["run_hours"]:
            hours = train["run_hours"]
            lines.append(
                f"run: {train['run_tokens']:,.0f} tokens in about {hours['default']:.1f} h "
                f"({hours['low']:.1f}-{hours['high']:.1f} h)"
            )
    elif speed and "decode" in speed:
        decode = speed["decode"]
        tps = decode["tokens_per_second_per_seq"]
        total = decode["aggregate_tokens_per_second"]
        lines.append(
            f"decode: {tps['default']:.1f} tokens/s per sequence ({tps['low']:.1f}-{tps['high']:.1f}), "
            f"{total['default']:,.0f} output tokens/s at concurrency {decode['concurrency']} "
            f"({total['low']:,.0f}-{total['high']:,.0f}), bound by {decode['binds']}; {decode['formula']}"
        )
        if "ttft_ms" in decode:
            ttft = decode["ttft_ms"]
            lines.append(
                f"prefill: {decode['prompt_tokens']:,} prompt tokens, time to first token about "
                f"{ttft['default']:,.0f} ms ({ttft['low']:,.0f}-{ttft['high']:,.0f} ms)"
            )
    return lines


def render_markdown(result: dict[str, Any]) -> str:
    """The estimate as Markdown (a pull-request comment or a job summary): the memory table, the fit and
    the speed. Spec strings are escaped as in the ``markdown`` report format."""
    from rigcheck.core.report.render.escape import escape_markdown as md

    model, memory, inputs = result["model"], result["memory"]["per_gpu"], result["inputs"]
    lines = [
        f"### {md(result['workload']['name'])}: {md(inputs['task'])} of {md(model['name'])} "
        f"({model['params_b']:g}B params)",
        "",
        f"{md(inputs['precision'])}, micro-batch {inputs['micro_batch']} x {inputs['seq_len']} tokens",
        "",
        "| per GPU | GiB | how |",
        "|---|---:|---|",
    ]
    for name, item in memory["components"].items():
        lines.append(f"| {md(name)} | {item['gib']:.2f} | {md(item['formula'])} |")
    lines += [
        f"| **allocated** | **{memory['allocated_gib']:.2f}** | peak during the {md(memory['peak_phase'])} |",
        f"| reserved | {memory['reserved_gib']:.2f} | torch.cuda.max_memory_reserved |",
        f"| device | {memory['device_gib']:.2f} | what nvidia-smi shows |",
    ]
    lines += [f"\n> note: {md(note)}" for note in memory["notes"]]
    if result.get("trace"):
        lines += ["", "```text", *_trace_lines(result["trace"]), "```"]
    fit_and_speed = _fit_and_speed_lines(result)
    if fit_and_speed:
        lines += ["", *[f"- {md(line.strip(), table=False)}" for line in fit_and_speed]]
    return "\n".join(lines) + "\n"


def _trace_lines(trace: dict[str, Any]) -> list[str]:
    versions = ", ".join(f"{name} {version}" for name, version in trace["versions"].items())
    rank = f", rank 0 of {trace['world']}" if trace["world"] > 1 else ""
    lines = [
        f"traced: one step of the model code on fake tensors ({versions}{rank}), {trace['seconds']:.0f} s",
        f"{'':<24} {'traced':>8} {'analytic':>9}  GiB",
    ]
    for row in trace["compared"]:
        lines.append(f"{row['category']:<24} {row['traced_gib']:>8.2f} {row['analytic_gib']:>9.2f}")
    lines.append(f"  peak during the {trace['phase']}; a trace does not see: " + "; ".join(trace["not_seen"]))
    lines += [f"  note: {note}" for note in trace["notes"]]
    return lines

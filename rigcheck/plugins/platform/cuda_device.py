"""PLT011: no CUDA device: Apple silicon, or AMD GPUs with a CUDA software stack."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerGpuTypeChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

NO_CUDA = Rule(
    code="PLT011",
    name="no-cuda-device",
    summary="The GPUs cannot run CUDA code, but the rig or workload expects CUDA",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Fails Apple silicon GPUs (Metal only) when a workload is given or the rig's software names a "
        "CUDA build, and AMD GPUs whose software names a CUDA build of PyTorch or a CUDA toolkit; passes "
        "AMD with a ROCm build.",
        why="CUDA-only stacks (CUDA PyTorch wheels, bitsandbytes' CUDA kernels, FlashAttention, vLLM's CUDA "
        "build, DeepSpeed's CUDA ops) do not run on them; the job fails at the first `.cuda()`.",
        example="```yaml\ngpus: {model: M2 Ultra}\n# with any training workload: PLT011\n```",
        fix="On Apple silicon use PyTorch's MPS backend, MLX or llama.cpp (Metal); on AMD install the ROCm build "
        "of PyTorch (`+rocm` wheels) and ROCm builds of the libraries; or use NVIDIA GPUs.",
        references=("https://pytorch.org/docs/stable/notes/mps.html", "https://rocm.docs.amd.com/"),
    ),
)


class CudaDeviceChecker(PerGpuTypeChecker):
    name = "platform.cuda-device"
    rules = (NO_CUDA,)

    def check_gpu(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Iterator[Finding]:
        vendor = gpu.facts.vendor
        if vendor == "nvidia":
            return
        subject = ctx.node_subject(node)
        software = node.spec.software
        torch = (software.torch or "") if software else ""
        cuda_stack = "+cu" in torch or bool(software and (software.cuda_toolkit or software.cuda_runtime))
        where = ctx.rig_at(f"{gpu.pointer}/model")
        if vendor == "apple":
            if ctx.workload is not None or cuda_stack:
                yield NO_CUDA.failed(
                    f"{gpu.facts.name} has no CUDA: {'the workload' if ctx.workload else 'the rig software'} "
                    f"expects a CUDA device",
                    location=where,
                    subject=subject,
                    fix="use PyTorch's MPS backend, MLX or llama.cpp with Metal; or an NVIDIA GPU",
                )
            else:
                yield NO_CUDA.skipped(
                    f"{gpu.facts.name}: Metal only; no CUDA software declared",
                    location=where,
                    subject=subject,
                )
        elif cuda_stack:
            yield NO_CUDA.failed(
                f"{gpu.facts.name} runs ROCm, not CUDA, but the node declares a CUDA stack "
                f"({torch or 'cuda_toolkit'})",
                location=where,
                subject=subject,
                fix="install the ROCm build of PyTorch (+rocm wheel) and drop the CUDA toolkit from the spec",
            )
        else:
            yield NO_CUDA.passed(
                f"{gpu.facts.name}: {gpu.facts.software_stack or 'ROCm'} stack, no CUDA expected",
                location=where,
                subject=subject,
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(CudaDeviceChecker())

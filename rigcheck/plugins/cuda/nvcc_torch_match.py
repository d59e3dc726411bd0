"""CUDA005: the host toolkit's nvcc and the PyTorch wheel's CUDA share a major version, so CUDA
extensions can be built (docs/research/cuda_compat.md section 6c).

``torch.utils.cpp_extension`` compares the nvcc it finds with ``torch.version.cuda``: a different
major is an error ("The detected CUDA version (11.8) mismatches the version that was used to
compile PyTorch (12.1)"); a different minor only a warning.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.software import software_stack

MATCH = Rule(
    code="CUDA005",
    name="nvcc-major-differs-from-torch-cuda",
    summary="The host nvcc's CUDA major differs from the one PyTorch was built with: extensions will not build",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares `software.cuda_toolkit` (what `nvcc -V` reports) with the CUDA of the torch wheel "
        "(`+cu121` -> 12.1): warn when the majors differ, pass (noting it) when only the minors differ.",
        why="Building a CUDA extension from source (flash-attn, apex, DeepSpeed ops, bitsandbytes, custom "
        "kernels) stops with 'The detected CUDA version (11.8) mismatches the version that was used to compile "
        "PyTorch (12.1). Please make sure to use the same CUDA versions.' Jobs that only use prebuilt wheels are "
        "not affected, hence a warning.",
        example="```yaml\nsoftware: {cuda_toolkit: '11.8', torch: '2.3.0+cu121'}   # CUDA005\n```",
        fix="Install a toolkit of the wheel's major (CUDA 12.x for a cu12x wheel) and point CUDA_HOME at it, or "
        "install the torch wheel built for the toolkit you have.",
        references=(
            "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py (_check_cuda_version)",
        ),
    ),
)


class NvccTorchMatchChecker(PerNodeChecker):
    name = "cuda.nvcc-torch"
    rules = (MATCH,)
    gpu_vendor = "nvidia"

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        stack = software_stack(node)
        subject = ctx.node_subject(node)
        torch = stack.torch if stack else None
        torch_cuda = torch.cuda if torch else None
        if stack is None or stack.toolkit is None or torch is None or torch_cuda is None:
            yield MATCH.passed(
                f"{node.label}: no host toolkit and CUDA torch build both declared: nothing to compare",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
            )
            return
        where = ctx.rig_at(f"{node.pointer}/software/cuda_toolkit")
        evidence = {"nvcc": stack.toolkit.text, "torch": torch.text, "torch_cuda": torch_cuda.text}
        label = f"nvcc {stack.toolkit.text} and torch {torch.text} (CUDA {torch_cuda.text})"
        if stack.toolkit.major != torch_cuda.major:
            yield MATCH.warned(
                f"{label}: majors differ, so torch.utils.cpp_extension refuses to build CUDA extensions",
                location=where,
                related=[ctx.rig_at(stack.torch_pointer)],
                evidence=evidence,
                subject=subject,
                fix=f"install CUDA {torch_cuda.major}.x for building extensions (CUDA_HOME), or a "
                f"torch wheel built with CUDA {stack.toolkit.major}.x",
            )
        elif stack.toolkit.short != torch_cuda.short:
            yield MATCH.passed(
                f"{label}: same major; PyTorch only warns about the minor",
                location=where,
                evidence=evidence,
                subject=subject,
            )
        else:
            yield MATCH.passed(f"{label}: same version", location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(NvccTorchMatchChecker())

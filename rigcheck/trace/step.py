"""One real step of a workload on fake tensors, with the live-tensor peak recorded by category.

The model is built from its configuration inside ``torch._subclasses.fake_tensor.FakeTensorMode``
on the CPU device (fake tensors carry shapes and dtypes, never data), then one step runs as the
workload describes it:

- training: forward with the workload's precision (autocast with CUDA's op policy, see
  :mod:`rigcheck.trace.autocast_policy`), attention kernel, gradient checkpointing, LoRA adapters
  (PEFT) or a 4-bit base (bitsandbytes, :mod:`rigcheck.trace.qlora`); the loss (full or chunked
  cross-entropy); backward; the optimizer step; ``zero_grad(set_to_none=True)``. The optimizer's
  states exist before the step starts (as from the second step of a run on), so the peak is that of
  a steady-state step. With FSDP, rank 0 of the job runs over a fake process group
  (:mod:`rigcheck.trace.fsdp`).
- inference: a static KV cache of the context length, the prefill of the prompt, one decode step.

``torch.distributed._tools.mem_tracker.MemTracker`` (``FSDPMemTracker`` under FSDP) counts every
tensor storage created or held while the step runs.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from rigcheck.core.engine.errors import UsageError
from rigcheck.core.estimate.memory import MemoryInputs
from rigcheck.core.estimate.memory.quantized import FOUR_BIT
from rigcheck.trace.result import TraceResult

Progress = Callable[[str], None]

#: MemTracker's key of a device's total in its snapshots (``_TOTAL_KEY`` in
#: torch/distributed/_tools/mem_tracker.py).
_TOTAL = "Total"

#: MemTracker / FSDPMemTracker reference types -> the categories of a TraceResult.
CATEGORY_OF = {
    "Parameter": "parameters",
    "Buffer": "parameters",
    "Sharded Param": "parameters",
    "Unsharded Param": "parameters",
    "All Gather": "parameters",
    "Gradient": "gradients",
    "Sharded Grad": "gradients",
    "Unsharded Grad": "gradients",
    "Reduce Scatter": "gradients",
    "Optstate": "optimizer",
    "OptState": "optimizer",
    "Activation": "activations",
    "Inputs": "activations",
    "Other": "parameters",  # the 4-bit layers' quantisation state (track_external)
    "Temp": "temporaries",
}


def unsupported(inputs: MemoryInputs) -> list[str]:
    """What in these inputs a trace cannot run (empty when it can)."""
    out = []
    if inputs.tp > 1 or inputs.pp > 1 or inputs.cp > 1 or inputs.ep > 1:
        out.append("tensor, pipeline, context or expert parallelism (the tracer runs one unsplit model)")
    if inputs.zero:
        out.append("DeepSpeed ZeRO (write the sharding as parallelism.fsdp to trace it with FSDP2)")
    if inputs.offload != "none":
        out.append("CPU/NVMe offload (host and device are the same CPU in a trace)")
    if inputs.precision == "fp8-mixed":
        out.append("precision fp8-mixed (Transformer Engine has no fake kernels)")
    if (inputs.quantization or "none") != "none" and inputs.quantization not in FOUR_BIT:
        out.append(f"quantization {inputs.quantization} (no fake kernels)")
    if (inputs.optimizer or "none") not in ("adamw", "adam", "sgd", "sgd-momentum", "adafactor", "none"):
        out.append(f"optimizer {inputs.optimizer} (bitsandbytes' 8-bit optimizers have no fake kernels)")
    if inputs.training and inputs.dp > 1 and not inputs.zero and inputs.fsdp in (None, "no_shard"):
        out.append("plain data parallelism (DDP's gradient buckets are not traced; trace dp 1 or FSDP)")
    if inputs.activation_checkpointing == "selective":
        out.append("selective activation checkpointing (the tracer runs full checkpointing only)")
    if inputs.task == "qlora" and inputs.qlora_backend != "bitsandbytes":
        out.append("QLoRA through torchao's NF4 tensor (torchtune); the tracer runs bitsandbytes")
    if inputs.fsdp and (inputs.task == "qlora" or inputs.optimizer_in_backward):
        out.append("FSDP with QLoRA or with the optimizer in backward")
    return out


def trace_step(
    inputs: MemoryInputs, *, progress: Progress | None = None, peak_only: bool = True
) -> TraceResult:
    """Run one step of ``inputs`` on fake tensors and return rank 0's live-tensor peak. ``peak_only``
    False keeps torch's tracker whole (every module's peaks too): the same result, four times slower
    (tests/test_trace.py compares them)."""
    problems = unsupported(inputs)
    if problems:
        raise UsageError("rigcheck estimate --trace cannot run this workload: " + "; ".join(problems))
    say = progress or (lambda message: None)
    started = time.monotonic()
    runner = _Runner(inputs, say, peak_only=peak_only)
    # bitsandbytes' CPU backend logs that its optional CPU kernels are missing; a trace runs none of them
    logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)
    with warnings.catch_warnings():  # the libraries' deprecation notices are not the user's to act on
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        result = runner.run()
    return TraceResult(
        peak=result["peak"],
        categories=result["categories"],
        phase=result["phase"],
        phase_peaks=result["phase_peaks"],
        rank=0,
        world=runner.world,
        seconds=time.monotonic() - started,
        versions=versions(),
        notes=tuple(runner.notes),
    )


def traced_parameters(inputs: MemoryInputs) -> dict[str, tuple[tuple[int, ...], Any, bool]]:
    """The parameters of the model a one-rank trace of ``inputs`` runs, as transformers, bitsandbytes
    and PEFT made it on fake tensors: name -> (shape, dtype, requires_grad) (tests/test_trace.py holds
    them to PEFT's on real tensors)."""
    import gc

    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True), torch.device("cpu"):
        model = _Runner(inputs, lambda message: None).build(None)
        out = {name: (tuple(p.shape), p.dtype, p.requires_grad) for name, p in model.named_parameters()}
        del model
    # The model's reference cycles hold fake tensors: freed now, not by a collection in the middle of a
    # later trace in this process (torch 2.13 then fails inside the later trace's fake mode).
    gc.collect()
    return out


def versions() -> dict[str, str]:
    """The versions of the libraries whose code a trace ran."""
    from importlib import metadata

    out = {}
    for name in ("torch", "transformers", "peft", "bitsandbytes"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


class _Runner:
    def __init__(self, inputs: MemoryInputs, say: Progress, *, peak_only: bool = True) -> None:
        import torch

        self.i = inputs
        self.say = say
        self.peak_only = peak_only
        self.notes: list[str] = []
        self.world = _shard_count(inputs) if inputs.fsdp else 1
        precision = inputs.precision
        self.low = torch.float16 if precision.startswith("16") else torch.bfloat16
        self.mixed = precision in ("16-mixed", "bf16-mixed")
        if precision == "32-true":
            self.param_dtype = torch.float32
        elif precision == "64-true":
            self.param_dtype = torch.float64
        elif precision in ("bf16-true", "16-true"):
            self.param_dtype = self.low
        else:
            self.param_dtype = torch.float32 if inputs.task in ("pretrain", "full_finetune") else self.low
        if not inputs.training and precision not in ("32-true", "64-true"):
            self.param_dtype = self.low
        if inputs.attention == "flash":
            self.notes.append("attention flash traced as SDPA's flash kernel (same saved tensors)")

    # -- the run ------------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode

        from rigcheck.trace.cuda_behaviour import cuda_attention_kernels, cuda_autocast_policy

        with contextlib.ExitStack() as stack:
            stack.enter_context(cuda_autocast_policy())
            stack.enter_context(_frozen_parameter_hooks())
            stack.enter_context(_unpadded_batches())
            mesh = stack.enter_context(_fsdp_mesh(self.world)) if self.i.fsdp else None
            stack.enter_context(FakeTensorMode(allow_non_fake_inputs=True))
            stack.enter_context(torch.device("cpu"))
            stack.enter_context(cuda_attention_kernels())
            self.say(f"building {self.i.arch.name} ({self.i.arch.layers} layers) on fake tensors")
            model = self.build(mesh)
            if not self.i.training:
                return self.infer(model)
            optimizers = self.optimizers(model)
            return self.train(model, optimizers)
        raise AssertionError("unreachable")

    def build(self, mesh: Any) -> Any:
        from rigcheck.trace.models import build_config, build_model

        i = self.i
        config = build_config(i.arch, attention=i.attention)
        model = build_model(config, dtype=self.param_dtype)
        if i.task == "qlora" or (not i.training and i.quantization in FOUR_BIT):
            from rigcheck.trace.qlora import quantize_block_linears

            quant, double = (
                (i.qlora_quant, i.qlora_double_quant) if i.task == "qlora" else FOUR_BIT[str(i.quantization)]
            )
            count = quantize_block_linears(model, quant=quant, double_quant=double, compute_dtype=self.low)
            self.notes.append(
                f"{count} block linears as bitsandbytes 4-bit ({quant}{', double quant' if double else ''})"
            )
            if i.kbit_upcast:
                import torch

                # PEFT prepare_model_for_kbit_training: "cast all non INT8 parameters to fp32"
                for parameter in model.parameters():
                    if parameter.dtype in (torch.float16, torch.bfloat16):
                        parameter.data = parameter.data.to(torch.float32)
        if i.training:
            model.train()
            if i.activation_checkpointing == "full":
                _enable_checkpointing(model)
        else:
            model.eval()
        if i.frozen_base:
            model = self.adapt(model)
        if mesh is not None:
            import torch

            from rigcheck.trace.fsdp import shard

            shard(
                model,
                mesh,
                param_dtype=self.low if self.mixed else None,
                reduce_dtype=torch.float32 if self.mixed else None,
                reshard_after_forward=i.fsdp != "shard_grad_op",
            )
            ranks = f"{self.world} fake rank" + ("s" if self.world != 1 else "")
            self.notes.append(f"FSDP2 fully_shard per block over {ranks} (rank 0 traced)")
        return model

    def adapt(self, model: Any) -> Any:
        from peft import LoraConfig, get_peft_model

        i = self.i
        for parameter in model.parameters():
            parameter.requires_grad_(False)
        targets: list[str] | str | None = list(i.lora_targets) if i.lora_targets else None
        if targets and any(target.lower() in ("all-linear", "all_linear", "all") for target in targets):
            targets = "all-linear"
        config = LoraConfig(
            r=max(1, i.lora_rank),
            lora_alpha=2 * max(1, i.lora_rank),
            lora_dropout=i.lora_dropout,
            target_modules=targets,
            modules_to_save=list(i.modules_to_save) or None,
            task_type="CAUSAL_LM",
        )
        # PEFT keeps adapters in fp32 under a 16-bit base unless told otherwise; bf16-true runs keep
        # everything in bf16 (litgpt, torchtune). PEFT creates the adapters on the default device, here
        # meta, and then leaves them where they are; they are made below, as fake tensors. (On a fake
        # device PEFT would move them onto the base layer's device and dtype with ``Module.to``, which
        # torch 2.13 refuses for fake parameters.)
        import torch

        keep_fp32 = i.precision not in ("bf16-true", "16-true")
        with torch.device("meta"):
            model = get_peft_model(model, config, autocast_adapter_dtype=keep_fp32)
        _make_adapters(model, keep_fp32=keep_fp32)
        return model

    def optimizers(self, model: Any) -> list[Any]:
        import torch

        i = self.i
        trainable = [p for p in model.parameters() if p.requires_grad]
        name = i.optimizer or "adamw"
        if name == "none":
            return []

        def make(params: list[Any]) -> Any:
            if name in ("adamw", "adam"):
                kind = torch.optim.AdamW if name == "adamw" else torch.optim.Adam
                implementation: dict[str, dict[str, Any]] = {
                    "fused": {"fused": True},
                    "for-loop": {"foreach": False},
                }
                return kind(
                    params, lr=1e-5, **implementation.get(i.optimizer_implementation, {"foreach": True})
                )
            if name in ("sgd", "sgd-momentum"):
                return torch.optim.SGD(
                    params, lr=1e-3, momentum=0.9 if name == "sgd-momentum" else 0.0, foreach=True
                )
            from transformers.optimization import Adafactor

            return Adafactor(params, lr=1e-3, relative_step=False, scale_parameter=False)

        if i.optimizer_in_backward:
            optimizers = {param: make([param]) for param in trainable}

            def step_in_backward(param: Any) -> None:
                optimizers[param].step()
                optimizers[param].zero_grad(set_to_none=True)

            for param in trainable:
                param.register_post_accumulate_grad_hook(step_in_backward)
            chosen = list(optimizers.values())
        else:
            chosen = [make(trainable)]
        # The states of a running job: create them now, with a step on zero gradients.
        for param in trainable:
            param.grad = torch.zeros_like(param)
        for optimizer in chosen:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        return chosen

    # -- training -----------------------------------------------------------------------------------

    def train(self, model: Any, optimizers: list[Any]) -> dict[str, Any]:
        import torch

        i = self.i
        tracker = self.tracker(model, optimizers)
        phases = _Phases(tracker)
        micro_batches = 2 if i.grad_accum > 1 else 1
        autocast = (
            (lambda: torch.autocast("cpu", dtype=self.low))
            if self.mixed and not i.fsdp
            else contextlib.nullcontext
        )
        blocks = _ProgressHooks(model, self.say)
        # fp16's GradScaler scales the loss and unscales the gradients in place (no memory of note); its
        # inf check reads a value, which fake tensors do not have, so a trace leaves it out
        scaler = None
        if i.precision == "16-mixed":
            self.notes.append("fp16 loss scaling left out (it unscales gradients in place)")
        with tracker, contextlib.ExitStack() as stack:
            if i.task == "qlora":
                from rigcheck.trace.qlora import cuda_gemm_4bit

                stack.enter_context(cuda_gemm_4bit())
            if i.activation_offloading:
                stack.enter_context(_offload_saved_activations())
            for micro in range(micro_batches):
                if micro:
                    tracker.reset_mod_stats()  # MemTracker's per-module stats hold one iteration
                ids = torch.randint(0, i.arch.vocab, (i.micro_batch, i.seq_len))
                with phases("forward"), autocast():
                    blocks.phase = f"forward {micro + 1}/{micro_batches}" if micro_batches > 1 else "forward"
                    loss = self.loss(model, ids)
                with phases("backward"):
                    self.say("backward")
                    (scaler.scale(loss) if scaler else loss).backward()
                del loss, ids
            if optimizers and not i.optimizer_in_backward:
                with phases("optimizer step"):
                    self.say("optimizer step")
                    for optimizer in optimizers:
                        if scaler:
                            scaler.step(optimizer)
                        else:
                            optimizer.step()
                    if scaler:
                        scaler.update()
                    for optimizer in optimizers:
                        optimizer.zero_grad(set_to_none=True)
        blocks.remove()
        return phases.result()

    def loss(self, model: Any, ids: Any) -> Any:
        """The causal-LM loss as the trainers compute it: HF's ForCausalLMLoss (fp32 logits), or a
        chunked cross-entropy over 8 chunks (torchtune CEWithChunkedOutputLoss)."""
        import torch

        mask = torch.ones_like(ids)  # unpadded rows (_unpadded_batches)
        if self.i.loss != "chunked":
            output = model(input_ids=ids, attention_mask=mask, labels=ids, use_cache=False)
            return output.loss
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        hidden = base.model(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
        head = base.get_output_embeddings()
        labels = torch.nn.functional.pad(ids[:, 1:], (0, 1), value=-100)
        total = None
        for hidden_chunk, label_chunk in zip(hidden.chunk(8, dim=1), labels.chunk(8, dim=1), strict=True):
            # the head's weight applied chunk by chunk (a module called eight times would confuse
            # MemTracker's per-module bookkeeping; the tensors are the same)
            logits = torch.nn.functional.linear(hidden_chunk, head.weight, head.bias)
            part = torch.nn.functional.cross_entropy(
                logits.float().flatten(0, 1), label_chunk.flatten(), ignore_index=-100, reduction="sum"
            )
            total = part if total is None else total + part
        return total / ids.numel()

    # -- inference ----------------------------------------------------------------------------------

    def infer(self, model: Any) -> dict[str, Any]:
        import torch
        from transformers import StaticCache

        i = self.i
        context = i.context_len or i.seq_len
        prompt = min(i.prompt_len or context - 1, context - 1)
        tracker = self.tracker(model, [])
        phases = _Phases(tracker)
        blocks = _ProgressHooks(model, self.say)
        with tracker, torch.no_grad(), contextlib.ExitStack() as stack:
            if i.quantization in FOUR_BIT:
                from rigcheck.trace.qlora import cuda_gemm_4bit

                stack.enter_context(cuda_gemm_4bit())
            cache = StaticCache(config=model.config, max_cache_len=context)
            ids = torch.randint(0, i.arch.vocab, (i.concurrency, prompt))
            with phases("prefill"):
                blocks.phase = "prefill"
                position = torch.arange(prompt)
                out = model(
                    input_ids=ids,
                    **_cache_argument(model, cache),
                    use_cache=True,
                    cache_position=position,
                    logits_to_keep=1,
                )
            step = torch.randint(0, i.arch.vocab, (i.concurrency, 1))
            del out
            tracker.reset_mod_stats()
            with phases("decode"):
                blocks.phase = "decode"
                out = model(
                    input_ids=step,
                    **_cache_argument(model, cache),
                    use_cache=True,
                    cache_position=torch.tensor([prompt]),
                    logits_to_keep=1,
                )
            del out
        blocks.remove()
        self.notes.append(
            f"static KV cache of {context} tokens; prefill {prompt} tokens, then one decode step"
        )
        return phases.result()

    # -- tracking -----------------------------------------------------------------------------------

    def tracker(self, model: Any, optimizers: list[Any]) -> Any:
        if self.i.fsdp:
            from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker

            kind: Any = _peak_only(FSDPMemTracker) if self.peak_only else FSDPMemTracker
            return kind(model, optimizers[0] if optimizers else None)
        from torch.distributed._tools.mem_tracker import MemTracker

        tracker = (_peak_only(MemTracker) if self.peak_only else MemTracker)()
        tracker.track_external(model, *optimizers, *_quant_state_tensors(model))
        return tracker


def _peak_only(tracker: type) -> type:
    """``tracker`` keeping only the running peak of the whole rank. MemTracker also keeps, after every
    operation, the peak of each module that is running (``_update_peak_stats`` walks every module's
    statistics and copies snapshots): about three quarters of a trace's time, for numbers a trace does
    not read. The peak and its breakdown are the same (the last loop of torch's method)."""

    class PeakOnly(tracker):  # type: ignore[misc, valid-type]
        def _update_peak_stats(self, peak_state: Any) -> None:
            for device, snapshot in self._curr_mem_snap.items():
                if self._peak_mem.get(device, 0) < snapshot[_TOTAL]:
                    self._peak_mem[device] = snapshot[_TOTAL]
                    self._peak_mem_snap[device] = dict(snapshot)

    return PeakOnly


def _enable_checkpointing(model: Any) -> None:
    """Non-reentrant full checkpointing, by the name this transformers version gives it
    (``activation_checkpointing_enable`` from 5.x, ``gradient_checkpointing_enable`` before). The
    recomputation in backward runs under the trace's torch function modes again (checkpoint's
    ``context_fn``), so it takes the CUDA kernels the forward took."""
    import contextlib

    from rigcheck.trace.cuda_behaviour import cuda_attention_kernels

    @contextlib.contextmanager
    def recompute() -> Iterator[None]:
        with _frozen_parameter_hooks(), cuda_attention_kernels():
            yield

    def modes() -> tuple[Any, Any]:
        return contextlib.nullcontext(), recompute()

    kwargs = {"use_reentrant": False, "context_fn": modes}
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def _cache_argument(model: Any, cache: Any) -> dict[str, Any]:
    """The KV cache keyword of the model's forward: ``cache`` in recent transformers, else
    ``past_key_values``."""
    import inspect

    return {"cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values": cache}


def _quant_state_tensors(model: Any) -> list[Any]:
    """bitsandbytes keeps the absmax of each 4-bit weight in a QuantState, not as a parameter or buffer."""
    out = []
    for module in model.modules():
        state = getattr(module, "quant_state", None)
        while state is not None:
            out += [tensor for tensor in (state.absmax, getattr(state, "offset", None)) if tensor is not None]
            state = getattr(state, "state2", None)
    return out


def _make_adapters(model: Any, *, keep_fp32: bool) -> None:
    """Give each adapter parameter PEFT left on the meta device a fake tensor of its shape, with the
    dtype PEFT would have given it: the base layer's floating dtype
    (``BaseTunerLayer._move_adapter_to_device_of_base_layer``), then float32 for a 16-bit one when
    adapters are autocast (``peft.tuners.tuners_utils.cast_adapter_dtype``). Parameters met twice
    (shared) stay one tensor."""
    import torch
    from peft.tuners.tuners_utils import BaseTunerLayer

    made: dict[int, Any] = {}
    layers: list[Any] = [module for module in model.modules() if isinstance(module, BaseTunerLayer)]
    for layer in layers:
        base: Any = layer.get_base_layer().weight.dtype
        for adapter in layer.modules():
            for key, param in list(adapter.named_parameters(recurse=False)):
                if not param.is_meta:
                    continue
                if id(param) not in made:
                    dtype = base if base.is_floating_point else param.dtype
                    if keep_fp32 and dtype in (torch.float16, torch.bfloat16):
                        dtype = torch.float32
                    data = torch.empty(param.shape, dtype=dtype, device="cpu")
                    made[id(param)] = (param, torch.nn.Parameter(data, requires_grad=param.requires_grad))
                adapter.register_parameter(key, made[id(param)][1])
    left = [name for name, tensor in model.named_parameters() if tensor.is_meta]
    if left:
        raise RuntimeError(f"PEFT left parameters on the meta device that a trace cannot size: {left[:3]}")


def _frozen_parameter_hooks() -> Any:
    """MemTracker installs gradient hooks on every parameter, and torch refuses hooks on tensors
    that need no gradient: a frozen LoRA/QLoRA base. In this torch function mode (PyTorch's public
    hook for intercepting tensor methods), those get a handle that does nothing: they never receive
    a gradient to report."""
    import torch
    from torch.overrides import TorchFunctionMode

    class _NoHook:
        def remove(self) -> None:
            return None

    hooks = (torch.Tensor.register_hook, torch.Tensor.register_post_accumulate_grad_hook)

    class FrozenParameterHooks(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func in hooks and not args[0].requires_grad:
                return _NoHook()
            return func(*args, **(kwargs or {}))

    return FrozenParameterHooks()


@contextlib.contextmanager
def _unpadded_batches() -> Iterator[None]:
    """A trace's batch rows are whole sequences without padding, and on a GPU transformers then passes
    no mask to SDPA (``is_causal=True``, grouped K/V read in place) unless the model asks for one
    (``allow_is_causal_skip=False``: Falcon always, a static cache's one-token decode step). It decides
    by reading the attention mask and the cache offset, which fake tensors cannot show, and would build
    a q x kv mask. While a trace runs, the ``sdpa`` entry of transformers' mask registry
    (``AttentionMaskInterface``, its documented way to choose a mask function) decides as the GPU run
    would for unpadded rows (``masking_utils._ignore_causal_mask_sdpa``): no mask where the model allows
    one to be skipped and no sliding window is shorter than the keys; elsewhere transformers' own
    ``sdpa_mask`` builds it. Training batches carry an all-ones attention mask, as a trainer's collator
    gives them, so that transformers does not look for packed sequences in fake position ids."""
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    def gpu_sdpa_mask(
        *,
        kv_length: int,
        local_size: int | None = None,
        allow_is_causal_skip: bool = True,
        **kwargs: Any,
    ) -> Any:
        if allow_is_causal_skip and (local_size is None or kv_length < local_size):
            return None
        return sdpa_mask(kv_length=kv_length, local_size=local_size, allow_is_causal_skip=False, **kwargs)

    ALL_MASK_ATTENTION_FUNCTIONS["sdpa"] = gpu_sdpa_mask
    try:
        yield
    finally:
        del ALL_MASK_ATTENTION_FUNCTIONS["sdpa"]


def _shard_count(inputs: MemoryInputs) -> int:
    from rigcheck.core.estimate.memory import shard_count

    return shard_count(inputs)


@contextlib.contextmanager
def _fsdp_mesh(world: int) -> Iterator[Any]:
    from rigcheck.trace.fsdp import fake_process_group

    with fake_process_group(world) as mesh:
        yield mesh


@contextlib.contextmanager
def _offload_saved_activations() -> Iterator[None]:
    """torchtune's activation offloading (``OffloadActivations``): every tensor autograd saves that
    is not a parameter and is larger than 1 KiB leaves the GPU until backward needs it again."""
    import torch

    def pack(tensor: Any) -> Any:
        if isinstance(tensor, torch.nn.Parameter) or tensor.numel() * tensor.element_size() <= 1024:
            return tensor
        return ("offloaded", tensor.shape, tensor.dtype, tensor.stride())

    def unpack(packed: Any) -> Any:
        if isinstance(packed, tuple) and packed and packed[0] == "offloaded":
            _, shape, dtype, stride = packed
            return torch.empty_strided(shape, stride, dtype=dtype)
        return packed

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        yield


class _Phases:
    """The highest total the tracker reached in each phase, and the breakdown at the overall peak."""

    def __init__(self, tracker: Any) -> None:
        self.tracker = tracker
        self.peaks: dict[str, float] = {}
        self.best: tuple[float, str, dict[str, float]] = (0.0, "", {})

    @contextlib.contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        import copy

        tracker = self.tracker
        # Start the phase's peak at the current total (MemTracker keeps one running peak).
        tracker._peak_mem = {device: snap.get(_TOTAL, 0) for device, snap in tracker._curr_mem_snap.items()}
        tracker._peak_mem_snap = copy.deepcopy(tracker._curr_mem_snap)
        yield
        snapshot = tracker.get_tracker_snapshot("peak")
        total = float(sum(values.get(_TOTAL, 0) for values in snapshot.values()))
        self.peaks[phase] = max(self.peaks.get(phase, 0.0), total)
        if total > self.best[0]:
            categories: dict[str, float] = {}
            for values in snapshot.values():
                for key, value in values.items():
                    name = CATEGORY_OF.get(str(getattr(key, "value", key)))
                    if name:
                        categories[name] = categories.get(name, 0.0) + float(value)
            self.best = (total, phase, categories)

    def result(self) -> dict[str, Any]:
        peak, phase, categories = self.best
        return {"peak": peak, "phase": phase, "categories": categories, "phase_peaks": dict(self.peaks)}


class _ProgressHooks:
    """Says which block the forward pass is in, for traces long enough to need it."""

    def __init__(self, model: Any, say: Progress) -> None:
        from rigcheck.trace.models import transformer_blocks

        self.phase = "forward"
        blocks = transformer_blocks(model)
        total = len(blocks)
        self.handles = [
            block.register_forward_pre_hook(
                lambda module, args, index=index: say(f"{self.phase}: block {index + 1}/{total}")
            )
            for index, block in enumerate(blocks)
        ]

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

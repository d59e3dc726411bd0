"""Turn rigcheck's :class:`~rigcheck.core.estimate.architecture.Architecture` into the transformers
model it describes, built from its configuration only (no weights are downloaded or read).

Each family maps to the transformers configuration class whose modelling code the model's users run:
Llama (and Mistral, Qwen2, Gemma by ``model_type``), Mixtral, GPT-2, Falcon, OPT and Phi. The
numbers are the architecture's own; nothing else is taken from a hub.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rigcheck.core.engine.errors import UsageError
from rigcheck.core.estimate.architecture import Architecture

if TYPE_CHECKING:
    from transformers import PretrainedConfig

#: Families the tracer can build, and the model_type each becomes when the architecture names none.
TRACEABLE = ("llama", "mixtral", "gpt2", "falcon", "opt", "phi")


def model_type_of(arch: Architecture) -> str:
    """The transformers ``model_type`` to build."""
    if arch.family not in TRACEABLE:
        raise UsageError(
            f"rigcheck estimate --trace cannot build a {arch.family}-family model yet (it builds "
            f"{', '.join(TRACEABLE)}); the analytic estimate still applies"
        )
    if arch.kind != "decoder" or arch.head != "lm":
        raise UsageError("rigcheck estimate --trace builds decoder language models only")
    if arch.family == "llama":
        if arch.model_type in ("llama", "mistral", "qwen2", "gemma"):
            return arch.model_type
        if arch.mlp == "geglu":
            return "gemma"
        return "qwen2" if arch.qkv_bias else "llama"
    return arch.family


def build_config(arch: Architecture, *, attention: str, dropout: float | None = None) -> Any:
    """The transformers configuration of ``arch``; ``attention`` is eager | sdpa | flash."""
    import transformers

    kind = model_type_of(arch)
    drop = (0.1 if arch.dropout else 0.0) if dropout is None else dropout
    common: dict[str, Any] = {
        "vocab_size": arch.vocab,
        "tie_word_embeddings": arch.tied_embeddings,
        "use_cache": False,
    }
    max_position = arch.max_position or 4096
    config: PretrainedConfig
    if kind in ("llama", "mistral", "qwen2", "gemma"):
        values: dict[str, Any] = {
            **common,
            "hidden_size": arch.hidden,
            "intermediate_size": arch.ffn,
            "num_hidden_layers": arch.layers,
            "num_attention_heads": arch.heads,
            "num_key_value_heads": arch.kv_heads,
            "head_dim": arch.head_dim,
            "max_position_embeddings": max_position,
            "attention_dropout": drop if arch.dropout else 0.0,
        }
        if kind == "llama":
            config = transformers.LlamaConfig(**values, attention_bias=arch.qkv_bias, mlp_bias=arch.mlp_bias)
        elif kind == "mistral":
            config = transformers.MistralConfig(**values, sliding_window=None)
        elif kind == "qwen2":
            values.pop("head_dim")
            config = transformers.Qwen2Config(**values)
        else:
            config = transformers.GemmaConfig(**values, hidden_act="gelu_pytorch_tanh")
    elif kind == "mixtral":
        config = transformers.MixtralConfig(
            **common,
            hidden_size=arch.hidden,
            intermediate_size=arch.ffn,
            num_hidden_layers=arch.layers,
            num_attention_heads=arch.heads,
            num_key_value_heads=arch.kv_heads,
            head_dim=arch.head_dim,
            max_position_embeddings=max_position,
            num_local_experts=arch.experts,
            num_experts_per_tok=arch.top_k,
            sliding_window=None,
        )
        # The sort-and-group experts path has static shapes (the default loop indexes by the routed
        # tokens, which fake tensors cannot size); its memory is that of grouped_mm on a GPU.
        config._experts_implementation = "grouped_mm"
    elif kind == "gpt2":
        config = transformers.GPT2Config(
            **common,
            n_embd=arch.hidden,
            n_layer=arch.layers,
            n_head=arch.heads,
            n_inner=arch.ffn,
            n_positions=max_position,
            resid_pdrop=drop,
            embd_pdrop=drop,
            attn_pdrop=drop,
        )
    elif kind == "falcon":
        config = transformers.FalconConfig(
            **common,
            hidden_size=arch.hidden,
            num_hidden_layers=arch.layers,
            num_attention_heads=arch.heads,
            num_kv_heads=arch.kv_heads,
            multi_query=arch.kv_heads == 1,
            new_decoder_architecture=arch.kv_heads not in (1, arch.heads),
            parallel_attn=arch.parallel_attention,
            bias=arch.qkv_bias,
            alibi=arch.position == "alibi",
            ffn_hidden_size=arch.ffn,
            max_position_embeddings=max_position,
            hidden_dropout=drop,
            attention_dropout=drop,
        )
    elif kind == "opt":
        config = transformers.OPTConfig(
            **common,
            hidden_size=arch.hidden,
            num_hidden_layers=arch.layers,
            num_attention_heads=arch.heads,
            ffn_dim=arch.ffn,
            max_position_embeddings=max_position,
            word_embed_proj_dim=arch.embed_dim or arch.hidden,
            dropout=drop,
            attention_dropout=0.0,
        )
    else:  # phi
        config = transformers.PhiConfig(
            **common,
            hidden_size=arch.hidden,
            intermediate_size=arch.ffn,
            num_hidden_layers=arch.layers,
            num_attention_heads=arch.heads,
            num_key_value_heads=arch.kv_heads,
            max_position_embeddings=max_position,
            resid_pdrop=drop,
            embd_pdrop=drop,
        )
    # flash-attention-2 does not run on the CPU; SDPA's flash kernel saves the same tensors (q, k, v,
    # the output and its log-sum-exp) and, with no padding mask, reads grouped K/V without repeating them.
    config._attn_implementation = "eager" if attention == "eager" else "sdpa"
    return config


def build_model(config: Any, *, dtype: Any) -> Any:
    """A causal LM of ``config`` with parameters in ``dtype``, on the current device and fake mode."""
    import torch
    import transformers

    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype)
    finally:
        torch.set_default_dtype(previous)
    return model


def transformer_blocks(model: Any) -> list[Any]:
    """The transformer blocks of a causal LM (or of the PEFT model around it), in order."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # PEFT's wrapper
    for path in ("model.layers", "transformer.h", "model.decoder.layers"):
        node = base
        for part in path.split("."):
            node = getattr(node, part, None)
            if node is None:
                break
        if node is not None:
            return list(node)
    raise ValueError(f"cannot find the transformer blocks of {type(base).__name__}")

"""Transformer architecture numbers: from a preset, a workload's own numbers, or an HF config.json.

:class:`Architecture` holds the shapes the estimators need and derives parameter counts from them
(attention with grouped-query K/V, gated or plain MLPs, mixture-of-experts, tied embeddings,
learned positions, encoder-decoder cross-attention). Presets live in ``specs/models/presets.yaml``,
each copied from the model's public ``config.json`` with its source.

LoRA target names are resolved through the model's *family*: ``q_proj`` in Llama, ``c_attn`` in
GPT-2 (which holds Q, K and V at once), ``query_key_value`` in Falcon, and so on.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache, cached_property
from types import MappingProxyType
from typing import Any

from rigcheck.core.engine.errors import Problem, SpecError
from rigcheck.core.spec import spec_codes
from rigcheck.core.spec.fields import did_you_mean

#: Linear "roles" of a transformer block; each has a shape (d_in, d_out) per layer.
ATTENTION_ROLES = ("q", "k", "v", "o")
MLP_ROLES = ("gate", "up", "down")

#: Module names (as PEFT matches them, by suffix) -> the roles they cover, per family.
FAMILY_MODULES: dict[str, dict[str, tuple[str, ...]]] = {
    "llama": {
        "q_proj": ("q",),
        "k_proj": ("k",),
        "v_proj": ("v",),
        "o_proj": ("o",),
        "gate_proj": ("gate",),
        "up_proj": ("up",),
        "down_proj": ("down",),
    },
    "mixtral": {
        "q_proj": ("q",),
        "k_proj": ("k",),
        "v_proj": ("v",),
        "o_proj": ("o",),
        "w1": ("gate",),
        "w3": ("up",),
        "w2": ("down",),
    },
    "gpt2": {"c_attn": ("q", "k", "v"), "c_proj": ("o", "down"), "c_fc": ("up",)},
    "gpt_bigcode": {"c_attn": ("q", "k", "v"), "c_proj": ("o", "down"), "c_fc": ("up",)},
    "qwen1": {"c_attn": ("q", "k", "v"), "c_proj": ("o", "down"), "w1": ("up",), "w2": ("gate",)},
    "falcon": {
        "query_key_value": ("q", "k", "v"),
        "dense": ("o",),
        "dense_h_to_4h": ("up",),
        "dense_4h_to_h": ("down",),
    },
    "chatglm": {
        "query_key_value": ("q", "k", "v"),
        "dense": ("o",),
        "dense_h_to_4h": ("up",),
        "dense_4h_to_h": ("down",),
    },
    "opt": {
        "q_proj": ("q",),
        "k_proj": ("k",),
        "v_proj": ("v",),
        "out_proj": ("o",),
        "fc1": ("up",),
        "fc2": ("down",),
    },
    "bert": {"query": ("q",), "key": ("k",), "value": ("v",), "dense": ("o", "up", "down")},
    "phi": {
        "q_proj": ("q",),
        "k_proj": ("k",),
        "v_proj": ("v",),
        "dense": ("o",),
        "fc1": ("up",),
        "fc2": ("down",),
    },
    "t5": {
        "q": ("q",),
        "k": ("k",),
        "v": ("v",),
        "o": ("o",),
        "wi": ("up",),
        "wi_0": ("gate",),
        "wi_1": ("up",),
        "wo": ("down",),
    },
}
ALL_LINEAR = ("all-linear", "all_linear", "all")


@dataclass(frozen=True)
class Architecture:
    """Shapes of a transformer, and the parameter counts they imply.

    The counts derived from the shapes are worked out once per instance (``functools.cached_property``
    keeps them in the instance's ``__dict__``, beside the fields, which stay frozen): MEM001's search for
    fixes estimates one architecture some forty times, and each estimate read them a hundred times.
    Equality, hashing, ``repr`` and ``dataclasses.replace`` see the fields only."""

    name: str
    family: str
    kind: str  # decoder | encoder | encoder-decoder
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    mlp: str = "swiglu"  # swiglu | geglu | gelu | relu
    norm: str = "rmsnorm"  # rmsnorm | layernorm
    tied_embeddings: bool = False
    qkv_bias: bool = False
    mlp_bias: bool = False
    position: str = "rope"
    max_position: int | None = None
    parallel_attention: bool = False
    dropout: bool = False
    experts: int = 1
    top_k: int = 1
    shared_experts: int = 0  # always-active experts of width ffn (Qwen-MoE, DeepSeek-MoE)
    activation: str = ""  # silu | gelu | gelu_tanh | gelu_new (a Python formula) | relu; "" = from mlp
    decoder_layers: int = 0  # encoder-decoder: layers with cross-attention
    published_params: float | None = None
    embed_dim: int = 0  # embedding width when it differs from hidden (OPT-350m: 512, with projections)
    head: str = "lm"  # lm | classification
    model_type: str = ""  # the Hugging Face model_type when it matters (gemma, qwen2, mistral, ...)
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    def __hash__(self) -> int:
        """The hash of the fields (as the dataclass's own), worked out once: every memory estimate's
        inputs hash their architecture (the estimates already made are kept by their inputs)."""
        known: int | None = self.__dict__.get("_hash")
        if known is None:
            known = self.__dict__["_hash"] = hash(tuple(getattr(self, name) for name in _FIELD_NAMES))
        return known

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps: the fields, not what was worked out from them (the hash is only good in
        this process: ``str`` hashes are salted per process, PYTHONHASHSEED)."""
        return {name: self.__dict__[name] for name in _FIELD_NAMES}

    # -- shapes ---------------------------------------------------------------------------------

    @cached_property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @cached_property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @cached_property
    def gated(self) -> bool:
        return self.mlp in ("swiglu", "geglu")

    @cached_property
    def act_fn(self) -> str:
        """The activation function's implementation: transformers' GPT-2 and Phi run ``gelu_new``, a
        Python formula of several ops; the others one op (SiLU, GELU, tanh-GELU, ReLU)."""
        if self.activation:
            return self.activation
        if self.family in ("gpt2", "phi"):
            return "gelu_new"
        return {"swiglu": "silu", "geglu": "gelu_tanh", "relu": "relu"}.get(self.mlp, "gelu")

    def linear_shapes(self) -> Mapping[str, tuple[int, int]]:
        """``role -> (d_in, d_out)`` of one layer's linear layers (MLP roles: one expert); read-only."""
        return self._linear_shapes

    @cached_property
    def _linear_shapes(self) -> Mapping[str, tuple[int, int]]:
        shapes = {
            "q": (self.hidden, self.q_dim),
            "k": (self.hidden, self.kv_dim),
            "v": (self.hidden, self.kv_dim),
            "o": (self.q_dim, self.hidden),
            "up": (self.hidden, self.ffn),
            "down": (self.ffn, self.hidden),
        }
        if self.gated:
            shapes["gate"] = (self.hidden, self.ffn)
        return MappingProxyType(shapes)

    # -- parameter counts -------------------------------------------------------------------------

    @cached_property
    def attention_params(self) -> int:
        shapes = self.linear_shapes()
        weights = sum(shapes[role][0] * shapes[role][1] for role in ATTENTION_ROLES)
        bias = (self.q_dim + 2 * self.kv_dim) if self.qkv_bias else 0
        return weights + bias + (self.hidden if self.mlp_bias else 0)

    @cached_property
    def mlp_params_per_expert(self) -> int:
        shapes = self.linear_shapes()
        weights = sum(shapes[role][0] * shapes[role][1] for role in MLP_ROLES if role in shapes)
        bias = (self.ffn * (2 if self.gated else 1) + self.hidden) if self.mlp_bias else 0
        return weights + bias

    @cached_property
    def mlp_params(self) -> int:
        router = self.hidden * self.experts if self.experts > 1 else 0
        return self.mlp_params_per_expert * (self.experts + self.shared_experts) + router

    @cached_property
    def norm_params(self) -> int:
        per_norm = self.hidden * (2 if self.norm == "layernorm" else 1)
        return per_norm * (1 if self.parallel_attention else 2)

    @cached_property
    def layer_params(self) -> int:
        return self.attention_params + self.mlp_params + self.norm_params

    @cached_property
    def block_params(self) -> int:
        """All transformer blocks, including decoder cross-attention."""
        cross = self.decoder_layers * (self.attention_params + self.hidden)
        return self.layers * self.layer_params + cross

    @cached_property
    def embedding_width(self) -> int:
        return self.embed_dim or self.hidden

    @cached_property
    def embedding_params(self) -> int:
        learned = (self.max_position or 0) * self.hidden if self.position == "learned" else 0
        projections = 2 * self.embedding_width * self.hidden if self.embedding_width != self.hidden else 0
        return self.vocab * self.embedding_width + learned + projections

    @cached_property
    def head_params(self) -> int:
        if self.head != "lm" or self.tied_embeddings:
            return 0
        return self.vocab * self.embedding_width

    @cached_property
    def params(self) -> int:
        """Total parameters derived from the shapes (final norm included)."""
        return self.block_params + self.embedding_params + self.head_params + self.hidden

    @cached_property
    def linear_params(self) -> int:
        """Parameters of the linear layers inside blocks: what QLoRA/GPTQ quantise."""
        shapes = self.linear_shapes()
        attention = sum(shapes[role][0] * shapes[role][1] for role in ATTENTION_ROLES)
        experts = self.experts + self.shared_experts
        mlp = sum(shapes[role][0] * shapes[role][1] for role in MLP_ROLES if role in shapes) * experts
        return self.layers * (attention + mlp) + self.decoder_layers * attention

    @cached_property
    def largest_module_params(self) -> int:
        """The largest single module (DeepSpeed ZeRO-3 gathers at least this much at once)."""
        shapes = self.linear_shapes()
        largest_linear = max(d_in * d_out for d_in, d_out in shapes.values())
        return max(self.vocab * self.hidden, largest_linear)

    # -- LoRA -------------------------------------------------------------------------------------

    def lora_roles(self, targets: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
        """The roles a list of PEFT target names adapts. Raises ValueError for unknown names."""
        key = tuple(targets) if targets else ()
        roles = self._lora_memo.get(key)
        if roles is None:
            roles = self._lora_memo[key] = self._lora_roles(targets)
        return roles

    @cached_property
    def _lora_memo(self) -> dict[tuple[str, ...], tuple[str, ...]]:
        return {}

    def _lora_roles(self, targets: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
        modules = FAMILY_MODULES.get(self.family, FAMILY_MODULES["llama"])
        if not targets:
            return ("q", "v")  # PEFT's default for Llama-style models
        roles: list[str] = []
        for target in targets:
            if target.lower() in ALL_LINEAR:
                roles.extend(self.linear_shapes())
                continue
            name = target.rsplit(".", 1)[-1]
            if name in modules:
                roles.extend(modules[name])
            elif name in self.linear_shapes():
                roles.append(name)
            else:
                raise ValueError(
                    f"LoRA target {target!r} is not a linear module of a {self.family}-family model"
                    f"{did_you_mean(name, modules)} (its modules: {', '.join(modules)}; or all-linear)"
                )
        return tuple(dict.fromkeys(role for role in roles if role in self.linear_shapes()))

    def lora_params_per_layer(self, rank: int, roles: tuple[str, ...]) -> int:
        """Adapter parameters of one layer: ``rank x (d_in + d_out)`` per adapted linear (per expert)."""
        roles = tuple(roles)
        width = self._adapted_width.get(roles)
        if width is None:
            shapes = self.linear_shapes()
            width = 0
            for role in roles:
                d_in, d_out = shapes[role]
                width += (d_in + d_out) * (self.experts if role in MLP_ROLES else 1)
            self._adapted_width[roles] = width
        return rank * width

    @cached_property
    def _adapted_width(self) -> dict[tuple[str, ...], int]:
        return {}


#: The fields of an Architecture, in order (what equality compares and the hash hashes).
_FIELD_NAMES = tuple(item.name for item in fields(Architecture))

# -- presets ----------------------------------------------------------------------------------------


def _preset_key(name: str) -> str:
    """Case-insensitive, ``_``/space as ``-``; dots kept (``opt-1.3b`` is not ``opt-13b``)."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())


@cache
def _presets() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    from rigcheck.core.spec.loader import load_yaml_file
    from rigcheck.resources import specs_dir

    document = load_yaml_file(str(specs_dir() / "models" / "presets.yaml"))
    by_id: dict[str, dict[str, Any]] = {}
    index: dict[str, str] = {}
    for entry in document.data["models"]:
        by_id[entry["id"]] = entry
        for name in (entry["id"], *entry.get("aliases", ())):
            index[_preset_key(name)] = entry["id"]
    return by_id, index


def preset_ids() -> list[str]:
    return sorted(_presets()[0])


def find_preset(name: str) -> dict[str, Any] | None:
    by_id, index = _presets()
    key = _preset_key(name)
    model_id = index.get(key) or index.get(key.rsplit("/", 1)[-1])
    return by_id.get(model_id) if model_id else None


def preset_suggestion(name: str) -> str:
    """``"; did you mean 'llama-3-8b'?"``: a size the family does not have (``llama-3-7b``) gets the
    family's nearest size, not the nearest spelling (``llama-3-70b``); anything else the nearest name."""
    import math
    import re

    by_id, _ = _presets()
    key = _preset_key(name)
    sized = re.fullmatch(r"(.+?)(\d+(?:\.\d+)?)b", key)
    if sized and float(sized.group(2)) > 0:
        family, size = sized.group(1), float(sized.group(2))
        kin = [
            (abs(math.log(float(m.group(2)) / size)), preset)
            for preset in sorted(by_id)
            if (m := re.fullmatch(r"(.+?)(\d+(?:\.\d+)?)b", preset))
            and m.group(1) == family
            and float(m.group(2))
        ]
        if kin:
            return f"; did you mean {min(kin)[1]!r}?"
    return did_you_mean(key, sorted(by_id))


def architecture_from_mapping(values: dict[str, Any], *, name: str, source: str = "") -> Architecture:
    """Build an Architecture from preset-style keys (the workload's model fields use the same names)."""
    heads = int(values["heads"])
    hidden = int(values["hidden"])
    moe = values.get("moe") or {}
    decoder_layers = int(values.get("decoder_layers") or 0)
    kind = values.get("architecture") or "decoder"
    encoder_layers = int(values.get("encoder_layers") or 0)
    layers = int(values["layers"])
    if kind == "encoder-decoder" and encoder_layers:
        layers = encoder_layers + decoder_layers
    published = values.get("params_b")
    return Architecture(
        name=name,
        family=values.get("family") or "llama",
        kind=kind,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=int(values.get("kv_heads") or heads),
        head_dim=int(values.get("head_dim") or hidden // heads),
        ffn=int(values["ffn"]),
        vocab=int(values["vocab"]),
        mlp=values.get("mlp") or "swiglu",
        norm=values.get("norm") or "rmsnorm",
        tied_embeddings=bool(values.get("tied_embeddings", False)),
        qkv_bias=bool(values.get("qkv_bias", False)),
        mlp_bias=bool(values.get("mlp_bias", False)),
        position=values.get("position") or "rope",
        max_position=values.get("max_position"),
        parallel_attention=bool(values.get("parallel_attention", False)),
        dropout=bool(values.get("dropout", False)),
        experts=int(moe.get("experts", 1)),
        top_k=int(moe.get("top_k", 1)),
        shared_experts=int(moe.get("shared_experts", 0)),
        activation=values.get("activation") or "",
        decoder_layers=decoder_layers,
        published_params=float(published) * 1e9 if published else None,
        embed_dim=int(values.get("word_embed_proj_dim") or 0),
        head=values.get("head") or "lm",
        model_type=values.get("model_type") or "",
        source=source or values.get("source", ""),
    )


_MODEL_FIELDS = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn",
    "vocab",
    "max_position",
    "mlp",
    "tied_embeddings",
    "architecture",
    "params_b",
    "family",
    "norm",
    "head",
    "dropout",
)


def resolve_architecture(model: Any, *, document: Any = None, base_dir: str | None = None) -> Architecture:
    """The architecture of a workload's ``model:``: a preset (by ``preset`` or ``name``), an HF
    config.json (``hf_config``), and explicit numbers, which override both.

    Raises :class:`SpecError` at the field that is wrong when ``document`` (the workload's
    SpecDocument) is given, else ``ValueError``.
    """

    def fail(pointer: str, message: str, code: str = spec_codes.INVALID_VALUE) -> SpecError | ValueError:
        if document is None:
            return ValueError(message)
        location = document.locate(pointer)
        return SpecError(
            Problem(document.path, message, location.line or 1, location.column or 1, pointer, code)
        )

    values: dict[str, Any] = {}
    source = ""
    label = model.preset or model.name or model.hf or "model"
    hub_id, hub_field = model.hf, "/model/hf"
    if model.preset and not hub_id and find_preset(model.preset) is None:
        from rigcheck.core.estimate.hf_cache import is_repo_id

        if is_repo_id(model.preset):  # an org/name where a preset goes: the hub's id
            hub_id, hub_field = model.preset, "/model/preset"
    if hub_id:
        values.update(_hub_config(hub_id, model.revision, hub_field, fail))
        source = (
            f"config.json of {hub_id}" + (f" at {model.revision}" if model.revision else "") + " (HF cache)"
        )
    elif model.preset:
        preset = find_preset(model.preset)
        if preset is None:
            raise fail(
                "/model/preset",
                f"unknown model preset {model.preset!r}{preset_suggestion(model.preset)} "
                f"(rigcheck models lists them; or give layers, hidden, heads, ffn, vocab)",
            )
        values.update(preset)
        source = preset["source"]
    elif model.name and find_preset(model.name):
        preset = find_preset(model.name)
        values.update(preset)  # type: ignore[arg-type]
        source = preset["source"]  # type: ignore[index]
    if model.hf_config:
        values.update(read_hf_config(model.hf_config, base_dir=base_dir, fail=fail))
        source = f"config.json at {model.hf_config}"
    explicit = {key: getattr(model, key) for key in _MODEL_FIELDS if getattr(model, key, None) is not None}
    if "architecture" in explicit:
        values["architecture"] = explicit.pop("architecture")
    values.update(explicit)
    if model.moe is not None:
        values["moe"] = {
            "experts": model.moe.experts,
            "top_k": model.moe.top_k,
            "shared_experts": model.moe.shared_experts,
        }
        if model.moe.expert_ffn:
            values["ffn"] = model.moe.expert_ffn
    missing = [key for key in ("layers", "hidden", "heads", "ffn", "vocab") if not values.get(key)]
    if missing:
        raise fail(
            "/model",
            f"the model needs a preset, an hf id, an hf_config, or its numbers; missing: {', '.join(missing)}",
        )
    notes: list[str] = []
    if "mlp" not in values:
        values["mlp"], note = _guess_mlp(values)
        notes.append(note)
    arch = architecture_from_mapping(values, name=label, source=source or "the workload's model numbers")
    if notes:
        arch = replace(arch, notes=tuple(notes))
    return arch


def _guess_mlp(values: dict[str, Any]) -> tuple[str, str]:
    """Gated (SwiGLU) or plain MLP, from which one reproduces params_b when it is given."""
    candidates = {}
    for mlp in ("swiglu", "gelu"):
        arch = architecture_from_mapping({**values, "mlp": mlp}, name="probe")
        candidates[mlp] = arch.params
    published = values.get("params_b")
    if published:
        best = min(candidates, key=lambda mlp: abs(candidates[mlp] - float(published) * 1e9))
        return best, f"mlp not given: {best} reproduces params_b={published} best"
    best = "gelu" if int(values["ffn"]) == 4 * int(values["hidden"]) else "swiglu"
    return (
        best,
        f"mlp not given: {best} assumed from ffn/hidden = {int(values['ffn']) / int(values['hidden']):.2f}",
    )


# -- Hugging Face config.json -------------------------------------------------------------------------

_HF_FAMILY = {
    "llama": "llama",
    "mistral": "llama",
    "qwen2": "llama",
    "gemma": "llama",
    "gemma2": "llama",
    "qwen3": "llama",
    "mixtral": "mixtral",
    "gpt2": "gpt2",
    "gpt_bigcode": "gpt_bigcode",
    "qwen": "qwen1",
    "falcon": "falcon",
    "RefinedWebModel": "falcon",
    "chatglm": "chatglm",
    "opt": "opt",
    "bert": "bert",
    "roberta": "bert",
    "phi": "phi",
    "t5": "t5",
}
_FIRST = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "heads": ("num_attention_heads", "n_head", "num_heads"),
    "kv_heads": ("num_key_value_heads", "multi_query_group_num", "num_kv_heads"),
    "ffn": ("intermediate_size", "n_inner", "ffn_hidden_size", "inner_hidden_size", "d_ff"),
    "vocab": ("vocab_size", "padded_vocab_size"),
    "max_position": ("max_position_embeddings", "n_positions", "seq_length"),
    "head_dim": ("head_dim", "d_kv"),
}


#: The deepest nesting read in a config.json (published ones nest three levels) and the largest file:
#: deeper or larger is hostile input, refused before the JSON parser (which recurses) sees it.
HF_CONFIG_MAX_DEPTH = 64
HF_CONFIG_MAX_BYTES = 16 * 2**20  # also the most a fetch from the hub takes (hf_cache.config_path)

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_BRACKET = re.compile(r"[\[\]{}]")


class HfConfigError(ValueError):
    """A config.json that is not plain JSON data with the numbers the estimate needs."""


def _hub_config(repo_id: str, revision: str | None, pointer: str, fail: Any) -> dict[str, Any]:
    """Architecture numbers of a hub model id from its cached config.json
    (:mod:`rigcheck.core.estimate.hf_cache`, fetched where the network is allowed); refused at
    ``pointer`` when it is not cached and cannot be fetched."""
    from rigcheck.core.estimate.hf_cache import NotCached, config_path

    try:
        path = config_path(repo_id, revision, HF_CONFIG_MAX_BYTES)
    except (NotCached, ValueError) as exc:
        raise fail(pointer, str(exc)) from None
    try:
        return hf_config_values(parse_hf_json(_read_config_bytes(path)))
    except HfConfigError as exc:
        raise fail(pointer, f"cannot read the cached config of {repo_id} ({path}): {exc}") from None


def read_hf_config(path: str, *, base_dir: str | None = None, fail: Any = None) -> dict[str, Any]:
    """Architecture numbers from a Hugging Face ``config.json``, read as plain JSON (no transformers).

    Refused with ``fail("/model/hf_config", message)`` (a SpecError on that workload; ValueError without
    ``fail``): a file that cannot be read, over 16 MiB, nested deeper than 64, with NaN or Infinity (not
    JSON, RFC 8259 section 6), or whose architecture numbers are not whole numbers in range.
    """
    import os

    from rigcheck.core.spec.boundary import outside_reason

    full = path if os.path.isabs(path) or base_dir is None else os.path.join(base_dir, path)
    outside = outside_reason(full)
    if outside is not None:  # the checked root (--root, the repository in lint): never read past it
        message = f"hf_config {path!r} is not read: {outside}"
        raise (
            fail("/model/hf_config", message, spec_codes.OUTSIDE_ROOT) if fail else ValueError(message)
        ) from None
    try:
        raw = _read_config_bytes(full)
        config = parse_hf_json(raw)
        values = hf_config_values(config)
    except HfConfigError as exc:
        message = f"cannot read the Hugging Face config {path!r}: {exc}"
        raise (fail("/model/hf_config", message) if fail else ValueError(message)) from None
    return values


def _read_config_bytes(full: str) -> bytes:
    """The file's bytes, at most :data:`HF_CONFIG_MAX_BYTES`, from a regular file only (a FIFO or
    ``/dev/zero`` is refused from the open file, not from ``stat``); else :class:`HfConfigError`."""
    from rigcheck.core.spec.boundary import BoundaryError, read_regular

    try:
        return read_regular(full, HF_CONFIG_MAX_BYTES, inside=False)
    except BoundaryError as exc:
        raise HfConfigError(exc.reason) from None
    except OSError as exc:
        raise HfConfigError(exc.strerror or str(exc)) from None


def parse_hf_json(raw: bytes | str) -> dict[str, Any]:
    """A JSON object, or :class:`HfConfigError`: nested at most 64 deep, no NaN or Infinity, finite
    numbers of at most 30 digits."""
    from rigcheck.core.spec.units import MAX_DIGITS

    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise HfConfigError("not UTF-8 text") from None
    if _json_depth(text) > HF_CONFIG_MAX_DEPTH:
        raise HfConfigError(f"nested deeper than {HF_CONFIG_MAX_DEPTH} levels")

    def constant(name: str) -> Any:
        raise HfConfigError(f"{name} is not a JSON number (JSON has no NaN or Infinity){_key_of(text, name)}")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            found = _key_of(text, digits[:20])
            raise HfConfigError(f"a {len(digits.lstrip('-')):,}-digit number{found}")
        return int(digits)

    def real(digits: str) -> float:
        value = float(digits)
        if not math.isfinite(value) or len(digits) > 4 * MAX_DIGITS:
            raise HfConfigError(f"{digits[:40]} is out of range for a number{_key_of(text, digits[:20])}")
        return value

    try:
        config = json.loads(text, parse_constant=constant, parse_int=integer, parse_float=real)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise HfConfigError(f"nested deeper than {HF_CONFIG_MAX_DEPTH} levels") from None
    except HfConfigError:
        raise
    except ValueError as exc:
        raise HfConfigError(str(exc)) from None
    if not isinstance(config, dict):
        raise HfConfigError(f"expected a JSON object ({{...}}) at the top, got {type(config).__name__}")
    return config


def _json_depth(text: str) -> int:
    """How deep the arrays and objects of ``text`` nest, counted without recursion (strings skipped)."""
    depth = deepest = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _key_of(text: str, value: str) -> str:
    """``" at 'n_embd'"``: the key written before ``value`` (the start of a number or constant), if found."""
    found = re.search(r'"([^"\\]{1,80})"\s*:\s*' + re.escape(value), text)
    return f" at {found.group(1)!r}" if found else ""


def _whole(config: dict[str, Any], name: str, low: int, high: int) -> int:
    """``config[name]`` as a whole number from ``low`` to ``high``, or :class:`HfConfigError` naming the key."""
    value = config[name]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = repr(value) if isinstance(value, int | float | str) else f"a JSON {type(value).__name__}"
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise HfConfigError(f"{name!r} must be a whole number from {low:,} to {high:,}, got {shown}")
    return value


def _bounds() -> dict[str, int]:
    from rigcheck.core.spec.models.workload import MAX_HEADS, MAX_LAYERS, MAX_TOKENS, MAX_WIDTH

    return {
        "layers": MAX_LAYERS,
        "hidden": MAX_WIDTH,
        "heads": MAX_HEADS,
        "kv_heads": MAX_HEADS,
        "ffn": MAX_WIDTH,
        "vocab": MAX_WIDTH,
        "max_position": MAX_TOKENS,
        "head_dim": MAX_WIDTH,
    }


def hf_config_values(config: dict[str, Any]) -> dict[str, Any]:
    """The architecture keys of a parsed config.json; :class:`HfConfigError` for a number that is not a
    whole number in the workload schema's range, or a ``model_type`` that is not text."""
    from rigcheck.core.spec.models.workload import MAX_EXPERTS, MAX_LAYERS

    bounds = _bounds()
    values: dict[str, Any] = {}
    for key, names in _FIRST.items():
        for name in names:
            if config.get(name) is not None:
                values[key] = _whole(config, name, 1, bounds[key])
                break
    model_type = config.get("model_type", "")
    if not isinstance(model_type, str):
        raise HfConfigError(f"'model_type' must be text, got {type(model_type).__name__}")
    values["family"] = _HF_FAMILY.get(model_type, "llama")
    if model_type:
        values["model_type"] = model_type
    if config.get("multi_query") and model_type in ("falcon", "RefinedWebModel"):
        values["kv_heads"] = 1
    if "ffn" not in values and "hidden" in values:
        values["ffn"] = 4 * int(values["hidden"])
    if model_type == "qwen" and "ffn" in values:
        values["ffn"] = int(values["ffn"]) // 2  # QWenMLP builds w1/w2 at intermediate_size // 2
    act = str(
        config.get("hidden_act") or config.get("activation_function") or config.get("feed_forward_proj") or ""
    )
    gated_families = {"llama", "mixtral", "qwen1"}
    if "gated" in act or values["family"] in gated_families:
        values["mlp"] = "geglu" if "gelu" in act else "swiglu"
    elif "relu" in act:
        values["mlp"] = "relu"
    else:
        values["mlp"] = "gelu"
    if model_type.startswith("gemma"):
        values["mlp"] = "geglu"
    values["norm"] = (
        "rmsnorm"
        if ("rms_norm_eps" in config or ("layer_norm_epsilon" in config and model_type == "t5"))
        else "layernorm"
    )
    values["tied_embeddings"] = bool(config.get("tie_word_embeddings", True))
    values["position"] = "learned" if model_type in ("gpt2", "opt", "bert", "gpt_bigcode") else "rope"
    if config.get("num_local_experts"):
        experts = _whole(config, "num_local_experts", 1, MAX_EXPERTS)
        top_k = (
            _whole(config, "num_experts_per_tok", 1, MAX_EXPERTS) if "num_experts_per_tok" in config else 2
        )
        values["moe"] = {"experts": experts, "top_k": top_k}
    if model_type == "t5":
        values["architecture"] = "encoder-decoder"
        values["encoder_layers"] = values.get("layers")
        decoder = config.get("num_decoder_layers")
        values["decoder_layers"] = (
            _whole(config, "num_decoder_layers", 1, MAX_LAYERS)
            if decoder is not None
            else values.get("layers")
        )
    elif model_type in ("bert", "roberta"):
        values["architecture"] = "encoder"
    return values

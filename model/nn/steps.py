"""The step catalogue: what every hook site of the forward pass computes, in a formula and in
plain words, how a recorded step's name reads aloud, and how its tensor is shown: by meaning
(`view_kind`: probabilities, a mask, or by sign) and as the 2-D slice a map draws (`slice_for_view`).

A hook site carries only its name ("encoder.layers.0.self_attn.weights"); the module that owns
it says which group of the catalogue it belongs to (`STEP_GROUP`) and which token axes it runs
along, and this module supplies the rest. The text for a lecture lives here in one place instead
of inside the forward code.

Axes in the catalogue name every dimension of the step's tensor: "batch", "head", "d_model",
"d_k", "d_ff", "vocab", and the token axes "q" / "k" (an attention's query / key positions) or
"t" (the positions a layer runs along), which become "src" or "tgt" for a given module.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from weakref import WeakKeyDictionary

import numpy as np
from torch import nn

# What a step's name reads aloud as: the recorder's names are PyTorch module paths (stable,
# greppable, what an engineer matches against the code); a student reads "Encoder layer 1 ·
# self-attention · weights", every numbered part counted from 1.
STACKS = {"encoder": "Encoder", "decoder": "Decoder", "generator": "Output layer"}
MODULES = {"self_attn": "self-attention", "cross_attn": "cross-attention", "ffn": "feed-forward",
           "embedding": "embedding", "positional": "positional encoding", "input": "input (embedding + PE)",
           "final_norm": "final layer norm", "norm": "layer norm", "q": "Q", "k": "K", "v": "V",
           "probs": "probabilities", "residual": "residual sum", "concat": "heads concatenated",
           "context": "context (weights × V)", "tokens": "token lookup",
           "q_rot": "Q rotated (RoPE)", "k_rot": "K rotated (RoPE)", "k_shared": "K shared (GQA)",
           "v_shared": "V shared (GQA)", "gate": "gate (SwiGLU)", "up": "up projection"}
DECODER_MODULES = {"self_attn": "masked self-attention"}  # the decoder's own attention is causal
NUMBERED = {"add_norm": "add & norm"}  # "add_norm2" → "add & norm 2"


@dataclass(frozen=True)
class StepText:
    """One site's formula, its plain-words description and its axes (with "q"/"k"/"t")."""

    formula: str
    description: str
    axes: tuple[str, ...]


HEAD = ("batch", "head")
ATTENTION = {
    "q": StepText("Q_i = X W_i^Q", "Queries: what each token is looking for, one d_k vector per head.",
                  HEAD + ("q", "d_k")),
    "k": StepText("K_i = X W_i^K", "Keys: what each token offers to be found by, per head.", HEAD + ("k", "d_k")),
    "v": StepText("V_i = X W_i^V", "Values: what each token passes on when attended to, per head.",
                  HEAD + ("k", "d_k")),
    # Rotary positions (RoPE): no position is added to the embeddings; q and k are turned instead.
    "q_rot": StepText("R(m) q_m: (q₂ᵢ, q₂ᵢ₊₁) turned by m·θᵢ, θᵢ = base^(−2i/d_k)",
                      "Each query rotated by its position m: every pair of dimensions turns by its own angle, "
                      "fast for the first pairs, slow for the last.", HEAD + ("q", "d_k")),
    "k_rot": StepText("R(n) k_n: (k₂ᵢ, k₂ᵢ₊₁) turned by n·θᵢ",
                      "Each key rotated by its position n, so a score q_m·k_n depends only on the distance m − n.",
                      HEAD + ("k", "d_k")),
    # Grouped-query attention (GQA): fewer key/value heads, each shared by a group of query heads.
    "k_shared": StepText("K for head i = K_⌊i/g⌋ (g query heads per key head)",
                         "Grouped-query attention: each key head is shared by g query heads, so the model stores "
                         "g times fewer keys.", HEAD + ("k", "d_k")),
    "v_shared": StepText("V for head i = V_⌊i/g⌋",
                         "The values are shared the same way: a group of query heads reads one value head.",
                         HEAD + ("k", "d_k")),
    "scores": StepText("Q Kᵀ / √d_k",
                       "How well each query matches each key, scaled by √d_k so the softmax does not saturate.",
                       HEAD + ("q", "k")),
    "mask": StepText("mask (1 = may attend, 0 = blocked)",
                     "Which keys each query is allowed to see: padding and (in the decoder) the future are blocked.",
                     ("batch", "q", "k")),
    "masked_scores": StepText("Q Kᵀ / √d_k + mask (−∞ where blocked)",
                              "Blocked positions get −∞, so the softmax gives them exactly zero weight.",
                              HEAD + ("q", "k")),
    "weights": StepText("softmax(Q Kᵀ / √d_k + mask)",
                        "Attention weights: each row sums to 1 and says how much each query takes from each key.",
                        HEAD + ("q", "k")),
    "context": StepText("head_i = softmax(…) V_i", "Each head's output: the weighted average of the values.",
                        HEAD + ("q", "d_k")),
    "concat": StepText("Concat(head₁, …, head_h)",
                       "The heads' outputs side by side again: h × d_k = d_model numbers per token.",
                       ("batch", "q", "d_model")),
    "output": StepText("MultiHead = Concat(heads) Wᴼ",
                       "The output projection Wᴼ mixes what the heads found into one vector per token.",
                       ("batch", "q", "d_model")),
}

GQA_WORDS = {"k": "Keys: what each token offers to be found by, one per key/value head (fewer than the query heads).",
             "v": "Values: what each token passes on, one per key/value head (shared by a group of query heads)."}


def _attention(module) -> dict[str, StepText]:
    """The attention texts; with grouped-query attention the k and v heads are the shared ones."""
    if getattr(module, "groups", 1) == 1:
        return ATTENTION
    texts = dict(ATTENTION)
    for name, words in GQA_WORDS.items():
        texts[name] = StepText(texts[name].formula, words, HEAD + ("k", "d_k"))
    return texts


# The FFN's non-linearity as the formula writes it and as a description names it (Eq. 2: ReLU;
# BERT: GELU; Marian: swish; Llama: SwiGLU, a swish gate times a linear "up" projection).
ACTIVATION_WORDS = {"relu": ("max(0, {})", "ReLU"), "gelu": ("GELU({})", "GELU"), "swish": ("swish({})", "swish"),
                    "swiglu": ("swish({})", "swish")}
STREAM = ("batch", "t", "d_model")
WIDE = ("batch", "t", "d_ff")


def _ffn(ffn) -> dict[str, StepText]:
    pattern, name = ACTIVATION_WORDS[ffn.activation]
    b = ffn.w_2.bias is not None
    if ffn.activation == "swiglu":
        gate = pattern.format("x W₁")
        return {"gate": StepText(gate, "SwiGLU's gate: swish of one projection decides, per feature, how much passes.",
                                 WIDE),
                "up": StepText("x W₃", "SwiGLU's second (linear) projection to the wide layer, which the gate scales.",
                               WIDE),
                "hidden": StepText(f"{gate} ⊙ x W₃", "The gated hidden layer: gate times up, d_ff features per token.",
                                   WIDE),
                "output": StepText(f"FFN(x) = ({gate} ⊙ x W₃) W₂",
                                   "Projected back to d_model (down); each position is transformed on its own.",
                                   STREAM)}
    hidden = pattern.format("x W₁ + b₁" if b else "x W₁")
    return {"hidden": StepText(hidden, f"The feed-forward layer's wide hidden layer after {name}: d_ff features "
                               "per token.", WIDE),
            "output": StepText(f"FFN(x) = {hidden} W₂" + (" + b₂" if b else ""),
                               "Projected back to d_model; each position is transformed on its own.", STREAM)}


PRE_LN = {
    "norm": StepText("LayerNorm(x)", "Pre-LN: the sublayer sees a normalised copy of the stream.", STREAM),
    "residual": StepText("x + Sublayer(LayerNorm(x))",
                         "The residual stream: the sublayer's result is added to what came in.", STREAM),
}
POST_LN = {
    "residual": StepText("x + Sublayer(x)", "The residual connection: the sublayer's result is added to its input.",
                         STREAM),
    "norm": StepText("LayerNorm(x + Sublayer(x))",
                     "Post-LN (the paper): each token's vector is normalised to mean 0, variance 1, then scaled.",
                     STREAM),
}
STACK = {"final_norm": StepText("LayerNorm(x)", "Pre-LN stacks end with one more LayerNorm.", STREAM)}
# RMSNorm (Llama): x / √(mean(x²) + ε) · g: no mean subtracted, no bias.
RMS_WORDS = (("LayerNorm", "RMSNorm"), ("normalised to mean 0, variance 1, then scaled",
                                        "divided by its root mean square, then scaled"))


def _rms(texts: dict[str, StepText]) -> dict[str, StepText]:
    """The same texts for a model whose norms are RMSNorm."""
    out = {}
    for name, text in texts.items():
        formula, description = text.formula, text.description
        for old, new in RMS_WORDS:
            formula, description = formula.replace(old, new), description.replace(old, new)
        out[name] = StepText(formula, description, text.axes)
    return out


def _is_rms(norm) -> bool:
    return isinstance(norm, nn.RMSNorm)


def _add_norm(module) -> dict[str, StepText]:
    texts = PRE_LN if module.norm_first else POST_LN
    return _rms(texts) if _is_rms(module.norm) else texts


def _stack(module) -> dict[str, StepText]:
    return _rms(STACK) if _is_rms(module.norm) else STACK

POSITIONAL_FORMULAS = {"sinusoidal": "PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(…)",
                       "sinusoidal_halves": "PE(pos, i) = sin(pos/10000^(2i/d)), PE(pos, d/2 + i) = cos(…)",
                       "learned": "P[pos] (learned)",
                       "rope": "none added: q and k are rotated by m·θᵢ inside attention (RoPE)"}


def _inputs(model) -> dict[str, StepText]:
    """The Transformer's own sites (embeddings and output layer); the texts follow its config."""
    cfg = model.config
    scaled = "E[token] · √d_model" if cfg.scale_embeddings else "E[token]"
    rope = cfg.positional == "rope"
    summed = scaled + ("" if rope else " + PE(pos)") + (" + T[0]" if cfg.type_vocab_size else "")
    return {
        "embedding.tokens": StepText("E[token]", "Each token id looks up its learned vector in the embedding table.",
                                     STREAM),
        "embedding.scaled": StepText(
            "E[token] · √d_model", "The embeddings are multiplied by √d_model (Section 3.4) so they are not drowned "
            "by the positions.", STREAM) if cfg.scale_embeddings else StepText(
            "E[token] (not scaled)", "This model adds its embeddings unscaled (no × √d_model, unlike Section 3.4).",
            STREAM),
        "positional": StepText(POSITIONAL_FORMULAS[cfg.positional],
                               "The positional encoding: the only place the model learns where each token is.",
                               ("t", "d_model")),
        "embedding.token_type": StepText("T[0]", "BERT's token-type (segment) embedding; a single sentence is all "
                                         "type 0.", STREAM),
        "input": StepText(summed, "What enters the first layer: each token's meaning alone; its position enters "
                          "attention as a rotation of q and k (RoPE)." if rope else
                          "What enters the first layer: meaning plus position, one vector per token."
                          if not cfg.embedding_norm else
                          "Meaning plus position, one vector per token, before the LayerNorm.", STREAM),
        "input_norm": StepText(f"LayerNorm({summed})", "BERT normalises the summed embeddings; this is what enters "
                               "the first layer.", STREAM),
        "generator.logits": StepText("x Wᵀ + b" if model.generator.bias is not None else "x Wᵀ",
                                     "One score per vocabulary entry for the next token.",
                                     ("batch", "t", "vocab")),
        "generator.probs": StepText("softmax(logits)", "The predicted next-token distribution.",
                                    ("batch", "t", "vocab")),
    }


# STEP_GROUP of a module → its sites' texts (a table, or a function of the module for texts that
# follow its configuration).
CATALOGUE: dict[str, Callable[[object], dict[str, StepText]]] = {
    "attention": _attention,
    "ffn": _ffn,
    "add_norm": _add_norm,
    "stack": _stack,
    "model": _inputs,
}


# module → {site: its text}: a recording asks for ~150 texts per forward, the same each time.
_TEXTS: WeakKeyDictionary = WeakKeyDictionary()
_AXES: WeakKeyDictionary = WeakKeyDictionary()  # module → {site: its unresolved axes}


def step_text(module, local: str) -> StepText:
    """The text of site `local` of `module`, its axes resolved to "src" / "tgt".

    The Transformer's sites are named with their stack ("encoder.input"): the stack picks the
    token axis, and the generator's axis follows the stack that feeds it."""
    texts = _TEXTS.get(module)
    if texts is None:
        texts = _TEXTS[module] = {}
    text = texts.get(local)
    if text is None:
        text = texts[local] = _resolve(module, local)
    return text


def site_axes(module, local: str) -> tuple[str, ...]:
    """The axes of site `local` of `module` as the catalogue writes them, before `step_text`
    resolves them: an attention's token axes stay "q" (its queries) and "k" (its keys), every
    other token axis is "t" — what a recording that gathers rows from several forwards needs
    to tell a query row from a key column (`model.inference.recorded_rows`)."""
    axes = _AXES.get(module)
    if axes is None:
        axes = _AXES[module] = {}
    found = axes.get(local)
    if found is None:
        found = axes[local] = _unresolved(module, local)[0].axes
    return found


def _unresolved(module, local: str) -> tuple[StepText, dict[str, str]]:
    """(the catalogue's text of the site, its token axes' names in this module)."""
    group = module.STEP_GROUP
    axes = dict(getattr(module, "step_axes", {}))
    if group == "model":
        stack, _, rest = local.partition(".")
        if stack in ("encoder", "decoder"):
            local, axes = rest, {"t": "src" if stack == "encoder" else "tgt"}
        else:
            axes = {"t": "tgt" if module.config.model_kind.has_decoder else "src"}
    return CATALOGUE[group](module)[local], axes


def _resolve(module, local: str) -> StepText:
    text, axes = _unresolved(module, local)
    return StepText(text.formula, text.description, tuple(axes.get(a, a) for a in text.axes))


def _part(part: str, stack: str) -> str:
    if stack == "decoder" and part in DECODER_MODULES:
        return DECODER_MODULES[part]
    if part in MODULES:
        return MODULES[part]
    for prefix, words in NUMBERED.items():
        if part.startswith(prefix) and part[len(prefix):].isdigit():
            return f"{words} {part[len(prefix):]}"
    return part.replace("_", " ")


def readable_step_name(name: str) -> str:
    """"encoder.layers.0.self_attn.weights" → "Encoder layer 1 · self-attention · weights";
    a name it does not know the parts of is still shown whole, its layer numbers from 1."""
    parts = name.split(".")
    stack = parts[0]
    words: list[str] = [STACKS.get(stack, stack)]
    i = 1
    while i < len(parts):
        part = parts[i]
        if part == "layers" and i + 1 < len(parts) and parts[i + 1].isdigit():
            words[-1] += f" layer {int(parts[i + 1]) + 1}"
            i += 2
            continue
        words.append(_part(part, stack))
        i += 1
    return " · ".join(words)


def view_kind(name: str, tensor) -> str:
    """How to colour a step: probabilities/weights sequential, masks two-coloured, else by sign."""
    if tensor.dtype == bool or name.endswith(".mask"):
        return "mask"
    if name.endswith((".weights", ".probs")):
        return "probs"
    return "auto"


def slice_for_view(tensor: np.ndarray, axes: tuple[str, ...], head: int) -> tuple[np.ndarray, str, str]:
    """The 2-D slice a heatmap shows: batch 0, the chosen head, the last two axes as (rows, cols).

    A 1-D tensor becomes one row. Returns (matrix, row axis name, column axis name)."""
    t, names = tensor, list(axes)
    while t.ndim > 2:
        axis = names[0]
        index = min(head, t.shape[0] - 1) if axis == "head" else 0
        t, names = t[index], names[1:]
    if t.ndim == 1:
        return t[None, :], "", names[0]
    if t.ndim == 0:
        return np.reshape(t, (1, 1)), "", ""
    return t, names[0], names[1]

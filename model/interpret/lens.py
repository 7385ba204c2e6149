"""The logit lens (nostalgebraist 2020): read every layer's residual stream through the output layer.

The output layer (Section 3.4's "linear + softmax", our `generator`) is trained to read only
the last layer's output. Passing each earlier layer's output through it anyway shows when
the model's guess forms: in a trained model the middle layers often already decode to the
final answer, or to a plausible runner-up.

Which tensor is "the residual stream after layer i" depends on where the LayerNorm sits:

* post-LN (the paper, BERT, Marian): each layer ends with LayerNorm(x + Sublayer(x)), so
  its output is already normalised and is exactly what the output layer reads after the
  last layer. There is no final norm to apply, and none is invented: the lens is
  generator(layer output).
* pre-LN (`norm_first`): the stream x + Sublayer(LayerNorm(x)) is never normalised inside
  the stack; the stack ends with one more LayerNorm (`final_norm`) before the output layer.
  The lens applies that same final norm to every layer's stream: generator(final_norm(x_i)).

Either way the last layer's lens is the model's own output distribution, by construction.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from model.nn.trace import Trace

LENS_TOP_K = 5


class LensError(ValueError):
    """A trace (or model) the logit lens cannot read; the message says why."""


def lens_stack(model: nn.Module) -> str:
    """The stack that feeds the output layer: the decoder, or the encoder of an encoder-only model."""
    return "decoder" if model.config.has_decoder else "encoder"


def residual_names(model: nn.Module) -> list[str]:
    """The recorded step holding each layer's output (the residual stream after layer i)."""
    cfg = model.config
    stack = lens_stack(model)
    last = "add_norm3" if stack == "decoder" else "add_norm2"  # the feed-forward's Add & Norm
    part = "residual" if cfg.norm_first else "norm"  # pre-LN: the raw stream; post-LN: after the layer's LayerNorm
    n = cfg.n_decoder_layers if stack == "decoder" else cfg.n_encoder_layers
    return [f"{stack}.layers.{i}.{last}.{part}" for i in range(n)]


def _model_of(trace: Trace, model: nn.Module | None) -> nn.Module:
    model = model if model is not None else trace.model
    if model is None:
        raise LensError("The trace does not know its model; record it with `record(model)` or pass the model.")
    if not model.config.output_layer:
        raise LensError("This model has no output layer (no language-model head: it is a sentence encoder), "
                        "so there is nothing to read its layers through: the logit lens needs one.")
    return model


def _hidden_states(trace: Trace, model: nn.Module) -> list[torch.Tensor]:
    try:
        return [trace[name].tensor for name in residual_names(model)]
    except KeyError:
        raise LensError(f"The trace holds no recorded {lens_stack(model)} layers: record a forward pass "
                        "of the whole model first.") from None


@torch.no_grad()
def read_out(model: nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """One layer's stream (B, T, d_model) → probabilities (B, T, V): final norm (pre-LN only), generator, softmax."""
    stack = getattr(model, lens_stack(model))
    weight = model.generator.weight
    x = hidden.to(weight.device, weight.dtype)  # (B, T, d_model)
    if stack.norm is not None:  # pre-LN: the stack's own final LayerNorm
        x = stack.norm(x)
    return model.generator(x).float().softmax(-1)  # (B, T, V)


def logit_lens(trace: Trace, model: nn.Module | None = None) -> torch.Tensor:
    """Probabilities (layers, batch, positions, vocab), on the CPU, for the stack that feeds the
    output layer: row i is layer i's output read through (final norm →) generator → softmax.

    `model` defaults to the one the trace recorded. Raises `LensError` for a model without an
    output layer (all-MiniLM-L6-v2) or a trace without that stack's layers.
    """
    model = _model_of(trace, model)
    return torch.stack([read_out(model, h).cpu() for h in _hidden_states(trace, model)])


@dataclass
class LensView:
    """What the lens panel draws, small enough for every Frame: the top-k of every (layer,
    position) cell of batch item 0, instead of the full (layers, positions, vocab) tensor."""

    stack: str  # "encoder" | "decoder"
    positions: list[str]  # the token each column reads (the decoder's input, or the encoder's)
    top_ids: torch.Tensor  # (L, T, k) long
    top_probs: torch.Tensor  # (L, T, k) float, best first
    top_pieces: list[list[list[str]]]  # [layer][position][rank]
    marked: list[int]  # positions to mark (a masked LM's [MASK] positions)

    @property
    def n_layers(self) -> int:
        return self.top_probs.size(0)


def lens_view(trace: Trace, vocab: list[str], positions: list[str], marked: list[int] | None = None,
              model: nn.Module | None = None, k: int = LENS_TOP_K) -> LensView:
    """The top-k of every cell, one layer at a time (a 58k-word vocabulary × 512 positions × 6
    layers would be ~700 MB as one tensor; one layer of batch item 0 is kept at a time)."""
    model = _model_of(trace, model)
    ids, probs = [], []
    for hidden in _hidden_states(trace, model):
        p = read_out(model, hidden[:1])[0]  # (T, V)
        top = p.topk(min(k, p.size(-1)), dim=-1)
        ids.append(top.indices.cpu())
        probs.append(top.values.cpu())
    top_ids, top_probs = torch.stack(ids), torch.stack(probs)  # (L, T, k)
    pieces = [[[vocab[i] if 0 <= i < len(vocab) else f"#{i}" for i in cell] for cell in layer]
              for layer in top_ids.tolist()]
    return LensView(lens_stack(model), list(positions), top_ids, top_probs, pieces, list(marked or []))


__all__ = ["LENS_TOP_K", "LensError", "LensView", "lens_view", "logit_lens", "read_out", "residual_names"]

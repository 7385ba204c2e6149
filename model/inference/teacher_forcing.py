"""The teacher-forced parallel pass, with and without the causal mask (Section 3.2.3).

Training runs the decoder over the whole target at once; the look-ahead mask is what makes
row t of that parallel pass equal to step t of autoregressive decoding. `parallel_pass`
records that pass (or its ablation without the mask) as plain CPU tensors a viewer can
compare with `decoding.decode_steps`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from model.inference.decoding import DecodeStep
from model.nn.hooks import hooks
from model.nn.kinds import AttentionKind
from model.nn.transformer import Transformer, decoder_mask


@dataclass
class ParallelPass:
    """One teacher-forced forward over `tgt_in` (<bos> y1 … y_{T-1}).

    probs: (T, V) the model's softmax at every position; predicted: argmax per row (never
    <bos>/<pad>, as in decoding); mask: (T, T) bool, True where a query may attend a key;
    self_attention: (L, h, T, T); cross_attention: (L, h, T, S) or None.
    """

    tgt_in: list[int]
    causal: bool
    probs: torch.Tensor
    predicted: list[int]
    mask: torch.Tensor
    self_attention: torch.Tensor
    cross_attention: torch.Tensor | None

    def future_mass(self, layer: int, head: int) -> torch.Tensor:
        """(T,) attention weight each query row puts on later positions (0 under the mask)."""
        att = self.self_attention[layer, head]  # (T, T)
        return att.triu(diagonal=1).sum(-1)

    def alignment(self) -> torch.Tensor:
        """(L, h): how clearly each decoder head aligns its rows with the tokens it reads — the
        mean over query rows of the row's largest weight (1: each row on one token), times the
        share of different tokens the rows pick (of min(rows, keys)): a head that puts every row
        on <bos> is sharp and shows nothing. Cross-attention where the model has it (the
        reversed letter, the date's field a class looks for), masked self-attention otherwise,
        without <bos>'s row (it can only attend itself)."""
        att = self.cross_attention
        if att is None:
            att = self.self_attention[:, :, 1:] if self.self_attention.shape[2] > 1 else self.self_attention
        focus = att.amax(-1).mean(-1)
        picks = att.argmax(-1)  # (L, h, rows)
        distinct = torch.tensor([[len(set(row.tolist())) for row in layer] for layer in picks], dtype=focus.dtype)
        return focus * distinct / min(att.shape[-2], att.shape[-1])

    def sharpest_head(self) -> tuple[int, int]:
        """(layer, head) of the head that aligns most clearly (`alignment`), the first of equals."""
        score = self.alignment()
        return divmod(int(torch.argmax(score.flatten())), score.shape[1])


@torch.no_grad()
def parallel_pass(model: Transformer, src: torch.Tensor | None, tgt_in: list[int], causal: bool = True,
                  never: tuple[int, ...] = (1, 0)) -> ParallelPass:
    """Run `model(src, tgt_in, causal)` once, keeping its attention weights (hooks on those sites
    only). `never` lists ids excluded from `predicted` (<bos>, <pad>), matching what the
    decoders may emit."""
    if not tgt_in:
        raise ValueError("the decoder input needs at least <bos>")
    cfg = model.config
    if not cfg.model_kind.has_decoder:
        raise ValueError("this model has no decoder: there is nothing to teacher-force")
    model.eval()
    device = next(model.parameters()).device
    tgt = torch.tensor([tgt_in], dtype=torch.long, device=device)  # (1, T)
    weights: dict[str, torch.Tensor] = {}  # only the attention weights are kept, not every step

    def keep(tensor: torch.Tensor, where) -> None:
        weights[where.name] = tensor[0].detach().to("cpu", torch.float32, copy=True)

    with hooks(model, {"decoder.layers.*.self_attn.weights": keep, "decoder.layers.*.cross_attn.weights": keep},
               reads_only=True):
        logits = model(src, tgt, causal=causal)[0].float()  # (T, V)
    probs = logits.softmax(-1).cpu()
    allowed = logits.clone()
    allowed[:, list(never)] = float("-inf")
    layers = range(cfg.n_decoder_layers)

    def stacked(kind: AttentionKind) -> torch.Tensor:
        return torch.stack([weights[kind.module_name(i) + ".weights"] for i in layers])

    self_att = stacked(AttentionKind.DECODER_SELF)  # (L, h, T, T)
    cross = stacked(AttentionKind.CROSS) if cfg.model_kind.has_cross_attention else None  # (L, h, T, S)
    mask = decoder_mask(tgt, cfg.pad_id, causal)[0, 0].cpu()  # (T, T)
    return ParallelPass(list(tgt_in), causal, probs, allowed.argmax(-1).tolist(), mask, self_att, cross)


def parallel_row(step: DecodeStep) -> int:
    """The row of the parallel pass that computes what `step` computed: its last query,
    n_prompt + t (a decoder-only model's prompt rows come first; without a prompt, row t)."""
    return len(step.prefix) - 1


def step_difference(step: DecodeStep, parallel: ParallelPass) -> float:
    """max |Δp| between step t's distribution and its row (n_prompt + t) of the parallel pass."""
    return float((step.model_probs - parallel.probs[parallel_row(step)]).abs().max())


def decoder_input(steps: list[DecodeStep]) -> list[int]:
    """The sequence the sequential run fed its decoder at its last step: <bos> y1 … y_{n-1}
    (decoder-only: <bos> prompt y1 … y_{n-1}), so the parallel pass over it has one row per
    step after the prompt's rows."""
    if not steps:
        raise ValueError("no decoding steps")
    return list(steps[-1].prefix)


__all__ = ["ParallelPass", "parallel_pass", "parallel_row", "step_difference", "decoder_input"]

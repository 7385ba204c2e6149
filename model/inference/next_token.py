"""One next-token distribution and its filtering: what the sampling playground draws.

The model runs once per prompt (`next_token_logits`, off the GUI thread); every move of a
temperature / top-k / top-p control only re-filters that one row with the function sampling
itself uses (`model.inference.decoding.filter_logits`), so the bars show exactly what
`sample_decode` would draw from.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from model.inference.bundle import smoothed_target
from model.inference.decoding import filter_logits


@dataclass(frozen=True)
class NextToken:
    """The model's logits for the token after `prefix` (the prompt, or <bos> for a seq2seq decoder)."""

    logits: torch.Tensor  # (V,) float32; <bos> and <pad> are −∞ as in sampling
    prefix_tokens: int  # how many tokens the decoder read (with <bos>)
    prefix_text: str  # what they read as text (without <bos>)
    what: str  # in words: what this is the next token of

    def describe(self, show: Callable[[str], str] = str) -> str:
        """What the bars show: which row this is, what the decoder read (the last 60 characters of it
        as `show` writes them), what outline and fill mean."""
        prefix = show(self.prefix_text)[-60:]
        read = f": “{prefix}”" if prefix.strip() else ""
        return (f"The model's next token after {self.what} ({self.prefix_tokens} tokens with <bos>{read}). Outline: "
                "softmax(logits / T); filled: what sampling draws from after top-k and top-p, renormalised.")


def token_text(tokenizer, ids: list[int]) -> list[str]:
    """Each token as the text it stands for (a byte-level BPE piece "ĠParis" is " Paris"); a
    marker (<eos>) or a piece that decodes to nothing keeps its piece."""
    pieces = tokenizer.pieces(ids)
    texts = []
    for i, piece in zip(ids, pieces):
        try:
            text = tokenizer.decode([i])
        except (ValueError, KeyError, IndexError):
            text = ""
        texts.append(text if text and not (piece.startswith("<") and piece.endswith(">")) else piece)
    return texts


@dataclass(frozen=True)
class Filtered:
    """One setting's view of the row: the tempered softmax, what each filter cut, and what is left."""

    tempered: torch.Tensor  # softmax(logits / T) over the whole vocabulary
    final: torch.Tensor  # the distribution sampling draws from: kept tokens renormalised, cut ones 0
    cut_by_k: torch.Tensor  # bool (V,): removed by top-k
    cut_by_p: torch.Tensor  # bool (V,): kept by top-k, removed by top-p
    kept: int  # tokens left
    kept_mass: float  # how much of the tempered distribution they held before renormalising


def filtered(logits: torch.Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> Filtered:
    """The row after temperature, top-k and top-p (the order `filter_logits` applies them)."""
    scaled = logits / temperature
    tempered = scaled.softmax(-1)
    after_k = filter_logits(logits, temperature, top_k, 1.0) if top_k else scaled
    after_p = filter_logits(logits, temperature, top_k, top_p) if top_p < 1.0 else after_k
    possible = torch.isfinite(logits)
    kept_k = torch.isfinite(after_k) if top_k else possible
    kept = torch.isfinite(after_p) if top_p < 1.0 else kept_k
    return Filtered(tempered, after_p.softmax(-1), possible & ~kept_k, kept_k & ~kept, int(kept.sum()),
                    float(tempered[kept].sum()))


def cut_by(f: Filtered, ids: list[int]) -> list[str]:
    """The filter that cut each token: "top-k", "top-p", or "" where it is kept."""
    return ["top-k" if bool(f.cut_by_k[i]) else "top-p" if bool(f.cut_by_p[i]) else "" for i in ids]


def filter_summary(f: Filtered, logits: torch.Tensor, temperature: float, top_k: int, top_p: float) -> str:
    """The filters' effect in a sentence: tokens kept of the vocabulary (and those the model rules
    out with −∞ logits), and the tempered mass they held before renormalising."""
    vocab, possible = f.final.numel(), int(torch.isfinite(logits).sum())
    ruled_out = f" ({vocab - possible:,} ruled out by the model)" if possible < vocab else ""
    return (f"T = {temperature:g}: {f.kept:,} of {vocab:,} tokens kept{ruled_out} (top-k {top_k or 'off'}, "
            f"top-p {top_p:g}); they held {f.kept_mass:.1%} of the tempered probability, renormalised to 100%.")


def from_decode_step(step, bundle) -> NextToken:
    """The row of one recorded decoding step (`DecodeStep`, computed with the Frame off the GUI
    thread): log of the model's own softmax, which is the logits up to a constant, so
    softmax(row / T) = softmax(logits / T) for every T; <bos> and <pad> never sampled."""
    tok = bundle.tgt_tokenizer
    logits = step.model_probs.double().log().float()
    logits[[tok.bos_id, bundle.config.pad_id]] = float("-inf")
    generated = step.prefix[1 + step.n_prompt:]
    if step.n_prompt:
        what = f"the prompt and {len(generated)} generated tokens" if generated else "the prompt"
    else:
        what = f"<bos> and {len(generated)} output tokens" if generated else "<bos>: the first output token"
    return NextToken(logits, len(step.prefix), tok.decode(step.prefix[1:]), what)


@torch.no_grad()
def next_token_logits(bundle, source: str) -> NextToken:
    """The decoder's logits for its first own token: after <bos> + the prompt (decoder-only) or
    after <bos> given the encoded source (encoder–decoder). Runs the model once."""
    tok = bundle.tgt_tokenizer
    if not bundle.model_kind.generates:
        raise ValueError("This model does not generate text (encoder-only): it has no next token to sample.")
    src, _ = bundle.encode_source(source)
    model = bundle.model.eval()
    bos = torch.full((1, 1), tok.bos_id, dtype=torch.long, device=src.device)
    if bundle.model_kind.continues_prompt:
        prefix, memory, source_ids = torch.cat([bos, src], dim=1), None, None
        what = "the prompt"
    else:
        prefix, memory, source_ids = bos, model.encode(src), src
        what = "<bos>: the first output token"
    logits = model.project(model.decode(memory, source_ids, prefix))[0, -1].float().cpu()
    logits[[tok.bos_id, bundle.config.pad_id]] = float("-inf")  # never sampled (model.inference.decoding)
    return NextToken(logits, prefix.size(1), tok.decode(prefix[0, 1:].tolist()), what)


def ranked_ids(probs, k: int, chosen: int | None) -> list[int]:
    """The k most probable token ids, best first (ties in id order), and the chosen one after them
    when it ranks lower: what was picked is always shown, even from the tail."""
    ids = [int(i) for i in np.argsort(-np.asarray(probs, dtype=np.float64), kind="stable")[:k]]
    return ids + [int(chosen)] if chosen is not None and chosen not in ids else ids


def bar_order(n: int, chosen: int, shown: int) -> list[int]:
    """The order of n ranked bars when only the first `shown` fit: the chosen one (its index in
    the ranking, -1 for none) moved into the last slot shown when it ranks below them."""
    order = list(range(n))
    if 0 < shown <= chosen:
        order = order[:shown - 1] + [chosen] + order[shown - 1:chosen] + order[chosen + 1:]
    return order


def rows_that_fit(n: int, height: float, line: float, least: int = 3) -> int:
    """How many of n ranked rows a plot `height` px high shows, each at least `line` px (at least
    `least`; all of them before it is laid out): five readable rows beat ten overlapping ones."""
    return n if height <= 0 else min(n, max(least, int(height // line)))


def caption_lines(parts, width_of, room: float) -> list[str]:
    """`parts` on as few lines as fit `room` (`width_of(text)` measures a line); a part is never broken."""
    lines: list[str] = []
    for part in parts:
        if lines and width_of(f"{lines[-1]} {part}") <= room:
            lines[-1] += f" {part}"
        else:
            lines.append(part)
    return lines


def smoothing_tip(epsilon: float, vocab_size: int) -> str:
    """What a label-smoothed model's target line means (Section 5.4)."""
    top = smoothed_target(epsilon, vocab_size)
    return (f"Trained with label smoothing ε = {epsilon:g} (Section 5.4): the target gives the right token "
            f"1 − ε + ε/V = {top:.3f} and each of the other {vocab_size - 1} tokens ε/V = {epsilon / vocab_size:.4f}, "
            "so a well-trained model is never sure: its best guess stops near this line, the rest near ε/V.")


__all__ = ["Filtered", "NextToken", "bar_order", "caption_lines", "cut_by", "filter_summary", "filtered",
           "from_decode_step", "next_token_logits", "ranked_ids", "rows_that_fit", "smoothing_tip", "token_text"]

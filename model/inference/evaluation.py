"""Held-out scores for the three objectives (Section 6.1 reports greedy/beam outputs scored
against references; BERT and GPT score masked and next tokens).

Pure functions of a model, its tokenizers and some texts; `Trainer.evaluate` calls them and
`model.train.trainer` re-exports them.
"""
from __future__ import annotations

import torch

from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID, Tokenizer
from model.inference.bundle import ModelBundle
from model.inference.decoding import greedy_decode
from model.nn.transformer import Transformer


@torch.no_grad()
def translate_batch(model: Transformer, src_tok: Tokenizer, tgt_tok: Tokenizer, sources: list[str],
                    max_output: int = 32, batch_size: int = 250) -> list[str]:
    """Greedy outputs for many sources at once (padded batches, sorted by length for speed)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    max_output = min(max_output, model.config.max_len - 1)
    order = sorted(range(len(sources)), key=lambda i: len(src_tok.encode(sources[i]).ids))
    outputs: list[str] = [""] * len(sources)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        rows = [src_tok.encode(sources[i]).ids[: model.config.max_len] for i in idx]
        width = max(len(r) for r in rows)
        src = torch.tensor([r + [PAD_ID] * (width - len(r)) for r in rows], dtype=torch.long, device=device)
        ys = greedy_decode(model, src, BOS_ID, EOS_ID, max_output)
        for i, row in zip(idx, ys.tolist()):
            outputs[i] = tgt_tok.decode(row)
    model.train(was_training)
    return outputs


def _padded(rows: list[list[int]], device) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD_ID] * (width - len(r)) for r in rows], dtype=torch.long, device=device)


def scored_positions(n: int, max_positions: int = 16) -> list[int]:
    """Which of n token positions `masked_accuracy` masks: all of them, or for a longer text
    `max_positions` evenly spaced ones (first and last included) plus the middle one."""
    if n <= max_positions:
        return list(range(n))
    return sorted({round(k * (n - 1) / (max_positions - 1)) for k in range(max_positions)} | {n // 2})


@torch.no_grad()
def masked_accuracy(model: Transformer, tok: Tokenizer, texts: list[str], mask_id: int,
                    batch_size: int = 512, max_positions: int = 16) -> tuple[float, list[tuple[str, str, str]]]:
    """Mask each token of each text in turn (one [MASK] per input) and score argmax == original.

    A text longer than `max_positions` tokens (a line of a user's text file) is scored at
    that many evenly spaced positions, so evaluation stays quick. Returns (accuracy over the
    positions scored, one example per text: the text with its middle token masked, the text,
    the text as the model filled it)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    queries, examples = [], []  # (row ids, position, original id)
    for text in texts:
        ids = tok.encode(text).ids[: model.config.max_len]
        for i in scored_positions(len(ids), max_positions):
            queries.append((ids[:i] + [mask_id] + ids[i + 1:], i, ids[i]))
    hits = []
    for start in range(0, len(queries), batch_size):
        chunk = queries[start:start + batch_size]
        logits = model(_padded([q[0] for q in chunk], device))  # (B, S, V)
        rows = torch.arange(len(chunk), device=device)
        cols = torch.tensor([q[1] for q in chunk], device=device)
        pred = logits[rows, cols].argmax(-1).tolist()
        hits += [p == q[2] for p, q in zip(pred, chunk)]
        for (ids, i, original), p in zip(chunk, pred):
            if i == len(ids) // 2 and len(examples) < 8:  # the middle token of a text: an example
                filled = ids[:i] + [p] + ids[i + 1:]
                examples.append((tok.join(tok.pieces(ids)), tok.join(tok.pieces(ids[:i] + [original] + ids[i + 1:])),
                                 tok.join(tok.pieces(filled))))
    model.train(was_training)
    return sum(hits) / max(len(hits), 1), examples


@torch.no_grad()
def next_token_accuracy(model: Transformer, tok: Tokenizer, texts: list[str], prompt_words: int = 2,
                        batch_size: int = 250) -> tuple[float, list[tuple[str, str, str]]]:
    """Teacher-forced next-token accuracy of a decoder-only model over texts (every position
    from the first word to <eos>), plus examples: a text's first words → greedy continuation."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    correct = total = 0
    limit = model.config.max_len - 1
    for start in range(0, len(texts), batch_size):
        rows = [tok.encode(t).ids[:limit] for t in texts[start:start + batch_size]]
        tin = _padded([[BOS_ID] + r for r in rows], device)
        tout = _padded([r + [EOS_ID] for r in rows], device)
        logits = model(None, tin)
        real = tout != PAD_ID
        correct += int(((logits.argmax(-1) == tout) & real).sum())
        total += int(real.sum())
    examples = []
    for text in texts[:8]:
        ids = tok.encode(text).ids[:prompt_words]
        prefix = torch.tensor([[BOS_ID] + ids], dtype=torch.long, device=device)
        out = greedy_decode(model, None, BOS_ID, EOS_ID, limit, prefix=prefix)[0, 1:].tolist()
        examples.append((tok.decode(ids), text, tok.decode(out)))
    model.train(was_training)
    return correct / max(total, 1), examples


def exact_match(bundle: ModelBundle, pairs: list[tuple[str, str]], batch_size: int = 250) -> float:
    """Fraction of pairs whose greedy output equals the target exactly."""
    max_out = int(bundle.task.get("max_tgt_len") or 32) + 2
    outs = translate_batch(bundle.model, bundle.src_tokenizer, bundle.tgt_tokenizer, [s for s, _ in pairs],
                           max_output=max_out, batch_size=batch_size)
    return sum(o == t for o, (_, t) in zip(outs, pairs)) / max(len(pairs), 1)


__all__ = ["translate_batch", "masked_accuracy", "next_token_accuracy", "exact_match", "scored_positions"]

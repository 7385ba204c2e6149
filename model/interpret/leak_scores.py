"""What the mask-leak lab measures on a decoder-only model (model.interpret.leak_lab): pure functions of
a model, its tokenizer and held-out text, each run with or without the causal mask.

The classic bug (Section 3.2.3 read too quickly): train a decoder without the look-ahead mask
and position t can read token t+1, the very token it is asked to predict. Training loss and
teacher-forced accuracy look superb; generation, where token t+1 does not exist yet, fails.
These functions tell the two apart:

- `teacher_forced_accuracy`: the whole sentence is given (as in training), argmax == next token;
- `free_running_accuracy`: the same positions, each predicted from its prefix alone — what a
  generator sees. For a causal model the two are equal (row t only reads tokens ≤ t);
- `generation_accuracy`: held-out openings ("a sleepy lion") continued greedily into sentences
  the corpus can say; `fact_answers`: greedy next word after "the cow says" …;
- `future_mass`: attention weight on later positions (the upper triangle), 0 under the mask;
- `entropy_floor`: the lowest per-token cross-entropy any causal model can reach on the corpus.
"""
from __future__ import annotations

import functools
import math

import torch

from model.data.corpus import WORLD, fact_prompts, sentence_distribution
from model.data.tokenizers import BOS_ID, EOS_ID, PAD_ID, Tokenizer
from model.nn.hooks import record
from model.nn.transformer import Transformer

NEVER = (BOS_ID, PAD_ID)  # never an output, as in model.inference.decoding


@functools.cache
def corpus_distribution() -> dict[tuple[str, ...], float]:
    """`sentence_distribution()` computed once (8,960 sentences; read-only)."""
    return sentence_distribution()


def sentence_batch(tok: Tokenizer, texts: list[str], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(tgt_in, tgt_out), each (B, T): <bos> w1 … wn and w1 … wn <eos>, padded with PAD_ID."""
    rows = [tok.encode(t).ids[: max_len - 1] for t in texts]
    width = max(len(r) for r in rows) + 1
    tgt_in = torch.tensor([[BOS_ID] + r + [PAD_ID] * (width - 1 - len(r)) for r in rows], dtype=torch.long)
    tgt_out = torch.tensor([r + [EOS_ID] + [PAD_ID] * (width - 1 - len(r)) for r in rows], dtype=torch.long)
    return tgt_in, tgt_out


def _device(model: Transformer) -> torch.device:
    return next(model.parameters()).device


def _argmax(logits: torch.Tensor) -> torch.Tensor:
    logits = logits.float().clone()
    logits[..., list(NEVER)] = float("-inf")
    return logits.argmax(-1)


@torch.no_grad()
def teacher_forced_accuracy(model: Transformer, tgt_in: torch.Tensor, tgt_out: torch.Tensor, causal: bool) -> float:
    """argmax == next token with the whole sentence as input (one parallel pass, as in training)."""
    model.eval()
    tgt_in, tgt_out = tgt_in.to(_device(model)), tgt_out.to(_device(model))
    predicted = _argmax(model(None, tgt_in, causal=causal))  # (B, T)
    real = tgt_out != PAD_ID
    return float(((predicted == tgt_out) & real).sum()) / max(int(real.sum()), 1)


@torch.no_grad()
def free_running_accuracy(model: Transformer, tgt_in: torch.Tensor, tgt_out: torch.Tensor, causal: bool) -> float:
    """argmax == next token when position t is computed from tokens 0..t only (the future cut
    off, as in generation); one batched pass per prefix length."""
    model.eval()
    tgt_in, tgt_out = tgt_in.to(_device(model)), tgt_out.to(_device(model))
    hits = total = 0
    for t in range(tgt_in.size(1)):
        real = tgt_out[:, t] != PAD_ID  # (B,) rows that still have a token to predict at t
        if not bool(real.any()):
            continue
        prefix = tgt_in[real, : t + 1]  # (B', t+1)
        predicted = _argmax(model(None, prefix, causal=causal)[:, -1])  # (B',)
        hits += int((predicted == tgt_out[real, t]).sum())
        total += int(real.sum())
    return hits / max(total, 1)


@torch.no_grad()
def greedy_continue(model: Transformer, prompt_ids: list[list[int]], causal: bool, max_new: int) -> list[list[int]]:
    """Greedy continuations (the ids after each prompt, ending with <eos> if the model ended
    it), run with or without the causal mask — the way the model was trained. Prompts of one
    length are decoded as one batch."""
    model.eval()
    device = _device(model)
    out: list[list[int]] = [[] for _ in prompt_ids]
    by_length: dict[int, list[int]] = {}
    for i, ids in enumerate(prompt_ids):
        by_length.setdefault(len(ids), []).append(i)
    for length, rows in by_length.items():
        seq = torch.tensor([[BOS_ID] + prompt_ids[i] for i in rows], dtype=torch.long, device=device)  # (B, 1 + n)
        done = torch.zeros(len(rows), dtype=torch.bool, device=device)
        for _ in range(min(max_new, model.config.max_len - 1 - length)):
            nxt = _argmax(model(None, seq, causal=causal)[:, -1])  # (B,)
            for k, (i, token) in enumerate(zip(rows, nxt.tolist())):
                if not done[k]:
                    out[i].append(token)
            done |= nxt == EOS_ID
            if bool(done.all()):
                break
            seq = torch.cat([seq, nxt[:, None]], dim=1)
    return out


def fact_answers(model: Transformer, tok: Tokenizer, causal: bool) -> float:
    """Share of `fact_prompts` ("the cow says" → moo, 64 of them) whose greedy next word is right."""
    prompts = fact_prompts()
    firsts = greedy_continue(model, [tok.encode(p).ids for p, _ in prompts], causal, max_new=1)
    return sum(bool(ids) and tok.decode(ids[:1]) == answer for ids, (_, answer) in zip(firsts, prompts)) / len(prompts)


def animal_prompt(text: str) -> str:
    """A corpus sentence's words up to its animal ("a sleepy lion eats meat ." → "a sleepy lion")."""
    words = text.split()
    end = next((i for i, w in enumerate(words) if w in WORLD), len(words) - 1)
    return " ".join(words[: end + 1])


def generation_accuracy(model: Transformer, tok: Tokenizer, texts: list[str], causal: bool,
                        max_new: int = 24) -> tuple[float, list[tuple[str, str]]]:
    """Each held-out sentence's opening up to its animal, continued greedily: the share of
    continuations that end and make a sentence the corpus can say (well formed and true of
    that animal: nonzero probability in `sentence_distribution`). Also (prompt, continuation)
    for every text."""
    support = corpus_distribution()
    prompts = [animal_prompt(t) for t in texts]
    continued = greedy_continue(model, [tok.encode(p).ids for p in prompts], causal, max_new)
    valid = [bool(ids) and ids[-1] == EOS_ID and tuple((p + " " + tok.decode(ids)).split()) in support
             for p, ids in zip(prompts, continued)]
    return sum(valid) / max(len(valid), 1), [(p, tok.decode(ids)) for p, ids in zip(prompts, continued)]


@torch.no_grad()
def future_mass(model: Transformer, tgt_in: torch.Tensor, causal: bool) -> float:
    """Mean attention weight that a real query puts on *later* positions (j > i), over every
    decoder self-attention head and layer: exactly 0 under the causal mask."""
    model.eval()
    with record(model) as trace:  # (the trace holds its tensors on the CPU)
        model(None, tgt_in.to(_device(model)), causal=causal)
    real = (tgt_in.cpu() != PAD_ID).float()  # (B, T) query rows that are tokens
    masses = []
    for layer in range(model.config.n_decoder_layers):
        att = trace.attention("decoder_self", layer)  # (B, h, T, T)
        later = att.triu(diagonal=1).sum(-1)  # (B, h, T): weight each query row puts on the future
        masses.append((later * real[:, None, :]).sum() / (real.sum() * att.size(1)))
    return float(torch.stack(masses).mean())


def entropy_floor() -> float:
    """The corpus's entropy per predicted token (nats): E[−log p(sentence)] / E[words + 1].

    The best any model that reads only the past can score with unsmoothed cross-entropy, over
    a large batch (the training loss averages over all tokens of a batch). A training loss
    below it means the model reads what it should predict."""
    dist = corpus_distribution()
    entropy = -sum(p * math.log(p) for p in dist.values())
    tokens = sum(p * (len(words) + 1) for words, p in dist.items())  # + <eos>
    return entropy / tokens


__all__ = ["sentence_batch", "teacher_forced_accuracy", "free_running_accuracy", "greedy_continue", "fact_answers",
           "animal_prompt", "generation_accuracy", "future_mass", "entropy_floor"]

"""Autoregressive decoding: greedy, sampling, beam search, and a step-by-step generator.

Beam search and the encoder-decoder's step-by-step generator run the decoder over the whole
prefix at each step (no key/value cache), so what a viewer shows at step t is computed by
exactly the code the teacher-forced forward uses, and step t's distribution equals row t of the
parallel pass up to float rounding. A decoder-only model's greedy, sampled and step-by-step
decoding keep a key/value cache (`model.inference.kv_cache`) unless hooks are active: the same
tokens and attention rows (up to float rounding), one new position per step.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from model.inference.kv_cache import KVCache
from model.nn.hooks import any_active, hooks, record
from model.nn.transformer import Transformer, subsequent_mask


def _memory(model: Transformer, src: torch.Tensor | None) -> torch.Tensor | None:
    return model.encode(src) if model.config.model_kind.has_cross_attention else None


def _next_logits(model: Transformer, memory, src, prefix: torch.Tensor) -> torch.Tensor:
    """Logits for the position after `prefix` (B, V)."""
    return model.project(model.decode(memory, src, prefix))[:, -1].float()


def _never(logits: torch.Tensor, bos_id: int, pad_id: int) -> torch.Tensor:
    """<bos> and <pad> are never valid outputs (an untrained model may still score them highest)."""
    logits = logits.clone()
    logits[..., [bos_id, pad_id]] = float("-inf")
    return logits


def _device(model: Transformer) -> torch.device:
    """Where the model's weights are: every tensor fed to it is made there (a decoder-only
    model has no source to take the device from)."""
    return next(model.parameters()).device


def _start(src: torch.Tensor | None, bos_id: int, batch: int | None = None, device=None) -> torch.Tensor:
    b = src.size(0) if src is not None else (batch or 1)
    return torch.full((b, 1), bos_id, dtype=torch.long, device=device if src is None else src.device)


@torch.no_grad()
def greedy_decode(model: Transformer, src: torch.Tensor | None, bos_id: int, eos_id: int, max_len: int,
                  prefix: torch.Tensor | None = None) -> torch.Tensor:
    """Argmax at every step. Returns (B, L) ids starting with <bos>; rows that ended are padded
    with pad_id after their <eos>."""
    return sample_decode(model, src, bos_id, eos_id, max_len, temperature=0.0, prefix=prefix)


def filter_logits(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """Temperature, then keep the top-k and the smallest set with cumulative probability ≥ top_p."""
    if temperature <= 0:
        raise ValueError("temperature must be > 0 for sampling; use greedy decoding for 0")
    logits = logits / temperature
    if top_k and top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = logits.sort(dim=-1, descending=True)
        cum = sorted_logits.softmax(-1).cumsum(-1)
        drop = cum - sorted_logits.softmax(-1) >= top_p  # keep the token that crosses top_p
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
    return logits


@torch.no_grad()
def sample_decode(model: Transformer, src: torch.Tensor | None, bos_id: int, eos_id: int, max_len: int,
                  temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
                  generator: torch.Generator | None = None, prefix: torch.Tensor | None = None) -> torch.Tensor:
    """Sampling with temperature / top-k / top-p; temperature 0 means greedy (argmax)."""
    model.eval()
    memory = _memory(model, src)
    ys = prefix if prefix is not None else _start(src, bos_id, device=_device(model))
    pad = model.config.pad_id
    done = torch.zeros(ys.size(0), dtype=torch.bool, device=ys.device)
    cache = KVCache(model) if model.config.model_kind.continues_prompt and not any_active() else None
    step_in = ys  # with a cache, only the positions not yet cached
    while ys.size(1) < max_len + 1 and not done.all():
        if cache is None:
            logits = _next_logits(model, memory, src, ys)
        else:
            logits = model.project(model.decode(None, None, step_in, cache=cache)[:, -1:])[:, -1].float()
        logits = _never(logits, bos_id, pad)
        if temperature == 0:
            nxt = logits.argmax(-1)
        else:
            probs = filter_logits(logits, temperature, top_k, top_p).softmax(-1)
            # drawn where the generator lives (the CPU for a seeded one), so a seed gives the
            # same sample whichever device ran the model
            draw_on = generator.device if generator is not None else probs.device
            nxt = torch.multinomial(probs.to(draw_on), 1, generator=generator).squeeze(1).to(ys.device)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        step_in = nxt[:, None]
        done |= nxt == eos_id
    return ys


# -- beam search ------------------------------------------------------------------------------
def length_penalty(length: int, alpha: float) -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6)^α (Wu et al. 2016), the one the paper's α = 0.6 refers to."""
    return ((5 + length) / 6) ** alpha


@dataclass
class BeamNode:
    """One hypothesis in the beam tree."""

    id: int
    parent: int | None
    token: int
    step: int
    log_prob: float  # cumulative
    score: float  # log_prob / lp(length)
    finished: bool = False
    pruned: bool = False
    prompt: bool = False  # a token of the given prompt (decoder-only), not a choice of the search


@dataclass
class BeamResult:
    tokens: list[int]  # best hypothesis, starting with <bos>
    score: float
    nodes: list[BeamNode] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)  # node ids of completed hypotheses

    def sequence(self, node_id: int) -> list[int]:
        return _seq(self.nodes, node_id)


@torch.no_grad()
def beam_search(model: Transformer, src: torch.Tensor | None, bos_id: int, eos_id: int, max_len: int,
                beam_size: int = 4, alpha: float = 0.6, prompt: list[int] | None = None) -> BeamResult:
    """Beam search for one sequence (Section 6.1: beam 4, α 0.6), keeping the whole tree.

    Every expanded candidate becomes a node; those that do not survive a step are marked
    `pruned` so the GUI can grey them out. `prompt` (a decoder-only model's given text)
    becomes a chain of `prompt` nodes after <bos> at step 0; max_len counts generated tokens.
    """
    if src is not None and src.size(0) != 1:
        raise ValueError("beam_search decodes one sequence at a time (batch size 1)")
    model.eval()
    memory = _memory(model, src)
    nodes = [BeamNode(0, None, bos_id, 0, 0.0, 0.0)]
    for tok in prompt or []:
        nodes.append(BeamNode(len(nodes), len(nodes) - 1, int(tok), 0, 0.0, 0.0, prompt=True))
    beam = [len(nodes) - 1]
    finished: list[int] = []
    for step in range(1, max_len + 1):
        prefixes = torch.tensor([_seq(nodes, n) for n in beam], dtype=torch.long, device=_device(model))
        mem = memory.expand(len(beam), -1, -1) if memory is not None else None
        s = src.expand(len(beam), -1) if src is not None else None
        logp = _never(_next_logits(model, mem, s, prefixes).log_softmax(-1), bos_id, model.config.pad_id)  # (beam, V)
        total = logp + torch.tensor([nodes[n].log_prob for n in beam], device=logp.device)[:, None]
        k = min(beam_size * 2, total.numel())
        vals, idx = total.flatten().topk(k)
        candidates = []
        for v, i in zip(vals.tolist(), idx.tolist()):
            parent, tok = beam[i // total.size(1)], i % total.size(1)
            node = BeamNode(len(nodes), parent, tok, step, v, v / length_penalty(step, alpha), finished=tok == eos_id)
            nodes.append(node)
            candidates.append(node)
        new_beam = []
        # Candidates come best first. An <eos> candidate completes a hypothesis only if it ranks
        # within the top beam_size (as fairseq does), so beam_size 1 is exactly greedy decoding;
        # the other beam_size slots go to the best open hypotheses.
        for rank, node in enumerate(candidates):
            if node.finished and rank < beam_size and len(finished) < beam_size:
                finished.append(node.id)
            elif not node.finished and len(new_beam) < beam_size:
                new_beam.append(node.id)
            else:
                node.pruned = True
        beam = new_beam
        if len(finished) >= beam_size or not beam:
            break
    if len(finished) < beam_size:  # ran out of steps: open hypotheses at max_len still count
        finished.extend(beam)
    else:  # stopped with beam_size complete hypotheses: the open ones were cut short, not finished
        for n in beam:
            nodes[n].pruned = True
    best = max(finished, key=lambda n: nodes[n].score)
    return BeamResult(_seq(nodes, best), nodes[best].score, nodes, finished)


def _seq(nodes: list[BeamNode], nid: int) -> list[int]:
    out = []
    while nid is not None:
        out.append(nodes[nid].token)
        nid = nodes[nid].parent
    return out[::-1]


# -- step by step ---------------------------------------------------------------------------
@dataclass
class DecodeStep:
    """What the decoder did to produce position `t` (0-based, the first token after <bos>).

    self_attention: (L, h, P, P) masked self-attention over the prefix of P = len(prefix)
    tokens (t + 1 without a prompt); the last row is this step's query. cross_attention:
    (L, h, P, T_src), or None for decoder-only models.
    """

    t: int
    prefix: list[int]  # ids fed to the decoder, starting with <bos> (then the prompt, if any)
    probs: torch.Tensor  # (V,) next-token distribution (after temperature/top-k/top-p when sampling)
    model_probs: torch.Tensor  # (V,) the model's own softmax, unfiltered
    chosen: int
    mask: torch.Tensor  # (t+1, t+1) bool causal mask in force
    self_attention: torch.Tensor
    cross_attention: torch.Tensor | None
    n_prompt: int = 0  # prompt tokens after <bos> in `prefix` (decoder-only continuation)


@torch.no_grad()
def decode_steps(model: Transformer, src: torch.Tensor | None, bos_id: int, eos_id: int, max_len: int,
                 temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0,
                 generator: torch.Generator | None = None,
                 forced: list[int] | None = None, prompt: list[int] | None = None) -> Iterator[DecodeStep]:
    """Yield one `DecodeStep` per generated position, recording that step's attention.

    temperature 0 = greedy. `forced` (target ids without <bos>) makes it follow a given
    target instead of its own choices, to compare against the teacher-forced pass.
    `prompt` (ids) is text a decoder-only model continues: it follows <bos> in every
    prefix, and the attention matrices grow from len(prompt) + 1 rows. A decoder-only model
    outside other hooks decodes with a key/value cache (`cached_decode_steps`).
    """
    if src is not None and src.size(0) != 1:
        raise ValueError("decode_steps follows one sequence (batch size 1)")
    model.eval()
    if model.config.model_kind.continues_prompt and not any_active():
        yield from cached_decode_steps(model, bos_id, eos_id, max_len, temperature, top_k, top_p, generator,
                                       forced, prompt)
        return
    memory = _memory(model, src)
    prompt = [int(i) for i in prompt or []]
    prefix = [bos_id] + prompt
    cfg, device = model.config, _device(model)
    for t in range(max_len):
        ys = torch.tensor([prefix], dtype=torch.long, device=device)
        with record(model) as trace:
            logits = model.project(model.decode(memory, src, ys))[0, -1].float()  # (V,)
        probs, model_probs, chosen = _choose(logits, bos_id, cfg.pad_id, temperature, top_k, top_p, generator)
        if forced is not None:
            if t >= len(forced):
                return
            chosen = int(forced[t])
        self_att = torch.stack([trace.attention("decoder_self", i)[0] for i in range(cfg.n_decoder_layers)])
        cross = (torch.stack([trace.attention("cross", i)[0] for i in range(cfg.n_decoder_layers)])
                 if cfg.model_kind.has_cross_attention else None)
        yield DecodeStep(t, list(prefix), probs, model_probs, chosen, subsequent_mask(len(prefix))[0], self_att, cross,
                         len(prompt))
        prefix.append(chosen)
        if chosen == eos_id and forced is None:
            return


def _choose(logits: torch.Tensor, bos_id: int, pad_id: int, temperature: float, top_k: int, top_p: float,
            generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor, int]:
    """One decoding step's choice from the next-token logits: (the distribution drawn from, the
    model's own softmax, the token) — argmax at temperature 0, else a draw after the filters."""
    model_probs = logits.softmax(-1).cpu()
    allowed = _never(logits, bos_id, pad_id)
    if temperature == 0:
        return model_probs, model_probs, int(allowed.argmax())
    probs = filter_logits(allowed, temperature, top_k, top_p).softmax(-1).cpu()
    draw_on = generator.device if generator is not None else torch.device("cpu")
    return probs, model_probs, int(torch.multinomial(probs.to(draw_on), 1, generator=generator))


def cached_decode_steps(model: Transformer, bos_id: int, eos_id: int, max_len: int, temperature: float = 0.0,
                        top_k: int = 0, top_p: float = 1.0, generator: torch.Generator | None = None,
                        forced: list[int] | None = None, prompt: list[int] | None = None) -> Iterator[DecodeStep]:
    """`decode_steps` for a decoder-only model with a key/value cache: the prompt runs once, then
    one position per step. Each step's new attention rows are written into one matrix of all
    rows (a row never changes once computed: the mask hides the later keys), and every
    `DecodeStep.self_attention` is a view of its top-left P × P corner, as the full-prefix pass
    would give it up to float rounding."""
    cfg, device = model.config, _device(model)
    prompt = [int(i) for i in prompt or []]
    prefix = [bos_id] + prompt
    size = len(prefix) + max_len
    rows = torch.zeros(cfg.n_decoder_layers, cfg.n_heads, size, size)
    cache = KVCache(model)

    def keep(weights: torch.Tensor, where) -> None:  # (1, h, new positions, all positions so far)
        layer = int(where.name.split(".")[2])
        start = weights.size(-1) - weights.size(-2)
        rows[layer, :, start:weights.size(-1), :weights.size(-1)] = weights[0].float().cpu()

    new = list(prefix)
    for t in range(max_len):
        with hooks(model, {"decoder.layers.*.self_attn.weights": keep}, reads_only=True):
            hidden = model.decode(None, None, torch.tensor([new], dtype=torch.long, device=device), cache=cache)
        logits = model.project(hidden[:, -1:])[0, -1].float()  # (V,)
        probs, model_probs, chosen = _choose(logits, bos_id, cfg.pad_id, temperature, top_k, top_p, generator)
        if forced is not None:
            if t >= len(forced):
                return
            chosen = int(forced[t])
        p = len(prefix)
        yield DecodeStep(t, list(prefix), probs, model_probs, chosen, subsequent_mask(p)[0], rows[:, :, :p, :p], None,
                         len(prompt))
        prefix.append(chosen)
        new = [chosen]
        if chosen == eos_id and forced is None:
            return


__all__ = ["greedy_decode", "sample_decode", "beam_search", "decode_steps", "DecodeStep", "BeamResult",
           "BeamNode", "length_penalty", "filter_logits"]

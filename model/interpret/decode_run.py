"""One decode of one text, step by step: `compute_run(bundle, text, settings) -> DecodeRun`.

The decoding settings (`DecodeSettings`: strategy, temperature, top-k/top-p, beam), each step's
distributions and attention with both teacher-forced parallel passes and the beam tree
(`DecodeRun`), and an LLM's greedy continuation with its prompt recorded once
(`recorded_greedy_run`). `compute_frame` (model/interpret/frame.py) puts a run in its Frame.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from model.inference.bundle import ForwardResult, InputError, ModelBundle
from model.inference.decoding import BeamResult, DecodeStep, beam_search, decode_steps
from model.inference.recorded_rows import record_greedy_continuation
from model.inference.teacher_forcing import ParallelPass, decoder_input, parallel_pass, parallel_row, step_difference
from model.nn.hooks import any_active
from model.nn.transformer import decoder_mask

STRATEGIES = {"greedy": "Greedy (argmax)", "sample": "Sampling", "beam": "Beam search",
              "target": "Follow the target"}


class DecodeSettingsError(ValueError):
    """Decoding settings out of range (a beam of 0, top-p 0, a negative top-k …)."""


@dataclass(frozen=True)
class DecodeSettings:
    """How to decode (Section 6.1 uses beam 4, α = 0.6)."""

    strategy: str = "greedy"
    temperature: float = 1.0
    top_k: int = 0  # 0 = no top-k filter
    top_p: float = 1.0
    seed: int = 0
    beam_size: int = 4
    alpha: float = 0.6

    def __post_init__(self):
        """Refuse settings no decoder can follow, with the reason, before any model runs."""
        problems = []
        if self.strategy not in STRATEGIES:
            problems.append(f"strategy {self.strategy!r} is not one of {', '.join(STRATEGIES)}")
        if not math.isfinite(self.temperature) or self.temperature < 0:
            problems.append(f"temperature {self.temperature} must be ≥ 0 (0 = greedy)")
        if self.top_k < 0:
            problems.append(f"top-k {self.top_k} must be ≥ 0 (0 = no top-k filter)")
        if not 0 < self.top_p <= 1:
            problems.append(f"top-p {self.top_p} must be in (0, 1] (1 = no nucleus filter)")
        if self.beam_size < 1:
            problems.append(f"beam size {self.beam_size} must be ≥ 1")
        if not math.isfinite(self.alpha) or self.alpha < 0:
            problems.append(f"length penalty α {self.alpha} must be ≥ 0")
        if problems:
            raise DecodeSettingsError("; ".join(problems))


@dataclass
class DecodeRun:
    """The sequential run, the beam tree (beam search only) and both parallel passes."""

    settings: DecodeSettings
    source_text: str
    src_pieces: list[str]
    vocab: list[str]  # target token string for every id
    steps: list[DecodeStep]
    masked: ParallelPass
    unmasked: ParallelPass | None  # None until `ensure_unmasked` runs `unmasked_later` (an LLM's frame)
    beam: BeamResult | None = None
    unknown: list[tuple[int, str]] = field(default_factory=list)
    bos_id: int = 1  # the target tokenizer's start and end symbols (a pretrained model has its own)
    eos_id: int = 2
    n_prompt: int = 0  # decoder-only: the prompt's tokens follow <bos> in every prefix
    beam_text: str = ""  # the best hypothesis as text (the tokenizer joins words with spaces)
    text: str = ""  # what this strategy wrote, as text (= beam_text for beam search)
    unmasked_later: Callable[[], ParallelPass] | None = field(default=None, repr=False, compare=False)

    def ensure_unmasked(self) -> ParallelPass:
        """The pass without the mask, computed now if the frame left it for later (a viewer calls
        this off the GUI thread: it is one more forward pass)."""
        if self.unmasked is None:
            self.unmasked = self.unmasked_later()
        return self.unmasked

    @property
    def prompt_ids(self) -> list[int]:
        return list(self.steps[0].prefix[1:1 + self.n_prompt]) if self.steps else []

    @property
    def length(self) -> int:
        """Rows of the parallel pass = tokens in the last step's prefix (<bos> [prompt] y1 … y_{n-1})."""
        return len(self.steps[-1].prefix)

    def row(self, t: int) -> int:
        """The parallel pass's row that equals decoding step t (n_prompt + t)."""
        return parallel_row(self.steps[t])

    @property
    def output_ids(self) -> list[int]:
        return [s.chosen for s in self.steps]

    def pieces(self, ids) -> list[str]:
        return [self.vocab[i] if 0 <= i < len(self.vocab) else f"#{i}" for i in ids]

    def difference(self, t: int, causal: bool = True) -> float:
        """max |Δp| between step t and its row n_prompt + t of the parallel pass (with or without the mask)."""
        return step_difference(self.steps[t], self.masked if causal else self.ensure_unmasked())


def compute_run(bundle: ModelBundle, source_text: str, settings: DecodeSettings,
                target_text: str | None = None, encoded=None, max_new: int | None = None) -> DecodeRun:
    """Decode `source_text` with `settings` and record both parallel passes. Raises
    InputError with a readable message for input the model cannot take.

    For the paper's encoder-decoder the text is the source; a decoder-only (GPT-like) model
    continues it as a prompt: every prefix is <bos> + prompt + what was generated so far.
    Strategy "target" feeds the given target (plus <eos>) one token per step instead of the
    model's own choices — the sequential form of teacher forcing, next to its parallel form
    (decoder-only: a given continuation of the prompt)."""
    cfg = bundle.config
    if not cfg.has_decoder:
        raise InputError("This model has no decoder (encoder-only): there is nothing to decode step by step.")
    src, enc = encoded if encoded is not None else bundle.encode_source(source_text)
    prompt = None
    if cfg.model_kind.continues_prompt:
        prompt = list(enc.ids)  # the decoder reads <bos> + prompt; there is no source to attend to
        src = None
    model = bundle.model
    max_len = new_token_budget(bundle, len(enc.ids), max_new)  # generated tokens (a prompt takes room from it)
    # The model's own start/end symbols: ours are <bos>=1/<eos>=2, Marian starts from <pad>
    # and ends with </s>=0.
    bos, eos = bundle.tgt_tokenizer.bos_id, bundle.tgt_tokenizer.eos_id
    skip = 1 + len(prompt or [])  # <bos> and the prompt open every sequence
    with torch.no_grad():
        beam = None
        if settings.strategy == "beam":
            beam = beam_search(model, src, bos, eos, max_len, int(settings.beam_size), float(settings.alpha),
                               prompt=prompt)
            steps = list(decode_steps(model, src, bos, eos, max_len, forced=beam.tokens[skip:], prompt=prompt))
        elif settings.strategy == "sample":
            gen = torch.Generator().manual_seed(int(settings.seed))  # on the CPU: a seed gives one text on any device
            steps = list(decode_steps(model, src, bos, eos, max_len, temperature=float(settings.temperature),
                                      top_k=int(settings.top_k), top_p=float(settings.top_p), generator=gen,
                                      prompt=prompt))
        elif settings.strategy == "target":
            if not target_text or not target_text.strip():
                what = "a continuation of the prompt" if prompt is not None else "a target"
                raise InputError(f"Type {what} (in the Target field) for the decoder to follow step by step.")
            forced = bundle.encode_target(target_text) + [eos]
            if skip + len(forced) - 1 > cfg.max_len:
                raise InputError(f"Prompt and continuation have {skip - 1 + len(forced) - 1} tokens; this model "
                                 f"reads at most {cfg.max_len - 1}.")
            steps = list(decode_steps(model, src, bos, eos, len(forced), forced=forced, prompt=prompt))
        elif settings.strategy == "greedy":
            steps = list(decode_steps(model, src, bos, eos, max_len, prompt=prompt))
        else:
            raise ValueError(f"unknown strategy {settings.strategy!r}; use one of {', '.join(STRATEGIES)}")
        if not steps:
            raise InputError("The decoder produced no step (maximum output length is 0).")
        tgt_in = decoder_input(steps)  # <bos> [prompt] y1 … y_{n-1}
        masked = parallel_pass(model, src, tgt_in, causal=True)
        unmasked = parallel_pass(model, src, tgt_in, causal=False)
    beam_text = ""
    if beam is not None:
        beam_text = bundle.tgt_tokenizer.decode([i for i in beam.tokens[skip:] if i != eos])
    text = bundle.tgt_tokenizer.decode([s.chosen for s in steps if s.chosen != eos])
    return DecodeRun(settings, source_text, list(enc.pieces), list(bundle.tgt_tokenizer.vocab), steps,
                     masked, unmasked, beam, list(enc.unknown), bos, eos, n_prompt=len(prompt or []),
                     beam_text=beam_text, text=text)


def new_token_budget(bundle: ModelBundle, prompt_len: int, max_new: int | None) -> int:
    """How many tokens to generate at most: `max_new` (within the room the model's max_len leaves
    after the prompt), else the model's default (`ModelBundle.default_max_output`)."""
    if max_new is None:
        return bundle.default_max_output(prompt_len)
    return max(1, min(max_new, bundle.config.max_len - 1 - prompt_len))


def generates_then_records(bundle: ModelBundle, settings: DecodeSettings | None, target: str | None) -> bool:
    """An LLM's greedy continuation with no hooks active: the prompt recorded once, the
    continuation generated from its key/value cache, then its rows recorded
    (`recorded_greedy_run`), instead of recording every step."""
    return (bundle.model_kind.continues_prompt and bundle.large_vocabulary and target is None
            and (settings or DecodeSettings()).strategy == "greedy" and not any_active())


def recorded_greedy_run(bundle: ModelBundle, source: str, settings: DecodeSettings | None,
                        encoded, max_new: int | None = None) -> tuple[DecodeRun, ForwardResult]:
    """The greedy continuation and ONE recorded teacher-forced forward over <bos> prompt
    continuation, the prompt run through the network once (`record_greedy_continuation`): its
    rows are the decoding steps (row n_prompt + t computes what step t computed: the mask hides
    the later tokens) and its attention the masked parallel pass. The pass without the mask is
    left to the view that shows it (`DecodeRun.ensure_unmasked`)."""
    settings = settings or DecodeSettings()
    tok, model = bundle.tgt_tokenizer, bundle.model
    bos, eos = tok.bos_id, tok.eos_id
    _, enc = encoded
    prompt = list(enc.ids)
    new, ended, forward = record_greedy_continuation(bundle, encoded, new_token_budget(bundle, len(prompt), max_new))
    chosen = new + [eos] if ended else new  # it stopped at <eos>: that is a step too
    tgt_in = [bos] + prompt + chosen[:-1]  # <bos> prompt y1 … y_{n-1}: one row per step after the prompt's
    rows = len(tgt_in)
    logits = forward.trace["generator.logits"].tensor[0, :rows].float()
    probs = forward.trace["generator.probs"].tensor[0, :rows]  # the recorded softmax of those logits
    allowed = logits.clone()
    allowed[:, [bos, bundle.config.pad_id]] = float("-inf")
    layers = range(bundle.config.n_decoder_layers)
    attention = torch.stack([forward.trace.attention("decoder_self", i)[0, :, :rows, :rows] for i in layers])
    mask = decoder_mask(torch.tensor([tgt_in]), bundle.config.pad_id, True)[0, 0]
    masked = ParallelPass(tgt_in, True, probs, allowed.argmax(-1).tolist(), mask, attention, None)
    base = 1 + len(prompt)
    steps = [DecodeStep(t, tgt_in[:base + t], probs[base + t - 1], probs[base + t - 1], c, mask[:base + t, :base + t],
                        attention[:, :, :base + t, :base + t], None, len(prompt)) for t, c in enumerate(chosen)]
    def unmasked() -> ParallelPass:  # one more forward: left to the view that shows it
        with torch.no_grad():
            return parallel_pass(model, None, tgt_in, causal=False, never=(bos, bundle.config.pad_id))

    run = DecodeRun(settings, source, list(enc.pieces), list(tok.vocab), steps, masked, None, None,
                    list(enc.unknown), bos, eos, n_prompt=len(prompt), text=tok.decode(new), unmasked_later=unmasked)
    return run, forward

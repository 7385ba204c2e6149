"""The one compute step: `compute_frame(bundle, source, target, settings) -> Frame`.

Everything the explorer's panels draw for one model, one text and one set of decoding
settings, computed in one pure function (no Qt) that tokenizes the text once: the recorded
forward pass (`ForwardResult`), the step-by-step decode with both teacher-forced parallel
passes and the beam tree (`DecodeRun`), and a masked LM's guesses (inside the forward).
With greedy decoding and no target the forward is recorded over the decode's own output,
so one Enter runs one greedy decode. The GUI runs this off its thread and draws the Frame;
tests and scripts call it directly.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from model.inference.bundle import ForwardResult, InputError, ModelBundle
from model.inference.decoding import BeamResult, DecodeStep, beam_search, decode_steps
from model.inference.embedding import SentenceEmbeddings, sentence_embeddings
from model.inference.recorded_rows import record_greedy_continuation
from model.inference.teacher_forcing import ParallelPass, decoder_input, parallel_pass, parallel_row, step_difference
from model.interpret.interventions import HeadKey, intervene, validate_heads
from model.interpret.lens import LensView, lens_view
from model.interpret.map_sums import attention_sums
from model.interpret.range_notes import bundle_notes
from model.nn.hooks import any_active
from model.nn.transformer import decoder_mask

# The logit lens is computed with the frame when it costs less than this many multiply-adds
# (layers × positions × vocabulary × d_model); a costlier one (an LLM's 49k-token vocabulary
# read at 30 layers) is left to the Lens panel, which computes it off the GUI thread when shown.
LENS_EAGER_MACS = 2e10
# A chat answer runs to the model's end-of-turn marker, up to this many tokens (a plain prompt's
# continuation keeps the model's default, a few tokens for an LLM: each is a pass over all weights).
CHAT_ANSWER_TOKENS = 32

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
    max_len = _new_tokens(bundle, len(enc.ids), max_new)  # generated tokens (a prompt takes room from it)
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


@dataclass
class Frame:
    """What every panel draws: the model that computed it (and how the header names it), the
    text, the settings, the recorded forward, and the decode (None for an encoder-only model,
    or with `decode_error` saying why this input cannot be decoded step by step). `lens`: the
    logit lens's top-k per layer and position (None for a model without an output layer, or
    with `lens_deferred` while a costly one waits for the panel that shows it).
    `embedding`: a sentence encoder's (no output layer) embeddings of the "|"-separated
    sentences and their cosine similarities; None for every other model."""

    bundle: ModelBundle
    model_label: str
    source: str
    target: str | None
    settings: DecodeSettings
    forward: ForwardResult
    decode: DecodeRun | None = None
    decode_error: str | None = None
    lens: LensView | None = None
    embedding: SentenceEmbeddings | None = None
    lens_deferred: bool = False  # the lens is not computed yet (too costly for every frame): `forward_lens` makes it
    # Head surgery (model.interpret.interventions): the heads edited for everything above, and the same
    # frame computed without them, so a view can show the output before → after.
    interventions: dict[HeadKey, str] = field(default_factory=dict)
    baseline: Frame | None = None
    # Where the input leaves the model's training range, in plain words ("32 letters: this
    # model was trained on 1–24"; model.interpret.range_notes): the answer may be wrong there.
    notes: list[str] = field(default_factory=list)
    # Chat: `source` is the templated prompt the model read, `message` what was typed, and
    # `message_span` the message's [start, end) among `forward.tgt_pieces` (ModelBundle.message_span).
    message: str | None = None
    message_span: tuple[int, int] | None = None

    @property
    def typed(self) -> str:
        """The text as typed: the user's message in chat, else the text the model read."""
        return self.message if self.message is not None else self.source

    @property
    def output_text(self) -> str:
        """The recorded forward's output: the target's when one is given, else the greedy decode."""
        return self.forward.output_text

    @property
    def decoded(self) -> tuple[str, str]:
        """(text, what wrote it) for a header that must agree with the decoding panels: the
        chosen strategy's output when it decoded ("beam search", "sampling"), else the recorded
        forward's ("greedy", or "target" when a target was given)."""
        run = self.decode
        if run is not None and self.settings.strategy in ("beam", "sample"):
            return run.text, STRATEGIES[self.settings.strategy].lower()
        return self.output_text, "target" if self.target is not None else "greedy"


def compute_frame(bundle: ModelBundle, source: str, target: str | None = None,
                  settings: DecodeSettings | None = None, model_label: str | None = None,
                  previous: Frame | None = None, interventions: dict[HeadKey, str] | None = None,
                  chat: bool = False) -> Frame:
    """Tokenize once, decode once, record the forward: the Frame for this session state.

    Raises InputError (with a message for the user) for text the model cannot take, and
    InterventionError for a head the model does not have. `previous`: the Frame shown now;
    when only the decoding settings changed, its forward pass is reused (it does not depend
    on them). `interventions` ({(kind, layer, head): "zero" | "mean" | "uniform"}): the whole
    frame (forward, decode, attention) is computed inside `intervene`, and `baseline` holds
    the same frame without them. `chat`: for a model with a chat template, `source` is a user's
    message and the model reads it laid out by the template (`ModelBundle.chat_input`)."""
    message, max_new = None, None
    if chat and bundle.chat_template is not None:
        message, source, max_new = source, bundle.chat_prompt(source), CHAT_ANSWER_TOKENS
    frame = _compute_frames(bundle, source, target, settings, model_label, previous, interventions, max_new)
    span = None if message is None else bundle.message_span(message, frame.forward.source.ids)
    return replace(frame, message=message, message_span=span)


def _compute_frames(bundle: ModelBundle, source: str, target: str | None, settings: DecodeSettings | None,
                    model_label: str | None, previous: Frame | None,
                    interventions: dict[HeadKey, str] | None, max_new: int | None = None) -> Frame:
    """compute_frame for the text the model reads, with the heads edited and without."""
    heads = validate_heads(bundle.model, interventions or {})
    # Only a frame computed with the same heads edited may lend its forward pass.
    plain = previous.baseline if previous is not None and previous.interventions else previous
    if not heads:
        return _with_sums(_compute_frame(bundle, source, target, settings, model_label, plain, max_new))
    reusable = previous if previous is not None and previous.interventions == heads else None
    baseline = _compute_frame(bundle, source, target, settings, model_label, plain, max_new)
    with intervene(bundle.model, heads):
        frame = _compute_frame(bundle, source, target, settings, model_label, reusable, max_new)
    return _with_sums(replace(frame, interventions=heads, baseline=baseline))  # (the baseline's maps are not drawn)


def _compute_frame(bundle: ModelBundle, source: str, target: str | None, settings: DecodeSettings | None,
                   model_label: str | None, previous: Frame | None, max_new: int | None = None) -> Frame:
    """compute_frame for the heads as they are (any intervention is already active)."""
    settings = settings or DecodeSettings()
    target = target if target and target.strip() else None
    label = model_label or bundle.name
    same_input = (previous is not None and previous.bundle is bundle and previous.source == source
                  and previous.target == target)
    if same_input and previous.settings == settings:
        return replace(previous, model_label=label, interventions={}, baseline=None)
    encoded = bundle.encode_source(source)  # the one tokenization (raises InputError)
    notes = bundle_notes(bundle, source, encoded)
    if not bundle.config.has_decoder:
        if same_input:
            return replace(previous, model_label=label, settings=settings)
        forward = bundle.run(source, encoded=encoded)
        embedding = None if bundle.has_output_layer else sentence_embeddings(bundle, source)
        lens, deferred = _lens_or_deferred(bundle, forward)
        return Frame(bundle, label, source, target, settings, forward, lens=lens, embedding=embedding, notes=notes,
                     lens_deferred=deferred)
    if not same_input and _generates_then_records(bundle, settings, target):
        decode, forward = recorded_greedy_run(bundle, source, settings, encoded, max_new)
        lens, deferred = _lens_or_deferred(bundle, forward)
        return Frame(bundle, label, source, target, settings, forward, decode, None, lens, notes=notes,
                     lens_deferred=deferred)
    decode, decode_error = None, None
    with torch.no_grad():
        try:
            decode = compute_run(bundle, source, settings, target, encoded=encoded, max_new=max_new)
        except InputError as exc:
            decode_error = str(exc)
    if same_input:
        forward = previous.forward
    else:
        own_greedy = None
        if decode is not None and target is None and settings.strategy == "greedy":
            own_greedy = [i for i in decode.output_ids if i != decode.eos_id]  # the greedy output, reused
        forward = bundle.run(source, target, encoded=encoded, output_ids=own_greedy)
    lens, deferred = (previous.lens, previous.lens_deferred) if same_input else _lens_or_deferred(bundle, forward)
    return Frame(bundle, label, source, target, settings, forward, decode, decode_error, lens, notes=notes,
                 lens_deferred=deferred)


def _new_tokens(bundle: ModelBundle, prompt_len: int, max_new: int | None) -> int:
    """How many tokens to generate at most: `max_new` (within the room the model's max_len leaves
    after the prompt), else the model's default (`ModelBundle.default_max_output`)."""
    if max_new is None:
        return bundle.default_max_output(prompt_len)
    return max(1, min(max_new, bundle.config.max_len - 1 - prompt_len))


def _generates_then_records(bundle: ModelBundle, settings: DecodeSettings | None, target: str | None) -> bool:
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
    new, ended, forward = record_greedy_continuation(bundle, encoded, _new_tokens(bundle, len(prompt), max_new))
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


def _lens_or_deferred(bundle: ModelBundle, forward: ForwardResult) -> tuple[LensView | None, bool]:
    """(the lens, False) when it is cheap enough to compute with the frame; else (None, True)."""
    cfg = bundle.config
    if not cfg.output_layer:
        return None, False
    layers = cfg.n_decoder_layers if cfg.has_decoder else cfg.n_encoder_layers
    positions = len(forward.tgt_pieces) if cfg.has_decoder else len(forward.src_pieces)
    if layers * positions * bundle.output_size * cfg.d_model > LENS_EAGER_MACS:
        return None, True
    return forward_lens(bundle, forward), False


def forward_lens(bundle: ModelBundle, forward: ForwardResult) -> LensView | None:
    """The logit lens of the recorded forward (top-k per cell; cheap next to the forward):
    the decoder's input positions, or the encoder's with a masked LM's [MASK]s marked.
    None for a model without an output layer (there is nothing to read the layers through)."""
    if not bundle.config.output_layer:
        return None
    if bundle.config.has_decoder:
        return lens_view(forward.trace, bundle.tgt_tokenizer.vocab, forward.tgt_pieces, model=bundle.model)
    marked = [m.position for m in forward.mask_predictions]
    return lens_view(forward.trace, bundle.src_tokenizer.vocab, forward.src_pieces, marked, model=bundle.model)


def _with_sums(frame: Frame) -> Frame:
    """The frame whose forward carries its block sums (a reused forward has them already)."""
    return frame if frame.forward.map_sums is not None else replace(frame, forward=with_map_sums(frame.forward))


def with_map_sums(forward: ForwardResult) -> ForwardResult:
    """The forward with its long attention maps summed over blocks (`model.interpret.map_sums`): done here,
    with the frame and off the GUI thread, so the attention panel draws a 512-token MiniLM
    frame from the sums instead of reading all 75 MB of weights on the GUI thread."""
    return replace(forward, map_sums=attention_sums(forward.trace))

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

from dataclasses import dataclass, field, replace

import torch

from model.inference.bundle import ForwardResult, InputError, ModelBundle
from model.inference.embedding import SentenceEmbeddings, sentence_embeddings
from model.interpret.decode_run import (
    STRATEGIES,
    DecodeRun,
    DecodeSettings,
    compute_run,
    generates_then_records,
    recorded_greedy_run,
)
from model.interpret.interventions import HeadKey, intervene, validate_heads
from model.interpret.lens import LensView, lens_view
from model.interpret.map_sums import attention_sums
from model.interpret.range_notes import bundle_notes

# The logit lens is computed with the frame when it costs less than this many multiply-adds
# (layers × positions × vocabulary × d_model); a costlier one (an LLM's 49k-token vocabulary
# read at 30 layers) is left to the Lens panel, which computes it off the GUI thread when shown.
LENS_EAGER_MACS = 2e10
# A chat answer runs to the model's end-of-turn marker, up to this many tokens (a plain prompt's
# continuation keeps the model's default, a few tokens for an LLM: each is a pass over all weights).
CHAT_ANSWER_TOKENS = 32


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
    if not same_input and generates_then_records(bundle, settings, target):
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

"""`ModelKind`: what kind of Transformer a model is, as one object every view reads.

The paper's encoder-decoder, the encoder-only (BERT-like) and the decoder-only (GPT-like)
variants differ in a handful of facts: which stacks exist, which attention sublayers they
record, what the typed text is (a source, a prompt, a sentence with blanks), what a token axis
holds, and what the output means. Asking this object — `config.model_kind.has_cross_attention`,
`bundle.model_kind.continues_prompt` — replaces `if config.kind == "decoder_only"` branches
scattered through the code, so a new kind is one new instance here.

`AttentionKind` names the three attention sublayers (encoder self, decoder masked self,
cross) once: their module paths, token axes and titles.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class AttentionKind(StrEnum):
    """The three attention sublayers of Figure 1. The values are the strings saved in scene
    files, intervention texts ("cross:1:0=zero") and checkpoints, so a member equals its string:
    `AttentionKind.CROSS == "cross"`, and a dict keyed by either finds both."""

    ENCODER = "encoder"  # the encoder's self-attention
    DECODER_SELF = "decoder_self"  # the decoder's masked self-attention
    CROSS = "cross"  # encoder-decoder attention: decoder queries, encoder keys

    @classmethod
    def parse(cls, text: str) -> AttentionKind:
        """The member called `text`; ValueError naming the valid ones otherwise."""
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"unknown attention kind {text!r}; use one of {', '.join(cls)}") from None

    @property
    def stack(self) -> str:
        """The stack holding the sublayer: "encoder" or "decoder"."""
        return "encoder" if self is AttentionKind.ENCODER else "decoder"

    @property
    def module_pattern(self) -> str:
        """The sublayer's module path with "{layer}" for the layer index."""
        sublayer = "cross_attn" if self is AttentionKind.CROSS else "self_attn"
        return f"{self.stack}.layers.{{layer}}.{sublayer}"

    def module_name(self, layer: int) -> str:
        """"decoder.layers.1.cross_attn" for (CROSS, 1): the recorded steps' prefix."""
        return self.module_pattern.format(layer=layer)

    @property
    def axes(self) -> tuple[str, str]:
        """What the query and key positions index: "src" or "tgt"."""
        return {"encoder": ("src", "src"), "decoder_self": ("tgt", "tgt"), "cross": ("tgt", "src")}[self.value]

    @property
    def causal_queries(self) -> bool:
        """The queries are decoder positions, which may never read a later one."""
        return self.axes[0] == "tgt"

    @property
    def title(self) -> str:
        """The sublayer's name as the panels write it in full."""
        return {"encoder": "Encoder self-attention", "decoder_self": "Decoder masked self-attention",
                "cross": "Encoder–decoder (cross) attention"}[self.value]

    @property
    def short_title(self) -> str:
        """The name where room is short (a grid's section, a column of the heads panel)."""
        return {"encoder": "Encoder self", "decoder_self": "Decoder self", "cross": "Cross"}[self.value]

    @property
    def axis_names(self) -> tuple[str, str]:
        """What the query and key positions are, in words: "source" or "target"."""
        return tuple("source" if a == "src" else "target" for a in self.axes)

    @classmethod
    def of_module(cls, name: str) -> tuple[AttentionKind, int] | None:
        """(kind, layer) of the attention sublayer a module path or step name lies in, or None."""
        m = _ATTENTION_PATH.match(name)
        if not m:
            return None
        stack, layer, sublayer = m.groups()
        kind = cls.ENCODER if stack == "encoder" else cls.DECODER_SELF if sublayer == "self_attn" else cls.CROSS
        return kind, int(layer)


_ATTENTION_PATH = re.compile(r"^(encoder|decoder)\.layers\.(\d+)\.(self_attn|cross_attn)(?:\.|$)")

# kind → module path pattern, for callers that format paths (derived from the enum, not a table).
ATTENTION_KINDS: dict[str, str] = {k.value: k.module_pattern for k in AttentionKind}


@dataclass(frozen=True)
class InputFields:
    """What the input bar asks for: the text's label and placeholder, and the target field's
    (None: the kind has no target field)."""

    label: str
    placeholder: str
    target_label: str | None = None
    target_placeholder: str = ""
    target_tooltip: str = ""


@dataclass(frozen=True)
class ModelKind:
    """One kind of Transformer (the `kind` string of `TransformerConfig`)."""

    name: str  # "encoder_decoder" | "encoder_only" | "decoder_only" (the config and checkpoint value)
    title: str  # how the app names it: "encoder-decoder (the paper's)"
    has_encoder: bool
    has_decoder: bool
    fields: InputFields
    objective: str  # what training minimises, in words
    metric: str  # the held-out score's name (`EvalEvent.metric`)
    src_axis_title: str | None = None  # what a "src" axis holds when the usual "source tokens" would mislead
    tgt_axis_title: str | None = None  # likewise for "tgt"

    @property
    def has_cross_attention(self) -> bool:
        """Only the paper's encoder-decoder has encoder-decoder attention (Section 3.2.3)."""
        return self.has_encoder and self.has_decoder

    @property
    def continues_prompt(self) -> bool:
        """The typed text is a prompt the decoder continues: one sequence, no source."""
        return self.has_decoder and not self.has_encoder

    @property
    def generates(self) -> bool:
        """The model writes text token by token (it has a decoder to step)."""
        return self.has_decoder

    @property
    def attention_kinds(self) -> tuple[AttentionKind, ...]:
        """The attention sublayers its trace records, in Figure 1's order."""
        has = {AttentionKind.ENCODER: self.has_encoder, AttentionKind.DECODER_SELF: self.has_decoder,
               AttentionKind.CROSS: self.has_cross_attention}
        return tuple(k for k in AttentionKind if has[k])

    @property
    def dashed_name(self) -> str:
        return self.name.replace("_", "-")

    def axis_title(self, axis: str) -> str | None:
        """The title of a token axis ("src" / "tgt") where the encoder-decoder names would
        mislead, else None (the usual title)."""
        return self.src_axis_title if axis == "src" else self.tgt_axis_title if axis == "tgt" else None


ENCODER_DECODER = ModelKind(
    name="encoder_decoder", title="encoder-decoder (the paper's)", has_encoder=True, has_decoder=True,
    fields=InputFields(
        "Source:", "Type a source sentence and press Enter", "Target:", "optional",
        "Leave empty to record the model's own greedy output; type a target to see the decoder "
        "teacher-forced on it"),
    objective="sequence-to-sequence cross-entropy with label smoothing", metric="exact_match")

ENCODER_ONLY = ModelKind(
    name="encoder_only", title="encoder-only (BERT-like)", has_encoder=True, has_decoder=False,
    fields=InputFields("Input:", "Type an input and press Enter"),
    objective="masked language modelling (BERT)", metric="masked_accuracy", src_axis_title="input tokens")

DECODER_ONLY = ModelKind(
    name="decoder_only", title="decoder-only (GPT-like)", has_encoder=False, has_decoder=True,
    fields=InputFields(
        "Prompt:", "Type the start of a sentence and press Enter", "Continuation:",
        "optional",
        "Leave empty: the model continues the prompt greedily. Type a continuation to see the model "
        "teacher-forced on prompt + that continuation"),
    objective="next-token prediction (GPT)", metric="next_token_accuracy",
    tgt_axis_title="tokens: <bos> prompt | continuation")

MODEL_KINDS: dict[str, ModelKind] = {k.name: k for k in (ENCODER_DECODER, ENCODER_ONLY, DECODER_ONLY)}


def model_kind(name: str) -> ModelKind:
    """The `ModelKind` called `name`; ValueError naming the valid ones otherwise."""
    try:
        return MODEL_KINDS[name]
    except KeyError:
        raise ValueError(f"unknown model kind {name!r}; expected one of {', '.join(MODEL_KINDS)}") from None


def mask_filling_fields(mask_token: str) -> InputFields:
    """The input bar of a masked LM: the text carries blanks to fill."""
    return InputFields(f"Text with {mask_token}:", f"Type a sentence with {mask_token} for each word to guess")


def sentence_fields() -> InputFields:
    """The input bar of a sentence encoder (no LM head): sentences to embed and compare."""
    return InputFields("Sentences:", "Type sentences separated by | (e.g. A cat sat. | A dog ran.) and press Enter")

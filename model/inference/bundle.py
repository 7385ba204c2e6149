"""`ModelBundle`: a model with its tokenizers and task — what a checkpoint loads and the GUI shows.

`bundle.run(text)` is the one call a viewer needs: it validates the input, decodes an output
(or takes a given target), and records the teacher-forced forward over it. The text is a
source sentence for the paper's encoder-decoder, a prompt to continue for a decoder-only
(GPT-like) model, and a sentence with [MASK] blanks for an encoder-only masked LM.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from model.data.masking import mask_id_of
from model.data.tokenizers import Encoded, Tokenizer
from model.inference.chat import render_chat
from model.inference.decoding import beam_search, greedy_decode, sample_decode
from model.inference.generation import generate
from model.nn.config import TransformerConfig
from model.nn.hooks import Trace, any_active, record
from model.nn.kinds import InputFields, ModelKind, mask_filling_fields, sentence_fields
from model.nn.transformer import Transformer


class InputError(ValueError):
    """Text the model cannot take (empty, too long, nothing it knows); the message says why."""


MASK_TOP_K = 5
# A decoder-only model with a vocabulary this large (an LLM such as SmolLM2: 49,152 pieces) writes at
# most LARGE_LM_NEW_TOKENS by default: each token is a pass over all its weights, and a few tokens
# already show what the views are about.
LARGE_VOCAB = 16_384
LARGE_LM_NEW_TOKENS = 8


@dataclass
class MaskPrediction:
    """What a masked LM predicts for one [MASK] in the input: its position among the source
    tokens and the top-k (piece, probability) pairs, best first."""

    position: int
    pieces: list[str]
    probs: list[float]


@dataclass
class ForwardResult:
    """One recorded forward pass and the token labels for its axes."""

    trace: Trace
    source: Encoded
    src_pieces: list[str]  # encoder positions
    tgt_pieces: list[str]  # decoder input positions: <bos> y1 … y_n ([] for an encoder-only model)
    out_pieces: list[str]  # what each decoder position predicts: y1 … y_n <eos> (encoder-only: each source position)
    output_text: str  # the model's greedy output (or the given target when teacher forcing)
    target_text: str | None  # the target the user gave, if any
    n_prompt: int = 0  # decoder-only: tgt_pieces[1 : 1 + n_prompt] are the prompt, the rest its continuation
    mask_predictions: list[MaskPrediction] = field(default_factory=list)  # masked LM: one per [MASK]
    # Long inputs' attention maps summed over blocks (`model.interpret.map_sums`), filled by the compute step
    # off the GUI thread so that drawing them does not read every weight: kind → factor → level
    # (None: not summed yet; {}: none of its maps is long enough to need it).
    map_sums: dict | None = None


def smoothed_target(epsilon: float, vocab_size: int) -> float:
    """The right token's share of a label-smoothed target (Section 5.4): PyTorch's
    `CrossEntropyLoss(label_smoothing=ε)` spreads ε over all V logits, so 1 − ε + ε/V."""
    return 1.0 - epsilon + epsilon / vocab_size


@dataclass
class ModelBundle:
    model: Transformer
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    task: dict = field(default_factory=dict)  # {"name", "params", "examples", ...}
    metrics: dict = field(default_factory=dict)
    name: str = "model"
    path: str | None = None
    load_notes: tuple[str, ...] = ()  # warnings from loading (NaN weights, a restored save) the GUI shows

    @property
    def config(self) -> TransformerConfig:
        return self.model.config

    @property
    def model_kind(self) -> ModelKind:
        return self.config.model_kind

    @property
    def input_fields(self) -> InputFields:
        """What the input bar asks for: the kind's fields, a masked LM's "Text with [MASK]", or a
        sentence encoder's "|"-separated sentences."""
        if not self.has_output_layer:
            return sentence_fields()
        return mask_filling_fields(self.mask_token) if self.fills_masks else self.model_kind.fields

    @property
    def has_output_layer(self) -> bool:
        """False for a sentence encoder loaded without any LM head (all-MiniLM-L6-v2): no view
        may show its generator's argmax as a prediction."""
        return self.config.output_layer

    @property
    def label_smoothing(self) -> float:
        """The ε_ls the model was trained with (Section 5.4; 0.0 when not known: untrained, or
        loaded from elsewhere). A model fit to smoothed targets gives its best guess about
        1 − ε + ε/V and every other token about ε/V (`smoothed_target`), never 1 and 0."""
        train = self.metrics.get("train_config") if isinstance(self.metrics, dict) else None
        value = train.get("label_smoothing", 0.0) if isinstance(train, dict) else 0.0
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value < 1.0
        return float(value) if ok else 0.0

    @property
    def output_size(self) -> int:
        """V: the tokens the output layer scores (the target vocabulary; an encoder-only model's source)."""
        return self.model.generator.out_features

    @property
    def large_vocabulary(self) -> bool:
        """An LLM-sized output layer (`LARGE_VOCAB` tokens or more): reading every position of every
        layer through it (the logit lens) costs far more than the forward pass itself."""
        return self.output_size >= LARGE_VOCAB

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def examples(self) -> list[str]:
        """Example inputs; a corpus serves both variants, so those with a mask token go to a
        masked LM and the rest (prompts) to the others."""
        examples = list(self.task.get("examples") or [])
        mask = mask_id_of(self.src_tokenizer)
        if mask is None or self.task.get("pretrained"):
            return examples
        token = self.src_tokenizer.pieces([mask])[0]
        return [e for e in examples if (token in e.split()) == self.fills_masks] or examples

    @property
    def max_input_len(self) -> int:
        # a decoder-only model reads <bos> + the prompt and needs room to write at least one token
        return self.config.max_len - 2 if self.model_kind.continues_prompt else self.config.max_len

    @property
    def fills_masks(self) -> bool:
        """An encoder-only model trained as a masked LM (ours; a loaded pretrained encoder's
        output layer is not a trained masked-LM head, so it is not offered as one)."""
        return (not self.model_kind.has_decoder and mask_id_of(self.src_tokenizer) is not None
                and not self.task.get("pretrained") and self.has_output_layer)

    @property
    def mask_token(self) -> str | None:
        i = mask_id_of(self.src_tokenizer)
        return None if i is None else self.src_tokenizer.pieces([i])[0]

    @property
    def chat_template(self) -> str | None:
        """The model's chat template (a Jinja string from its file), or None: not a chat model."""
        template = self.task.get("chat_template")
        return template if isinstance(template, str) and template else None

    def chat_prompt(self, message: str) -> str:
        """One user message laid out as the model's chat template writes a conversation, ending
        where the assistant's answer begins: the prompt to give `run` or `translate`."""
        if self.chat_template is None:
            raise InputError("This model has no chat template; give it plain text to continue.")
        tok = self.tgt_tokenizer
        specials = {"bos_token": tok.pieces([tok.bos_id])[0], "eos_token": tok.pieces([tok.eos_id])[0]}
        return render_chat(self.chat_template, [{"role": "user", "content": message}], **specials)

    def chat_parts(self, message: str) -> tuple[str, str]:
        """(the template's text before the message, after it): `chat_prompt(message)` is
        before + message + after, or ("", "") where the template changes the message itself."""
        marker = "\uE000message\uE001"  # private-use characters: in no template
        before, _, after = self.chat_prompt(marker).partition(marker)
        return (before, after) if before + message + after == self.chat_prompt(message) else ("", "")

    def chat_input(self, text: str, chat: bool) -> str:
        """The text the model reads for what was typed: the chat-templated prompt when `chat` is
        on and the model has a chat template, else the text itself."""
        return self.chat_prompt(text) if chat and self.chat_template is not None else text

    def message_span(self, message: str, prompt_ids: list[int]) -> tuple[int, int] | None:
        """Where the user's message lies among its chat prompt's tokens (`prompt_ids`, from
        `encode_source`), as positions of the decoder's input (<bos> first): [start, end). None
        where the template's text and the message's share a token (no boundary between them)."""
        before, after = self.chat_parts(message)
        ids = [self.src_tokenizer.encode(t).ids if t else [] for t in (before, message, after)]
        if ids[0] + ids[1] + ids[2] != list(prompt_ids):
            return None
        start = 1 + len(ids[0])
        return start, start + len(ids[1])

    # -- input ---------------------------------------------------------------------------------
    def encode_source(self, text: str) -> tuple[torch.Tensor, Encoded]:
        """Validate and encode source text → ids (1, S). Unknown symbols are kept as <unk> and
        reported in the returned `Encoded`; input made only of unknown symbols is refused."""
        if not isinstance(text, str) or not text.strip():
            raise InputError("The input is empty: type some text for the model to read.")
        enc = self.src_tokenizer.encode(text)
        limit = self.max_input_len
        if len(enc.ids) > limit:
            raise InputError(f"The input has {len(enc.ids)} tokens; this model reads at most {limit}.")
        # Pretrained tokenizers add their own markers ([CLS] … [SEP], … </s>): those are not the input.
        markers = getattr(self.src_tokenizer, "special_ids", frozenset()) - {self.src_tokenizer.unk_id}
        if len(enc.unknown) == sum(1 for i in enc.ids if i not in markers):
            shown = "".join(sorted({p for _, p in enc.unknown}))[:40]
            raise InputError(f"The model knows none of the input's symbols ({shown!r}); "
                             f"it was trained on: {self.describe_alphabet()}")
        return torch.tensor([enc.ids], dtype=torch.long, device=self.device), enc

    def describe_alphabet(self) -> str:
        if hasattr(self.src_tokenizer, "describe"):  # a pretrained sub-word vocabulary
            return self.src_tokenizer.describe()
        vocab = self.src_tokenizer.vocab[4:]
        sep = "" if self.src_tokenizer.kind == "char" else " "
        text = sep.join(vocab)
        return text if len(text) <= 60 else text[:57] + "…"

    def encode_target(self, text: str) -> list[int]:
        enc = self.tgt_tokenizer.encode(text)
        if len(enc.ids) + 1 > self.config.max_len:
            raise InputError(f"The target has {len(enc.ids)} tokens; this model decodes at most {self.config.max_len - 1}.")
        return enc.ids

    # -- decoding ------------------------------------------------------------------------------
    def default_max_output(self, src_len: int) -> int:
        """How many tokens to generate at most: a little more than the task's longest target,
        within the model's max_len (a decoder-only model's prompt takes room from it); for a
        pretrained model, the limit its own files give."""
        task_max = int(self.task.get("max_tgt_len") or 0)
        if self.task.get("pretrained") and task_max:  # the model's own limit (opus-mt: 511), exactly
            return min(self.config.max_len - 1, task_max)
        if self.model_kind.continues_prompt:
            wanted = min(task_max or 32, LARGE_LM_NEW_TOKENS) if self.large_vocabulary else task_max or 32
            return max(1, min(self.config.max_len - 1 - src_len, wanted))
        return min(self.config.max_len - 1, max(task_max, src_len) + 8)

    @torch.no_grad()
    def generate_ids(self, src: torch.Tensor, method: str = "greedy", max_len: int | None = None,
                     beam_size: int = 4, alpha: float = 0.6, temperature: float = 1.0, top_k: int = 0,
                     top_p: float = 1.0, seed: int | None = None) -> list[int]:
        """Output ids (without <bos>/<eos>) for one source (1, S).

        For a decoder-only model `src` is the prompt: generation starts from <bos> + prompt,
        max_len counts the new tokens, and only those are returned.
        <bos>/<eos> are the target tokenizer's own ids: a pretrained model has its own
        (Marian starts from the pad id and ends with </s> = 0)."""
        if not self.model_kind.generates:
            raise InputError("An encoder-only model does not generate text; run it to see what it computes.")
        bos, eos = self.tgt_tokenizer.bos_id, self.tgt_tokenizer.eos_id
        self.model.eval()
        new_tokens = max_len or self.default_max_output(src.size(1))
        prompt, prefix = [], None
        if self.model_kind.continues_prompt:
            prompt = src[0].tolist()
            prefix = torch.cat([torch.full((1, 1), bos, dtype=torch.long, device=src.device), src], dim=1)
            new_tokens = min(new_tokens, self.config.max_len - 1 - len(prompt))
            src = None
        total = new_tokens + len(prompt)  # greedy and sampling count the prompt in their length; beam does not
        if method == "greedy" and prompt and self.large_vocabulary and not any_active():  # cached: one position a token
            ids = [bos] + prompt + generate(self.model, prefix, new_tokens, eos_id=eos,
                                            never=(bos, self.config.pad_id))
        elif method == "greedy":
            ids = greedy_decode(self.model, src, bos, eos, total, prefix=prefix)[0].tolist()
        elif method == "beam":
            ids = beam_search(self.model, src, bos, eos, new_tokens, beam_size, alpha, prompt=prompt or None).tokens
        elif method == "sample":
            gen = torch.Generator()  # drawn on the CPU: a seed gives the same text on any device
            if seed is not None:
                gen.manual_seed(seed)
            ids = sample_decode(self.model, src, bos, eos, total, temperature, top_k, top_p, gen,
                                prefix=prefix)[0].tolist()
        else:
            raise ValueError(f"unknown decoding method {method!r}; use greedy, beam or sample")
        out = []
        for i in ids[1 + len(prompt):]:
            if i == eos:
                break
            out.append(i)
        return out

    def translate(self, text: str, **decoding) -> str:
        """Source text → the model's output text (greedy unless `method='beam'|'sample'`)."""
        src, _ = self.encode_source(text)
        return self.tgt_tokenizer.decode(self.generate_ids(src, **decoding))

    # -- a recorded forward pass --------------------------------------------------------------
    @torch.no_grad()
    def run(self, text: str, target: str | None = None, *, encoded: tuple[torch.Tensor, Encoded] | None = None,
            output_ids: list[int] | None = None) -> ForwardResult:
        """Record the teacher-forced forward over the given target, or over the model's own
        greedy output when no target is given (so every step shows what the model really did).

        `encoded` (from `encode_source(text)`) and `output_ids` (the greedy output, without
        <bos>/<eos>) let a caller that has already tokenized and decoded (`model.interpret.frame`) reuse
        that work instead of doing it twice."""
        src, enc = encoded if encoded is not None else self.encode_source(text)
        if not self.model_kind.has_decoder:
            return self._run_encoder_only(src, enc)
        bos, eos = self.tgt_tokenizer.bos_id, self.tgt_tokenizer.eos_id
        if target is not None and target.strip():
            y = self.encode_target(target)
        else:
            target = None
            y = list(output_ids) if output_ids is not None else self.generate_ids(src)
        tok = self.tgt_tokenizer
        self.model.eval()
        if self.model_kind.continues_prompt:  # one sequence: <bos> prompt continuation
            prompt = src[0].tolist()
            if 1 + len(prompt) + len(y) > self.config.max_len:
                raise InputError(f"Prompt and continuation have {len(prompt) + len(y)} tokens; this model reads "
                                 f"at most {self.config.max_len - 1}.")
            seq = [bos] + prompt + y
            with record(self.model) as trace:
                self.model(None, torch.tensor([seq], dtype=torch.long, device=self.device))
            return ForwardResult(trace=trace, source=enc, src_pieces=[], tgt_pieces=tok.pieces(seq),
                                 out_pieces=tok.pieces(prompt + y + [eos]), output_text=tok.decode(y),
                                 target_text=target, n_prompt=len(prompt))
        tgt_in = torch.tensor([[bos] + y], dtype=torch.long, device=self.device)
        with record(self.model) as trace:
            self.model(src, tgt_in)
        return ForwardResult(
            trace=trace, source=enc, src_pieces=enc.pieces,
            tgt_pieces=tok.pieces([bos] + y), out_pieces=tok.pieces(y + [eos]),
            output_text=tok.decode(y), target_text=target,
        )

    def _run_encoder_only(self, src: torch.Tensor, enc: Encoded) -> ForwardResult:
        """An encoder-only (BERT-like) model: record the encoder; each source position's
        argmax over the generator is what it "predicts" (there is no target).

        A masked LM fills each [MASK] of the input with its argmax (the output text) and
        reports its top-k candidates there; the other tokens are the input's own. A model
        without an output layer records its encoder only: no output, no fake predictions."""
        self.model.eval()
        if not self.has_output_layer:
            with record(self.model) as trace:
                self.model.encode(src)
            return ForwardResult(trace=trace, source=enc, src_pieces=enc.pieces, tgt_pieces=[], out_pieces=[],
                                 output_text="", target_text=None)
        with record(self.model) as trace:
            logits = self.model(src)  # (1, S, V)
        tok = self.src_tokenizer
        predicted = logits[0].argmax(-1).tolist()
        masks: list[MaskPrediction] = []
        if self.fills_masks:
            mask_id = mask_id_of(tok)
            probs = logits[0].float().softmax(-1)
            for pos, i in enumerate(enc.ids):
                if i == mask_id:
                    top = probs[pos].topk(min(MASK_TOP_K, probs.size(-1)))
                    masks.append(MaskPrediction(pos, tok.pieces(top.indices.tolist()), top.values.tolist()))
            filled = [p if i == mask_id else i for p, i in zip(predicted, enc.ids)]
            return ForwardResult(trace=trace, source=enc, src_pieces=enc.pieces, tgt_pieces=[],
                                 out_pieces=tok.pieces(predicted), output_text=tok.decode(filled),
                                 target_text=None, mask_predictions=masks)
        # The text shows the input's own positions, not those of markers such as [CLS]/[SEP].
        markers = getattr(tok, "special_ids", frozenset()) - {tok.unk_id}
        shown = [p for p, i in zip(predicted, enc.ids) if i not in markers]
        return ForwardResult(trace=trace, source=enc, src_pieces=enc.pieces, tgt_pieces=[],
                             out_pieces=tok.pieces(predicted), output_text=tok.decode(shown), target_text=None)

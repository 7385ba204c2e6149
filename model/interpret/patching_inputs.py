"""What activation patching and direct logit attribution run: a text made into the ids one
forward reads, the position whose prediction is measured, and the answer / wrong tokens.

The three kinds of model measure a different position:

* encoder-decoder: the text is a source sentence; the decoder reads <bos> + a target prefix
  (the same for the clean and the corrupted run, empty by default) and the measured
  prediction is the token after that prefix;
* decoder-only: the decoder reads <bos> + the prompt and the measured prediction is the next
  token after the prompt;
* encoder-only masked LM: the measured prediction is the first [MASK] of the input.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from model.data.masking import mask_id_of
from model.inference.bundle import InputError, ModelBundle


class PatchingError(ValueError):
    """Inputs that patching or attribution cannot compare; the message says why."""


@dataclass
class ModelInput:
    """One forward's ids, the token labels of each stack's positions and the measured position."""

    src: torch.Tensor | None  # (1, S) the encoder's ids, or None
    tgt: torch.Tensor | None  # (1, T) the decoder's ids (<bos> first), or None
    pieces: dict[str, list[str]]  # stack → the token each position reads
    position: int  # the measured position on the output stack's axis
    output_stack: str  # "decoder", or "encoder" for an encoder-only model

    def repeated(self, n: int) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The ids as a batch of n identical rows (one row per patch)."""
        return tuple(None if x is None else x.expand(n, -1) for x in (self.src, self.tgt))

    def logits(self, model, n: int = 1) -> torch.Tensor:
        """(n, V) float logits at the measured position, for a batch of n copies."""
        src, tgt = self.repeated(n)
        return model(src, tgt)[:, self.position].float()


def output_tokenizer(bundle: ModelBundle):
    """The tokenizer of the output layer's vocabulary."""
    return bundle.tgt_tokenizer if bundle.model_kind.has_decoder else bundle.src_tokenizer


def prepare(bundle: ModelBundle, text: str, target: str | None = None) -> ModelInput:
    """The ids of one input for `bundle`'s kind of model (see the module's docstring)."""
    if not bundle.has_output_layer:
        raise PatchingError(f"{bundle.name} has no output layer (no language-model head): there is no logit "
                            "to patch or attribute.")
    kind = bundle.model_kind
    src, enc = bundle.encode_source(text)
    if kind.continues_prompt:
        tgt = torch.cat([torch.full((1, 1), bundle.tgt_tokenizer.bos_id, dtype=torch.long, device=src.device), src], 1)
        return ModelInput(None, tgt, {"decoder": bundle.tgt_tokenizer.pieces(tgt[0].tolist())}, tgt.size(1) - 1,
                          "decoder")
    if kind.has_decoder:
        prefix = bundle.encode_target(target) if target and target.strip() else []
        tgt = torch.tensor([[bundle.tgt_tokenizer.bos_id] + prefix], dtype=torch.long, device=src.device)
        return ModelInput(src, tgt, {"encoder": enc.pieces, "decoder": bundle.tgt_tokenizer.pieces(tgt[0].tolist())},
                          tgt.size(1) - 1, "decoder")
    mask = mask_id_of(bundle.src_tokenizer)
    ids = enc.ids
    if mask is None or mask not in ids:
        token = bundle.mask_token or "[MASK]"
        raise PatchingError(f"The input has no {token}: put one where the model should predict a word.")
    return ModelInput(src, None, {"encoder": enc.pieces}, ids.index(mask), "encoder")


def prepare_pair(bundle: ModelBundle, clean: str, corrupted: str,
                 target: str | None = None) -> tuple[ModelInput, ModelInput]:
    """The clean and corrupted inputs, refused unless position t of one lines up with position t
    of the other (the same token count, the same measured position)."""
    try:
        a, b = prepare(bundle, clean, target), prepare(bundle, corrupted, target)
    except InputError as exc:
        raise PatchingError(str(exc)) from None
    for name, x, y in (("source", a.src, b.src), ("prompt", a.tgt, b.tgt)):
        if x is not None and x.size(1) != y.size(1):
            n_a, n_b = x.size(1), y.size(1)
            if name == "prompt":
                n_a, n_b = n_a - 1, n_b - 1  # (without <bos>)
            raise PatchingError(f"The clean input has {n_a} tokens and the corrupted one {n_b}: patching swaps "
                                "activations position by position, so both need the same number of tokens.")
    if a.position != b.position:
        raise PatchingError(f"The clean input's {bundle.mask_token} is at position {a.position + 1} and the "
                            f"corrupted one's at {b.position + 1}: put it at the same place in both.")
    return a, b


def token_id(bundle: ModelBundle, token: str | int | None) -> int | None:
    """An output-vocabulary id from a piece ("pond") or an id; None stays None."""
    if token is None or isinstance(token, int):
        return token
    tok = output_tokenizer(bundle)
    ids = [i for i in tok.encode(token).ids if i not in getattr(tok, "special_ids", frozenset())]
    if len(ids) != 1 or ids[0] == tok.unk_id:
        raise PatchingError(f"{token!r} is not one token of this model's output vocabulary; "
                            "choose a single token it knows.")
    return ids[0]


def choose_tokens(clean_logits: torch.Tensor, corrupted_logits: torch.Tensor, answer: int | None,
                  wrong: int | None) -> tuple[int, int]:
    """(answer, wrong): by default the clean run's top token and the corrupted run's top token
    (its runner-up where both runs agree, so the difference still measures something)."""
    if answer is None:
        answer = int(clean_logits.argmax())
    if wrong is None:
        ranked = corrupted_logits.argsort(descending=True).tolist()
        wrong = next(i for i in ranked if i != answer)
    if answer == wrong:
        raise PatchingError("The answer and the wrong token are the same: choose two different tokens.")
    return answer, wrong


def corrupted_default(bundle: ModelBundle, text: str) -> str:
    """The text with its last ordinary token swapped for the next one in the vocabulary: a
    corrupted input of the same length to start from ("abcde" → "abcdf"). A tokenizer that
    cannot join pieces back (a pretrained one) gives the text unchanged."""
    tok = bundle.src_tokenizer
    if not hasattr(tok, "join") or not hasattr(tok, "vocab"):
        return text
    try:
        ids = tok.encode(text).ids
        pieces = tok.pieces(ids)
        skip = {mask_id_of(tok), tok.unk_id, *getattr(tok, "special_ids", ())}
        ordinary = [i for i in range(4, len(tok.vocab)) if i not in skip]
        where = [k for k, i in enumerate(ids) if i in ordinary]
        if not where or len(ordinary) < 2:
            return text
        k = where[-1]
        pieces[k] = tok.vocab[ordinary[(ordinary.index(ids[k]) + 1) % len(ordinary)]]
        return tok.join(pieces)
    except (NotImplementedError, ValueError):
        return text


__all__ = ["ModelInput", "PatchingError", "choose_tokens", "corrupted_default",
           "output_tokenizer", "prepare", "prepare_pair", "token_id"]

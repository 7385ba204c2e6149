"""What an attribution explains: one output token of one model on one input.

`AttributionProblem` fixes the ids the model reads, which of its positions are the input
tokens being scored (the source; a decoder-only model's prompt) and which logit row and
token id are being explained. Every method scores the same thing: log p(token) at that row.

The output tokens one can choose (`problem.outputs`, indexed by `position`):
* encoder-decoder: y₁ … y_n <eos> of the model's greedy output (or of the given target);
* decoder-only: the continuation y₁ … y_n <eos> that follows the prompt;
* encoder-only masked LM: the [MASK] positions of the input (every position if it has none),
  explaining the model's own top guess there.
A pretrained encoder without a trained masked-LM head (MiniLM) has no output token to explain,
so it is refused with `UnsupportedAttribution`. A pretrained Marian model is an encoder-decoder
and is explained like ours (its source and target share one embedding table; only the
source's lookup is perturbed, see `model.interpret.attribution.gradients`).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import torch

from model.data.masking import mask_id_of
from model.inference.bundle import InputError, ModelBundle


class UnsupportedAttribution(InputError):
    """This model has no output token to explain (the message says why)."""


@dataclass
class AttributionProblem:
    bundle: ModelBundle
    src: torch.Tensor | None  # (1, S) source ids; None for a decoder-only model
    tgt: torch.Tensor | None  # (1, T) decoder input <bos> [prompt] y₁ … ; None for an encoder-only model
    span: tuple[int, int]  # [start, end) of the scored tokens within the attributed sequence
    input_pieces: list[str]  # the scored tokens, as the tokenizer spells them
    outputs: list[str]  # the output tokens one can choose
    rows: list[int]  # the logit row that predicts each of `outputs`
    token_ids: list[int]  # the id each of `outputs` is
    position: int  # the chosen index into `outputs` (non-negative)

    @property
    def kind(self):
        return self.bundle.model_kind

    @property
    def row(self) -> int:
        return self.rows[self.position]

    @property
    def token_id(self) -> int:
        return self.token_ids[self.position]

    @property
    def output_piece(self) -> str:
        return self.outputs[self.position]

    @property
    def attributed_ids(self) -> torch.Tensor:
        """The sequence whose token embeddings are perturbed: the source, or a decoder-only
        model's one sequence (of which `span` is the prompt)."""
        return self.tgt if self.kind.continues_prompt else self.src

    @property
    def embedding_table(self) -> torch.nn.Module:
        return self.bundle.model.tgt_embed if self.kind.continues_prompt else self.bundle.model.src_embed

    def logits(self, attributed: torch.Tensor) -> torch.Tensor:
        """The model's logits (B, T, V) with `attributed` (B, L) in place of `attributed_ids`."""
        model = self.bundle.model
        if self.kind.continues_prompt:
            return model(None, attributed)
        if not self.kind.has_decoder:
            return model(attributed)
        return model(attributed, self.tgt.expand(attributed.size(0), -1))

    def log_prob(self, logits: torch.Tensor) -> torch.Tensor:
        """log p(chosen token) at the chosen row, one per batch entry (B,)."""
        return logits[:, self.row].float().log_softmax(-1)[:, self.token_id]

    def probability(self) -> float:
        """p(chosen token) on the real input: what every method here explains."""
        with torch.no_grad():
            return float(self.log_prob(self.logits(self.attributed_ids)).exp()[0])

    def with_position(self, position: int) -> AttributionProblem:
        return AttributionProblem(self.bundle, self.src, self.tgt, self.span, self.input_pieces, self.outputs,
                                  self.rows, self.token_ids, resolve_position(position, len(self.outputs)))


def resolve_position(position: int, n: int) -> int:
    if isinstance(position, bool) or not isinstance(position, numbers.Integral):
        raise InputError(f"position must be an integer (an index into the output tokens), got {position!r}")
    position = int(position)
    if not -n <= position < n:
        raise InputError(f"There is no output token {position}: this output has {n} (0 … {n - 1}).")
    return position % n


@torch.no_grad()
def build_problem(bundle: ModelBundle, source: str, target: str | None = None, position: int = -1,
                  output_ids: list[int] | None = None) -> AttributionProblem:
    """Tokenize, decode (greedy, unless `target` is given) and fix what is explained.
    `output_ids`: the greedy output already decoded (a frame's, without <bos>/<eos>), not decoded again."""
    kind = bundle.model_kind
    bundle.model.eval()
    src, enc = bundle.encode_source(source)
    tok = bundle.tgt_tokenizer
    if not kind.has_decoder:
        return _encoder_only_problem(bundle, src, enc, position)
    if target and target.strip():
        y = bundle.encode_target(target)
    else:
        y = list(output_ids) if output_ids is not None else bundle.generate_ids(src)
    bos, eos = tok.bos_id, tok.eos_id
    outputs_ids = list(y) + [eos]
    if kind.continues_prompt:
        prompt = src[0].tolist()
        if 1 + len(prompt) + len(y) > bundle.config.max_len:
            raise InputError(f"Prompt and continuation have {len(prompt) + len(y)} tokens; this model reads "
                             f"at most {bundle.config.max_len - 1}.")
        tgt = torch.tensor([[bos] + prompt + list(y)], dtype=torch.long, device=bundle.device)
        rows = [len(prompt) + k for k in range(len(outputs_ids))]
        return AttributionProblem(bundle, None, tgt, (1, 1 + len(prompt)), list(enc.pieces), tok.pieces(outputs_ids),
                                  rows, outputs_ids, resolve_position(position, len(outputs_ids)))
    tgt = torch.tensor([[bos] + list(y)], dtype=torch.long, device=bundle.device)
    return AttributionProblem(bundle, src, tgt, (0, src.size(1)), list(enc.pieces), tok.pieces(outputs_ids),
                              list(range(len(outputs_ids))), outputs_ids, resolve_position(position, len(outputs_ids)))


def _encoder_only_problem(bundle: ModelBundle, src: torch.Tensor, enc, position: int) -> AttributionProblem:
    if not bundle.fills_masks:
        raise UnsupportedAttribution(
            "Attribution needs an output token to explain; this encoder's output layer is not a trained "
            "masked-LM head (a pretrained encoder's is not loaded), so it has none.")
    ids = src[0].tolist()
    mask_id = mask_id_of(bundle.src_tokenizer)
    rows = [i for i, t in enumerate(ids) if t == mask_id] or list(range(len(ids)))
    predicted = bundle.model(src)[0].argmax(-1).tolist()  # the model's own guess at each position
    token_ids = [predicted[r] for r in rows]
    outputs = bundle.src_tokenizer.pieces(token_ids)  # what the model puts at each [MASK]
    return AttributionProblem(bundle, src, None, (0, len(ids)), list(enc.pieces), outputs, rows, token_ids,
                              resolve_position(position, len(rows)))

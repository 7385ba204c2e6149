"""Evaluation as the paper reports it (Section 6.1): beam search with beam size 4 and length
penalty α = 0.6, "maximum output length … input length + 50, but terminate early when possible",
scored with BLEU — here sacrebleu's corpus BLEU, the standard implementation of the metric.
"""
from __future__ import annotations

from model.data.user_data import read_tsv
from model.inference.bundle import InputError, ModelBundle

EXTRA_OUTPUT = 50  # tokens beyond the input's length (Section 6.1)


def bleu_score(hypotheses: list[str], references: list[str]) -> float:
    """sacrebleu's corpus BLEU (13a tokenization, as sacrebleu reports by default), 0–100."""
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} outputs for {len(references)} references")
    return float(sacrebleu.corpus_bleu(hypotheses, [references]).score)


def check_bleu_arguments(bundle: ModelBundle, beam_size, limit=None) -> None:
    """What BLEU needs: an encoder-decoder (it translates a source), a beam ≥ 1, a limit ≥ 0."""
    kind = bundle.model_kind
    if not kind.has_cross_attention:
        raise InputError(f"{bundle.name}: this {kind.name} model does not translate a source sentence, so it has "
                         "no BLEU score")
    if isinstance(beam_size, bool) or not isinstance(beam_size, int) or beam_size < 1:
        raise InputError(f"beam_size must be an integer ≥ 1, got {beam_size!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InputError(f"limit must be None (all pairs) or an integer ≥ 0, got {limit!r}")


def beam_translate(bundle: ModelBundle, sources: list[str], beam_size: int = 4, alpha: float = 0.6,
                   extra: int = EXTRA_OUTPUT) -> list[str]:
    """Each source's beam-search output, at most len(input) + `extra` tokens (within max_len).
    A source the model cannot read (too long, unknown symbols only) gives an empty output."""
    outputs = []
    for text in sources:
        try:
            src, _ = bundle.encode_source(text)
        except InputError:
            outputs.append("")
            continue
        limit = max(1, min(src.size(1) + extra, bundle.config.max_len - 1))
        ids = bundle.generate_ids(src, method="beam", max_len=limit, beam_size=beam_size, alpha=alpha)
        outputs.append(bundle.tgt_tokenizer.decode(ids))
    return outputs


def evaluate_bleu(bundle: ModelBundle, path, beam_size: int = 4, alpha: float = 0.6, limit: int | None = None
                  ) -> tuple[float, list[tuple[str, str, str]]]:
    """(BLEU, (source, reference, output) triples) on a held-out `source<TAB>reference` TSV.
    InputError for a model that does not translate, a beam under 1 or a negative limit."""
    check_bleu_arguments(bundle, beam_size, limit)
    pairs = read_tsv(path)[:limit] if limit else read_tsv(path)
    outputs = beam_translate(bundle, [s for s, _ in pairs], beam_size, alpha)
    return bleu_score(outputs, [t for _, t in pairs]), [(s, t, o) for (s, t), o in zip(pairs, outputs)]


__all__ = ["bleu_score", "beam_translate", "check_bleu_arguments", "evaluate_bleu", "EXTRA_OUTPUT"]

"""Evaluation as the paper reports it (Section 6.1): beam search with beam size 4 and length
penalty α = 0.6, "maximum output length … input length + 50, but terminate early when possible",
scored with BLEU — here sacrebleu's corpus BLEU, the standard implementation of the metric.
"""
from __future__ import annotations

from model.inference.bundle import InputError, ModelBundle
from model.data.user_data import read_tsv

EXTRA_OUTPUT = 50  # tokens beyond the input's length (Section 6.1)


def bleu_score(hypotheses: list[str], references: list[str]) -> float:
    """sacrebleu's corpus BLEU (13a tokenization, as sacrebleu reports by default), 0–100."""
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} outputs for {len(references)} references")
    return float(sacrebleu.corpus_bleu(hypotheses, [references]).score)


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
    """(BLEU, (source, reference, output) triples) on a held-out `source<TAB>reference` TSV."""
    pairs = read_tsv(path)[:limit] if limit else read_tsv(path)
    outputs = beam_translate(bundle, [s for s, _ in pairs], beam_size, alpha)
    return bleu_score(outputs, [t for _, t in pairs]), [(s, t, o) for (s, t), o in zip(pairs, outputs)]


__all__ = ["bleu_score", "beam_translate", "evaluate_bleu", "EXTRA_OUTPUT"]

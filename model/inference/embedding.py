"""What a sentence encoder is for: one vector per sentence, and how alike two sentences are.

all-MiniLM-L6-v2 has no language-model head: it was trained (Reimers & Gurevych 2019,
sentence-transformers) so that the *mean* of its last layer over a sentence's tokens,
normalised to length 1, lands near the vectors of sentences that mean the same. Its modules
are the paper's encoder; only the read-out differs:

    e = normalise( Σ_t m_t h_t / Σ_t m_t )     h_t: last-layer output at token t, m_t = 1 on real tokens

[CLS] and [SEP] count as tokens (they are in sentence-transformers' attention mask); padding
does not. Cosine similarity of two normalised vectors is their dot product.

The user types several sentences in one line, separated by "|" (SENTENCE_SEPARATOR).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from model.inference.bundle import InputError

SENTENCE_SEPARATOR = "|"
MAX_SENTENCES = 12  # a similarity matrix a projector can still label


@dataclass
class SentenceEmbeddings:
    """The sentences as typed, their normalised embeddings (n, d) and cosine similarities (n, n)."""

    sentences: list[str]
    vectors: torch.Tensor
    similarity: torch.Tensor
    n_tokens: list[int]  # tokens each sentence became ([CLS] and [SEP] included)

    @property
    def dim(self) -> int:
        return self.vectors.size(1)


def split_sentences(text: str) -> list[str]:
    """"A cat sat. | A dog ran." → ["A cat sat.", "A dog ran."] (empty pieces dropped)."""
    return [s.strip() for s in text.split(SENTENCE_SEPARATOR) if s.strip()]


def mean_pool(hidden: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """(B, T, d) hidden states, (B, T) bool real-token mask → (B, d) L2-normalised mean over real tokens."""
    weights = keep.to(hidden.dtype).unsqueeze(-1)  # (B, T, 1)
    summed = (hidden * weights).sum(1)  # (B, d)
    mean = summed / weights.sum(1).clamp(min=1e-9)  # (B, d)
    return F.normalize(mean, p=2, dim=1)


@torch.no_grad()
def sentence_embeddings(bundle, text: str) -> SentenceEmbeddings:
    """Embed each "|"-separated sentence of `text` with the bundle's encoder (one padded batch)
    and compare them all. Raises the bundle's InputError for a sentence it cannot take."""
    if not bundle.model_kind.has_encoder or bundle.model_kind.has_decoder:
        raise InputError("Sentence embeddings come from an encoder-only model.")
    sentences = split_sentences(text)
    if not sentences:
        raise InputError("The input is empty: type one or more sentences separated by |.")
    if len(sentences) > MAX_SENTENCES:
        raise InputError(f"{len(sentences)} sentences; at most {MAX_SENTENCES} fit one similarity matrix.")
    ids = []
    for s in sentences:
        try:
            ids.append(bundle.encode_source(s)[1].ids)
        except InputError as exc:
            raise InputError(f"Sentence {s[:40]!r}: {exc}") from None
    pad = bundle.config.pad_id
    width = max(len(i) for i in ids)
    batch = torch.full((len(ids), width), pad, dtype=torch.long)  # (n, T)
    keep = torch.zeros(len(ids), width, dtype=torch.bool)  # (n, T)
    for row, seq in enumerate(ids):
        batch[row, :len(seq)] = torch.tensor(seq)
        keep[row, :len(seq)] = True
    model = bundle.model
    model.eval()
    hidden = model.encode(batch.to(bundle.device)).float().cpu()  # (n, T, d)
    vectors = mean_pool(hidden, keep)  # (n, d)
    similarity = (vectors @ vectors.T).clamp(-1.0, 1.0)  # (n, n) cosine
    return SentenceEmbeddings(sentences, vectors, similarity, [len(i) for i in ids])


__all__ = ["SentenceEmbeddings", "sentence_embeddings", "split_sentences", "mean_pool", "SENTENCE_SEPARATOR"]

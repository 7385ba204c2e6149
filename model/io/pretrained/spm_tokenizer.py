"""Marian's own tokenizer files (source.spm, target.spm, vocab.json) without `transformers`.

opus-mt folders ship no tokenizer.json: transformers' MarianTokenizer splits text with the
SentencePiece model and maps each piece through vocab.json (whose ids are *not* the
SentencePiece ids), unknown pieces to <unk>, and appends </s> to a source. This does the
same with the `sentencepiece` package. Left out: MarianTokenizer's optional Moses punctuation
normalisation (only active when `sacremoses` is installed), so unusual quotes or dashes may
split differently.
"""
from __future__ import annotations

from pathlib import Path

from model.io.pretrained.files import PretrainedError, read_json
from model.io.pretrained.hf_tokenizer import PretrainedTokenizer

SPIECE_UNDERLINE = "▁"


class MarianSentencePieceTokenizer(PretrainedTokenizer):
    """One side (source or target) of a Marian model's SentencePiece tokenizer."""

    kind = "sentencepiece"

    def __init__(self, spm_path: Path, vocab_path: Path, **ids):
        try:
            import sentencepiece
        except ImportError:
            raise PretrainedError(
                f"{spm_path.parent}: this Marian folder has SentencePiece files ({spm_path.name}) but no "
                "tokenizer.json; reading them needs the `sentencepiece` package (pip install sentencepiece)") from None
        self._sp = sentencepiece.SentencePieceProcessor()
        try:
            self._sp.Load(str(spm_path))
        except Exception as exc:  # OSError or RuntimeError, depending on the damage
            raise PretrainedError(f"{spm_path}: not a SentencePiece model ({exc})") from None
        encoder = read_json(vocab_path)
        if not all(isinstance(i, int) for i in encoder.values()):
            raise PretrainedError(f"{vocab_path}: expected piece → integer id")
        self.encoder = encoder
        vocab = [f"<id {i}>" for i in range(max(encoder.values()) + 1)]
        for piece, i in encoder.items():
            vocab[i] = piece
        self.language_codes = {p for p in encoder if p.startswith(">>") and p.endswith("<<")}
        super().__init__(vocab, special_ids=(), **ids)

    def token_id(self, token: str) -> int | None:
        return self.encoder.get(token)

    def split(self, text: str) -> list[tuple[int, str]]:
        """MarianTokenizer._tokenize: a leading ">>fra<<" language code is one token, the rest
        goes through SentencePiece; pieces missing from vocab.json become <unk>."""
        code = []
        if text.startswith(">>") and (end := text.find("<<")) != -1:
            code, text = [text[: end + 2]], text[end + 2:]
        pieces = code + self._sp.encode(text, out_type=str)
        return [(self.encoder.get(p, self.unk_id), p.replace(SPIECE_UNDERLINE, " ").strip() or p) for p in pieces]

    def detokenize(self, ids: list[int]) -> str:
        """MarianTokenizer.convert_tokens_to_string: <unk> stays visible, the rest is joined by
        SentencePiece."""
        out, run = [], []
        for i in ids:
            piece = self.vocab[i] if 0 <= i < len(self.vocab) else self.vocab[self.unk_id]
            if i == self.unk_id:
                out.append(self._sp.decode_pieces(run) + piece + " ")
                run = []
            else:
                run.append(piece)
        out.append(self._sp.decode_pieces(run))
        return "".join(out).replace(SPIECE_UNDERLINE, " ").strip()

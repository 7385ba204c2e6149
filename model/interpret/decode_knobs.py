"""The decoding knobs a lecturer turns (Section 6.1's beam 4, α = 0.6 by default), without Qt: each
one's name in `DecodeSettings`, its short label, range, step, default and what it does. The
decoding and sampling panels build their spin boxes and sliders from these."""
from __future__ import annotations

from dataclasses import dataclass, fields

from model.interpret.decode_run import DecodeSettings

DEFAULTS = {f.name: f.default for f in fields(DecodeSettings)}


@dataclass(frozen=True)
class Knob:
    name: str  # the DecodeSettings field it sets
    label: str
    low: float
    high: float
    step: float  # 1 for a whole number
    tip: str
    off: str = ""  # what its lowest value reads as, where that value turns it off

    @property
    def default(self):
        return DEFAULTS[self.name]

    @property
    def whole(self) -> bool:
        return isinstance(self.default, int)


SAMPLE_KNOBS = (
    Knob("temperature", "T", 0.05, 5.0, 0.1, "Temperature T: the logits are divided by T before the softmax. "
         "T < 1 sharpens the distribution, T > 1 flattens it."),
    Knob("top_k", "top-k", 0, 1000, 1, "Top-k: keep only the k most probable tokens (0 = off).", off="off"),
    Knob("top_p", "top-p", 0.05, 1.0, 0.05, "Top-p (nucleus): keep the smallest set of tokens, most probable "
         "first, whose probability adds up to at least p (1 = off)."),
    Knob("seed", "seed", 0, 999_999, 1, "Random seed: the same seed gives the same sample."),
)
BEAM_KNOBS = (
    Knob("beam_size", "beam", 1, 12, 1, "Beam size (the paper uses 4)"),
    Knob("alpha", "α", 0.0, 2.0, 0.1, "Length penalty α: score = log p / ((5 + |Y|) / 6)^α (the paper uses 0.6)"),
)
KNOBS = {knob.name: knob for knob in SAMPLE_KNOBS + BEAM_KNOBS}
SHARPEST_TIP = ("Show the decoder head that aligns most clearly on this text: each row's largest weight, averaged, "
                "times the share of different tokens the rows pick (a head that puts every row on one token is sharp "
                "and shows nothing); cross-attention where the model has it, else masked self-attention")

__all__ = ["BEAM_KNOBS", "KNOBS", "SAMPLE_KNOBS", "SHARPEST_TIP", "Knob"]

"""A recorded forward over <bos> prompt continuation that runs the prompt through the network once.

The explorer shows a language model's greedy continuation as one recorded teacher-forced
forward whose rows are the decoding steps. Generating first and recording afterwards runs the
prompt twice (once to generate, once recorded); here the recorded pass over the prompt fills
the key/value cache the generation continues from, and the continuation's rows are recorded
in one more cached pass. `RowRecording` gathers the passes' hook sites into the tensors one
forward over the whole sequence records: the same names, order, shapes and numbers, up to
float rounding (a row never changes once computed: the causal mask hides the later keys).
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from model.inference.bundle import ForwardResult, ModelBundle
from model.inference.generation import generate
from model.inference.kv_cache import KVCache
from model.nn.hooks import Site, hooks
from model.nn.steps import site_axes
from model.nn.trace import Step, Trace

# What a key column holds in a row computed before that key existed: the full pass blocks it there
# (a future position), so the mask is False, the masked score −∞ and the weight exactly 0. The raw
# score QKᵀ/√d_k is a real number there; `RowRecording.trace` computes it from the recorded q and k.
UNSEEN = {"masked_scores": float("-inf")}


class RowRecording:
    """Every hook site of a decoder-only `model`, recorded over several cached forwards that each
    compute the next rows of one sequence of up to `rows` positions, written in place into one
    tensor per site shaped as a single forward over the whole sequence records it.

    >>> recording = RowRecording(model, 12)
    >>> with recording.rows(0, 9):  # the prompt, filling `cache`
    ...     model.project(model.decode(None, None, prompt, cache=cache))
    >>> with recording.rows(9, 3):  # three more tokens, reading the cached keys and values
    ...     model.project(model.decode(None, None, more, cache=cache))
    >>> trace = recording.trace()  # as `record` over one forward of the 12 tokens

    Each forward's query rows go to rows start … start + count − 1; key columns go to the
    positions they stand for (before the cache: the new ones; after it: every one so far).
    The tensors are float32 on the CPU, as `Trace.add` keeps them, made outside any inference
    mode (even when the forwards run in one) so the trace can be read and edited anywhere later.
    """

    def __init__(self, model: nn.Module, rows: int):
        if rows < 1:
            raise ValueError(f"a recording needs at least one row, got {rows}")
        self.model, self.positions = model, rows
        self._steps: dict[str, Step] = {}  # name → step, in the order first recorded
        self._token_axes: dict[str, tuple[int | None, int | None]] = {}  # name → (query axis, key axis)
        self._filled: list[tuple[int, int]] = []  # the (start, end) rows of each recorded forward
        self._start = self._end = 0

    @contextmanager
    def rows(self, start: int, count: int) -> Iterator[RowRecording]:
        """Record the forwards run inside the block as computing rows start … start + count − 1
        (their keys: every position before start + count)."""
        end = self._filled[-1][1] if self._filled else 0
        if start != end or count < 1 or start + count > self.positions:
            raise ValueError(f"rows {start}…{start + count - 1} do not continue the {end} recorded "
                             f"of at most {self.positions}")
        self._start, self._end = start, start + count
        with hooks(self.model, {"*": self._keep}, reads_only=True):
            yield self
        self._filled.append((start, start + count))

    def _keep(self, tensor: torch.Tensor, where: Site) -> None:
        step = self._steps.get(where.name)
        if step is None:
            step = self._steps[where.name] = self._new_step(tensor, where)
        query, key = self._token_axes[where.name]
        place = step.tensor
        if query is not None:
            if tensor.size(query) != self._end - self._start:
                raise ValueError(f"{where.name} has {tensor.size(query)} rows; this forward was to compute "
                                 f"{self._end - self._start}")
            place = place.narrow(query, self._start, self._end - self._start)
        if key is not None:  # the new keys (before the cache), or all of them (after it)
            place = place.narrow(key, self._end - tensor.size(key), tensor.size(key))
        place.copy_(tensor.detach())  # one copy, into place (to float32, to the CPU)

    def _new_step(self, tensor: torch.Tensor, where: Site) -> Step:
        axes = site_axes(where.module, where.local)
        query = next((i for i, a in enumerate(axes) if a in ("q", "t")), None)
        key = axes.index("k") if "k" in axes else None
        self._token_axes[where.name] = (query, key)
        shape = [self.positions if i in (query, key) else n for i, n in enumerate(tensor.shape)]
        dtype = torch.float32 if tensor.is_floating_point() else tensor.dtype
        unseen = UNSEEN.get(where.local, 0) if query is not None and key is not None else None
        if torch.is_inference_mode_enabled():
            with torch.inference_mode(False):
                buffer = _buffer(shape, dtype, unseen)
        else:
            buffer = _buffer(shape, dtype, unseen)
        text = where.text
        return Step(where.name, buffer, text.formula, text.description, text.axes)

    def trace(self) -> Trace:
        """The recorded steps over the rows recorded so far (fewer than `rows` when the sequence
        ended early), the raw scores of earlier rows against later keys computed as the full
        forward computes them: QKᵀ/√d_k from the recorded (rotated, shared) queries and keys."""
        if not self._filled:
            raise ValueError("nothing was recorded")
        length = self._filled[-1][1]
        with torch.inference_mode(False), torch.no_grad():
            steps = {name: self._cut(step, length) for name, step in self._steps.items()}
            for name, step in steps.items():
                if name.endswith(".scores"):
                    self._score_unseen(step.tensor, steps, name.removesuffix("scores"), length)
        return Trace(steps=list(steps.values()), model=self.model)

    def _cut(self, step: Step, length: int) -> Step:
        """The step over the first `length` positions (a contiguous copy only when that is fewer)."""
        if length == self.positions:
            return step
        index = [slice(None)] * step.tensor.dim()
        for axis in self._token_axes[step.name]:
            if axis is not None:
                index[axis] = slice(0, length)
        return Step(step.name, step.tensor[tuple(index)].clone(), step.formula, step.description, step.axes)

    def _score_unseen(self, scores: torch.Tensor, steps: dict[str, Step], module: str, length: int) -> None:
        pick = next(steps[module + n].tensor for n in ("q_rot", "q") if module + n in steps)
        keys = next(steps[module + n].tensor for n in ("k_shared", "k_rot", "k") if module + n in steps)
        for start, end in self._filled:
            if end < length:
                scores[..., start:end, end:length] = (pick[..., start:end, :] @ keys[..., end:length, :].transpose(-2, -1)
                                                      / math.sqrt(pick.size(-1)))


def _buffer(shape: list[int], dtype: torch.dtype, fill: float | None) -> torch.Tensor:
    """A CPU tensor, filled with `fill` (the parts no forward writes) or left to be written."""
    return torch.empty(shape, dtype=dtype) if fill is None else torch.full(shape, fill, dtype=dtype)


@torch.no_grad()
def record_greedy_continuation(bundle: ModelBundle, encoded, max_new: int) -> tuple[list[int], bool, ForwardResult]:
    """A decoder-only model's greedy continuation of the prompt and the recorded forward over
    <bos> prompt continuation (what `bundle.run` records over `bundle.generate_ids`), the prompt
    run once: its recorded pass fills the key/value cache, the continuation is generated from
    the cache unrecorded, and its tokens' rows are recorded in one more cached pass.

    `encoded`: `bundle.encode_source(prompt)`. Returns (the new ids without <eos>, whether the
    model wrote <eos> before `max_new` tokens, the recorded forward)."""
    model, tok, cfg = bundle.model, bundle.tgt_tokenizer, bundle.config
    bos, eos = tok.bos_id, tok.eos_id
    never = (bos, cfg.pad_id)
    src, enc = encoded
    prompt = src[0].tolist()
    seq = [bos] + prompt
    model.eval()
    # Room for every position at once: `generate` (in inference mode) then writes into the recorded
    # pass's buffers and makes none of its own, which a later recorded pass could not write to.
    recording, cache = RowRecording(model, len(seq) + max_new), KVCache(model, capacity=len(seq) + max_new)
    with recording.rows(0, len(seq)):
        logits = model.project(model.decode(None, None, torch.tensor([seq], device=bundle.device), cache=cache))
    first = logits[0, -1].float()
    first[list(never)] = float("-inf")  # as `generate` chooses
    new = [int(first.argmax())]
    if new[0] != eos and max_new > 1:
        new += generate(model, new, max_new - 1, eos_id=eos, never=never, cache=cache)
    ended = new[-1] == eos
    new = new[:-1] if ended else new
    if new:  # the continuation's rows, recorded from the prompt's cached keys and values
        cache.truncate(len(seq))
        with recording.rows(len(seq), len(new)):
            model.project(model.decode(None, None, torch.tensor([new], device=bundle.device), cache=cache))
    forward = ForwardResult(trace=recording.trace(), source=enc, src_pieces=[], tgt_pieces=tok.pieces(seq + new),
                            out_pieces=tok.pieces(prompt + new + [eos]), output_text=tok.decode(new),
                            target_text=None, n_prompt=len(prompt))
    return new, ended, forward


__all__ = ["RowRecording", "record_greedy_continuation"]

"""Which heads matter: importance by masking, Michel et al.'s gradient estimate, the pruning curve.

Michel, Levy & Neubig 2019, "Are Sixteen Heads Really Better than One?": many heads can be
removed at test time, and encoder-decoder (cross) attention needs its heads most. On a
bundled task's held-out pairs (the split training never sees, `Trainer.eval_pairs`):

- masking importance: held-out loss with the head zeroed − the loss with every head;
- gradient importance (their Section 4.1, Eq. 2): each head's output is multiplied by a gate
  ξ_h = 1 and I_h = Σ_batches |∂L/∂ξ_h|, the absolute gradient per batch of `batch_size`
  pairs summed over the held-out set (their code's form of E_x |∂L(x)/∂ξ_h|);
- the pruning curve: held-out exact match (model.inference.evaluation) after zeroing the k least
  important heads, k = 0 … all heads, in one fixed order.

The loss is the teacher-forced cross-entropy per target token without label smoothing.
Pure functions of a bundle, run off the GUI thread; `progress(done, total, what)` reports.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from model.data.tokenizers import PAD_ID
from model.data.user_data import make_batch
from model.inference.bundle import ModelBundle
from model.inference.evaluation import exact_match, next_token_accuracy
from model.interpret.interventions import HeadKey, all_heads, attention_layers, gated, intervene

Progress = Callable[[int, int, str], object]


class ImportanceError(ValueError):
    """A model this analysis cannot score (no held-out task, no targets); the message says why."""


def heldout_pairs(bundle: ModelBundle, n: int, seed: int = 1) -> list[tuple[str, str]]:
    """n held-out pairs of the bundle's own task: the pairs `Trainer.evaluate` scores."""
    from model.train.trainer import task_from_info  # (training imports evaluation; kept out of import time)

    if not bundle.task.get("name") or bundle.task.get("pretrained"):
        raise ImportanceError("Head importance needs the model's own task and its held-out pairs; "
                              f"{bundle.name!r} names none (a pretrained model has no bundled task).")
    if bundle.model_kind.name == "encoder_only":
        raise ImportanceError("Head importance scores outputs against targets; an encoder-only model "
                              "has no targets here. Use an encoder-decoder or decoder-only model.")
    task = task_from_info(bundle.task)
    split_pairs = getattr(task, "split_pairs", None)
    return list(split_pairs["eval"][:n]) if split_pairs is not None else task.pairs(n, seed=seed, split="eval")


def heldout_loss(bundle: ModelBundle, pairs: list[tuple[str, str]], batch_size: int = 64) -> float:
    """Mean teacher-forced cross-entropy per target token over `pairs` (no label smoothing)."""
    total = count = 0.0
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            loss, n = _batch_loss(bundle, pairs[start:start + batch_size])
            total, count = total + float(loss) * n, count + n
    return total / max(count, 1)


def _batch_loss(bundle: ModelBundle, pairs) -> tuple[torch.Tensor, int]:
    batch = make_batch(pairs, bundle.src_tokenizer, bundle.tgt_tokenizer).to(bundle.device)
    src = None if not bundle.model_kind.has_encoder else batch.src
    logits = bundle.model(src, batch.tgt_in)  # (B, T, V)
    loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), batch.tgt_out.reshape(-1),
                           ignore_index=PAD_ID)
    return loss, int((batch.tgt_out != PAD_ID).sum())


def heldout_score(bundle: ModelBundle, pairs: list[tuple[str, str]]) -> float:
    """Exact match for an encoder-decoder; teacher-forced next-token accuracy for a decoder-only model."""
    if bundle.model_kind.has_encoder:
        return exact_match(bundle, pairs)
    return next_token_accuracy(bundle.model, bundle.tgt_tokenizer, [s for s, _ in pairs])[0]


KIND_SHORT = {"encoder": "enc", "decoder_self": "dec-self", "cross": "cross"}  # attention kinds, briefly


@dataclass
class HeadImportance:
    """Both importance estimates for every head, and the pruning curve once computed."""

    task: str
    n_pairs: int
    base_loss: float
    masking: dict[HeadKey, float]  # loss increase when the head is zeroed
    gradient: dict[HeadKey, float]  # Σ_batches |∂L/∂ξ_h|
    curve_order: list[HeadKey] = field(default_factory=list)  # the order heads were removed in
    curve_counts: list[int] = field(default_factory=list)  # heads removed at each point of the curve
    curve_scores: list[float] = field(default_factory=list)  # the held-out score at each point
    curve_by: str = "masking"

    @property
    def heads(self) -> list[HeadKey]:
        return list(self.masking)

    def scores(self, by: str = "masking") -> dict[HeadKey, float]:
        if by not in ("masking", "gradient"):
            raise ValueError(f"importance is 'masking' or 'gradient', got {by!r}")
        return self.masking if by == "masking" else self.gradient

    def ranking(self, kind: str | None = None, by: str = "masking") -> list[HeadKey]:
        """Heads of one attention kind (None: all), most important first."""
        scores = self.scores(by)
        heads = [k for k in scores if kind is None or k[0] == kind]
        return sorted(heads, key=lambda k: (-scores[k], k))

    def summary(self, by: str = "masking", per_kind: int = 3) -> str:
        """HTML: the most important heads of each attention kind, with their scores."""
        scores = self.scores(by)
        kinds = dict.fromkeys(k[0] for k in self.heads)
        return "Most important per kind — " + "; ".join(
            f"<b>{KIND_SHORT[kind]}</b>: " + ", ".join(f"L{layer + 1}H{head + 1} {scores[(kind, layer, head)]:.3g}"
                                                    for _k, layer, head in self.ranking(kind, by)[:per_kind])
            for kind in kinds)

    def headline(self) -> str:
        """The ranking in one sentence: the pairs it used, the loss with every head, the curve's ends."""
        return (f"{self.task}: {self.n_pairs} held-out pairs, loss {self.base_loss:.3f} with every head; "
                f"exact match {self.curve_scores[0]:.2f} → {self.curve_scores[-1]:.2f} with none.")

    def bars(self, by: str = "masking") -> tuple[list[float], list[float], list[int], list[tuple[float, str]]]:
        """A bar chart of `by` grouped by attention kind, a gap between kinds: each head's x, height
        and kind's index, and one tick (x, short name) at the middle of each kind's bars."""
        scores, xs, heights, groups, ticks = self.scores(by), [], [], [], []
        for i, kind in enumerate(dict.fromkeys(k[0] for k in self.heads)):
            heads = [k for k in self.heads if k[0] == kind]
            start = len(xs) + i
            xs += range(start, start + len(heads))
            heights += [scores[k] for k in heads]
            groups += [i] * len(heads)
            ticks.append((start + (len(heads) - 1) / 2, KIND_SHORT[kind]))
        return xs, heights, groups, ticks

    def to_csv(self) -> str:
        """One row per head: both importances, rank within its kind, when pruning removed it and
        the held-out score after that removal (the curve; k = 0 is the unablated score)."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["kind", "layer", "head", "masking_loss_increase", "gradient_importance",
                         "rank_in_kind_masking", "rank_in_kind_gradient", "pruned_at", "score_after_pruning"])
        after = dict(zip(self.curve_counts, self.curve_scores))  # heads removed → score
        if 0 in after:
            writer.writerow(["(none)", "", "", "", "", "", "", 0, f"{after[0]:.6f}"])
        ranks = {by: {k: i + 1 for kind in {h[0] for h in self.heads} for i, k in enumerate(self.ranking(kind, by))}
                 for by in ("masking", "gradient")}
        pruned = {k: i + 1 for i, k in enumerate(self.curve_order)}
        for key in self.heads:
            at = pruned.get(key)
            score = f"{after[at]:.6f}" if at in after else ""
            writer.writerow([*key, f"{self.masking[key]:.6f}", f"{self.gradient[key]:.6f}",
                             ranks["masking"][key], ranks["gradient"][key], at or "", score])
        return out.getvalue()


def masking_importance(bundle: ModelBundle, pairs, progress: Progress | None = None) -> tuple[float, dict]:
    """(base loss, {head: loss with the head zeroed − base loss})."""
    heads = all_heads(bundle.model)
    base = heldout_loss(bundle, pairs)
    result = {}
    for i, key in enumerate(heads):
        if progress is not None:
            progress(i, len(heads), f"Masking {key[0]} layer {key[1] + 1} head {key[2] + 1}")
        with intervene(bundle.model, {key: "zero"}):
            result[key] = heldout_loss(bundle, pairs) - base
    return base, result


def gradient_importance(bundle: ModelBundle, pairs, batch_size: int = 32) -> dict[HeadKey, float]:
    """Michel et al.'s I_h = Σ_batches |∂L/∂ξ_h| at ξ = 1 (only the gates are differentiated)."""
    model = bundle.model
    h = model.config.n_heads
    gates = {(kind, layer): torch.ones(h, device=bundle.device, requires_grad=True)
             for kind, n in attention_layers(model).items() for layer in range(n)}
    total = {key: torch.zeros(h) for key in gates}
    with torch.enable_grad(), gated(model, gates):
        for start in range(0, len(pairs), batch_size):
            loss, _ = _batch_loss(bundle, pairs[start:start + batch_size])
            grads = torch.autograd.grad(loss, list(gates.values()))
            for key, g in zip(gates, grads):
                total[key] += g.detach().abs().cpu()
    return {(kind, layer, head): float(total[(kind, layer)][head]) for kind, layer in gates for head in range(h)}


def curve_counts(n_heads: int, points: int | None = None) -> list[int]:
    """How many heads are removed at each point: 0 … n_heads, or `points` evenly spaced counts
    (0 and n_heads included) for a model with many heads."""
    if points is None or points > n_heads:
        return list(range(n_heads + 1))
    points = max(points, 2)
    return sorted({round(i * n_heads / (points - 1)) for i in range(points)})


def pruning_curve(bundle: ModelBundle, order: list[HeadKey], pairs, counts: list[int] | None = None,
                  progress: Progress | None = None) -> list[float]:
    """Held-out score after zeroing the first k heads of `order`, for each k in `counts`
    (default 0 … len(order))."""
    counts = curve_counts(len(order)) if counts is None else counts
    scores = []
    for i, k in enumerate(counts):
        if progress is not None:
            progress(i, len(counts), f"Pruning curve: {k} of {len(order)} heads removed")
        with intervene(bundle.model, {key: "zero" for key in order[:k]}):
            scores.append(heldout_score(bundle, pairs))
    return scores


def head_importance(bundle: ModelBundle, n_pairs: int = 200, curve: bool = True, curve_by: str = "masking",
                    points: int | None = None, progress: Progress | None = None) -> HeadImportance:
    """Both importances on `n_pairs` held-out pairs and (if `curve`) the pruning curve, removing
    the least important head first by `curve_by` ("masking" or "gradient"), at `points`
    evenly spaced numbers of heads removed (None: every number)."""
    pairs = heldout_pairs(bundle, n_pairs)
    model = bundle.model
    was_training = model.training
    model.eval()  # no dropout: the same input gives the same loss
    try:
        n_heads = len(all_heads(model))
        counts = curve_counts(n_heads, points) if curve else []
        steps = n_heads + 1 + len(counts)
        report = (lambda i, _n, what: progress(i, steps, what)) if progress is not None else None
        base, masking = masking_importance(bundle, pairs, report)
        if progress is not None:
            progress(n_heads, steps, "Gradient importance (Michel et al.)")
        gradient = gradient_importance(bundle, pairs)
        result = HeadImportance(str(bundle.task.get("name")), len(pairs), base, masking, gradient, curve_by=curve_by)
        if curve:
            order = list(reversed(result.ranking(None, curve_by)))  # least important first
            shifted = (lambda i, _n, what: progress(n_heads + 1 + i, steps, what)) if progress is not None else None
            result.curve_order, result.curve_counts = order, counts
            result.curve_scores = pruning_curve(bundle, order, pairs, counts, shifted)
        if progress is not None:
            progress(steps, steps, "Done")
        return result
    finally:
        model.train(was_training)

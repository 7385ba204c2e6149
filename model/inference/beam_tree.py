"""A `BeamResult`'s tree as a picture would lay it out, without drawing it: where each
hypothesis stands, which ones win, what each node and edge is, the step axis' ticks and the
words a hover says. A GUI draws these; nothing here draws.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model.inference.decoding import BeamNode, BeamResult

STATES = ("prompt", "best", "pruned", "finished", "live")  # a node's (and its edge's) kind, first that holds


def tree_layout(nodes) -> dict[int, tuple[float, float]]:
    """(x, y) of every node: x = the decoding step t that produced its token (the <bos> root
    sits at -1), so the tree lines up with the step-by-step view; within a step, children follow
    their parent's order and then their cumulative log-probability, centred on 0. A prompt's
    nodes are one straight stem ending at x = -1."""
    pos: dict[int, tuple[float, float]] = {}
    by_step: dict[int, list] = {}
    for n in nodes:
        by_step.setdefault(n.step, []).append(n)
    for step in sorted(by_step):
        group = by_step[step]
        if step == 0 and len(group) > 1:  # <bos> + a prompt
            group.sort(key=lambda n: n.id)
            for i, n in enumerate(group):
                pos[n.id] = (float(i - len(group)), 0.0)
            continue
        group.sort(key=lambda n: (pos[n.parent][1] if n.parent in pos else 0.0, -n.log_prob))
        offset = (len(group) - 1) / 2
        for i, n in enumerate(group):
            pos[n.id] = (float(step - 1), i - offset)
    return pos


def best_path(result: BeamResult) -> set[int]:
    """Node ids on the winning hypothesis."""
    best = max(result.finished, key=lambda i: result.nodes[i].score) if result.finished else None
    ids = set()
    while best is not None:
        ids.add(best)
        best = result.nodes[best].parent
    return ids


def node_state(node: BeamNode, on_best: bool) -> str:
    """One of STATES: given in the prompt, on the best path, pruned, finished, or kept alive."""
    if node.prompt:
        return "prompt"
    if on_best:
        return "best"
    return "pruned" if node.pruned else ("finished" if node.finished else "live")


def edge_state(node: BeamNode, on_best: bool) -> str:
    """The kind of the edge into `node`: its node's, a finished one's edge drawn as a live one's."""
    state = node_state(node, on_best)
    return "live" if state == "finished" else state


def step_ticks(nodes, pieces: list[str], xs: list[float]) -> list[tuple[float, str]]:
    """The step axis' ticks: the model's start symbol under the root (Marian's is <pad>), the
    steps counted from 1, and "prompt" centred under a prompt's stem."""
    root = next((n.token for n in nodes if n.parent is None), None)
    start = pieces[root] if root is not None and 0 <= root < len(pieces) else "<bos>"
    n_prompt = sum(n.prompt for n in nodes)
    ticks = [(-1.0 - n_prompt, start)] + [(t, str(t + 1)) for t in range(int(min(xs)), int(max(xs)) + 1) if t >= 0]
    if n_prompt:
        ticks.append(((-n_prompt - 1) / 2, "prompt"))
    return ticks


def node_tip(result: BeamResult, node_id: int, pieces: list[str], show: Callable[[str], str] = str) -> str:
    """A node's hover text: its whole hypothesis (each piece as `show` writes it) and its scores."""
    node = result.nodes[node_id]
    text = "".join(show(pieces[i]) if i < len(pieces) else f"#{i}" for i in result.sequence(node_id)[1:]) or "<bos>"
    if node.prompt or node.parent is None:
        return f"{text}\n{'given in the prompt, not searched' if node.prompt else 'start'}"
    state = "pruned" if node.pruned else ("finished" if node.finished else "kept")
    return f"{text}\nlog p = {node.log_prob:.3f}\nscore = log p / lp = {node.score:.3f}\nstep {node.step}, {state}"


def node_label(node: BeamNode, pieces: list[str], show: Callable[[str], str] = str) -> tuple[str, str]:
    """A node's label: its token (as `show` writes it) and its length-penalised score ("" for the
    root and the prompt, which are given, not scored)."""
    token = show(pieces[node.token]) if node.token < len(pieces) else str(node.token)
    return token, f"{node.score:.2f}" if node.parent is not None and not node.prompt else ""


@dataclass(frozen=True)
class NodeLabel:
    """A node's label: its state, whether it is on the best path, its token and score (`node_label`),
    its place, and the anchor a prompt stem's label takes (None: the view's own)."""

    node: BeamNode
    state: str
    best: bool
    token: str
    score: str
    pos: tuple[float, float]
    anchor: tuple[float, float] | None

    @property
    def always(self) -> bool:
        """Labelled at any size: on the best path or given in the prompt."""
        return self.best or self.node.prompt


def node_labels(result: BeamResult, pieces: list[str], show: Callable[[str], str] = str) -> list[NodeLabel]:
    """Every node's label, in BeamResult order; a prompt stem's centred under their dots, every
    other one lower, so long words never overlap."""
    nodes, pos, best = result.nodes, tree_layout(result.nodes), best_path(result)
    stem = any(n.prompt for n in nodes)
    labels = []
    for n in nodes:
        x, y = pos[n.id]
        anchor = (0.5, -0.35 if int(-x) % 2 else -1.35) if stem and y == 0.0 and x < 0 else None
        labels.append(NodeLabel(n, node_state(n, n.id in best), n.id in best, *node_label(n, pieces, show), (x, y),
                                anchor))
    return labels


def label_density(column_px: float, row_px: float, one_line: float, two_lines: float) -> tuple[bool, bool, bool]:
    """Which labels a tree drawn at this size shows besides the best path's: (kept tokens, kept
    scores, pruned tokens), each once a step's column is wide enough and its slots tall enough (a
    token beside a best-path label needs half of each line height, a score under a token a second line)."""
    half = (one_line + two_lines) / 2
    return column_px >= 26 and row_px >= half, column_px >= 34 and row_px >= two_lines, column_px >= 56 and row_px >= half


def beam_summary(result: BeamResult, beam_size: int, alpha: float, best_text: str, n_prompt: int) -> str:
    """The sentence over the tree: the search's settings, its size, the rule and the winner."""
    stem = " Purple = the prompt (given, not searched)." if n_prompt else ""
    return (f"Beam {beam_size}, α = {alpha:g}: {len(result.nodes)} hypotheses expanded. "
            f"Score = log p / ((5 + |Y|)/6)^α. Best {best_text!r}: {result.score:.3f}. "
            f"Orange = best, green = finished, grey = pruned.{stem}")


__all__ = ["STATES", "NodeLabel", "beam_summary", "best_path", "edge_state", "label_density", "node_label", "node_labels",
           "node_state", "node_tip", "step_ticks", "tree_layout"]

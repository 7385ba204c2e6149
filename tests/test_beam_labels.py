"""The beam tree's labels: one item per shown node, made once and reused by later results; a label
the room hides is neither made nor filled, and shows its node's token once the room allows it."""
from __future__ import annotations

import torch

from explorer.panels.decoding.beam_view import BeamTreeView
from model.inference.beam_tree import best_path, node_label
from model.inference.decoding import beam_search

BOS, EOS = 1, 2


def _result(model, seed: int):
    torch.manual_seed(seed)
    src = torch.randint(3, 13, (1, 6))
    return beam_search(model, src, BOS, EOS, 8, 3, 0.6)


def _plain(label) -> str:
    return label.textItem.toPlainText()


def test_labels_are_reused_between_results_and_hidden_ones_are_not_made(qtbot, make_model):
    model = make_model()
    pieces = [f"t{i}" for i in range(11)]
    view = BeamTreeView()
    qtbot.addWidget(view)
    view.resize(300, 200)  # too little room for any label but the best path's
    view.show()
    qtbot.waitExposed(view)
    first = _result(model, 0)
    view.set_result(first, pieces)
    best = best_path(first)
    assert len(first.nodes) > len(best)
    shown = [label for label in view.labels if label.isVisible()]
    assert len(shown) == len(best) and len(view.labels) <= max(best) + 1  # none made past the last one shown
    for i in best:
        assert node_label(first.nodes[i], pieces, str)[0] in _plain(view.labels[i])

    view.resize(2400, 1400)  # room for every label: each shown node's token in its own item
    qtbot.wait(50)
    made = list(view.labels)
    second = _result(model, 1)
    view.set_result(second, pieces)
    assert view.labels[: len(made)] == made  # the same items, refilled
    visible = [i for i, label in enumerate(view.labels) if label.isVisible()]
    assert set(best_path(second)) <= set(visible) and len(visible) > len(best_path(second))
    for i in visible:
        assert node_label(second.nodes[i], pieces, str)[0] in _plain(view.labels[i])
    assert all(not label.isVisible() for label in view.labels[len(second.nodes):])


def test_node_labels_name_every_node_as_the_search_left_it(make_model):
    """`node_labels`: one per node in result order, at its `tree_layout` place; the winner's path
    (walked here from the best finished node) marked best; a scored node's score its own."""
    from model.inference.beam_tree import node_labels, tree_layout
    model = make_model()
    pieces = [f"t{i}" for i in range(11)]
    result = _result(model, 0)
    labels = node_labels(result, pieces)
    pos = tree_layout(result.nodes)
    winner = max(result.finished, key=lambda i: result.nodes[i].score)
    path = set()
    while winner is not None:
        path.add(winner)
        winner = result.nodes[winner].parent
    assert [label.node.id for label in labels] == list(range(len(result.nodes)))
    assert all(label.pos == pos[label.node.id] and label.token == pieces[label.node.token] for label in labels)
    assert {label.node.id for label in labels if label.best} == path
    assert all(label.always == (label.best or label.node.prompt) for label in labels)
    assert all(label.state == "pruned" for label in labels if label.node.pruned and not label.best)
    scored = [label for label in labels if label.node.parent is not None]
    assert all(abs(float(label.score) - label.node.score) <= 0.005 + 1e-9 for label in scored)
    assert labels[0].score == "" and labels[0].anchor is None  # the root: given, not scored; no prompt stem

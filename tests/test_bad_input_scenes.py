"""Scene files under bad input (issue 36): JSON true is not a version or a layer number, a
caption has a length limit, a head the scene's model lacks is refused once the model is known
(not dropped without a word), and random documents give a Tour or a SceneError, never another
exception. model.io.scenes reads and checks scenes without a display; one test opens a scene
in a window."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.io.checkpoints import random_bundle
from model.io.scenes import MAX_CAPTION_CHARS, SCENE_KEYS, Scene, SceneError, check_scene_fits, parse_tour


def scene(**fields) -> dict:
    return {"version": 2, "scenes": [{"name": "s", **fields}]}


@pytest.mark.parametrize("doc, named", [
    ({"version": True, "scenes": [{"name": "s"}]}, "unsupported scene format version True"),
    ({"version": 1.0 + 1e-9, "scenes": [{"name": "s"}]}, "unsupported scene format version"),
    (scene(attention={"kind": "encoder", "layer": True}), "'attention' must be"),
    (scene(attention={"kind": "encoder", "head": False}), "'attention' must be"),
    (scene(attention={"kind": "encoder", "layer": 0, "colour": 1}), "'attention' must be"),
    (scene(caption="x" * (MAX_CAPTION_CHARS + 1)), f"'caption' has {MAX_CAPTION_CHARS + 1:,} characters"),
    (scene(caption="x" * 10_000), "at most 2,000 are shown"),
    (scene(name="n" * 500), "'name' has 500 characters"),
    (scene(views={"attention": "bogus"}), "no view 'bogus' for panel 'attention'"),
    (scene(views={"lens": 3}), "the view of 'lens' must be a string"),
    (scene(views={"patching": "cell " + "9" * 100}), "at most 80 characters"),
])
def test_a_scene_document_out_of_the_schema_is_refused(doc, named):
    with pytest.raises(SceneError) as info:
        parse_tour(doc, "tour.json")
    assert named in str(info.value)


@pytest.mark.parametrize("fields, named", [
    ({"panel": "atention"}, "'panel' names no panel 'atention'"),
    ({"panels": ["architecture", "lense"], "panel": "architecture"}, "'panels' names no panel 'lense'"),
    ({"views": {"decodng": "beam"}}, "'views' names no panel 'decodng'"),
    ({"views": {"atlas_x": "1", "attentions_grid": "all"}}, "'views' names no panel 'attentions_grid'"),
])
def test_a_misspelt_panel_name_is_refused_where_the_panels_are_known(fields, named):
    from explorer.launch import PANEL_NAMES

    doc = scene(**fields)
    parse_tour(doc, "tour.json")  # the file format alone does not know the explorer's panels
    with pytest.raises(SceneError) as info:
        parse_tour(doc, "tour.json", PANEL_NAMES)
    assert named in str(info.value) and "panels: architecture, " in str(info.value)


def test_a_window_refuses_a_misspelt_panel_a_missing_file_or_a_folder_and_keeps_its_tour(qtbot, tmp_path):
    from support import make_main_window, messages_of

    window = make_main_window(qtbot, tmp_path)
    seen = messages_of(window)
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(scene(task="reverse", input="abc", panel="attention")))
    bad.write_text(json.dumps(scene(task="reverse", input="abc", panel="atention")))
    assert window.lecture.deck.open(good)
    assert not window.lecture.deck.open(bad)
    assert window.lecture.deck.tour.path == good
    assert any(level == "error" and "'atention'" in text for level, text in seen), seen
    assert not window.lecture.deck.open(tmp_path / "nope.json")
    assert "no such file" in seen[-1][1]
    assert not window.lecture.deck.open(tmp_path)
    assert "folder" in seen[-1][1] and window.lecture.deck.tour.path == good


def test_a_caption_at_the_limit_and_integer_fields_are_accepted():
    tour = parse_tour(scene(caption="x" * MAX_CAPTION_CHARS, attention={"kind": "cross", "layer": 1, "head": 0}))
    assert len(tour.scenes[0].caption) == MAX_CAPTION_CHARS


def test_a_scene_saved_after_clicking_a_cell_or_choosing_an_output_loads_again(qtbot, tmp_path):
    """What panels without fixed tabs keep as their view (a lens or patching cell, an attribution
    output and head, a positional tab asked for by another panel) is saved and read back."""
    from explorer.launch import PANEL_NAMES
    from explorer.scenes import capture
    from model.io.scenes import Tour, load_tour, save_tour
    from support import make_main_window

    window = make_main_window(qtbot, tmp_path)
    views = {"lens": "cell 1 2", "patching": "cell residual 0 1", "attribution_output": "2",
             "attribution_head": "0,1", "positional": "rope"}
    for panel, view in views.items():
        window.state.set_view(panel, view)
    path = save_tour(Tour(scenes=[capture(window, "clicked")]), tmp_path / "clicked.json")
    loaded = load_tour(path, PANEL_NAMES).scenes[0].views  # every key a panel's, or a panel's and a part
    assert {panel: loaded[panel] for panel in views} == views


def test_a_head_the_scenes_model_lacks_is_refused_not_dropped():
    model = random_bundle("reverse").model  # 2 layers, 4 heads
    check_scene_fits(Scene("fits", interventions="encoder:0:3=zero,cross:1:0=uniform"), model)
    for text, named in (("encoder:0:9=zero", "head 9 is out of range: heads are 0..3"),
                        ("cross:2:0=zero", "cross layer 2 is out of range")):
        with pytest.raises(SceneError, match="scene 'bad': 'interventions': ") as info:
            check_scene_fits(Scene("bad", interventions=text), model)
        assert named in str(info.value)
    gpt = random_bundle("facts", kind="decoder_only", n_encoder_layers=0).model
    with pytest.raises(SceneError, match="no cross attention"):
        check_scene_fits(Scene("bad", interventions="cross:0:0=zero"), gpt)


def test_a_window_showing_a_scene_says_which_edit_its_model_lacks(qtbot, tmp_path):
    from support import make_main_window, messages_of

    window = make_main_window(qtbot, tmp_path)
    seen = messages_of(window)
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({"version": 2, "name": "surgery", "task": "reverse", "input": "abc",
                                "interventions": "encoder:0:9=zero,encoder:0:1=zero"}))
    assert window.lecture.deck.open(path)
    errors = [text for level, text in seen if level == "error"]
    assert any("'surgery'" in t and "head 9 is out of range: heads are 0..3" in t for t in errors), seen
    assert window.state.frame.interventions == {("encoder", 0, 1): "zero"}  # the edits the model has are shown


def test_a_scene_naming_a_head_the_model_lacks_says_so_and_shows_the_nearest(qtbot, tmp_path):
    from support import make_main_window, messages_of

    window = make_main_window(qtbot, tmp_path)
    seen = messages_of(window)
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({"version": 2, "name": "far head", "task": "reverse", "input": "abc",
                                "attention": {"kind": "encoder", "layer": 7, "head": 9}}))
    assert window.lecture.deck.open(path)
    warnings = [text for level, text in seen if level == "warning"]
    assert any("'far head'" in t and "no encoder layer 8 head 10" in t for t in warnings), seen
    kind, layer, head = window.state.session.attention.kind, window.state.session.attention.layer, \
        window.state.session.attention.head
    assert (kind, layer, head) == ("encoder", window.state.n_layers("encoder") - 1, window.state.bundle.config.n_heads - 1)


# -- property: random documents give a Tour or a SceneError ------------------------------------------
json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-5, 10**20), st.floats(allow_nan=False),
                                     st.text(max_size=12)),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                           max_leaves=8)
field_values = {
    "name": st.one_of(st.text(max_size=5), json_values), "caption": st.one_of(st.text(max_size=30), json_values),
    "interventions": st.one_of(st.sampled_from(["encoder:0:1=zero", "cross:9:9=mean", "x", ""]), json_values),
    "attention": st.one_of(st.fixed_dictionaries({"kind": st.sampled_from(["encoder", "cross", "nope"])},
                                                 optional={"layer": json_values, "head": json_values}), json_values),
    "decoding": st.one_of(st.dictionaries(st.sampled_from(["strategy", "beam_size", "top_k", "top_p", "temperature",
                                                           "alpha", "max_len", "other"]), json_values, max_size=3),
                          json_values),
}
scene_docs = st.dictionaries(st.sampled_from(sorted(SCENE_KEYS | {"extra"})), json_values, max_size=4).flatmap(
    lambda base: st.fixed_dictionaries({k: v for k, v in field_values.items()}).map(lambda f: {**base, **f}))
documents = st.one_of(
    st.fixed_dictionaries({"version": st.one_of(st.sampled_from([1, 2, True, 2.0, "2"]), json_values),
                           "scenes": st.one_of(st.lists(scene_docs, max_size=2), json_values)}),
    scene_docs.map(lambda s: {"version": 2, **s}), json_values)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents)
def test_random_scene_documents_give_a_tour_or_a_scene_error(doc):
    doc = json.loads(json.dumps(doc))  # what a file can hold (tuples → lists)
    try:
        tour = parse_tour(doc, "random.json")
    except SceneError:
        return
    assert tour.scenes and all(isinstance(s, Scene) for s in tour.scenes)
    parse_tour(json.loads(json.dumps(tour.to_dict())))  # what it writes reads back

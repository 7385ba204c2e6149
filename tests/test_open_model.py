"""`load_model` opens a model by what a user types: a bundled name, a folder, its config.json."""
import json

import pytest
import torch

from model.io.checkpoints import bundled_checkpoints, load_checkpoint, random_bundle, save_checkpoint
from model.io.open_model import is_pretrained_folder, load_model


def same_weights(a, b) -> bool:
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_a_bundled_name_a_folder_and_its_config_file_open_the_same_model(tmp_path):
    name, folder = next(iter(bundled_checkpoints().items()))
    assert same_weights(load_model(name), load_checkpoint(folder))
    tiny = random_bundle("reverse", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
    saved = save_checkpoint(tiny, tmp_path / "m")
    reference = load_checkpoint(saved)
    assert same_weights(load_model(saved), reference)
    assert same_weights(load_model(saved / "config.json"), reference)
    assert not is_pretrained_folder(saved)  # ours, not a Hugging Face folder


def test_a_missing_path_is_refused_with_the_names_that_would_work(tmp_path):
    with pytest.raises(ValueError, match="does not exist") as err:
        load_model(tmp_path / "nothing")
    assert all(name in str(err.value) for name in bundled_checkpoints())


def test_a_hugging_face_folder_is_told_apart_by_its_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    assert is_pretrained_folder(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    assert not is_pretrained_folder(tmp_path)

"""`model.io.run_request`: a figure's request checked against its model before a window is built."""
from pathlib import Path

import pytest

from model.inference.bundle import InputError
from model.interpret.interventions import parse_heads
from model.io import run_request
from model.io.checkpoints import bundled_checkpoints, random_bundle, save_checkpoint
from model.io.run_request import RequestError, check_request, first_readable


@pytest.fixture(scope="module")
def bundle():
    return random_bundle("reverse", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)


def test_first_readable_skips_what_the_model_refuses(bundle):
    unknown = "☃☃☃"
    with pytest.raises(InputError):  # the model's own check refuses it
        bundle.encode_source(unknown)
    assert first_readable(bundle, ["", unknown, "abc", "cba"]) == "abc"
    assert first_readable(bundle, ["", unknown]) is None


def test_check_request_returns_the_heads_and_names_each_problem(bundle, tmp_path):
    assert check_request(bundle, "abc", ablate="encoder:0:1=zero") == parse_heads("encoder:0:1=zero")
    assert check_request(bundle, "abc", compare="untrained") == {}
    with pytest.raises(RequestError, match="bad input"):
        check_request(bundle, "")
    with pytest.raises(RequestError, match="bad input"):
        check_request(bundle, "abc", target="a" * (bundle.config.max_len + 5))
    with pytest.raises(RequestError, match="--ablate"):
        check_request(bundle, "abc", ablate="encoder:5:0=zero")  # the model has one layer
    wider = tmp_path / "wider"
    save_checkpoint(random_bundle("reverse", d_model=32, n_heads=2, d_ff=32, n_encoder_layers=1,
                                  n_decoder_layers=1), wider)
    with pytest.raises(RequestError):
        check_request(bundle, "abc", compare=str(wider))
    with pytest.raises(RequestError, match="cannot load --compare"):
        check_request(bundle, "abc", compare=str(tmp_path / "missing"))


def test_the_default_model_is_the_bundled_reverse_model_else_an_untrained_one(monkeypatch):
    assert Path(run_request.default_model().path).resolve() == Path(bundled_checkpoints()["reverse"]).resolve()
    monkeypatch.setattr(run_request, "bundled_checkpoints", dict)  # a wheel without bundled models
    untrained = run_request.default_model()
    assert untrained.path is None and untrained.task["name"] == "reverse" and untrained.config.dropout == 0.0

"""Checkpoints: safetensors + config.json round trips, atomic saves, and a clear
`CheckpointError` naming the file for every way a checkpoint can be broken."""
import json
import pickle

import pytest
import torch

import model
import model.io.checkpoints
from model.data.tokenizers import CharTokenizer
from model.io.checkpoints import (
    FORMAT_VERSION,
    CheckpointError,
    bundled_checkpoints,
    load_checkpoint,
    random_bundle,
    save_checkpoint,
)

torch.set_num_threads(1)


@pytest.fixture
def bundle():
    torch.manual_seed(0)
    return random_bundle("reverse", d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1, n_decoder_layers=1)


@pytest.fixture
def saved(tmp_path, bundle):
    return save_checkpoint(bundle, tmp_path / "ck", metrics={"exact_match": 0.5, "steps": 10})


def state(m):
    return {k: v.clone() for k, v in m.state_dict().items()}


def assert_same_model(a, b):
    sa, sb = state(a), state(b)
    assert sa.keys() == sb.keys()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_round_trip(saved, bundle):
    assert sorted(p.name for p in saved.iterdir()) == ["config.json", "model.safetensors"]
    loaded = load_checkpoint(saved)
    assert_same_model(bundle.model, loaded.model)
    assert loaded.config == bundle.config
    assert loaded.src_tokenizer == bundle.src_tokenizer and loaded.tgt_tokenizer == bundle.tgt_tokenizer
    assert loaded.task["name"] == "reverse" and loaded.metrics == {"exact_match": 0.5, "steps": 10}
    assert loaded.path == str(saved) and loaded.device == torch.device("cpu")
    src = torch.tensor([[5, 6, 7]])
    tgt = torch.tensor([[1, 8, 9]])
    bundle.model.eval()
    assert torch.equal(bundle.model(src, tgt), loaded.model(src, tgt))
    cfg = json.loads((saved / "config.json").read_text())
    assert cfg["project_version"] == model.__version__ and cfg["format_version"] == FORMAT_VERSION
    assert cfg["src_tokenizer"]["vocab"] == bundle.src_tokenizer.vocab


def test_no_pickle_in_weights(saved):
    raw = (saved / "model.safetensors").read_bytes()
    header_len = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + header_len])
    assert "generator.weight" in header and header["generator.weight"]["dtype"] == "F32"
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(raw)


def test_tied_weights_round_trip(tmp_path):
    torch.manual_seed(1)
    b = random_bundle("copy", d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1, n_decoder_layers=1,
                      share_embeddings=True)
    assert b.model.generator.weight is b.model.src_embed.lut.weight
    loaded = load_checkpoint(save_checkpoint(b, tmp_path / "tied"))
    m = loaded.model
    assert m.generator.weight is m.src_embed.lut.weight is m.tgt_embed.lut.weight
    assert torch.equal(m.generator.weight, b.model.generator.weight)
    cfg = json.loads((tmp_path / "tied" / "config.json").read_text())
    assert cfg["tied_weights"]["generator.weight"] == "src_embed.lut.weight"


def test_pre_ln_and_learned_positions_round_trip(tmp_path):
    b = random_bundle("reverse", d_model=32, n_heads=2, d_ff=64, norm_first=True, positional="learned")
    assert_same_model(b.model, load_checkpoint(save_checkpoint(b, tmp_path / "x")).model)


def test_overwrite_replaces_atomically_and_leaves_no_temp(tmp_path, bundle):
    path = tmp_path / "ck"
    save_checkpoint(bundle, path)
    with torch.no_grad():
        bundle.model.generator.bias.add_(1.0)
    save_checkpoint(bundle, path, metrics={"v": 2})
    assert load_checkpoint(path).metrics == {"v": 2}
    assert torch.equal(load_checkpoint(path).model.generator.bias, bundle.model.generator.bias)
    assert [p.name for p in tmp_path.iterdir()] == ["ck"]


def test_interrupted_save_keeps_previous_checkpoint(tmp_path, bundle, monkeypatch):
    path = save_checkpoint(bundle, tmp_path / "ck", metrics={"v": 1})
    before = (path / "model.safetensors").read_bytes()
    import safetensors.torch

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # e.g. Ctrl-C in the middle of writing the weights

    monkeypatch.setattr(safetensors.torch, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(bundle, path, metrics={"v": 2})
    assert (path / "model.safetensors").read_bytes() == before
    assert load_checkpoint(path).metrics == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["ck"]  # the temp folder was cleaned up


def test_refuses_to_overwrite_a_folder_that_is_not_a_checkpoint(tmp_path, bundle):
    (tmp_path / "notes.txt").write_text("precious")
    with pytest.raises(CheckpointError, match="not empty and is not a checkpoint"):
        save_checkpoint(bundle, tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "precious"


def test_device_argument(saved):
    assert load_checkpoint(saved, device="cpu").device.type == "cpu"
    with pytest.raises(CheckpointError, match="unknown device"):
        load_checkpoint(saved, device="abacus")


# -- every broken checkpoint is a clear error ------------------------------------------------
def edit_config(folder, fn):
    p = folder / "config.json"
    data = json.loads(p.read_text())
    fn(data)
    p.write_text(json.dumps(data))


def test_missing_path(tmp_path):
    with pytest.raises(CheckpointError, match=r"nope: no such file or folder"):
        load_checkpoint(tmp_path / "nope")


def test_folder_that_is_not_a_checkpoint(tmp_path):
    (tmp_path / "readme.txt").write_text("hi")
    with pytest.raises(CheckpointError, match=r"not a checkpoint folder, config.json is missing"):
        load_checkpoint(tmp_path)


def test_pt_file_is_refused_and_never_unpickled(tmp_path, monkeypatch):
    class Boom:
        def __reduce__(self):
            return (exec, ("raise SystemExit('unpickled!')",))

    pt = tmp_path / "model.pt"
    pt.write_bytes(pickle.dumps(Boom()))
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("unpickled"))
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load called"))
    with pytest.raises(CheckpointError, match=r"model.pt: a PyTorch pickle file; it is never loaded"):
        load_checkpoint(pt)
    with pytest.raises(CheckpointError, match=r"holds PyTorch pickle files \(model.pt\)"):
        load_checkpoint(tmp_path)


def test_missing_weights(saved):
    (saved / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match=r"model.safetensors: missing"):
        load_checkpoint(saved)


def test_truncated_weights(saved):
    w = saved / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])
    with pytest.raises(CheckpointError, match=r"model.safetensors: not a readable safetensors file"):
        load_checkpoint(saved)


def test_random_bytes_as_weights(saved):
    torch.manual_seed(3)
    (saved / "model.safetensors").write_bytes(bytes(torch.randint(0, 256, (5000,), dtype=torch.uint8).tolist()))
    with pytest.raises(CheckpointError, match=r"model.safetensors: not a readable safetensors file"):
        load_checkpoint(saved)


def test_config_not_json(saved):
    (saved / "config.json").write_text("{ this is not json")
    with pytest.raises(CheckpointError, match=r"config.json: not valid JSON \(line 1, column 3"):
        load_checkpoint(saved)


def test_config_from_a_newer_format(saved):
    edit_config(saved, lambda d: d.update(format_version=FORMAT_VERSION + 1, project_version="9.0"))
    with pytest.raises(CheckpointError, match=r"config.json: written by a newer version \(checkpoint format 2"):
        load_checkpoint(saved)


def test_config_of_something_else(saved):
    (saved / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(CheckpointError, match="not a Transformer Explorer checkpoint config"):
        load_checkpoint(saved)


def test_wrong_shapes(saved):
    edit_config(saved, lambda d: d["model"].update(d_ff=128))
    with pytest.raises(CheckpointError, match=r"model.safetensors: tensor 'encoder.layers.0.ffn.w_1.weight' has "
                                              r"shape \(64, 32\) but config.json describes \(128, 32\)"):
        load_checkpoint(saved)


def test_missing_layers(saved):
    edit_config(saved, lambda d: d["model"].update(n_encoder_layers=2))
    with pytest.raises(CheckpointError, match=r"model.safetensors: does not match the model in config.json: "
                                              r"missing tensors \['encoder.layers.1"):
        load_checkpoint(saved)


def test_vocab_size_not_matching_weights(saved):
    def shrink(d):
        d["src_tokenizer"]["vocab"] = d["src_tokenizer"]["vocab"][:-1]
        d["model"]["src_vocab_size"] -= 1

    edit_config(saved, shrink)
    with pytest.raises(CheckpointError, match=r"tensor 'src_embed.lut.weight' has shape \(30, 32\) but config.json "
                                              r"describes \(29, 32\)"):
        load_checkpoint(saved)


def test_tokenizer_size_not_matching_config(saved):
    edit_config(saved, lambda d: d["tgt_tokenizer"].update(vocab=d["tgt_tokenizer"]["vocab"][:-2]))
    with pytest.raises(CheckpointError, match=r"config.json: the target vocabulary has 28 entries but the model "
                                              r"config says 30"):
        load_checkpoint(saved)


def test_bad_model_config(saved):
    edit_config(saved, lambda d: d["model"].update(n_heads=5))
    with pytest.raises(CheckpointError, match=r"config.json: d_model \(32\) must be divisible by n_heads \(5\)"):
        load_checkpoint(saved)


# -- helpers ----------------------------------------------------------------------------------
def test_random_bundle_defaults():
    b = random_bundle()
    c = b.config
    assert (c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff, c.max_len) == (64, 4, 2, 2, 256, 64)
    assert b.task["name"] == "reverse" and isinstance(b.src_tokenizer, CharTokenizer)
    assert random_bundle("translation").src_tokenizer.kind == "word"
    assert random_bundle("dates", d_model=32).config.d_model == 32


def test_bundled_checkpoints_are_checkpoint_folders():
    found = bundled_checkpoints()
    root = model.io.checkpoints.assets_dir()
    assert root == model.io.checkpoints.assets_dir().resolve() and root.parts[-2:] == ("assets", "checkpoints")
    for name, folder in found.items():
        assert folder.parent == root and folder.name == name and (folder / "config.json").is_file()

"""The whole model: causality, padding, tied weights, variants, parameter counts, configuration."""
import pytest
import torch

from model import ConfigError, Transformer, TransformerConfig

PAD = 0


def random_ids(shape, vocab, seed=0, low=1):
    """Token ids in [low, vocab): no padding unless asked for."""
    return torch.randint(low, vocab, shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_decoder_is_causal(make_model, norm_first):
    """Changing target token j never changes the predictions at positions < j (Section 3.2.3)."""
    model = make_model(norm_first=norm_first)
    src, tgt = random_ids((2, 7), 13, seed=1), random_ids((2, 8), 11, seed=2)
    with torch.no_grad():
        base = model(src, tgt)
        for j in (1, 4, 7):
            changed = tgt.clone()
            changed[:, j] = changed[:, j] % 10 + 1  # a different non-pad token
            out = model(src, changed)
            torch.testing.assert_close(out[:, :j], base[:, :j], atol=1e-6, rtol=0)
            assert (out[:, j:] - base[:, j:]).abs().max() > 1e-4  # ... and does change what follows


def test_without_causal_mask_the_future_leaks(make_model):
    """The ablation `causal=False` must really remove the look-ahead mask."""
    model = make_model()
    src, tgt = random_ids((1, 5), 13), random_ids((1, 6), 11, seed=3)
    changed = tgt.clone()
    changed[0, 5] = changed[0, 5] % 10 + 1
    with torch.no_grad():
        diff = model(src, changed, causal=False)[:, :5] - model(src, tgt, causal=False)[:, :5]
    assert diff.abs().max() > 1e-4


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_source_padding_changes_nothing(make_model, norm_first):
    model = make_model(norm_first=norm_first)
    src, tgt = random_ids((2, 6), 13, seed=4), random_ids((2, 5), 11, seed=5)
    padded = torch.cat([src, torch.full((2, 4), PAD)], dim=1)
    with torch.no_grad():
        torch.testing.assert_close(model(padded, tgt), model(src, tgt), atol=1e-5, rtol=0)


def test_batch_with_padding_equals_sentences_alone(make_model):
    """Sentences of different lengths batched with padding give what each gives alone."""
    model = make_model(seed=1)
    a_src, b_src = random_ids((1, 7), 13, seed=6), random_ids((1, 4), 13, seed=7)
    a_tgt, b_tgt = random_ids((1, 6), 11, seed=8), random_ids((1, 3), 11, seed=9)
    src = torch.cat([a_src, torch.cat([b_src, torch.zeros(1, 3, dtype=torch.long)], 1)])
    tgt = torch.cat([a_tgt, torch.cat([b_tgt, torch.zeros(1, 3, dtype=torch.long)], 1)])
    with torch.no_grad():
        batched = model(src, tgt)
        torch.testing.assert_close(batched[:1], model(a_src, a_tgt), atol=1e-5, rtol=0)
        torch.testing.assert_close(batched[1:, :3], model(b_src, b_tgt), atol=1e-5, rtol=0)


def test_dropout_only_in_training(make_model):
    model = make_model(dropout=0.3)
    src, tgt = random_ids((2, 6), 13), random_ids((2, 6), 11)
    with torch.no_grad():
        assert torch.equal(model(src, tgt), model(src, tgt))
        model.train()
        assert not torch.equal(model(src, tgt), model(src, tgt))


def test_share_embeddings_ties_all_three_matrices(make_model):
    model = make_model(src_vocab_size=11, tgt_vocab_size=11, share_embeddings=True)
    assert model.src_embed.weight is model.tgt_embed.weight is model.generator.weight
    assert model.src_embed.weight.data_ptr() == model.generator.weight.data_ptr()
    untied = make_model(src_vocab_size=11, tgt_vocab_size=11, share_embeddings=False)
    assert untied.num_parameters() - model.num_parameters() == 2 * 11 * 32
    # one gradient step on the generator moves the embeddings too
    src, tgt = random_ids((1, 4), 11), random_ids((1, 4), 11)
    model(src, tgt).sum().backward()
    before = model.src_embed.weight.detach().clone()
    with torch.no_grad():
        model.generator.weight -= 0.1 * model.generator.weight.grad
    assert not torch.equal(model.src_embed.weight, before)


def test_learned_positional_variant(make_model):
    model = make_model(positional="learned")
    pos = model.positional.weight
    assert pos.requires_grad and pos.shape == (64, 32)
    src, tgt = random_ids((2, 6), 13), random_ids((2, 5), 11)
    model(src, tgt).square().mean().backward()
    assert pos.grad[:6].abs().sum() > 0  # used positions learn
    assert torch.all(pos.grad[6:] == 0)  # positions beyond the sequence are untouched
    sinusoidal = make_model(positional="sinusoidal")
    with torch.no_grad():
        assert not torch.allclose(model(src, tgt), sinusoidal(src, tgt))


def test_sequence_longer_than_max_len_is_an_error(make_model):
    model = make_model(max_len=8)
    with pytest.raises(ValueError, match="max_len"):
        model(random_ids((1, 9), 13), random_ids((1, 3), 11))


def test_encoder_only_and_decoder_only_variants(make_model):
    src = random_ids((2, 6), 13)
    enc = make_model(kind="encoder_only")
    assert not hasattr(enc, "decoder")
    with torch.no_grad():
        assert enc(src).shape == (2, 6, 13)  # logits over the (source) vocabulary at every position
    dec = make_model(kind="decoder_only")
    assert not hasattr(dec, "encoder") and dec.decoder.layers[0].cross_attn is None
    tgt = random_ids((2, 7), 11)
    changed = tgt.clone()
    changed[:, 4] = changed[:, 4] % 10 + 1
    with torch.no_grad():
        out = dec(None, tgt)
        assert out.shape == (2, 7, 11)
        torch.testing.assert_close(dec(None, changed)[:, :4], out[:, :4], atol=1e-6, rtol=0)


# -- parameter counts -------------------------------------------------------------------------
def count_by_hand(cfg: TransformerConfig) -> int:
    """The parameter count written out from the paper's architecture, independently of the code."""
    d, f = cfg.d_model, cfg.d_ff
    linear = lambda n_in, n_out: n_in * n_out + n_out  # noqa: E731
    layer_norm = 2 * d
    attn = 4 * linear(d, d)  # W^Q, W^K, W^V, W^O
    ffn = linear(d, f) + linear(f, d)
    total = 0
    if cfg.kind in ("encoder_decoder", "encoder_only"):
        total += cfg.n_encoder_layers * (attn + ffn + 2 * layer_norm) + cfg.src_vocab_size * d
        total += layer_norm if cfg.norm_first else 0
    if cfg.kind in ("encoder_decoder", "decoder_only"):
        cross = cfg.kind == "encoder_decoder"
        per_layer = attn * (2 if cross else 1) + ffn + (3 if cross else 2) * layer_norm
        total += cfg.n_decoder_layers * per_layer + layer_norm * cfg.norm_first
        if not (cfg.share_embeddings and cross):
            total += cfg.tgt_vocab_size * d
    out_vocab = cfg.src_vocab_size if cfg.kind == "encoder_only" else cfg.tgt_vocab_size
    total += out_vocab * (0 if cfg.share_embeddings else d) + out_vocab  # generator (weight tied when shared)
    if cfg.positional == "learned":
        total += cfg.max_len * d
    return total


@pytest.mark.parametrize("overrides", [
    dict(),
    dict(src_vocab_size=11, share_embeddings=True, norm_first=True),
    dict(positional="learned", n_encoder_layers=3, n_decoder_layers=1, d_ff=48),
    dict(kind="decoder_only", norm_first=True),
    dict(kind="encoder_only", positional="learned"),
], ids=["plain", "shared-preLN", "learned", "decoder_only", "encoder_only"])
def test_num_parameters_matches_hand_count(overrides):
    params = dict(src_vocab_size=13, tgt_vocab_size=11, d_model=32, n_heads=4, d_ff=64,
                  n_encoder_layers=2, n_decoder_layers=2, max_len=40)
    cfg = TransformerConfig(**{**params, **overrides})
    model = Transformer(cfg)
    assert model.num_parameters() == count_by_hand(cfg)


@pytest.mark.parametrize("size, paper", [("base", 65e6), ("big", 213e6)])
def test_table3_parameter_counts(size, paper):
    """Paper Table 3: base ≈ 65M, big ≈ 213M with a shared 37000-token BPE vocabulary."""
    cfg = getattr(TransformerConfig, size)(37000, 37000)
    assert cfg.share_embeddings
    with torch.device("meta"):  # counts without allocating a quarter of a billion floats
        model = Transformer(cfg)
    n = model.num_parameters()
    assert n == count_by_hand(cfg)
    assert abs(n - paper) / paper < 0.05, f"{size}: {n / 1e6:.1f}M vs the paper's {paper / 1e6:.0f}M"


def test_table3_presets():
    big = TransformerConfig.big(100, 100, n_encoder_layers=2)
    assert (big.d_model, big.n_heads, big.d_ff, big.dropout, big.n_encoder_layers) == (1024, 16, 4096, 0.3, 2)
    assert big.d_k == 64
    base = TransformerConfig.base(100, 120)
    assert (base.d_model, base.n_heads, base.d_ff, base.n_decoder_layers, base.d_k) == (512, 8, 2048, 6, 64)
    assert base.share_embeddings is False  # two vocabularies cannot share one matrix


# -- configuration ----------------------------------------------------------------------------
@pytest.mark.parametrize("overrides, message", [
    (dict(d_model=30, n_heads=4), r"d_model \(30\) must be divisible by n_heads \(4\)"),
    (dict(d_ff=-1), "d_ff must be a non-negative integer"),
    (dict(d_model=0), "d_model must be a positive integer"),
    (dict(n_encoder_layers=-2), "n_encoder_layers must be a non-negative integer"),
    (dict(n_decoder_layers=0), "needs n_decoder_layers >= 1"),
    (dict(src_vocab_size=-5), "src_vocab_size must be a positive integer"),
    (dict(positional="rotary"), "positional must be one of"),
    (dict(kind="seq2seq"), "kind must be one of"),
    (dict(share_embeddings=True), "share_embeddings needs one shared vocabulary"),
    (dict(dropout=1.0), r"dropout must be a number in \[0, 1\)"),
    (dict(dropout="0.1"), "dropout must be a number"),  # a hand-edited checkpoint, say
    (dict(dropout=None), "dropout must be a number"),
    (dict(layer_norm_eps=0), "layer_norm_eps must be a positive number"),
    (dict(norm_first="no"), "norm_first must be true or false"),
    (dict(share_embeddings=1), "share_embeddings must be true or false"),
    (dict(pad_id=1.5), "pad_id must be an integer"),
    (dict(pad_id=11), "pad_id 11 is outside the vocabulary"),
    (dict(d_model=36, n_heads=4, positional="sinusoidal", d_ff=8), None),  # fine: even and divisible
    (dict(d_model=30, n_heads=5, positional="sinusoidal"), None),
    (dict(d_model=27, n_heads=3), "even d_model"),
])
def test_config_validation(overrides, message):
    params = dict(src_vocab_size=13, tgt_vocab_size=11, d_model=32, n_heads=4)
    params.update(overrides)
    if message is None:
        TransformerConfig(**params)
        return
    with pytest.raises(ConfigError, match=message):
        TransformerConfig(**params)


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


def test_config_round_trip():
    cfg = TransformerConfig(13, 11, d_model=48, n_heads=6, d_ff=96, n_encoder_layers=1, n_decoder_layers=3,
                            dropout=0.2, norm_first=True, positional="learned", max_len=77, kind="encoder_decoder")
    data = cfg.to_dict()
    assert data["d_model"] == 48 and data["norm_first"] is True
    assert TransformerConfig.from_dict(data) == cfg
    import json
    assert TransformerConfig.from_dict(json.loads(json.dumps(data))) == cfg  # survives a JSON checkpoint


def test_from_dict_rejects_unknown_and_missing_keys():
    data = TransformerConfig(13, 11).to_dict()
    with pytest.raises(ConfigError, match="unknown model config keys: colour, n_layers"):
        TransformerConfig.from_dict({**data, "n_layers": 6, "colour": "red"})
    del data["src_vocab_size"]
    with pytest.raises(ConfigError, match="incomplete model config"):
        TransformerConfig.from_dict(data)
    with pytest.raises(ConfigError, match="JSON object"):
        TransformerConfig.from_dict([1, 2])

"""The head atlas against a model built by hand to have a previous-token head, a self head and
an induction head (K-composition through the previous-token head's output), and against
loops over the recorded weights written here."""
import pytest
import torch

from model import record
from model.data.tokenizers import CharTokenizer
from model.inference.bundle import ModelBundle
from model.interpret.head_scores import (
    APPLIES,
    INDUCTION,
    MIXED,
    PREVIOUS,
    SCORE_NAMES,
    SELF,
    HeadScoreError,
    head_scores,
)
from model.nn.config import TransformerConfig
from model.nn.kinds import AttentionKind
from model.nn.transformer import Transformer
from support import small_bundle

SYMBOLS = "abcdefghijkl"
MAX_LEN = 17  # <bos> + two copies of 8 tokens
SHARP = 20.0  # query scale: softmax all but one-hot


def constructed_bundle() -> ModelBundle:
    """A 2-layer, 2-head decoder-only model whose residual stream holds three blocks, each a
    one-hot vector and its negation (so every block has mean 0 and LayerNorm only rescales):
    the token, the position, and the previous token (written by layer 0 head 0).

    Layer 0 head 0 (previous-token): the query at i is position i − 1, the key at j position j;
    it copies the attended token into the previous-token block. Layer 0 head 1 (self): query
    position i, key position j. Layer 1 head 0 (induction): the query is the current token, the
    key the previous-token block, so it attends the position after an earlier occurrence.
    Layer 1 head 1 has no weights: uniform over the visible keys.
    """
    tok = CharTokenizer(["<pad>", "<bos>", "<eos>", "<unk>", *SYMBOLS])
    V, P = len(tok), MAX_LEN
    TOK, POS, PREV = 0, 2 * V, 2 * V + 2 * P  # each block: + half, then − half
    d = 4 * V + 2 * P
    cfg = TransformerConfig(src_vocab_size=V, tgt_vocab_size=V, d_model=d, n_heads=2, d_ff=4,
                            n_encoder_layers=0, n_decoder_layers=2, dropout=0.0, max_len=MAX_LEN,
                            kind="decoder_only", norm_first=True, positional="learned", scale_embeddings=False)
    model = Transformer(cfg).eval()
    dk = d // 2
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.fill_(1.0)
        for t in range(V):
            model.tgt_embed.lut.weight[t, TOK + t], model.tgt_embed.lut.weight[t, TOK + V + t] = 1.0, -1.0
        for i in range(P):
            model.positional.weight[i, POS + i], model.positional.weight[i, POS + P + i] = 1.0, -1.0
        a0, a1 = model.decoder.layers[0].self_attn, model.decoder.layers[1].self_attn
        for i in range(P):
            if i:
                a0.w_q.weight[i - 1, POS + i] = SHARP  # head 0 asks for position i − 1 …
            a0.w_k.weight[i, POS + i] = 1.0  # … every key says where it is
            a0.w_q.weight[dk + i, POS + i] = SHARP  # head 1 asks for its own position
            a0.w_k.weight[dk + i, POS + i] = 1.0
        for t in range(V):
            a0.w_v.weight[t, TOK + t] = 1.0  # head 0 reads the token …
            a0.w_o.weight[PREV + t, t], a0.w_o.weight[PREV + V + t, t] = 1.0, -1.0  # … into the next block
            a1.w_q.weight[t, TOK + t] = SHARP  # layer 1 head 0: my token …
            a1.w_k.weight[t, PREV + t] = 1.0  # … against each key's previous token
    return ModelBundle(model, tok, tok, name="constructed")


@pytest.fixture(scope="module")
def built():
    bundle = constructed_bundle()
    return bundle, head_scores(bundle, n_sequences=6, segment_len=8, seed=3)


def test_the_constructed_heads_are_found_and_the_uniform_one_is_not_flagged(built):
    _, atlas = built
    kinds = {(h.layer, h.head): h.kind for h in atlas.heads}
    assert kinds == {(0, 0): PREVIOUS, (0, 1): SELF, (1, 0): INDUCTION, (1, 1): MIXED}
    assert atlas.head("decoder_self", 0, 0).scores[PREVIOUS] > 0.95
    assert atlas.head("decoder_self", 1, 0).scores[INDUCTION] > 0.95
    assert atlas.strongest(INDUCTION).key == ("decoder_self", 1, 0)
    assert atlas.strongest(PREVIOUS).key == ("decoder_self", 0, 0)
    assert atlas.counts()[INDUCTION] == 1 and atlas.counts()[MIXED] == 1


def test_every_score_is_a_share_of_attention(built):
    _, atlas = built
    for h in atlas.heads:
        assert set(h.scores) == set(APPLIES[h.attention])
        assert all(0.0 <= s <= 1.0 for s in h.scores.values())


@pytest.mark.parametrize("head", [(1, 0), (1, 1)])
def test_scores_match_a_loop_over_the_recorded_weights(built, head):
    bundle, atlas = built
    layer, h = head
    ids = atlas.tokens["tgt"]
    with torch.no_grad(), record(bundle.model) as trace:
        bundle.model(None, ids)
    w = trace.attention("decoder_self", layer)[:, h]  # (B, T, T)
    B, T = ids.shape
    sums = dict.fromkeys(SCORE_NAMES, 0.0)
    counts = dict.fromkeys(SCORE_NAMES, 0)
    for b in range(B):
        row = ids[b].tolist()
        for q in range(1, T):  # position 0 can only attend itself
            for name, k in ((PREVIOUS, q - 1), ("first-token", 0), (SELF, q)):
                sums[name] += float(w[b, q, k])
                counts[name] += 1
            earlier = [k for k in range(q) if row[k] == row[q]]
            if earlier:
                sums["duplicate-token"] += float(w[b, q, earlier[0]])
                sums[INDUCTION] += float(w[b, q, earlier[0] + 1])
                counts["duplicate-token"] += 1
                counts[INDUCTION] += 1
    scores = atlas.head("decoder_self", layer, h).scores
    for name in SCORE_NAMES:
        assert scores[name] == pytest.approx(sums[name] / counts[name], abs=1e-5), name


def test_every_attention_kind_is_scored_and_cross_has_only_the_first_token():
    bundle = small_bundle()
    atlas = head_scores(bundle, n_sequences=4, seed=1)
    cfg = bundle.config
    assert atlas.attention_kinds == [AttentionKind.ENCODER, AttentionKind.DECODER_SELF, AttentionKind.CROSS]
    assert len(atlas.of("encoder")) == cfg.n_encoder_layers * cfg.n_heads
    assert len(atlas.of("cross")) == cfg.n_decoder_layers * cfg.n_heads
    assert all(set(h.scores) == {"first-token"} for h in atlas.of("cross"))
    assert "only first-token can apply" in atlas.about()
    again = head_scores(bundle, n_sequences=4, seed=1)
    assert [h.scores for h in again.heads] == [h.scores for h in atlas.heads]  # seeded: the same numbers
    rows = atlas.to_csv().splitlines()
    assert len(rows) == 1 + len(atlas.heads)


def test_bad_settings_are_refused_with_a_sentence(built):
    bundle, _ = built
    with pytest.raises(HeadScoreError, match="threshold"):
        head_scores(bundle, threshold=0)
    tiny = CharTokenizer(["<pad>", "<bos>", "<eos>", "<unk>", "a"])
    with pytest.raises(HeadScoreError, match="at least 3"):
        head_scores(ModelBundle(bundle.model, tiny, tiny), segment_len=8)


def test_a_heads_letter_names_its_kind_and_a_mixed_heads_its_strongest_pattern():
    from model.interpret.head_scores import HeadAtlas, HeadScore

    scores = {PREVIOUS: 0.1, INDUCTION: 0.3, SELF: 0.2}
    assert HeadScore(AttentionKind.ENCODER, 0, 0, scores, INDUCTION).letter == "I"
    assert HeadScore(AttentionKind.ENCODER, 0, 1, scores, MIXED).letter == "i"  # lower case: not past the threshold
    atlas = HeadAtlas("m", [], 0.4, {"src": 12, "tgt": 12}, {})
    assert atlas.lengths_text() == "12"
    atlas.segment_lens["tgt"] = 3
    assert atlas.lengths_text() == "12 (source), 3 (target)"


def test_the_atlas_explains_itself_with_its_own_numbers_and_each_head_lists_its_scores(built):
    _bundle, atlas = built
    text = atlas.about()
    n = len(next(iter(atlas.tokens.values())))
    assert f"{n} random sequences of {atlas.lengths_text()} tokens" in text
    assert f"at least {atlas.threshold:.0%}" in text and "mixed" in text and "Cross-attention" not in text
    assert all(s.strip()[0].isupper() for s in text.split(". ")) and text.endswith(".")
    h = atlas.heads[0]
    lines = h.tooltip().splitlines()
    assert lines[0].startswith(f"{h.attention.short_title} L{h.layer + 1} H{h.head + 1}: {h.kind}")
    assert lines[1:] == [f"  {name}: {score:.2f}" for name, score in h.scores.items()]

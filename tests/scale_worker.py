"""Run by tests/test_scale_distributed.py, under `torchrun --nproc-per-node 2` (or alone): train a
tiny model a few steps with the Trainer in token batches and write what each rank saw and computed
(`rank<R>.json`: the source rows of every step, the loss, a digest of the weights after every
step), save the checkpoint as `transformer-explorer train` does, then train again batched by
sentences (the losses and the final weights' digest).

    python tests/scale_worker.py DATA.tsv OUT_DIR STEPS ACCUMULATE
"""
import hashlib
import json
import sys
from argparse import Namespace
from pathlib import Path

import torch


def tiny_model(data: str, seed: int = 0):
    """A 1+1-layer model over the file's characters, the same on every rank and in the reference."""
    from model.data.tokenizers import CharTokenizer
    from model.data.user_data import read_tsv
    from model.inference.bundle import ModelBundle
    from model.nn.config import TransformerConfig
    from model.nn.transformer import Transformer

    pairs = read_tsv(data)
    tok = CharTokenizer.from_texts([s for s, _ in pairs] + [t for _, t in pairs])
    torch.manual_seed(seed)
    config = TransformerConfig(src_vocab_size=len(tok), tgt_vocab_size=len(tok), d_model=32, n_heads=2, d_ff=64,
                               n_encoder_layers=1, n_decoder_layers=1, dropout=0.0, max_len=32)
    task = {"name": "tiny", "params": {"data": data, "tokenizer": "char"}, "examples": [pairs[0][0]],
            "max_src_len": 30, "max_tgt_len": 30}
    return ModelBundle(Transformer(config), tok, tok, task, {}, name="tiny")


def digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def run(data: str, out: str, steps: int, accumulate: int, procs=None) -> dict:
    """Train and record; returns this rank's record (also written to OUT/rank<R>.json)."""
    from model.cli.main import save_all
    from model.train.distributed import setup
    from model.train.trainer import TrainConfig, Trainer

    procs = procs or setup("cpu")
    bundle = tiny_model(data)
    cfg = TrainConfig(steps=steps, batch_tokens=240, accumulate=accumulate, warmup=4, buffer_pairs=64)
    trainer = Trainer(bundle, None, cfg, data=data, procs=procs)
    seen, losses, digests = [], [], []
    for stream in trainer.batches.streams:  # record every micro-batch this rank reads
        stream._batches = _recording(stream._batches, seen)
    for _ in range(steps):
        losses.append(trainer.step().loss)
        digests.append(digest(bundle.model))
    record = {"rank": procs.rank, "world_size": procs.world_size, "rows": seen, "losses": losses, "digests": digests,
              "budget": cfg.micro_budget(procs.world_size)}
    record["sentence_losses"], record["sentence_digest"] = sentence_run(data, steps, accumulate, procs)
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / f"rank{procs.rank}.json").write_text(json.dumps(record))
    save_all(Namespace(out=str(Path(out) / "checkpoint"), keep_last=0, snapshots=None, argv=[]), bundle, trainer)
    return record


def sentence_run(data: str, steps: int, accumulate: int, procs) -> tuple[list[float], str]:
    """The same Trainer batched by sentences: 16 pairs a step from the TSV task's stream, shared by
    the slots. Returns the losses and a digest of the weights at the end."""
    from model.data.user_data import tsv_task
    from model.train.trainer import TrainConfig, Trainer

    bundle = tiny_model(data)
    cfg = TrainConfig(steps=steps, batch_size=16, accumulate=accumulate, warmup=4)
    trainer = Trainer(bundle, tsv_task(data, "char"), cfg, procs=procs)
    return [trainer.step().loss for _ in range(steps)], digest(bundle.model)


def _recording(batches, seen: list):
    for batch in batches:
        seen.append([[int(i) for i in row if i != 0] for row in batch.src.tolist()])
        yield batch


if __name__ == "__main__":
    from model.train.distributed import teardown

    data_path, out_dir, n_steps, n_accumulate = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    try:
        run(data_path, out_dir, n_steps, n_accumulate)
    finally:
        teardown()

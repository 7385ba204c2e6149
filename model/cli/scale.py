"""`transformer-explorer train` at the paper's scale: its flags, its model and its vocabulary.

    torchrun --nproc-per-node 8 -m model.cli train --data wmt14.en-de.tsv --tokenizer bpe \\
        --vocab-size 37000 --batch-tokens 25000 --share-embeddings --layers 6 --d-model 512 \\
        --heads 8 --d-ff 2048 --steps 100000 --warmup 4000 --out runs/base --keep-last 5

Any of --batch-tokens, --tokenizer bpe, --resume or a torchrun launch reads the TSV in token
batches (`wants_scale`) with a paper-base model whose vocabulary rank 0 learns from the file and
sends to the others; the loop is model.cli.main's, as for any run. Rank 0 prints progress and
writes OUT (the checkpoint the app opens), OUT.resume/ (weights, Adam, schedule, data positions)
and, with --keep-last K, OUT.steps/step-<N>/ for `transformer-explorer average`.
"""
from __future__ import annotations

import sys
from pathlib import Path


def add_scale_arguments(p) -> None:
    from model.train.config import PRECISIONS

    g = p.add_argument_group("batches, precision, saves; at scale: torchrun, BPE, token batches "
                             "(README 'Training at the paper's scale')")
    g.add_argument("--vocab-size", type=int, default=37000, help="BPE vocabulary size for --tokenizer bpe (37000)")
    g.add_argument("--batch-tokens", type=int, default=None, metavar="N",
                   help="tokens per step per side (source and target), all processes together (paper: 25000)")
    g.add_argument("--accumulate", type=int, default=1, help="micro-batches per process per step (gradient accumulation)")
    g.add_argument("--precision", choices=PRECISIONS, default="auto", help="auto: bf16 autocast on CUDA, fp32 elsewhere")
    g.add_argument("--compile", action="store_true", help="torch.compile the model")
    g.add_argument("--resume", action="store_true", help="carry on from OUT.resume/ (after a crash or to train longer)")
    g.add_argument("--keep-last", type=int, default=0, metavar="K",
                   help="also keep the last K saved checkpoints in OUT.steps/ (for `transformer-explorer average`)")
    g.add_argument("--bleu-data", metavar="HELDOUT.tsv", help="at the end: beam-search BLEU on this TSV (sacrebleu)")
    g.add_argument("--bleu-size", type=int, default=0, help="score only the first N pairs of --bleu-data (0: all)")
    g.add_argument("--beam", type=int, default=4, help="beam size for --bleu-data (paper: 4)")
    g.add_argument("--alpha", type=float, default=0.6, help="length penalty α for --bleu-data (paper: 0.6)")
    g.add_argument("--buffer-pairs", type=int, default=20000, help="pairs sorted by length together")


def wants_scale(args) -> bool:
    """Whether the run reads its TSV in token batches (with the at-scale model and resume state)."""
    from model.train.distributed import launched_by_torchrun

    return bool(args.batch_tokens or args.tokenizer == "bpe" or args.resume or launched_by_torchrun())


def check_scale_config(args, overrides: dict) -> None:
    """The at-scale model's sizes (ConfigError), checked before a vocabulary is learned for it."""
    from model.nn.config import TransformerConfig
    from model.train.trainer import TrainingError

    if overrides.get("kind", "encoder_decoder") != "encoder_decoder" or args.init:
        raise TrainingError("training at scale trains the paper's encoder-decoder from scratch (or --resume)")
    if not args.data:
        raise TrainingError("training at scale reads a TSV: give --data PAIRS.tsv (source<TAB>target lines)")
    TransformerConfig(src_vocab_size=8, tgt_vocab_size=8, **_sizes(overrides))


def _sizes(overrides: dict) -> dict:
    """The paper-base model's sizes, with the flags given instead."""
    params = dict(d_model=512, n_heads=8, d_ff=2048, n_encoder_layers=6, n_decoder_layers=6, dropout=0.1, max_len=256)
    params.update({k: v for k, v in overrides.items() if k != "kind"})
    return params


BPE_CHARS_PER_TOKEN = 50  # a line this many characters per max_len token is longer than any model reads


def _short_pairs(pairs, limit: int, skipped: list[int]):
    """The pairs both of whose sides have at most `limit` characters (BPE's merge counting grows
    about quadratically with a line's length: one 1 MB line takes minutes); counts the others."""
    for pair in pairs:
        if len(pair[0]) > limit or len(pair[1]) > limit:
            skipped[0] += 1
            continue
        yield pair


def _learn_vocabulary(args):
    """(source, target) tokenizers learned from the TSV in one streaming pass (BPE: shared)."""
    from model.data.batching import tsv_lines
    from model.data.bpe import BPETokenizer, corpus_texts
    from model.data.tokenizers import TOKENIZERS

    # One pass over the whole file before training: a malformed line stops the run now, not at hour 5.
    pairs = (pair for _, _, pair in tsv_lines(args.data, max_line_chars=None) if pair is not None)
    if args.tokenizer == "bpe":
        limit = BPE_CHARS_PER_TOKEN * (args.max_len or 256)
        skipped = [0]
        tok = BPETokenizer.train(corpus_texts(_short_pairs(pairs, limit, skipped)), args.vocab_size,
                                 progress=not args.quiet and sys.stderr.isatty())
        if skipped[0]:
            print(f"BPE vocabulary: skipped {skipped[0]:,} pair(s) with a side longer than {limit:,} characters "
                  "(longer than the model reads; batching drops them too)", file=sys.stderr)
        return tok, tok
    cls = TOKENIZERS[args.tokenizer]
    sources, targets = zip(*pairs)
    src, tgt = cls.from_texts(sources), cls.from_texts(targets)
    if args.share_embeddings and src != tgt:
        src = tgt = cls.from_texts(list(sources) + list(targets))
    return src, tgt


def scale_bundle(args, overrides: dict, procs):
    """(bundle, resume state): a new model with a vocabulary learned by rank 0 and sent to all,
    or the one --resume continues with what OUT.resume/ holds (model.io.resume.read_state)."""
    import json

    import torch

    from model.inference.bundle import ModelBundle
    from model.io.checkpoints import _tokenizer, check_save_target, load_checkpoint
    from model.io.resume import read_state
    from model.nn.config import TransformerConfig
    from model.nn.transformer import Transformer
    from model.train.distributed import broadcast_text
    from model.train.trainer import TrainingError

    if not args.data:
        raise TrainingError("training at scale reads a TSV: give --data PAIRS.tsv (source<TAB>target lines)")
    if overrides.get("kind", "encoder_decoder") != "encoder_decoder" or args.init:
        raise TrainingError("training at scale trains the paper's encoder-decoder from scratch (or --resume)")
    if args.resume:
        return load_checkpoint(args.out, device="cpu"), read_state(args.out)
    text, failure = None, None
    if procs.is_main:
        try:
            check_save_target(args.out)
            src, tgt = _learn_vocabulary(args)
            text = json.dumps({"src": src.to_dict(), "tgt": tgt.to_dict()})
        except Exception as exc:  # the other ranks wait in the broadcast: tell them, then fail alike
            if not procs.distributed:
                raise
            failure, text = exc, json.dumps({"error": str(exc)})
    shared = json.loads(broadcast_text(text, procs))
    if "error" in shared:
        if failure is not None:
            raise failure
        relayed = TrainingError(f"rank 0 could not learn the vocabulary: {shared['error']}")
        relayed.every_rank = True  # rank 0 prints its own error
        raise relayed
    src, tgt = _tokenizer(shared["src"]), _tokenizer(shared["tgt"])
    params = _sizes(overrides)
    torch.manual_seed(args.seed)  # the same initial weights on every rank (DDP also copies rank 0's)
    config = TransformerConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), **params)
    name = args.name or Path(args.data).stem
    task = {"name": name, "params": {"data": str(args.data), "tokenizer": args.tokenizer}, "at_scale": True,
            "description": f"Parallel data: {args.data}", "examples": _examples(args.data),
            "max_src_len": config.max_len - 1, "max_tgt_len": min(50, config.max_len - 2)}  # the app decodes ≤ that + 8
    return ModelBundle(Transformer(config), src, tgt, task, {}, name=name), None


def _examples(path, n: int = 3) -> list[str]:
    from model.data.batching import tsv_lines

    found = []
    for _, _, pair in tsv_lines(path, max_line_chars=None):
        if pair is not None:
            found.append(pair[0])
        if len(found) == n:
            break
    return found


def resume_positions(state, config, procs):
    """Every slot's saved position in the data; refused when the slots are not those saved."""
    from model.data.batching import SlotPosition
    from model.train.trainer import TrainingError

    if state is None:
        return None
    info = state[0]
    if info["n_slots"] != config.slots(procs.world_size):
        raise TrainingError(f"--resume needs processes × --accumulate = {info['n_slots']} as saved, "
                            f"got {config.slots(procs.world_size)}")
    return [SlotPosition(*row) for row in info["positions"]]


def restore_state(state, trainer) -> None:
    """Weights, Adam, schedule, random state and step count as the run saved them."""
    from model.io.resume import restore

    info, weights, opt_tensors = state
    restore(info, weights, opt_tensors, trainer.model, trainer.optimizer, trainer.scheduler, trainer.procs.rank)
    trainer.step_count, trainer.elapsed = info["step"], info.get("train_seconds", 0.0)


def save_resume_state(args, trainer, positions, rng) -> None:
    """OUT.resume/ (rank 0, with every rank's positions and random states gathered before)."""
    from model.io.resume import save_state

    info = {"step": trainer.step_count, "train_seconds": trainer.elapsed, "n_slots": trainer.n_slots,
            "positions": positions, "world_size": trainer.procs.world_size, "data": str(trainer.data)}
    save_state(args.out, trainer.model, trainer.optimizer, trainer.scheduler, info, rng)


__all__ = ["add_scale_arguments", "wants_scale", "scale_bundle", "resume_positions", "restore_state",
           "save_resume_state"]

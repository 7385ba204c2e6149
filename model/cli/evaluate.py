"""`transformer-explorer average …` and `transformer-explorer bleu …`: the paper's evaluation
(Section 6.1) as commands, headless like `train`.

    transformer-explorer average --last 5 runs/base.steps --out runs/base-avg5
    transformer-explorer average runs/a runs/b runs/c --out runs/abc
    transformer-explorer bleu --checkpoint runs/base-avg5 --data newstest2014.tsv --beam 4 --alpha 0.6

Errors print one clear line and exit non-zero, never a traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def average_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="transformer-explorer average",
                                description="Average the weights of checkpoints of one run (Section 6.1).")
    p.add_argument("checkpoints", nargs="+", metavar="DIR",
                   help="checkpoint folders, or with --last K one folder of step-<N> checkpoints (OUT.steps)")
    p.add_argument("--last", type=int, default=None, metavar="K", help="the last K numbered checkpoints of DIR")
    p.add_argument("--out", required=True, help="folder to write the averaged checkpoint to")
    args = _parse(p, argv)
    if args is None:
        return 2
    from model.io.averaging import average_checkpoints, last_checkpoints
    from model.io.checkpoints import CheckpointError, check_save_target, save_checkpoint

    try:
        check_save_target(args.out)  # before loading every checkpoint: a refused --out costs nothing
        if args.last is not None:
            if args.last < 1:
                raise CheckpointError(f"--last {args.last} is out of range: give the number K ≥ 1 of checkpoints")
            if len(args.checkpoints) != 1:
                raise CheckpointError("--last K takes one folder of numbered checkpoints (e.g. runs/base.steps)")
            paths = last_checkpoints(args.checkpoints[0], args.last)
        else:
            paths = args.checkpoints
        bundle = average_checkpoints(paths)
        save_checkpoint(bundle, args.out)
    except (CheckpointError, OSError) as exc:
        print(f"transformer-explorer average: error: {exc}", file=sys.stderr)
        return 1
    print(f"averaged {len(paths)} checkpoints ({', '.join(str(p) for p in paths)}) into {args.out}")
    return 0


def bleu_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="transformer-explorer bleu",
                                description="Beam-search a held-out TSV and score it with sacrebleu (Section 6.1).")
    p.add_argument("--checkpoint", required=True, help="checkpoint folder")
    p.add_argument("--data", required=True, metavar="HELDOUT.tsv", help="source<TAB>reference lines")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty α")
    p.add_argument("--limit", type=int, default=0, help="only the first N pairs (0: all)")
    p.add_argument("--device", default="auto")
    args = _parse(p, argv)
    if args is None:
        return 2
    from model.cli.flags import UsageError, check_bleu_flags, check_generates, check_readable
    from model.data.user_data import DataError
    from model.io.checkpoints import CheckpointError, bundled_checkpoints, load_checkpoint
    from model.nn.devices import DeviceError
    from model.train.bleu import evaluate_bleu

    try:
        check_bleu_flags(args)
        check_readable(args.data, DataError)
        bundled = bundled_checkpoints()
        where = bundled[args.checkpoint] if args.checkpoint in bundled and not Path(args.checkpoint).exists() \
            else args.checkpoint  # a bundled model by name, as the app's --checkpoint takes it
        bundle = load_checkpoint(where, device=args.device)
        check_generates(bundle)
        score, triples = evaluate_bleu(bundle, args.data, args.beam, args.alpha, args.limit or None)
    except (CheckpointError, DataError, DeviceError, UsageError, OSError) as exc:
        print(f"transformer-explorer bleu: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1
    for src, ref, out in triples[:3]:
        print(f"  {src!r} → {out!r} (reference {ref!r})", file=sys.stderr)
    print(f"bleu: {score:.2f} (beam {args.beam}, alpha {args.alpha}, n={len(triples)})")
    return 0


def _parse(p: argparse.ArgumentParser, argv):
    try:
        return p.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit:
        return None


__all__ = ["average_main", "bleu_main"]

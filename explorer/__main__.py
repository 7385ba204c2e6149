"""`transformer-explorer [train|average|bleu ...]` and `python -m explorer`; the commands without
a window run before any Qt import, so a GPU box needs no display."""
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "train":
        from model.cli import train_main
        return train_main(argv[1:])
    if argv and argv[0] in ("average", "bleu"):
        from model.cli import evaluate as eval_cli
        return getattr(eval_cli, f"{argv[0]}_main")(argv[1:])
    from explorer.app import run_app
    return run_app(argv)


if __name__ == "__main__":
    sys.exit(main())

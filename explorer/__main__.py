"""Entry point: `transformer-explorer [train ...]` and `python -m explorer`.

`train` is dispatched before any Qt import so a headless GPU box never needs a display.
"""
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "train":
        from model.cli import train_main
        return train_main(argv[1:])
    from explorer.app import run_app
    return run_app(argv)


if __name__ == "__main__":
    sys.exit(main())

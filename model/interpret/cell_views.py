"""A clicked map cell as a panel's session view ("cell <part> … <row> <col>"): written by
`cell_view`, read back by `parse_cell`, so a scene file can name the cell a panel shows."""
from __future__ import annotations


def cell_view(*parts) -> str:
    """A clicked cell as a panel's view: "cell <part> <part> …"."""
    return " ".join(["cell", *map(str, parts)])


def parse_cell(view: str | None, n: int) -> tuple | None:
    """The `n` parts a cell view names (digits as ints, the last two always numbers), or None."""
    parts = (view or "").split()
    if len(parts) != n + 1 or parts[0] != "cell" or not all(p.isdigit() for p in parts[-2:]):
        return None
    return tuple(int(p) if p.isdigit() else p for p in parts[1:])

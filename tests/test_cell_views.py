"""A clicked cell as a panel's session view: what `cell_view` writes `parse_cell` reads back (names
stay names, numbers become ints), and a view of another shape or another kind reads as no cell."""
from model.interpret.cell_views import cell_view, parse_cell


def test_a_cell_view_reads_back_as_the_parts_it_was_written_from():
    for parts in ((3, 7), ("decoder.resid", 1, 4), ("cross", 0, 12)):
        assert parse_cell(cell_view(*parts), len(parts)) == parts


def test_views_that_name_no_cell_read_as_none():
    assert parse_cell(None, 2) is None and parse_cell("", 2) is None
    assert parse_cell("single", 2) is None  # another kind of view
    assert parse_cell(cell_view(1, 2), 3) is None  # another number of parts
    assert parse_cell("cell mlp x 2", 3) is None and parse_cell("cell 1 -2", 2) is None  # the row and column: numbers

"""The dock layout's constants, read by the main window and by scenes (which save and restore
layouts) without either importing the other."""

LAYOUT_VERSION = 1  # bump when the default layout changes so old saved layouts are not restored
LEFT_PANELS = ("architecture", "positional")  # the rest share the right side; few tabs each, none elided

"""The dock layout's constants, read by the main window and by scenes (which save and restore
layouts) without either importing the other."""

LAYOUT_VERSION = 2  # bump when the default layout changes so old saved layouts are not restored
LEFT_PANELS = ("architecture", "positional", "modern")  # the diagrams; the rest share the right side

# The View menu's sections: the panels by what a lecture uses them for (a panel not named here
# is listed at the end).
CHAPTERS = (
    ("The paper", ("architecture", "step", "attention", "positional", "decoding", "training")),
    ("Inside a trained model", ("heads", "lens", "attribution", "compare", "leak")),
    ("Causal experiments", ("patching", "atlas", "induction")),
    ("Since 2017", ("modern", "kvcache", "sampling")),
)

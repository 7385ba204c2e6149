"""The architecture as an import graph: `model/` never imports Qt or the explorer, and no two
modules import each other, directly or round a loop (function-level imports count too: a
late import only hides a cycle). The graph is read from the source with `ast`, so the test
sees every import whether or not it runs."""
import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "explorer")
QT = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph", "superqt", "qtpy")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports (absolute names; `from pkg import mod` names pkg.mod when it is one)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def graph() -> nx.DiGraph:
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    ours = {module_name(p): p for p in files}
    g = nx.DiGraph()
    for name, path in ours.items():
        g.add_node(name)
        for target in imports_of(path):
            if target in ours and target != name:
                g.add_edge(name, target)
            elif target.split(".")[0] in QT:
                g.add_edge(name, target.split(".")[0])
    return g


def test_model_imports_no_qt_and_no_explorer():
    g = graph()
    bad = [(a, b) for a, b in g.edges if a.split(".")[0] == "model" and (b in QT or b.startswith("explorer"))]
    assert bad == []


def test_no_import_cycles():
    g = graph()
    g.remove_nodes_from([n for n in list(g) if n in QT])
    # a package's __init__ importing its own submodules is how packages re-export: not a cycle
    g.remove_edges_from([(a, b) for a, b in list(g.edges) if b.startswith(a + ".") or a.startswith(b + ".")])
    cycles = sorted(sorted(c) for c in nx.simple_cycles(g))
    assert cycles == [], f"import cycles: {cycles}"


def test_the_graph_sees_real_imports():
    """The reader must find what is there (else the tests above would pass on an empty graph)."""
    g = graph()
    assert g.has_edge("explorer.state", "explorer.session") and g.has_edge("explorer.state", "PySide6")
    assert g.has_edge("model.interpret.frame", "model.inference.bundle") and g.number_of_edges() > 100


# model/ in layers, lowest first: a module may import its own layer and the layers below it.
# interpret sits above train because the leak lab and head importance train or score with it.
LAYERS = ("nn", "data", "inference", "train", "interpret", "io", "cli")


def layer_of(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if parts[0] == "model" and len(parts) > 1 and parts[1] in LAYERS else None


def test_model_is_layered():
    g = graph()
    upward = [(a, b) for a, b in g.edges
              if layer_of(a) is not None and layer_of(b) is not None and layer_of(b) > layer_of(a)]
    assert upward == [], f"imports from a lower layer into a higher one: {upward}"


def test_model_has_no_flat_modules_but_its_face():
    """Every module lives in a layer's folder; model/__init__.py is the one flat public face."""
    flat = sorted(p.name for p in (ROOT / "model").glob("*.py") if p.name != "__init__.py")
    assert flat == []
    assert all(layer_of(n) is not None for n in graph() if n.startswith("model.") and n != "model")

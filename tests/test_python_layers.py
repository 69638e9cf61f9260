"""The Python package imports only downward (issue 39): each top-level part of
``python/edm`` has a layer, and a part may import only parts of lower layers.

A new module or package must be given its layer here; an import that points up
(or sideways within a layer) fails with the file and line that made it.
"""

from __future__ import annotations

import ast
from pathlib import Path

EDM = Path(__file__).resolve().parents[1] / "python" / "edm"

# Lower number = lower layer. Same layer = may not import each other.
LAYERS = {
    "_core": 0, "args": 0, "tomlfile": 0, "report": 0,   # leaves: the Rust core, CLI/TOML/table helpers
    "protocol": 1,                                       # the wire protocol (constants, codec)
    "sim": 2, "rtl": 2, "sweep": 2,                      # the simulator, the RTL tools, the sweep engine
    "ycsb": 3, "related": 3, "plot": 3, "demo": 3, "fuzz_api": 3,  # applications and studies over them
    "reproduce": 4,                                      # the paper's evaluation, over everything
    "cli": 5, "__init__": 5,                             # the `edm` command (imports commands by name)
}


def _part(path: Path) -> str:
    return path.relative_to(EDM).parts[0].removesuffix(".py")


def edm_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level part) of every ``edm.…`` import in one file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"edm.{a.name}" for a in node.names] if node.module == "edm" else [node.module]
        out += [(node.lineno, n.split(".")[1]) for n in names if n.startswith("edm.")]
    return out


def upward_imports() -> list[str]:
    bad = []
    for path in sorted(EDM.rglob("*.py")):
        part = _part(path)
        assert part in LAYERS, f"{path.relative_to(EDM)}: give '{part}' a layer in {__file__}"
        for line, target in edm_imports(path):
            if target != part and LAYERS.get(target, 99) >= LAYERS[part]:
                bad.append(f"{path.relative_to(EDM)}:{line}: {part} (layer {LAYERS[part]}) imports "
                           f"{target} (layer {LAYERS.get(target, '?')})")
    return bad


def test_every_python_import_points_down():
    bad = upward_imports()
    assert not bad, "imports that point up or sideways:\n" + "\n".join(bad)


def test_the_check_sees_an_upward_import(tmp_path, monkeypatch):
    """The check can fail: a planted `sim` module importing `reproduce` is reported."""
    fake = tmp_path / "edm"
    (fake / "sim").mkdir(parents=True)
    (fake / "sim" / "x.py").write_text("from edm.reproduce import plan\nfrom edm import protocol\n")
    monkeypatch.setattr(__import__(__name__), "EDM", fake)
    assert upward_imports() == ["sim/x.py:1: sim (layer 2) imports reproduce (layer 4)"]

"""The simulator crate's modules import downward only (issue #39, item 3).

Builds the import graph of crates/edm-sim/src from its `use crate::…`, `super::…`,
`self::…` and child-module paths (in `use` lines and inline in code), then looks for
cycles (Tarjan's strongly connected components) at two levels:

- between the crate's top-level modules (`config`, `edm`, `engine`, …): no cycle allowed;
- between the files inside `edm/`: no cycle allowed except between `edm/sim.rs` and the
  parts it holds (a cycle whose members are `sim` and parts listed in `SIM_PARTS`).

Run `python tests/test_crate_modules.py` to print the graph's cycles.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "crates" / "edm-sim" / "src"

# Files under edm/ that are owned parts of `edm::sim::Sim`: each defines a struct that
# sim.rs holds as a field, with its own methods and no `impl Sim` block. A cycle between
# sim and these (a part naming `Sim`) is the one the graph allows.
SIM_PARTS: frozenset[str] = frozenset(
    {"ordering", "batching", "records", "memory_nodes", "faults/acks", "faults/chunks", "faults/message_recovery"}
)

_STRIP = re.compile(
    r"""//[^\n]*|/\*.*?\*/|r(\#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?'(?:\\.|[^'\\])'""",
    re.S,
)
_TOKENS = re.compile(
    r"""(?P<moddecl>\bmod\s+(?P<declname>\w+)\s*;)
      |(?P<modopen>\bmod\s+(?P<inline>\w+)\s*\{)
      |(?P<use>\buse\s+(?P<tree>[^;]*);)
      |(?P<open>\{)
      |(?P<close>\})
      |(?P<path>(?<![\w:])\w+(?:\s*::\s*\w+)+)
    """,
    re.X | re.S,
)


def module_of(path: Path) -> tuple[str, ...]:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("lib", "mod"):
        parts.pop()
    return tuple(parts)


def _strip(text: str) -> str:
    """Comments, strings and `pub(in path)` visibilities (not imports) removed."""
    text = _STRIP.sub(lambda m: " " * len(m.group(0)) if m.group(0).startswith("/") else '""', text)
    return re.sub(r"\bpub\s*\(\s*in\s+[\w:\s]+\)", "pub", text)


def expand_use_tree(tree: str) -> list[list[str]]:
    """`a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]] (globs and renames dropped)."""
    tree = re.sub(r"\s+", " ", tree).strip()
    if tree.startswith("::"):
        tree = tree[2:]
    brace = tree.find("{")
    if brace < 0:
        head = tree.split(" as ")[0].strip()
        return [[p.strip() for p in head.split("::") if p.strip() and p.strip() != "*"]]
    prefix = [p.strip() for p in tree[:brace].split("::") if p.strip()]
    inner = tree[brace + 1 : tree.rfind("}")]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    out = []
    for item in items:
        if not item.strip():
            continue
        for sub in expand_use_tree(item):
            out.append(prefix + sub if sub != ["self"] else prefix)
    return out or [prefix]


def crate_graph() -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """File module -> the file modules it names (self-edges dropped)."""
    files = {module_of(p): p for p in SRC.rglob("*.rs")}
    modules = set(files)
    children: dict[tuple[str, ...], set[str]] = {m: set() for m in modules}
    for m in modules:
        if m:
            children.setdefault(m[:-1], set()).add(m[-1])

    def resolve(here: tuple[str, ...], parts: list[str]) -> tuple[str, ...] | None:
        if not parts:
            return None
        if parts[0] == "crate":
            base, rest = (), parts[1:]
        elif parts[0] in ("self", "super"):
            base, rest = here, parts
            while rest and rest[0] in ("self", "super"):
                base = base[:-1] if rest[0] == "super" else base
                rest = rest[1:]
        elif parts[0] in children.get(here, ()):
            base, rest = here, parts
        else:
            return None  # another crate, std, or an item in scope
        target = base
        for part in rest:
            if target + (part,) in modules:
                target = target + (part,)
            else:
                break
        while target not in modules:  # an inline module: its file
            target = target[:-1]
        return target

    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in modules}
    for module, path in files.items():
        text = _strip(path.read_text())
        inline: list[tuple[str, int]] = []  # inline modules open, with their brace depth
        depth = 0
        for tok in _TOKENS.finditer(text):
            here = module + tuple(name for name, _ in inline)
            found: list[list[str]] = []
            if tok.group("modopen"):
                depth += 1
                inline.append((tok.group("inline"), depth))
            elif tok.group("open"):
                depth += 1
            elif tok.group("close"):
                if inline and inline[-1][1] == depth:
                    inline.pop()
                depth -= 1
            elif tok.group("use"):
                found = expand_use_tree(tok.group("tree"))
            elif tok.group("path"):
                found = [re.sub(r"\s+", "", tok.group("path")).split("::")]
            for parts in found:
                target = resolve(here, parts)
                if target is not None and target != module:
                    graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one node, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(1000, 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def top_level_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for src, dsts in crate_graph().items():
        if not src:
            continue  # lib.rs declares and re-exports everything
        graph.setdefault(src[0], set())
        graph[src[0]].update(d[0] for d in dsts if d and d[0] != src[0])
    return graph


def edm_graph() -> dict[str, set[str]]:
    """Files inside edm/ (named by their path below edm, `mod` for edm/mod.rs)."""

    def name(m: tuple[str, ...]) -> str:
        return "/".join(m[1:]) or "mod"

    graph: dict[str, set[str]] = {}
    for src, dsts in crate_graph().items():
        if src[:1] != ("edm",):
            continue
        graph.setdefault(name(src), set())
        graph[name(src)].update(name(d) for d in dsts if d[:1] == ("edm",) and d != src)
    return graph


def _edges(graph: dict[str, set[str]], comp: list[str]) -> str:
    members = set(comp)
    return "; ".join(f"{a} -> {', '.join(sorted(graph[a] & members))}" for a in comp)


def report() -> tuple[list[list[str]], list[list[str]]]:
    top, edm = top_level_graph(), edm_graph()
    top_cycles = cycles(top)
    edm_cycles = [c for c in cycles(edm) if not ("sim" in c and set(c) - {"sim"} <= SIM_PARTS)]
    print(f"top-level modules: {len(top_cycles)} cycle(s)")
    for comp in top_cycles:
        print(f"  {{{', '.join(comp)}}}: {_edges(top, comp)}")
    print(f"files inside edm/: {len(edm_cycles)} cycle(s) (sim.rs with its parts allowed)")
    for comp in edm_cycles:
        print(f"  {{{', '.join(comp)}}}: {_edges(edm, comp)}")
    return top_cycles, edm_cycles


def test_graph_parser_sees_known_edges():
    # A check that cannot pass vacuously: edges that exist by construction.
    graph = crate_graph()
    assert ("engine",) in graph[("packet", "run")]
    assert ("packet",) in graph[("packet", "ird")]  # `use super::*`
    assert expand_use_tree("a::{b, c::{d, e as f}, self}") == [["a", "b"], ["a", "c", "d"], ["a", "c", "e"], ["a"]]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_no_import_cycles_between_top_level_modules():
    top_cycles, _ = report()
    assert not top_cycles, "import cycles between top-level modules (see printed report)"


def test_no_import_cycles_inside_edm():
    _, edm_cycles = report()
    assert not edm_cycles, "import cycles between files inside edm/ (see printed report)"


def test_sim_parts_are_owned_state():
    # The exemption above is for owned parts only: a file that adds `impl Sim` methods
    # is a rule of the run, not a part, and must not be in a cycle with sim.rs.
    sim = _strip((SRC / "edm" / "sim.rs").read_text())
    for part in sorted(SIM_PARTS):
        text = _strip((SRC / "edm" / f"{part}.rs").read_text())
        assert not re.search(r"\bimpl\b[^{;]*\bSim\b", text), f"{part}.rs adds methods to Sim"
        structs = re.findall(r"\bstruct\s+(\w+)", text)
        held = [s for s in structs if re.search(rf"\bpub\(super\)\s+\w+\s*:\s*(?:Option<)?{s}\b", sim)]
        assert held, f"sim.rs holds no struct of {part}.rs as a field"


if __name__ == "__main__":
    report()

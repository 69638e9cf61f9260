"""Shared helpers for the RTL tests: source lists, the cocotb runner, lint."""

from __future__ import annotations

import fcntl
import shutil
import warnings
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "rtl"
TESTS = Path(__file__).resolve().parent
PACKAGE = RTL / "common" / "edm_pkg.sv"


def sources(*relative: str) -> list[Path]:
    """The package first, then the named files under rtl/."""
    return [PACKAGE] + [RTL / r for r in relative]


def simulate(toplevel: str, files: list[Path], testbench: str, parameters: dict | None = None, name: str | None = None,
             extra_env: dict | None = None, testcase: str | None = None):
    """Builds `toplevel` with Verilator and runs the cocotb module `testbench`;
    under pytest a failing cocotb test fails the calling test."""
    with warnings.catch_warnings():  # "experimental" notice of cocotb 1.9's runner
        warnings.simplefilter("ignore")
        from cocotb.runner import get_runner

    build_dir = TESTS / "sim_build" / (name or toplevel)
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    runner = get_runner("verilator")
    runner.env.update(compiler_cache())  # build() lays the process environment over these
    # Tests that share a model (same name) take turns under pytest -n: the first
    # builds it, the next reuses it (Verilator skips identical inputs), and no
    # build rewrites a model while another test is running it.
    with open(build_dir.with_name(build_dir.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        runner.build(
            verilog_sources=files,
            hdl_toplevel=toplevel,
            parameters=parameters or {},
            build_dir=build_dir,
            build_args=["-Wno-fatal", "-O2"],
        )
        runner.test(
            hdl_toplevel=toplevel,
            test_module=testbench,
            build_dir=build_dir,
            test_dir=build_dir,  # results land here; tb_* import via sys.path (conftest.py)
            extra_env=extra_env or {},
            testcase=testcase,
        )


def compiler_cache() -> dict[str, str]:
    """Make variables for ccache, when installed: every model compiles the same
    Verilator runtime (verilated*.cpp, about 13 s of g++), which ccache then
    compiles once per checkout (.build/ccache) instead of once per model."""
    if shutil.which("ccache") is None:
        return {}
    return {"OBJCACHE": "ccache", "CCACHE_DIR": str(ROOT / ".build" / "ccache")}


def lint(files: list[Path], top: str) -> str:
    """verilator --lint-only -Wall output (empty when clean)."""
    verilator = shutil.which("verilator")
    assert verilator, "verilator is not installed (make test installs it)"
    out = subprocess.run(
        [verilator, "--lint-only", "-Wall", "--top-module", top, *map(str, files)],
        capture_output=True,
        text=True,
    )
    return (out.stdout + out.stderr).strip()

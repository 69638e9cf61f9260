"""The core's Python API under wrong types and sizes (python/edm/fuzz_api.py):
an exception, never an abort or a panic. Longer runs: `python -m edm.fuzz_api
--calls 100000 --seed N` (docs/faults.md)."""

from __future__ import annotations

import json
import subprocess
import sys

from edm import fuzz_api


def test_the_core_api_never_aborts_or_panics():
    """In a subprocess: an abort would kill it (non-zero exit), a panic is counted."""
    run = subprocess.run([sys.executable, "-m", "edm.fuzz_api", "--calls", "5000", "--seed", "7"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["failures"] == 0 and result["calls"] == 5000
    # Both paths are reached: wrong calls raise, some calls are valid and return.
    assert result["raised"] > 1000 and result["returned"] > 10


def test_a_panic_counts_as_a_failure(monkeypatch):
    class Panic(BaseException):
        pass

    def panics(*_args):
        raise Panic("core panicked")

    monkeypatch.setattr(fuzz_api, "_targets", lambda: [("panics", panics)])
    monkeypatch.setattr(fuzz_api, "_instances", lambda: [])
    result = fuzz_api.fuzz(50, seed=1)
    assert result["failures"] > 0 and "panics" in result["examples"][0] and "core panicked" in result["examples"][0]

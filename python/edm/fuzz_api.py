"""Fuzz the Python API of the Rust core: wrong types and sizes must raise a clear
exception, never abort the process or panic.

    python -m edm.fuzz_api --calls 100000 --seed 1

Calls every public function of ``edm._core`` (the codec, the simulator, the
schema) and every public method of its objects (``Scheduler``, ``RxDemux``,
``Scrambler``, ``Descrambler``) with 0 to 6 arguments drawn from a pool of
wrong, extreme and borderline values (seeded). An ``Exception`` is the right
answer; a Rust panic reaching Python (``pyo3_runtime.PanicException``, a
``BaseException``) or anything else is a failure, printed with the call that
made it; an abort kills the process, so run it in a subprocess
(tests/test_bad_input.py does) and treat a non-zero exit as a failure.
Prints one JSON line of counts at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any

import numpy as np

from edm import _core

# Values no argument should make the core abort on. Small valid configs only:
# a valid default config would run a full simulation per call.
POOL: list[Any] = [
    None, True, -1, 0, 1, 2, 3, 7, 64, 255, 256, 65535, 65536, 2**31, 2**32, 2**63, 2**64, 2**70, -(2**63),
    0.0, -0.5, 1.5, 1e308, math.inf, -math.inf, math.nan, "", "x", "edm", "RREQ", "WREQ", "read", "\x00",
    "é" * 3, b"", b"\x00" * 8, b"\xff" * 7, bytes(range(66)), bytearray(9), [], [0], [1, 2, 3], [2**70],
    [None], (), (0, 0), {}, {"nodes": "x"}, {"messages": -1}, {"nodes": 10**9}, {"nodes": 2, "messages": 1},
    {"protocol": "nope"}, {"load": math.nan}, {"workload": "/nonexistent"}, np.int64(5), np.float32(0.5),
    np.zeros(3, np.uint8), np.array([2**40]), object(),
]


def _args(rng: random.Random) -> list[Any]:
    return [rng.choice(POOL) for _ in range(rng.randint(0, 6))]


def _targets() -> list[tuple[str, Any]]:
    out = []
    for name in dir(_core):
        f = getattr(_core, name)
        if not name.startswith("_") and callable(f) and not isinstance(f, type):
            out.append((name, f))
    return out


def _instances() -> list[tuple[str, Any]]:
    """Valid objects whose methods get fuzzed (made fresh, small)."""
    made = []
    for name, make in (("Scheduler", lambda: _core.Scheduler(4)), ("RxDemux", _core.RxDemux),
                       ("Scrambler", _core.Scrambler), ("Descrambler", _core.Descrambler)):
        try:
            made.append((name, make()))
        except Exception:  # noqa: BLE001 - a constructor signature changed: fuzz the others
            pass
    return made


def fuzz(calls: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    functions = _targets()
    classes = [(n, getattr(_core, n)) for n in ("Scheduler", "RxDemux", "Scrambler", "Descrambler")
               if hasattr(_core, n)]
    counts = {"calls": 0, "raised": 0, "returned": 0, "failures": 0}
    failures: list[str] = []
    instances = _instances()
    for i in range(calls):
        kind = rng.random()
        if kind < 0.6:
            name, f = rng.choice(functions)
        elif kind < 0.7:
            name, f = rng.choice(classes)
        else:
            if i % 500 == 0:
                instances = _instances()
            if not instances:
                continue
            obj_name, obj = rng.choice(instances)
            methods = [m for m in dir(obj) if not m.startswith("_") and callable(getattr(obj, m))]
            if not methods:
                continue
            m = rng.choice(methods)
            name, f = f"{obj_name}.{m}", getattr(obj, m)
        args = _args(rng)
        counts["calls"] += 1
        try:
            f(*args)
            counts["returned"] += 1
        except Exception:  # noqa: BLE001 - a clear exception is the right answer
            counts["raised"] += 1
        except BaseException as e:  # noqa: BLE001 - a panic (or worse) is a finding
            if isinstance(e, KeyboardInterrupt):
                raise
            counts["failures"] += 1
            if len(failures) < 20:
                failures.append(f"{name}{tuple(_short(a) for a in args)}: {type(e).__name__}: {str(e)[:200]}")
    return {**counts, "seed": seed, "examples": failures}


def _short(a: Any) -> str:
    text = repr(a)
    return text if len(text) <= 40 else text[:37] + "..."


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m edm.fuzz_api", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    result = fuzz(args.calls, args.seed)
    print(json.dumps(result))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""``edm sweep``: run a grid of experiment points on Dask, resumably.

A sweep file (TOML) names a runner, a base configuration and a grid::

    [sweep]
    name = "fig8a"
    runner = "edm.sim:run_point"      # module:function, takes a dict, returns a JSON-able dict
    out = "results/fig8a"            # relative to the sweep file's folder

    [base]                           # shared by every point
    nodes = 144
    messages = 20000

    [grid]                           # every combination of these lists is one point
    protocol = ["edm", "dctcp"]
    load = [0.2, 0.5, 0.8]
    seed = [1, 2, 3]

Each point's result is stored in ``OUT/points/<key>.json`` where ``key`` is a
hash of the point's *full* configuration, the runner and a fingerprint of the
code (the compiled core and the Python package), written atomically with a
checksum; changing the simulator therefore never reuses a stale result. Re-running a sweep skips every point whose file is present and
valid, so an interrupted sweep resumes without recomputing finished points; a
corrupted or mismatching file is reported and recomputed. A point whose runner
raises is written to ``OUT/failed/<key>.json`` with its traceback, reported, and
retried on the next run; the other points are unaffected.

Points run on a Dask ``LocalCluster`` by default, or on any Dask scheduler given
by ``--scheduler tcp://host:port`` (e.g. one started by dask-jobqueue on Slurm).
Results are written by this process, so only it needs the output folder. A
point whose worker is lost is run again elsewhere and stored once
(tests/test_sweep_distributed.py: a scheduler and two workers from the ``dask``
CLI, one killed mid-sweep).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import itertools
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from edm.tomlfile import read_toml

STORE_FORMAT = 1


class SweepError(ValueError):
    """A sweep file that cannot be used; the message names the file and field."""


@dataclass
class Sweep:
    name: str
    runner: str
    out: Path
    base: dict[str, Any]
    grid: dict[str, list[Any]]

    def points(self) -> list[dict[str, Any]]:
        """Every grid combination merged over the base, in a stable order."""
        keys = list(self.grid)
        combos = itertools.product(*(self.grid[k] for k in keys)) if keys else [()]
        return [{**self.base, **dict(zip(keys, values))} for values in combos]


def load_sweep(path: str | Path) -> Sweep:
    path = Path(path)
    doc = read_toml(path, SweepError, "sweep file")
    head = doc.get("sweep", {})
    unknown = set(doc) - {"sweep", "base", "grid"}
    if unknown:
        raise SweepError(f"{path}: unknown table(s) {sorted(unknown)}; expected [sweep], [base], [grid]")
    for key in ("name", "runner"):
        if not isinstance(head.get(key), str) or not head[key]:
            raise SweepError(f"{path}: [sweep] {key} must be a non-empty string")
    if ":" not in head["runner"]:
        raise SweepError(f"{path}: [sweep] runner must be 'module:function', got {head['runner']!r}")
    grid = doc.get("grid", {})
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepError(f"{path}: [grid] {key} must be a non-empty list")
    out = Path(head.get("out", f"results/{head['name']}"))
    if not out.is_absolute():
        out = path.parent / out
    return Sweep(name=head["name"], runner=head["runner"], out=out, base=doc.get("base", {}), grid=grid)


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


_FINGERPRINT: str | None = None


# What a result depends on: the compiled core, the simulator's Python side and
# its data. Report, plot and CLI code are left out, so re-rendering a report
# after changing them reuses every stored point.
_FINGERPRINTED = ("sim", "workloads", "protocol.py", "codec.py", "_core")


def code_fingerprint() -> str:
    """Hash of the simulator's code: the compiled core, edm.sim and its data."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if (
                path.suffix in (".py", ".so", ".txt")
                and "__pycache__" not in path.parts
                and rel.parts[0].startswith(_FINGERPRINTED)
            ):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
        _FINGERPRINT = h.hexdigest()[:16]
    return _FINGERPRINT


def point_key(runner: str, config: dict[str, Any]) -> str:
    """Stable key of one point: the same runner, configuration and code give the same key anywhere."""
    ident = {"runner": runner, "config": config, "code": code_fingerprint()}
    return hashlib.sha256(canonical_json(ident).encode()).hexdigest()[:20]


@dataclass
class ResultStore:
    """One JSON file per finished point, written atomically and checksummed."""

    root: Path
    corrupted: list[str] = field(default_factory=list)

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / f"{key}.json"

    def load(self, runner: str, config: dict[str, Any]) -> dict[str, Any] | None:
        """The stored result of a point, or None if absent or unusable (then noted in ``corrupted``)."""
        key = point_key(runner, config)
        path = self._path("points", key)
        if not path.exists():
            return None
        try:
            doc = json.loads(path.read_text())
            ok = (
                doc.get("format") == STORE_FORMAT
                and doc.get("runner") == runner
                and doc.get("config") == config
                and doc.get("checksum") == _checksum(doc.get("result"))
            )
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            ok = False
        if not ok:
            self.corrupted.append(str(path))
            return None
        return doc

    def save(self, runner: str, config: dict[str, Any], result: dict[str, Any], wall_seconds: float) -> Path:
        key = point_key(runner, config)
        doc = {
            "format": STORE_FORMAT,
            "key": key,
            "runner": runner,
            "code": code_fingerprint(),
            "config": config,
            "result": result,
            "checksum": _checksum(result),
            "wall_seconds": wall_seconds,
        }
        path = self._path("points", key)
        _write_atomically(path, json.dumps(doc, indent=1, sort_keys=True))
        self._path("failed", key).unlink(missing_ok=True)
        return path

    def save_failure(self, runner: str, config: dict[str, Any], error: str) -> Path:
        key = point_key(runner, config)
        path = self._path("failed", key)
        _write_atomically(path, json.dumps({"key": key, "runner": runner, "config": config, "error": error}, indent=1))
        return path

    def all_results(self) -> list[dict[str, Any]]:
        """Every valid stored point (for plots and reports)."""
        out = []
        for path in sorted((self.root / "points").glob("*.json")):
            try:
                doc = json.loads(path.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if doc.get("checksum") == _checksum(doc.get("result")):
                out.append(doc)
        return out


def _checksum(result: Any) -> str:
    return hashlib.sha256(canonical_json(result).encode()).hexdigest()


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def resolve_runner(spec: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def run_one(runner: str, config: dict[str, Any]) -> tuple[str, Any, float]:
    """Runs on a Dask worker: ("ok", result, seconds) or ("error", traceback, seconds)."""
    start = time.perf_counter()
    try:
        result = resolve_runner(runner)(dict(config))
        canonical_json(result)  # must be storable
        return "ok", result, time.perf_counter() - start
    except Exception:  # noqa: BLE001 - any runner failure is reported, never fatal to the sweep
        return "error", traceback.format_exc(), time.perf_counter() - start


@dataclass
class SweepReport:
    total: int
    reused: int
    computed: int
    failed: list[tuple[dict[str, Any], str]]
    corrupted: list[str]
    wall_seconds: float


def run_sweep(
    sweep: Sweep,
    scheduler: str | None = None,
    workers: int | None = None,
    processes: bool = True,
    progress: bool = True,
) -> SweepReport:
    """Runs every point not already stored; returns what happened."""
    start = time.perf_counter()
    store = ResultStore(sweep.out)
    points = sweep.points()
    pending = [p for p in points if store.load(sweep.runner, p) is None]
    failed: list[tuple[dict[str, Any], str]] = []
    computed = 0
    if pending:
        for config, (status, value, seconds) in _execute(sweep.runner, pending, scheduler, workers, processes, progress):
            if status == "ok":
                store.save(sweep.runner, config, value, seconds)
                computed += 1
            else:
                store.save_failure(sweep.runner, config, value)
                failed.append((config, value))
    return SweepReport(
        total=len(points),
        reused=len(points) - len(pending),
        computed=computed,
        failed=failed,
        corrupted=store.corrupted,
        wall_seconds=time.perf_counter() - start,
    )


def _execute(
    runner: str,
    configs: list[dict[str, Any]],
    scheduler: str | None,
    workers: int | None,
    processes: bool,
    progress: bool,
) -> Iterable[tuple[dict[str, Any], tuple[str, Any, float]]]:
    """Yields (config, outcome) as points finish, in completion order."""
    from dask.distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm

    if scheduler:
        cluster = None
        client = Client(scheduler)
    else:
        n = workers or os.cpu_count() or 1
        cluster = LocalCluster(
            n_workers=n if processes else 1,
            threads_per_worker=1 if processes else n,
            processes=processes,
            dashboard_address=":0",  # a free port: never clashes with another cluster
        )
        client = Client(cluster)
    try:
        futures = {client.submit(run_one, runner, c, pure=False): c for c in configs}
        bar = tqdm(total=len(futures), desc="sweep", unit="point", disable=not progress, file=sys.stderr)
        for fut in as_completed(futures):
            outcome = fut.result()
            bar.update(1)
            yield futures[fut], outcome
        bar.close()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _cmd_sweep(args: argparse.Namespace) -> int:
    try:
        sweep = load_sweep(args.file)
    except SweepError as e:
        print(f"edm sweep: {e}", file=sys.stderr)
        return 2
    if args.out:
        sweep.out = Path(args.out)
    report = run_sweep(
        sweep, scheduler=args.scheduler, workers=args.workers, processes=not args.threads, progress=not args.quiet
    )
    for path in report.corrupted:
        print(f"edm sweep: {path}: stored result was corrupted or stale; recomputed", file=sys.stderr)
    for config, error in report.failed:
        last = error.strip().splitlines()[-1] if error.strip() else "error"
        print(f"edm sweep: point {point_key(sweep.runner, config)} failed: {last}", file=sys.stderr)
    print(
        f"{sweep.name}: {report.total} points, {report.reused} reused, {report.computed} computed, "
        f"{len(report.failed)} failed, in {report.wall_seconds:.1f} s -> {sweep.out}"
    )
    return 1 if report.failed else 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="run a parameter grid on Dask, resuming where it stopped")
    p.add_argument("file", help="sweep file (TOML with [sweep], [base], [grid])")
    p.add_argument("--scheduler", help="address of an existing Dask scheduler (default: a local cluster)")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.add_argument("--threads", action="store_true", help="run local workers as threads in this process")
    p.add_argument("--out", help="result folder (default: the sweep file's [sweep] out)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)

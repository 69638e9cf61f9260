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
hash of everything that determines it: the point's *full* configuration, the
runner, a fingerprint of the code (the compiled core and the simulator's Python
side, and the runner's own module when it lies outside them) and the contents (SHA-256) of every file the point reads, as its runner
names them (``input_files``: a trace or CDF workload file). It is written
atomically with a checksum; changing the simulator or an input file's bytes
therefore never reuses a stale result. Input files named by a relative path are
found relative to the sweep file's folder, like ``out``. Re-running a sweep skips every point whose file is present and
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
import functools
import hashlib
import importlib
import itertools
import json
import logging
import os
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from edm.args import address, in_file, integer, out_dir
from edm.tomlfile import read_toml

STORE_FORMAT = 1
# How long to wait for a --scheduler to answer.
SCHEDULER_TIMEOUT_S = 10


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
    extra = set(head) - {"name", "runner", "out"}
    if extra:
        raise SweepError(f"{path}: [sweep] unknown key(s) {sorted(extra)}; expected name, runner, out")
    if not isinstance(head.get("out", ""), str):
        raise SweepError(f"{path}: [sweep] out must be a string (a folder)")
    grid = doc.get("grid", {})
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepError(f"{path}: [grid] {key} must be a non-empty list")
    both = set(grid) & set(doc.get("base", {}))
    if both:
        raise SweepError(f"{path}: key(s) {sorted(both)} in both [base] and [grid]; give each in one")
    out = Path(head.get("out", f"results/{head['name']}"))
    if not out.is_absolute():
        out = path.parent / out
    base = doc.get("base", {})
    try:
        runner = resolve_runner(head["runner"])
    except Exception as e:  # noqa: BLE001 - any import failure is the sweep file's runner
        raise SweepError(f"{path}: [sweep] runner {head['runner']!r} cannot be loaded: "
                         f"{type(e).__name__}: {e}") from None
    # Input files named relative to the sweep file, as `out` is.
    base = {k: _beside(path.parent, runner, k, v) for k, v in base.items()}
    grid = {k: [_beside(path.parent, runner, k, v) for v in values] for k, values in grid.items()}
    return Sweep(name=head["name"], runner=head["runner"], out=out, base=base, grid=grid)


def _beside(folder: Path, runner: Callable[..., Any], key: str, value: Any) -> Any:
    """`value` of field `key` as an absolute path under `folder` when the runner
    reads it as a relative input file's path; else unchanged."""
    named = getattr(runner, "input_files", lambda _config: {})({key: value})
    if key in named and not Path(named[key]).is_absolute():
        return str((folder / named[key]).resolve())
    return value


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


_FINGERPRINT: str | None = None


# What a result depends on: the compiled core, the simulator's Python side and
# its data. Report, plot and CLI code are left out, so re-rendering a report
# after changing them reuses every stored point.
_FINGERPRINTED = ("sim", "workloads", "protocol", "_core")


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


@functools.lru_cache(maxsize=4096)
def _file_hash(path: str, mtime_ns: int, size: int, inode: int) -> str:
    """SHA-256 of a file's bytes (cached while its modification time, size and inode stay)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def input_hashes(runner: str, config: dict[str, Any]) -> dict[str, str]:
    """{field: SHA-256 of the file it names} for every file the point reads, as
    the runner's ``input_files(config) -> {field: path}`` names them ("missing"
    for a file that is not there: the runner then reports it)."""
    named = getattr(resolve_runner(runner), "input_files", None)
    out = {}
    for key, name in (named(config) if named else {}).items():
        try:
            st = os.stat(name)
            out[key] = _file_hash(os.path.abspath(name), st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            out[key] = "missing"
    return out


def point_key(runner: str, config: dict[str, Any]) -> str:
    """Stable key of one point: the same runner, configuration, code and input
    file contents give the same key anywhere. (The resolved configuration is a
    function of the configuration and the code, both in the key.)"""
    return _key(runner, config, input_hashes(runner, config))


@functools.lru_cache(maxsize=64)
def _runner_file(runner: str) -> Path | None:
    """The runner's module file when the code fingerprint does not cover it
    (a runner outside edm.sim, e.g. an experiment's own); else None."""
    path = getattr(importlib.import_module(runner.partition(":")[0]), "__file__", None)
    if path is None:
        return None
    path = Path(path).resolve()
    root = Path(__file__).resolve().parent
    if path.is_relative_to(root) and path.relative_to(root).parts[0].startswith(_FINGERPRINTED):
        return None
    return path


def runner_code(runner: str) -> str | None:
    """SHA-256 of the runner's own module file, when the code fingerprint does
    not cover it (what that module imports is not followed)."""
    path = _runner_file(runner)
    if path is None:
        return None
    st = path.stat()
    return _file_hash(str(path), st.st_mtime_ns, st.st_size, st.st_ino)


def _key(runner: str, config: dict[str, Any], inputs: dict[str, str]) -> str:
    ident: dict[str, Any] = {"runner": runner, "config": config, "code": code_fingerprint()}
    own = runner_code(runner)
    if own is not None:  # edm.sim's runner is in the fingerprint: its points keep their keys
        ident["runner_code"] = own
    if inputs:  # points that read no file keep their keys
        ident["inputs"] = inputs
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

    def save(self, runner: str, config: dict[str, Any], result: dict[str, Any], wall_seconds: float,
             inputs: dict[str, str] | None = None) -> Path:
        """Stores a result; `inputs`: the input hashes taken before the run (default: now)."""
        inputs = input_hashes(runner, config) if inputs is None else inputs
        key = _key(runner, config, inputs)
        doc = {
            "format": STORE_FORMAT,
            "key": key,
            "runner": runner,
            "code": code_fingerprint(),
            "config": config,
            "inputs": inputs,
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


def check_points(name: str, runner: str, points: list[dict[str, Any]]) -> None:
    """Every point checked before any runs, by the runner's ``check(config)``
    when it has one; raises SweepError naming the first bad point."""
    check = getattr(resolve_runner(runner), "check", None)
    if check is None:
        return
    for i, config in enumerate(points):
        try:
            check(config)
        except ValueError as e:
            raise SweepError(f"{name}: point {i + 1} of {len(points)}: {e}") from None


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
    check_points(sweep.name, sweep.runner, points)
    pending = [p for p in points if store.load(sweep.runner, p) is None]
    # The inputs as they were when their points started (a file edited
    # mid-run then makes its point stale, never the reverse).
    inputs = [input_hashes(sweep.runner, p) for p in pending]
    failed: list[tuple[dict[str, Any], str]] = []
    computed = 0
    if pending:
        for i, (status, value, seconds) in _execute(sweep.runner, pending, scheduler, workers, processes, progress):
            config = pending[i]
            if status == "ok":
                store.save(sweep.runner, config, value, seconds, inputs[i])
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
) -> Iterable[tuple[int, tuple[str, Any, float]]]:
    """Yields (index in configs, outcome) as points finish, in completion order."""
    from dask.distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm

    if scheduler:
        cluster = None
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
        except (OSError, TimeoutError) as e:
            raise SweepError(f"--scheduler {scheduler}: no Dask scheduler answered within "
                             f"{SCHEDULER_TIMEOUT_S} s ({type(e).__name__})") from None
    else:
        n = workers or os.cpu_count() or 1
        # Workers ignore Ctrl-C (they inherit it at start): this process
        # alone stops, closing the cluster (see _cmd_sweep).
        main = threading.current_thread() is threading.main_thread()
        sigint = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            cluster = LocalCluster(
                n_workers=n if processes else 1,
                threads_per_worker=1 if processes else n,
                processes=processes,
                dashboard_address=":0",  # a free port: never clashes with another cluster
                # Dask's warnings (a task cancelled when Ctrl-C stops the
                # cluster, a slow event loop) are not the sweep's news.
                silence_logs=logging.ERROR,
            )
        finally:
            if main:
                signal.signal(signal.SIGINT, sigint)
        client = Client(cluster)
    try:
        futures = {client.submit(run_one, runner, c, pure=False): i for i, c in enumerate(configs)}
        bar = tqdm(total=len(futures), desc="sweep", unit="point", disable=not progress, file=sys.stderr)
        for fut in as_completed(futures):
            outcome = fut.result()
            bar.update(1)
            yield futures[fut], outcome
        bar.close()
    except KeyboardInterrupt:
        # Closing a cluster mid-task makes Dask log every lost task: not news.
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _cmd_sweep(args: argparse.Namespace) -> int:
    sweep = load_sweep(args.file)  # a SweepError: one line, exit 2 (edm.cli)
    if args.out:
        sweep.out = Path(args.out)
    else:
        try:
            out_dir(str(sweep.out))
        except argparse.ArgumentTypeError as e:
            raise SweepError(f"{args.file}: [sweep] out: {e}") from None
    try:
        report = run_sweep(sweep, scheduler=args.scheduler, workers=args.workers, processes=not args.threads,
                           progress=not args.quiet)
    except KeyboardInterrupt:
        stored = len(list((sweep.out / "points").glob("*.json")))
        print(f"edm sweep: interrupted; cluster stopped, {stored} points stored in {sweep.out} "
              f"(the same command resumes)", file=sys.stderr)
        return 130
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
    p.add_argument("file", type=in_file, help="sweep file (TOML with [sweep], [base], [grid])")
    p.add_argument("--scheduler", type=address,
                   help="address of an existing Dask scheduler, tcp://host:port (default: a local cluster)")
    p.add_argument("--workers", type=integer(1), help="local worker processes, at least 1 (default: one per core)")
    p.add_argument("--threads", action="store_true", help="run local workers as threads in this process")
    p.add_argument("--out", type=out_dir, help="result folder (default: the sweep file's [sweep] out)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)

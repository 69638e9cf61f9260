"""Long runs in bounded memory: records streamed to Parquet, the summary
computed from the file.

:func:`run_to_parquet` runs a generated open-loop workload with the core
handing its records over in batches as they become final (EDM's rules
during a fault-free run, in the order messages finish, so a message that
waits long holds back no other's record; other protocols and faulty runs at
the end; docs/simulator.md "Outputs"). Each batch becomes rows of the table
:func:`edm.sim.run` returns, with each message's ``id``, appended to a
Parquet file, and is dropped.

The summary is then read back from the file in two passes of at most
``batch_rows`` rows, and equals :func:`edm.sim.summarise` on the whole table
(``tests/test_sim_stream.py``):

* counts and byte sums exactly; means as numpy's sum of each batch, the
  batches' sums added exactly (``math.fsum``): the whole column's pairwise
  sum differs from that in its last bits at most;
* quantiles (median, p99, p99.9) are exact, computed as ``numpy.quantile``
  and ``numpy.median`` do: the first pass counts the values per bucket (a
  float64's top 28 bits, 2^-16 of relative width), which gives the bucket of
  each order statistic a quantile needs; the second pass keeps only the
  values in those buckets and picks the order statistics from them. Memory is
  the buckets' counts plus the values of a few buckets.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from edm import _core
from edm.sim.config import ConfigError, resolve
from edm.sim.workloads import is_trace

# Rows per batch the core hands over and the summary reads back.
BATCH_ROWS = 1 << 16
# A float64's bits above this are its bucket (sign, exponent, 8 mantissa bits).
_BUCKET_SHIFT = np.uint64(44)
_OPS = ("read", "write", "rmw")
_QUANTILES = (("p99", 0.99), ("p999", 0.999))


class RecordFile:
    """Batches of message rows appended to one Parquet file; counts the
    most rows it was handed at once (what the streamed path holds)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: pq.ParquetWriter | None = None
        self.rows = 0
        self.max_batch_rows = 0

    def append(self, table: Any) -> None:
        batch = pa.Table.from_pandas(table, preserve_index=False)
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, batch.schema)
        self.writer.write_table(batch)
        self.rows += len(table)
        self.max_batch_rows = max(self.max_batch_rows, len(table))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def run_to_parquet(config: dict[str, Any], path: str | Path, progress: bool = False, source: str = "config",
                   batch_rows: int = BATCH_ROWS) -> dict[str, Any]:
    """Runs `config` (a generated open-loop workload) with its records
    streamed to the Parquet file `path` (one row per message: its ``id``,
    then the columns of :func:`edm.sim.run`'s table; rows in the order the
    records became final, the unfinished last); returns the summary,
    computed from the file.
    The summary's ``max_records_held`` is the most records the core held at
    once, ``max_rows_held`` the most rows Python held (≤ `batch_rows`)."""
    from edm import sim

    cfg = resolve({} if config is None else config, source)
    if is_trace(cfg["workload"]) or cfg["closed_loop_threads"]:
        raise ConfigError(f"{source}: records are streamed for a generated open-loop workload only "
                          f"(workload {cfg['workload']}, closed_loop_threads {cfg['closed_loop_threads']})")
    path = Path(path)
    out = RecordFile(path)

    def sink(ids: bytes, cols: tuple, complete: bytes, alone: bytes, acked: bytes) -> None:
        table = sim.message_table(cfg, sim._columns(cols), complete, alone, acked, np.frombuffer(ids, np.uint32))
        out.append(table.reset_index())

    started = time.perf_counter()
    bar = sim._progress_bar(cfg["messages"]) if progress else None
    try:
        _, _, _, totals = _core.run(cfg, sim._cdf(cfg), None, bar.update_to if bar else None, sink, batch_rows)
    finally:
        out.close()
        if bar:
            bar.close()
    wall = time.perf_counter() - started
    interrupted = bool(totals.pop("interrupted", False))
    totals.pop("acked_ps", None)
    summary = summarise_file(cfg, path, totals, wall, batch_rows)
    summary["max_rows_held"] = out.max_batch_rows
    summary["interrupted"] = interrupted
    return summary


class _Figures:
    """One column's figures over the rows fed to it: count, mean, and
    per bucket the count (first pass); then the values of the buckets that
    hold the order statistics its quantiles need (second pass)."""

    def __init__(self) -> None:
        self.n = 0
        self.sums: list[float] = []
        self.buckets: Counter[int] = Counter()
        self.wanted: dict[int, list[np.ndarray]] = {}

    def count(self, values: np.ndarray) -> None:
        v = values[~np.isnan(values)]
        self.n += len(v)
        self.sums.append(float(v.sum()))
        keys, counts = np.unique(v.view(np.uint64) >> _BUCKET_SHIFT, return_counts=True)
        self.buckets.update(dict(zip(keys.tolist(), counts.tolist())))

    def ranks(self) -> list[int]:
        """The order statistics (0-based) the median and the quantiles need."""
        n = self.n
        if n == 0:
            return []
        need = {(n - 1) // 2, n // 2}
        for _, q in _QUANTILES:
            h = (n - 1) * np.float64(q)
            lo = int(np.floor(h))
            need.update((lo, lo + 1) if h < n - 1 else (n - 1,))
        return sorted(need)

    def plan(self) -> None:
        """Which buckets to keep values of in the second pass."""
        self.starts: dict[int, int] = {}
        below = 0
        keys = sorted(self.buckets)
        ranks = self.ranks()
        k = 0
        for key in keys:
            count = self.buckets[key]
            if k < len(ranks) and ranks[k] < below + count:
                self.starts[key] = below
                self.wanted[key] = []
                while k < len(ranks) and ranks[k] < below + count:
                    k += 1
            below += count
        self.buckets.clear()

    def keep(self, values: np.ndarray) -> None:
        v = values[~np.isnan(values)]
        keys = v.view(np.uint64) >> _BUCKET_SHIFT
        for key, kept in self.wanted.items():
            part = v[keys == key]
            if len(part):
                kept.append(part)

    def order_statistic(self, rank: int) -> float:
        for key, start in self.starts.items():
            kept = self.wanted[key]
            values = np.sort(np.concatenate(kept)) if kept else np.empty(0)
            if start <= rank < start + len(values):
                return float(values[rank - start])
        raise AssertionError(f"rank {rank} not kept")

    def mean(self) -> float:
        return math.fsum(self.sums) / self.n if self.n else float("nan")

    def stats(self, prefix: str) -> dict[str, float]:
        """As `edm.sim._stats`: mean, median (numpy.median), p99 and p99.9
        (numpy.quantile, linear interpolation)."""
        n = self.n
        if n == 0:
            return {f"{k}_{prefix}": float("nan") for k in ("mean", "median", "p99", "p999")}
        if n % 2:
            median = self.order_statistic(n // 2)
        else:
            median = float(np.mean([self.order_statistic(n // 2 - 1), self.order_statistic(n // 2)]))
        out = {f"mean_{prefix}": self.mean(), f"median_{prefix}": median}
        for name, q in _QUANTILES:
            out[f"{name}_{prefix}"] = self.quantile(q)
        return out

    def quantile(self, q: float) -> float:
        """numpy.quantile's linear interpolation between the two order
        statistics around (n - 1) q (its `_lerp`, step for step)."""
        n = self.n
        h = (n - 1) * np.float64(q)
        if h >= n - 1:
            return self.order_statistic(n - 1)
        lo = int(np.floor(h))
        a, b = np.float64(self.order_statistic(lo)), np.float64(self.order_statistic(lo + 1))
        t = h - np.float64(lo)
        diff = b - a
        return float(b - diff * (1 - t) if t >= 0.5 else a + diff * t)


class _Exact:
    """A sum of batches: numpy's (pairwise) sum of each, the batches' sums
    added exactly (`math.fsum`)."""

    def __init__(self) -> None:
        self.parts: list[float] = []

    def add(self, values: np.ndarray) -> None:
        self.parts.append(float(values.sum()))

    def total(self) -> float:
        return math.fsum(self.parts)


def summarise_file(cfg: dict[str, Any], path: Path, totals: dict[str, Any], wall: float,
                   batch_rows: int = BATCH_ROWS) -> dict[str, Any]:
    """`edm.sim.summarise` of the table in Parquet file `path`, read in two
    passes of at most `batch_rows` rows."""
    from edm import sim

    n = pq.ParquetFile(path).metadata.num_rows if path.exists() else 0
    if n == 0:
        raise ConfigError(f"{path}: no records were written")
    start = int(n * cfg["warmup_fraction"])
    paper = sim.paper_rules(cfg) if cfg["protocol"] in sim.EDM_PROTOCOLS and cfg["zero_queue"] else None
    known: dict[int, float] = {}
    figures = {("latency_ns", None): _Figures(), ("slowdown", None): _Figures()}
    for op in _OPS:
        figures[("latency_ns", op)], figures[("slowdown", op)] = _Figures(), _Figures()
    figures[("acked_latency_ns", "write")] = _Figures()
    if paper is not None:
        figures[("slowdown_paper_alone", None)] = _Figures()
    op_rows = Counter()
    op_unloaded = {op: _Exact() for op in _OPS}
    unloaded = _Exact()
    completed, deadlocked, deadlocked_ids = 0, 0, []
    outcomes: Counter[str] = Counter()
    per_node_bytes = np.zeros(cfg["nodes"], np.float64)
    per_node_rows = np.zeros(cfg["nodes"], np.int64)
    issues: dict[int, int] = {}

    def batches(columns: list[str]):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=columns):
            df = batch.to_pandas().set_index("id")
            yield df, df[df.index >= start]

    def each_figure(df, measured, feed):
        feed(("latency_ns", None), measured["latency_ns"].to_numpy())
        feed(("slowdown", None), measured["slowdown"].to_numpy())
        codes = measured["op"].cat.codes.to_numpy()
        for code, op in enumerate(_OPS):
            rows = codes == code
            feed(("latency_ns", op), measured["latency_ns"].to_numpy()[rows])
            feed(("slowdown", op), measured["slowdown"].to_numpy()[rows])
            if op == "write":
                feed(("acked_latency_ns", "write"), measured["acked_latency_ns"].to_numpy()[rows])
        if paper is not None:
            feed(("slowdown_paper_alone", None),
                 sim.paper_slowdowns(paper, codes, measured["size"].to_numpy(),
                                     measured["latency_ns"].to_numpy(), known))

    columns = ["id", "op", "memory", "size", "issue_ps", "complete_ps", "alone_ps", "outcome", "latency_ns", "slowdown",
               "acked_latency_ns"]
    for df, measured in batches(columns):
        complete = df["complete_ps"].to_numpy(np.int64)
        completed += int((complete >= 0).sum())
        lost = df.index[complete == -1]
        deadlocked += len(lost)
        deadlocked_ids = sorted(deadlocked_ids + lost.tolist())[:20]
        outcomes.update(df["outcome"].value_counts().to_dict())
        issue = df["issue_ps"].to_numpy(np.int64)
        ids = df.index.to_numpy()
        for at in (0, n // 2, n - 1):
            (k,) = np.nonzero(ids == at)
            if len(k):
                issues[at] = int(issue[k[0]])
        memory = df["memory"].to_numpy(np.int64)
        per_node_bytes += np.bincount(memory, df["size"].to_numpy(np.float64), cfg["nodes"])
        per_node_rows += np.bincount(memory, minlength=cfg["nodes"])
        alone = measured["alone_ps"].to_numpy(np.float64)
        unloaded.add(alone)
        codes = measured["op"].cat.codes.to_numpy()
        for code, op in enumerate(_OPS):
            rows = codes == code
            op_rows[op] += int(rows.sum())
            op_unloaded[op].add(alone[rows])
        each_figure(df, measured, lambda key, v: figures[key].count(v))
    for f in figures.values():
        f.plan()
    # Second pass: the bytes issued and delivered within the second half of
    # the issue period (its ends known now), and the quantiles' values.
    t0, t1 = issues[n // 2], issues[n - 1]
    issued, delivered, by_last_issue, issued_all = _Exact(), _Exact(), _Exact(), _Exact()
    for df, measured in batches(columns):
        size = df["size"].to_numpy(np.float64)
        issue = df["issue_ps"].to_numpy(np.int64)
        complete = df["complete_ps"].to_numpy(np.int64)
        issued.add(size[(issue >= t0) & (issue <= t1)])
        delivered.add(size[(complete >= t0) & (complete <= t1)])
        by_last_issue.add(size[(complete >= 0) & (complete <= t1)])
        issued_all.add(size)
        each_figure(df, measured, lambda key, v: figures[key].keep(v))
    summary: dict[str, Any] = {
        "protocol": cfg["protocol"],
        "config": cfg,
        "messages": n,
        "completed": completed,
        "deadlocked": deadlocked,
        "deadlocked_ids": deadlocked_ids,
        "warmup_excluded": start,
        **figures[("latency_ns", None)].stats("latency_ns"),
        **figures[("slowdown", None)].stats("slowdown"),
        "mean_unloaded_ns": unloaded.total() / (n - start) / 1e3 if n > start else float("nan"),
    }
    by_op = {}
    for op in _OPS:
        if op_rows[op]:
            by_op[op] = {
                "messages": op_rows[op],
                "mean_unloaded_ns": op_unloaded[op].total() / op_rows[op] / 1e3,
                **figures[("latency_ns", op)].stats("latency_ns"),
                **figures[("slowdown", op)].stats("slowdown"),
            }
            if op == "write" and figures[("acked_latency_ns", "write")].n:
                by_op[op].update(figures[("acked_latency_ns", "write")].stats("acked_latency_ns"))
    summary["by_op"] = by_op
    summary["outcomes"] = {k: int(outcomes.get(k, 0)) for k in ("applied", "failed", "lost", "unresolved")}
    ratio = delivered.total() / issued.total() if issued.total() > 0 and t1 > t0 else float("nan")
    summary["delivery_ratio"] = float(ratio)
    summary["delivered_by_last_issue"] = by_last_issue.total() / issued_all.total()
    summary["stable"] = bool(ratio >= sim.STABLE_DELIVERY) if np.isfinite(ratio) else None
    if cfg["placement"] != "uniform":
        present = per_node_rows > 0
        summary["memory_bytes_imbalance"] = float(per_node_bytes[present].max() / per_node_bytes[present].mean())
    if paper is not None:
        f = figures[("slowdown_paper_alone", None)]
        summary["mean_slowdown_paper_alone"] = f.mean()
        summary["p99_slowdown_paper_alone"] = f.quantile(0.99) if f.n else float("nan")
    return sim.render_totals(cfg, summary, totals, wall, issues[0], None)

"""The EDM fabric simulator from Python.

>>> from edm import sim
>>> result = sim.run({"nodes": 16, "load": 0.5, "messages": 10_000})
>>> result.summary["mean_slowdown"]          # doctest: +SKIP
>>> result.messages.head()                   # one row per message (pandas)

:func:`run` resolves the configuration (:mod:`edm.sim.config`), builds the
workload, runs the Rust engine (``crates/edm-sim``) and summarises. Every
configuration field: docs/config.md; the model: docs/simulator.md.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from edm import _core
from edm.sim.config import EDM_PROTOCOLS, PAPER_RULES, WORKLOADS, ConfigError, resolve
from edm.sim.workloads import Messages, cdf_text, is_trace, measured_load, read_trace



class Scheduler:
    """The stand-alone switch scheduler (the core's ``Scheduler``; its
    arguments there): ``Scheduler(ports, policy="srpt", chunk_bytes=256, ...)``.
    Bad arguments raise ConfigError naming the argument."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        try:
            return _core.Scheduler(*args, **kwargs)
        except (TypeError, ValueError, OverflowError) as e:  # OverflowError: a negative count
            if isinstance(e, OverflowError):
                given = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
                raise ConfigError(f"Scheduler({given}): a count or size is negative or too large") from None
            raise ConfigError(f"Scheduler: {e}") from None

__all__ = ["ConfigError", "Interrupted", "Result", "Scheduler", "alone_ps", "build_workload", "input_files", "run", "run_point"]

# Bytes completed / bytes issued over the second half of a run's issue period
# below which the run is reported as past saturation (`stable` = False).
STABLE_DELIVERY = 0.9
# Fraction of all bytes issued delivered by the last issue below which a run
# is reported as too short against its largest messages (its means then
# depend on its length).
SHORT_RUN_DELIVERY = 0.95
# The core's run totals that the summary renders itself (in ns, or only with
# their feature on); it copies every other total as the core reports it.
_RENDERED_TOTALS = frozenset((
    "end_ps", "max_switch_data_wait_ps", "max_grant_wait_ps", "max_request_wait_ps",
    "background_frames", "frame_delay_mean_ps", "frame_delay_p99_ps", "memory_frame_waits",
    "memory_frame_wait_total_ps", "memory_frame_wait_max_ps",
    "dram_lines", "dram_wait_mean_ps", "dram_wait_p99_ps", "dram_wait_max_ps", "dram_imbalance",
    "dram_late_responses", "protection_checks", "denied_reads", "denied_writes", "served_outside", "denied_inside",
))


@dataclass
class Result:
    summary: dict[str, Any]
    messages: pd.DataFrame


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (a pending signal) before its end. ``result``
    holds what finished: messages not finished have no latency, and the
    summary says ``"interrupted": true``. Never a finished sweep point."""

    def __init__(self, result: Result) -> None:
        super().__init__("interrupted")
        self.result = result


def _columns(cols: tuple[bytearray, ...]) -> Messages:
    """Workload columns from the core (bytearrays in native byte order: writable arrays, no copy)."""
    op, requester, memory, size, issue = cols
    return Messages(
        op=np.frombuffer(op, np.uint8),
        requester=np.frombuffer(requester, np.uint16),
        memory=np.frombuffer(memory, np.uint16),
        size=np.frombuffer(size, np.uint32),
        issue_ps=np.frombuffer(issue, np.uint64),
    )


def _trace(cfg: dict[str, Any]) -> Messages:
    """The messages of a configuration whose workload is a trace file."""
    wl = cfg["workload"]
    msgs = read_trace(wl)
    if int(msgs.requester.max()) >= cfg["nodes"] or int(msgs.memory.max()) >= cfg["nodes"]:
        raise ConfigError(f"{wl}: trace uses node {max(msgs.requester.max(), msgs.memory.max())}, "
                          f"but nodes = {cfg['nodes']}")
    return msgs


def build_workload(cfg: dict[str, Any]) -> Messages:
    """The messages a resolved configuration issues (:func:`run` makes a
    generated workload inside the core instead; this is for looking at one)."""
    if is_trace(cfg["workload"]):
        return _trace(cfg)
    return _columns(_core.generate(cfg, _cdf(cfg)))


def _cdf(cfg: dict[str, Any]) -> str | None:
    """The size CDF text of a generated workload (None for micro), checked:
    a size-CDF file's error names the file."""
    try:
        text = cdf_text(cfg["workload"])
        if text is not None:
            _core.size_cdf_points(text)
        return text
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{cfg['workload']}: not a usable size-CDF file: {e}") from None


def _column(values: np.ndarray, dtype: type) -> bytes:
    """A message column as the engine takes it: raw bytes, native byte order."""
    return np.ascontiguousarray(values, dtype).tobytes()


def run(config: dict[str, Any] | None = None, progress: bool = False, source: str = "config",
        messages: Messages | None = None) -> Result:
    """Simulates one configuration to completion; ``messages`` replaces the
    configured workload (e.g. a YCSB message stream, edm.ycsb.rack). A
    generated workload is made and run inside the core; it crosses to Python
    once, for the results table."""
    cfg = resolve({} if config is None else config, source)
    if messages is None and is_trace(cfg["workload"]):
        messages = _trace(cfg)
    given = None if messages is None else (
        _column(messages.op, np.uint8),
        _column(messages.requester, np.uint16),
        _column(messages.memory, np.uint16),
        _column(messages.size, np.uint32),
        _column(messages.issue_ps, np.uint64),
        None if messages.addr is None else _column(messages.addr, np.uint64),
        None if messages.fence is None else _column(messages.fence, np.uint8),
    )
    started = time.perf_counter()
    bar = _progress_bar(len(messages) if messages is not None else cfg["messages"]) if progress else None
    generated, complete, alone, totals = _core.run(cfg, _cdf(cfg) if messages is None else None, given,
                                                   bar.update_to if bar else None)
    interrupted = bool(totals.pop("interrupted", False))
    acked = totals.pop("acked_ps", None)
    wall = time.perf_counter() - started
    if bar:
        bar.close()
    msgs = messages if generated is None else _columns(generated)
    df = message_table(cfg, msgs, complete, alone, acked)
    # The table holds its own copy: the core's buffers go (peak memory).
    del generated, complete, alone, acked, msgs, given
    summary = summarise(cfg, df, totals, wall)
    if cfg["protocol"] in EDM_PROTOCOLS and cfg["zero_queue"]:
        summary.update(_against_paper_alone(cfg, df))
    summary["interrupted"] = interrupted
    if interrupted:
        raise Interrupted(Result(summary=summary, messages=df))
    return Result(summary=summary, messages=df)


def message_table(cfg: dict[str, Any], msgs: Messages, complete: bytes, alone: bytes, acked: bytes | None,
                  ids: np.ndarray | None = None) -> pd.DataFrame:
    """One row per message (indexed by id: 0, 1, ... unless `ids` given): the
    workload's columns, the core's records (bytes in native order) and what
    follows from them."""
    df = pd.DataFrame(
        {
            "op": pd.Categorical.from_codes(msgs.op.astype(np.int8), ["read", "write", "rmw"]),
            "requester": msgs.requester,
            "memory": msgs.memory,
            "size": msgs.size,
            "issue_ps": msgs.issue_ps,
            "complete_ps": np.frombuffer(complete, np.int64),
            "alone_ps": np.frombuffer(alone, np.uint64),
        },
        index=None if ids is None else pd.Index(ids, name="id"),
    )
    _outcomes(df, acked, cfg["protocol"] in EDM_PROTOCOLS)
    done = df["complete_ps"] >= 0
    df["latency_ns"] = np.where(done, (df["complete_ps"] - df["issue_ps"].astype(np.int64)) / 1e3, np.nan)
    df["slowdown"] = df["latency_ns"] / (df["alone_ps"] / 1e3)
    return df


def paper_rules(cfg: dict[str, Any]) -> dict[str, Any]:
    """The configuration whose alone latency `*_slowdown_paper_alone` divides by."""
    # Faults change no latency alone, and the paper's per-pair order refuses them.
    return {**cfg, "protocol": "edm", **PAPER_RULES, "ber": 0.0, "failures": "", "dual_switch": 0}


def paper_slowdowns(paper: dict[str, Any], codes: np.ndarray, sizes: np.ndarray, latency: np.ndarray,
                    known: dict[int, float]) -> np.ndarray:
    """Each latency over its message's alone latency under `paper` (NaNs
    dropped); `known` caches one alone latency per (op, size)."""
    # The op code in the high bits of a key.
    key = codes.astype(np.uint64) << np.uint64(32) | sizes.astype(np.uint64)
    distinct, index = np.unique(key, return_inverse=True)
    for k in distinct.tolist():
        if k not in known:
            known[k] = alone_ps(paper, k >> 32, k & 0xFFFFFFFF) / 1e3
    part = latency / np.array([known[k] for k in distinct.tolist()])[index]
    return part[~np.isnan(part)]


# Rows per slice where a summary works a slice at a time.
_SLICE_ROWS = 1 << 20


def alone_ps(cfg: dict[str, Any], op: int, size: int) -> int:
    """Latency (ps) of one message (op code 0 read, 1 write, 2 RMW; ``size``
    bytes) alone in the network under configuration ``cfg``."""
    return _core.alone_ps(cfg, op, size)


def _against_paper_alone(cfg: dict[str, Any], df: pd.DataFrame) -> dict[str, float]:
    """Zero-queue slowdowns against the paper rules' alone latency: the rules'
    own alone latency is longer for messages of several chunks (guards), so
    their plain slowdowns have a larger denominator than the paper rules'."""
    paper = paper_rules(cfg)
    # One alone latency per distinct (op, size); a slice of rows at a time,
    # so the temporaries stay small.
    start = int(len(df) * cfg["warmup_fraction"])
    codes, sizes = df["op"].cat.codes.to_numpy()[start:], df["size"].to_numpy()[start:]
    latency = df["latency_ns"].to_numpy()[start:]
    known: dict[int, float] = {}
    parts = []
    for lo in range(0, len(latency), _SLICE_ROWS):
        hi = lo + _SLICE_ROWS
        parts.append(paper_slowdowns(paper, codes[lo:hi], sizes[lo:hi], latency[lo:hi], known))
    measured = np.concatenate(parts) if parts else np.empty(0)
    if len(measured) == 0:
        return {"mean_slowdown_paper_alone": float("nan"), "p99_slowdown_paper_alone": float("nan")}
    return {"mean_slowdown_paper_alone": float(measured.mean()),
            "p99_slowdown_paper_alone": float(np.quantile(measured, 0.99))}


def input_files(config: dict[str, Any]) -> dict[str, str]:
    """{field: path} of every file a configuration reads: its workload when
    that is a file (a trace or a size CDF), not a named workload."""
    wl = config.get("workload")
    return {"workload": wl} if isinstance(wl, str) and wl not in WORKLOADS else {}


def run_warnings(summary: dict[str, Any]) -> list[str]:
    """What a summary's headline numbers must not be read without: a run
    past saturation, or too short for its means to settle."""
    out = []
    if summary.get("stable") is False:
        out.append(f"past saturation: over the second half of the issue period only "
                   f"{summary['delivery_ratio']:.0%} of the bytes issued were delivered (stable = false); "
                   f"its latencies grow with the run's length, not only with load")
    if summary.get("delivered_by_last_issue", 1.0) < SHORT_RUN_DELIVERY:
        out.append(f"only {summary['delivered_by_last_issue']:.0%} of the bytes were delivered by the last issue "
                   f"(below {SHORT_RUN_DELIVERY:.0%}): the run is short for its largest messages or saturated, "
                   f"and its means depend on its length (more messages, or a lower load)")
    return out


def run_point(config: dict[str, Any]) -> dict[str, Any]:
    """The summary only: the runner ``edm sweep`` calls (``edm.sim:run_point``)."""
    return run(config).summary


def check_point(config: dict[str, Any]) -> None:
    """Raises ConfigError if `config` cannot run (``edm sweep`` checks every
    point with it before starting any)."""
    resolve(dict(config), "config")


# What `edm sweep` hashes into a point's key besides its configuration, and
# how it checks a point before running any.
run_point.input_files = input_files  # type: ignore[attr-defined]
run_point.check = check_point  # type: ignore[attr-defined]


def _stats(values: pd.Series, prefix: str) -> dict[str, float]:
    v = values.dropna().to_numpy()
    if len(v) == 0:
        return {f"{k}_{prefix}": float("nan") for k in ("mean", "median", "p99", "p999")}
    return {
        f"mean_{prefix}": float(v.mean()),
        f"median_{prefix}": float(np.median(v)),
        f"p99_{prefix}": float(np.quantile(v, 0.99)),
        f"p999_{prefix}": float(np.quantile(v, 0.999)),
    }


def _outcomes(df: pd.DataFrame, acked: bytes | None, acknowledged: bool) -> None:
    """Adds ``acked_ps`` (a write's acknowledged completion, docs/protocol.md
    §4b: when its /A/ reached its requester; -1 none, -2 reported failed) and
    ``outcome``: "applied" (a write acknowledged, another operation
    completed; with a protocol without acknowledgements, `acknowledged`
    False, a write completed), "failed" (reported: given up or timed out),
    "lost" (a write neither applied nor reported: never expected) or
    "unresolved"."""
    complete = df["complete_ps"].to_numpy(np.int64)
    ack = np.full(len(df), -1, np.int64) if acked is None else np.frombuffer(acked, np.int64)
    df["acked_ps"] = ack
    write = (df["op"] == "write").to_numpy() & acknowledged
    # Codes of the categories below (integers: string arrays cost more than the rest).
    applied, failed, lost, unresolved = np.int8(0), np.int8(1), np.int8(2), np.int8(3)
    outcome = np.where(write, np.where(ack >= 0, applied, unresolved),
                       np.where(complete >= 0, applied, unresolved))
    outcome = np.where((complete == -2) | (ack == -2), failed, outcome)
    outcome = np.where(complete == -3, lost, outcome)
    df["outcome"] = pd.Categorical.from_codes(outcome, ["applied", "failed", "lost", "unresolved"])
    df["acked_latency_ns"] = np.where(write & (ack >= 0), (ack - df["issue_ps"].astype(np.int64)) / 1e3, np.nan)


def summarise(cfg: dict[str, Any], df: pd.DataFrame, totals: dict[str, Any], wall: float) -> dict[str, Any]:
    done = df["complete_ps"] >= 0
    # -1: never finished (a deadlock); -2: finished by its timeout (NULL
    # response) or given up; -3: a write neither applied nor reported (EDM).
    deadlocked = df.index[df["complete_ps"] == -1].tolist()
    measured = df.iloc[int(len(df) * cfg["warmup_fraction"]) :]
    summary: dict[str, Any] = {
        "protocol": cfg["protocol"],
        "config": cfg,
        "messages": int(len(df)),
        "completed": int(done.sum()),
        "deadlocked": len(deadlocked),
        "deadlocked_ids": deadlocked[:20],
        "warmup_excluded": int(len(df) - len(measured)),
        **_stats(measured["latency_ns"], "latency_ns"),
        **_stats(measured["slowdown"], "slowdown"),
        "mean_unloaded_ns": float(measured["alone_ps"].mean() / 1e3),
    }
    by_op = {}
    # Per operation, only the columns its figures need (not a copy of the table).
    op = measured["op"].cat.codes.to_numpy()
    for code, name in enumerate(("read", "write", "rmw")):
        rows = op == code
        if rows.any():
            by_op[name] = {
                "messages": int(rows.sum()),
                "mean_unloaded_ns": float(measured["alone_ps"][rows].mean() / 1e3),
                **_stats(measured["latency_ns"][rows], "latency_ns"),
                **_stats(measured["slowdown"][rows], "slowdown"),
            }
            acked = measured["acked_latency_ns"][rows] if "acked_latency_ns" in measured else None
            if name == "write" and acked is not None and acked.notna().any():
                by_op[name].update(_stats(acked, "acked_latency_ns"))
    summary["by_op"] = by_op
    if "outcome" in df:
        summary["outcomes"] = {k: int(v) for k, v in df["outcome"].value_counts().items()}
    # Past saturation queues grow for as long as a run lasts, and latency then
    # depends on run length, not only on load. Flag it: over the second half of
    # the issue period, the bytes completed fall short of the bytes issued.
    issue = df["issue_ps"].to_numpy(np.int64)
    t0, t1 = int(issue[len(df) // 2]), int(issue[-1])
    issued = df["size"].to_numpy(np.float64)[(issue >= t0) & (issue <= t1)].sum()
    complete = df["complete_ps"].to_numpy(np.int64)
    delivered = df["size"].to_numpy(np.float64)[(complete >= t0) & (complete <= t1)].sum()
    ratio = delivered / issued if issued > 0 and t1 > t0 else float("nan")
    summary["delivery_ratio"] = float(ratio)
    # Of all bytes issued, the fraction delivered by the last issue: below
    # SHORT_RUN_DELIVERY a run is short against its largest messages (or saturated),
    # and its means depend on its length.
    sizes = df["size"].to_numpy(np.float64)
    summary["delivered_by_last_issue"] = float(sizes[(complete >= 0) & (complete <= t1)].sum() / sizes.sum())
    summary["stable"] = bool(ratio >= STABLE_DELIVERY) if np.isfinite(ratio) else None
    # A generated workload offers the configured load; a trace, or a closed
    # loop, what it issued, measured (the config's `load` does not apply).
    measured_offer = None
    if is_trace(cfg["workload"]) or cfg["closed_loop_threads"]:
        measured_offer = measured_load(df["requester"].to_numpy(), df["size"].to_numpy(),
                                       df["issue_ps"].to_numpy(), cfg["link_gbps"])
    if cfg["placement"] != "uniform":
        # How evenly the manager's placement spread the bytes over the memory nodes.
        per_node = df.groupby("memory")["size"].sum()
        summary["memory_bytes_imbalance"] = float(per_node.max() / per_node.mean())
    return render_totals(cfg, summary, totals, wall, int(df["issue_ps"].min()), measured_offer)


def render_totals(cfg: dict[str, Any], summary: dict[str, Any], totals: dict[str, Any], wall: float,
                  first_issue_ps: int, measured_offer: float | None) -> dict[str, Any]:
    """Adds to `summary` (its per-message figures done) what comes from the
    core's totals, and the offered load (`measured_offer` for a trace or a
    closed loop)."""
    span_ps = max(int(totals["end_ps"]) - first_issue_ps, 1)
    summary["throughput_gbps"] = totals["delivered_bytes"] * 8 / span_ps * 1e3
    if not is_trace(cfg["workload"]) and not cfg["closed_loop_threads"]:
        summary["offered_load"], summary["offered_load_source"] = cfg["load"], "config"
    else:
        summary["offered_load"], summary["offered_load_source"] = measured_offer, "measured"
    summary.update({k: v for k, v in totals.items() if k not in _RENDERED_TOTALS})
    summary["max_switch_data_wait_ns"] = totals["max_switch_data_wait_ps"] / 1e3
    if cfg["zero_queue"]:
        summary["max_grant_wait_ns"] = totals["max_grant_wait_ps"] / 1e3
        summary["max_request_wait_ns"] = totals["max_request_wait_ps"] / 1e3
    if cfg["background_load"] > 0:
        waits = totals["memory_frame_waits"]
        summary["background_frames"] = totals["background_frames"]
        # None (not NaN, which JSON cannot hold) when no frame finished within the run.
        frames = totals["background_frames"] > 0
        summary["frame_delay_mean_ns"] = totals["frame_delay_mean_ps"] / 1e3 if frames else None
        summary["frame_delay_p99_ns"] = totals["frame_delay_p99_ps"] / 1e3 if frames else None
        summary["memory_frame_waits"] = waits
        summary["memory_frame_wait_mean_ns"] = totals["memory_frame_wait_total_ps"] / waits / 1e3 if waits else 0.0
        summary["memory_frame_wait_max_ns"] = totals["memory_frame_wait_max_ps"] / 1e3
    if cfg["dram_channels"] > 0:
        # Each 64-byte DRAM access's wait beyond its idle latency (Puri's memory-queue contention).
        summary["dram_lines"] = totals["dram_lines"]
        for stat in ("mean", "p99", "max"):
            summary[f"dram_wait_{stat}_ns"] = totals[f"dram_wait_{stat}_ps"] / 1e3
        summary["dram_imbalance"] = totals["dram_imbalance"]
        summary["dram_late_responses"] = totals["dram_late_responses"]
    if cfg["protection"]:
        # Clio's protection at the memory nodes: requests checked and refused
        # (served_outside and denied_inside check the page table against the mappings: 0).
        for k in ("protection_checks", "denied_reads", "denied_writes", "served_outside", "denied_inside"):
            summary[k] = totals[k]
    summary["wall_seconds"] = wall
    summary["messages_per_second"] = summary["messages"] / wall if wall > 0 else float("inf")
    return summary


def _progress_bar(total: int):
    from tqdm import tqdm

    bar = tqdm(total=total, unit="msg", desc="simulate", file=sys.stderr, mininterval=0.5)

    def update_to(done: int, _total: int) -> None:
        bar.update(done - bar.n)

    bar.update_to = update_to  # type: ignore[attr-defined]
    return bar

"""Workload inputs: size CDFs (the applications' shipped with EDM, or any
file in their format; sampled by the core's open-loop generator), and the
paper artifact's trace format (import and export). Both formats, with their
units, and how to add a named workload: docs/workloads.md.

Size-CDF format, one point per line: ``size unused cumulative_probability``,
size in CDF_UNIT_BYTES (1460-byte) packets.

Trace format, one message per line, seven whitespace-separated integers:
``id type src dst size response start_slot`` where type is 1 (RREQ) or 3
(WREQ), size is the request's bytes (WREQ: the data written), response is the
bytes read (RREQ) or -1 (WREQ), and start_slot counts 0.64 ns slots.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edm import _core

TRACE_SLOT_PS = 640
TRACE_RREQ, TRACE_WREQ = 1, 3
OP_READ, OP_WRITE, OP_RMW = 0, 1, 2
CDF_UNIT_BYTES: int = _core.CDF_UNIT_BYTES
_FIELDS = ("id", "type", "src", "dst", "size", "response", "start_slot")
# What the engine's columns hold: node ids u16, sizes u32, issue times u64 ps.
_MAX_NODE, _MAX_BYTES, _MAX_SLOT = 2**16 - 1, 2**32 - 1, (2**64 - 1) // TRACE_SLOT_PS


class TraceError(ValueError):
    """A malformed trace; the message names the file, line and field."""


def workload_kind(workload: str) -> str:
    """"named" (generated), "cdf" (a size-CDF file, generated from) or
    "trace" (a trace file, run as given): the core decides, from a file's
    first line (three columns: a CDF)."""
    return _core.workload_kind(workload)


def cdf_text(workload: str) -> str | None:
    """The size CDF a workload samples: an application's file as shipped, or
    a size-CDF file's text (lines of size in 1460-byte packets, an unused
    column, cumulative probability; parsed by the core's
    ``SizeCdf::from_text``); None for micro and for a trace."""
    from edm.sim.config import WORKLOADS

    if workload == "micro":
        return None
    if workload in WORKLOADS:
        return _core.app_cdf_text(workload)
    if workload_kind(workload) != "cdf":
        return None
    return Path(workload).read_text(encoding="utf-8")


def is_trace(workload: str) -> bool:
    """Whether a workload names a trace file (not a named workload, not a size-CDF file)."""
    return workload_kind(workload) == "trace"


def load_cdf(app: str) -> list[tuple[float, float]]:
    """(size in CDF_UNIT_BYTES packets, cumulative probability) points of an
    application, as the core's generator reads them."""
    text = cdf_text(app)
    if text is None:
        raise ValueError(f"{app!r} is not an application workload")
    return _core.size_cdf_points(text)


@dataclass
class Messages:
    """A workload as columns, sorted by issue time."""

    op: np.ndarray  # uint8: OP_READ, OP_WRITE, OP_RMW
    requester: np.ndarray  # uint16
    memory: np.ndarray  # uint16
    size: np.ndarray  # uint32: bytes written or read
    issue_ps: np.ndarray  # uint64
    # Optional: each message's first byte at its memory node (uint64; None:
    # the engine draws them, see address_space_bytes), and fences (bool: the
    # message and every later one of its requester wait for every earlier one).
    addr: np.ndarray | None = None
    fence: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.op)


def read_trace(path: str | Path) -> Messages:
    path = Path(path)
    cols: list[list[int]] = [[] for _ in range(5)]
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise TraceError(f"{path}:{n}: not a text trace (byte {e.start + 1} of the line is not UTF-8); "
                                 f"expected {len(_FIELDS)} integers a line ({' '.join(_FIELDS)})") from None
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split()
            if len(parts) != len(_FIELDS):
                raise TraceError(f"{path}:{n}: expected {len(_FIELDS)} columns ({' '.join(_FIELDS)}), got {len(parts)}")
            values = []
            for field, text in zip(_FIELDS, parts):
                try:
                    values.append(int(text))
                except ValueError:
                    raise TraceError(f"{path}:{n}: field {field!r} = {text!r} is not an integer") from None
            _, kind, src, dst, size, response, slot = values
            if kind not in (TRACE_RREQ, TRACE_WREQ):
                raise TraceError(f"{path}:{n}: field 'type' = {kind} is not 1 (RREQ) or 3 (WREQ)")
            for field, v, top in (("src", src, _MAX_NODE), ("dst", dst, _MAX_NODE), ("start_slot", slot, _MAX_SLOT)):
                if not 0 <= v <= top:
                    raise TraceError(f"{path}:{n}: field {field!r} = {v} is not in 0..{top}")
            if src == dst:
                raise TraceError(f"{path}:{n}: fields 'src' and 'dst' are both {src}")
            nbytes = response if kind == TRACE_RREQ else size
            field = "response" if kind == TRACE_RREQ else "size"
            if not 0 < nbytes <= _MAX_BYTES:
                raise TraceError(f"{path}:{n}: field {field!r} = {nbytes} is not in 1..{_MAX_BYTES} for this type")
            cols[0].append(OP_READ if kind == TRACE_RREQ else OP_WRITE)
            cols[1].append(src)
            cols[2].append(dst)
            cols[3].append(nbytes)
            cols[4].append(slot * TRACE_SLOT_PS)
    if not cols[0]:
        raise TraceError(f"{path}: no messages")
    order = np.argsort(np.asarray(cols[4]), kind="stable")
    return Messages(
        op=np.asarray(cols[0], np.uint8)[order],
        requester=np.asarray(cols[1], np.uint16)[order],
        memory=np.asarray(cols[2], np.uint16)[order],
        size=np.asarray(cols[3], np.uint32)[order],
        issue_ps=np.asarray(cols[4], np.uint64)[order],
    )


def measured_load(requester: np.ndarray, size: np.ndarray, issue_ps: np.ndarray, link_gbps: int) -> float | None:
    """A workload's offered load as the open-loop generator defines ``load``:
    payload bits issued per requesting node per ps over the issue period (first
    to last issue), as a fraction of the link rate. None with fewer than two
    distinct issue times."""
    if len(issue_ps) < 2:
        return None
    span_ps = int(issue_ps.max()) - int(issue_ps.min())
    if span_ps <= 0:
        return None
    requesters = len(np.unique(requester))
    bits = 8.0 * float(np.asarray(size, np.float64).sum())
    return bits / span_ps / requesters / (link_gbps * 1e-3)


def write_trace(messages: Messages, path: str | Path, rreq_bytes: int = 16) -> None:
    """Writes the artifact format (RMWs become 8-byte reads; times round to slots)."""
    with Path(path).open("w") as f:
        for i in range(len(messages)):
            write = messages.op[i] == OP_WRITE
            kind = TRACE_WREQ if write else TRACE_RREQ
            size = int(messages.size[i]) if write else rreq_bytes
            response = -1 if write else int(messages.size[i])
            slot = round(int(messages.issue_ps[i]) / TRACE_SLOT_PS)
            f.write(f"{i} {kind} {messages.requester[i]} {messages.memory[i]} {size} {response} {slot}\n")

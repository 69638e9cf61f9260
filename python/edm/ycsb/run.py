"""YCSB runs on the modelled fabrics (EDM, RoCEv2, CXL), one compute node and
``memory_nodes`` memory nodes behind one switch, and their summaries.

Invariants:
  * the client and store are the real ones (:mod:`edm.ycsb.store`): every
    read is checked against the dict, on every fabric;
  * a request completes at issue + its unloaded latency (:mod:`edm.ycsb.models`)
    + its wait for the busiest link direction on its path: each of the four
    link directions is a FIFO server that a request occupies for its wire
    time. With one request in flight this is the unloaded latency; with many,
    throughput is bounded by the busiest direction (no model of the switch's
    scheduling beyond that);
  * an operation's latency is from its first request's issue to its last
    request's completion; requests per second = operations / time of the
    last completion.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edm.ycsb import models
from edm.ycsb.store import LOCAL, Client, MemRequest, drive, new_client

DEFAULT_RECORDS = 10_000
DEFAULT_DRAM_NS = 80.0   # our assumption for a DRAM access, local or at the memory node (docs/ycsb.md)


def summarize(client: Client, seconds_ps: int | None = None) -> dict[str, Any]:
    """Requests per second and latency statistics of a finished client."""
    lat = np.array([(r.end_ps - r.start_ps) / 1e3 for r in client.ops])
    end = max(r.end_ps for r in client.ops) if seconds_ps is None else seconds_ps
    by_op = {}
    for name in sorted({r.op for r in client.ops}):
        part = np.array([(r.end_ps - r.start_ps) / 1e3 for r in client.ops if r.op == name])
        by_op[name] = {"operations": int(len(part)), "mean_ns": float(part.mean()),
                       "p99_ns": float(np.quantile(part, 0.99))}
    return {
        "operations": len(client.ops),
        "requests": client.requests,
        "requests_per_second": len(client.ops) / (end / 1e12) if end > 0 else float("inf"),
        "mean_ns": float(lat.mean()),
        "p99_ns": float(np.quantile(lat, 0.99)),
        "variance_ns2": float(lat.var()),
        "std_ns": float(lat.std()),
        "local_share": float(np.mean([r.local for r in client.ops])),
        "by_op": by_op,
    }


def run_model(workload: str, fabric: str, *, operations: int, outstanding: int, seed: int,
              records: int = DEFAULT_RECORDS, gbps: int = 25, dram_ns: float = DEFAULT_DRAM_NS,
              local_fraction: float = 0.0, memory_nodes: int = 1, chunk: int | None = None,
              distribution: str | None = None) -> dict[str, Any]:
    if fabric not in models.FABRICS:
        raise ValueError(f"fabric {fabric!r} is not one of {models.FABRICS}")
    client, image = new_client(workload, records=records, operations=operations, outstanding=outstanding,
                               seed=seed, nodes=memory_nodes, local_fraction=local_fraction,
                               distribution=distribution)
    dram_ps = int(round(dram_ns * 1000))
    kw = {"chunk": chunk} if chunk else {}
    free: dict[tuple[int, str], float] = {}

    def complete_at(r: MemRequest, now: int) -> int:
        c = models.cost(fabric, r, gbps=gbps, dram_ps=dram_ps, **kw)
        if r.node == LOCAL:
            return now + int(c.latency_ps)
        # Compute-side directions are shared by all memory nodes; memory-side per node.
        keys = {d: (0 if d.startswith("c_") else 1 + r.node, d) for d in models.DIRECTIONS}
        wait = max(max(0.0, free.get(k, 0.0) - now) for d, k in keys.items() if c.wire_ps[d])
        for d, k in keys.items():
            if c.wire_ps[d]:
                free[k] = max(free.get(k, 0.0), now) + c.wire_ps[d]
        return now + int(round(c.latency_ps + wait))

    drive(client, image, complete_at)
    out = summarize(client)
    out.update(fabric=fabric, workload=workload, outstanding=outstanding, link_gbps=gbps, dram_ns=dram_ns,
               local_fraction=local_fraction, seed=seed, records=records)
    return out

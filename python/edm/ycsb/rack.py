"""YCSB at rack scale on the fabric simulator (``edm.sim``): beyond the paper.

``nodes`` hosts: the last ``memory_nodes`` hold the store's shards (a key's
memory node is its FNV hash modulo their number, edm.ycsb.store.Layout), the
others each run their own YCSB client (own seed) against the shared store.

Invariants and approximations:
  * the message stream is the real store's: each client runs its operations
    through the store (reads checked against the dict, requests applied to
    the memory image) and every request becomes one simulator message with
    its memory node and address (reads: bytes read; writes: bytes written;
    CAS: an RMW);
  * open loop: each client issues operations as a Poisson process; ``load``
    is the offered data bytes per second over the memory nodes' aggregate
    link capacity (they are the rack's bottleneck: few nodes serve many);
  * an operation's requests are issued together at its issue time (the
    simulator has no request dependencies): a read-modify-write's write does
    not wait for its read, an insert's write not for its CAS. Per-key order
    inside one client is kept by the simulator's memory-order rule
    (protocol edm) or per-pair FIFO (edm-paper), not by the client;
  * an operation's latency is its last request's completion minus its issue.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edm.sim.workloads import OP_READ, OP_RMW, OP_WRITE, Messages
from edm.ycsb.store import drive, new_client

OPCODE = {"read": OP_READ, "write": OP_WRITE, "cas": OP_RMW}


def message_stream(workload: str, *, nodes: int, memory_nodes: int, operations: int, load: float, gbps: int,
                   seed: int, records: int, distribution: str | None = None):
    """The rack's messages (sorted by issue time) and, per message, its operation index."""
    if not 1 <= memory_nodes < nodes:
        raise ValueError(f"memory nodes = {memory_nodes} must be in 1..nodes-1 = {nodes - 1}")
    compute = nodes - memory_nodes
    per_client = max(1, operations // compute)
    rng = np.random.default_rng(seed)
    rows = []   # (issue_ps, op index, requester, memory node, opcode, size, addr)
    op_index = 0
    clients = []
    for c in range(compute):
        client, image = new_client(workload, records=records, operations=per_client, outstanding=1,
                                   seed=seed * 1_000_003 + c, nodes=memory_nodes, distribution=distribution)
        drive(client, image, lambda r, now: now + 1)   # order only; the simulator does the timing
        clients.append(client)
    # Bytes per operation, for the Poisson rate that offers `load`.
    total_bytes = sum(q[2] for cl in clients for o in cl.ops for q in o.reqs)
    bytes_per_op = total_bytes / sum(len(cl.ops) for cl in clients)
    rate_per_client = load * memory_nodes * gbps * 1e9 / 8 / bytes_per_op / compute   # ops per second
    for c, client in enumerate(clients):
        gaps = rng.exponential(1e12 / rate_per_client, size=len(client.ops))
        times = np.cumsum(gaps).astype(np.int64)
        for o, t in zip(client.ops, times):
            for kind, node, length, addr in o.reqs:
                rows.append((int(t), op_index, c, compute + node, OPCODE[kind],
                             8 if kind == "cas" else length, addr))
            op_index += 1
    return rows, clients


def run_rack(workload: str, protocol: str, *, nodes: int, memory_nodes: int, load: float, gbps: int,
             operations: int, seed: int, records: int, distribution: str | None = None,
             dram_ns: float = 0.0) -> dict[str, Any]:
    from edm import sim

    rows, clients = message_stream(workload, nodes=nodes, memory_nodes=memory_nodes, operations=operations,
                                   load=load, gbps=gbps, seed=seed, records=records, distribution=distribution)
    rows.sort(key=lambda r: (r[0], r[1]))
    a = np.array([r[:6] for r in rows], dtype=np.int64)
    addrs = np.array([r[6] for r in rows], dtype=np.uint64)
    space = clients[0].store.layout.node_bytes
    msgs = Messages(op=a[:, 4].astype(np.uint8), requester=a[:, 2].astype(np.uint16),
                    memory=a[:, 3].astype(np.uint16), size=a[:, 5].astype(np.uint32),
                    issue_ps=a[:, 0].astype(np.uint64), addr=addrs)
    cfg = {"protocol": protocol, "nodes": nodes, "link_gbps": gbps, "messages": len(rows), "seed": seed,
           "address_space_bytes": max(64, space), "dram_ps": int(round(dram_ns * 1000))}
    res = sim.run(cfg, messages=msgs, source="edm ycsb --fabric sim")
    df = res.messages.assign(op_index=a[:, 1])
    done = df["complete_ps"] >= 0
    per_op = df.groupby("op_index").agg(issue=("issue_ps", "min"), end=("complete_ps", "max"),
                                        ok=("complete_ps", lambda s: bool((s >= 0).all())))
    per_op = per_op[per_op["ok"]]
    lat = (per_op["end"].to_numpy(np.int64) - per_op["issue"].to_numpy(np.int64)) / 1e3
    span = (per_op["end"].max() - per_op["issue"].min()) / 1e12
    return {
        "fabric": f"sim:{protocol}", "workload": workload, "nodes": nodes, "memory_nodes": memory_nodes,
        "load": load, "link_gbps": gbps, "seed": seed, "records": records, "outstanding": "open loop",
        "local_fraction": 0.0, "operations": int(len(per_op)), "operations_issued": int(a[:, 1].max() + 1),
        "requests": len(rows), "requests_completed": int(done.sum()),
        "requests_per_second": len(per_op) / span if span > 0 else float("nan"),
        "mean_ns": float(lat.mean()), "p99_ns": float(np.quantile(lat, 0.99)),
        "variance_ns2": float(lat.var()), "std_ns": float(lat.std()),
        "stable": res.summary["stable"], "deadlocked": res.summary["deadlocked"],
    }

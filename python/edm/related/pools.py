"""Rack memory pools (Puri et al.): DRAM contention at memory nodes and the
rack memory manager's placement, for EDM and the packet baselines.

    edm related pools [--quick] [--out results/related/pools]

Runs a grid of placement policy x protocol on two racks (docs/related.md,
"Puri: memory pools, DRAM contention, placement"), prints the table and
writes ``pools.json``, ``pools.md`` and ``pools.png``. :func:`reproduce_section`
is the hook for ``edm reproduce``'s "related systems" section.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from edm.args import out_dir
from edm import sim

POLICIES = ("uniform", "random", "round-robin", "smart-idle")
PROTOCOLS = ("edm", "edm-paper", "pfabric", "dctcp", "ird")

# Two racks of 18 compute nodes and 6 memory pools (Puri: 64 and 6), one
# DDR4-3200 channel per pool (22.4 GB/s for lines spread over its banks),
# half reads, compute nodes at 0.1 of their link. "100G": 64-byte accesses
# (cache lines) on 100 Gb/s links, where a pool's links bind before its
# DRAM; "400G": 1 KB accesses on 400 Gb/s links, where the DRAM binds (a
# pool's 120 Gb/s of accesses against its 179 Gb/s), as in Puri's racks.
RACKS = {
    "100G": {"link_gbps": 100, "message_bytes": 64, "load": 0.1},
    "400G": {"link_gbps": 400, "message_bytes": 1024, "load": 0.1},
}
IDLE_DRAM_PS = 30_000
QUICK_MESSAGES = 5_000
BASE = {
    "nodes": 24, "memory_nodes": 6, "workload": "micro", "write_ratio": 0.5, "dram_channels": 1,
    "placement_regions": 16, "placement_skew": 1.2, "warmup_fraction": 0.1,
}


def point(rack: str, protocol: str, policy: str, messages: int, seed: int, dram: bool = True) -> dict[str, Any]:
    """One run's configuration."""
    cfg = {**BASE, **RACKS[rack], "protocol": protocol, "placement": policy, "messages": messages, "seed": seed}
    if not dram:
        # A memory of fixed latency, the DRAM's idle one (tRCD + tCL + burst,
        # 30 ns), with unlimited bandwidth: what the model adds is contention.
        cfg["dram_channels"] = 0
        cfg["dram_ps"] = IDLE_DRAM_PS
    return cfg


def run_grid(quick: bool = False, seeds: tuple[int, ...] = (1, 2, 3), log=print) -> list[dict[str, Any]]:
    """Every rack x protocol x policy, with the fixed-latency memory and with
    the DRAM model, averaged over seeds."""
    messages = QUICK_MESSAGES if quick else 30_000
    seeds = seeds[:1] if quick else seeds
    rows = []
    for rack in RACKS:
        for protocol in PROTOCOLS:
            for policy in POLICIES:
                fixed, dram = ([sim.run(point(rack, protocol, policy, messages, s, model), progress=False).summary
                                for s in seeds] for model in (False, True))
                row = {
                    "rack": rack, "protocol": protocol, "placement": policy,
                    "fixed_mean_slowdown": _mean(fixed, "mean_slowdown"),
                    "fixed_p99_slowdown": _mean(fixed, "p99_slowdown"),
                    "mean_slowdown": _mean(dram, "mean_slowdown"),
                    "p99_slowdown": _mean(dram, "p99_slowdown"),
                    "read_latency_ns": _mean([r["by_op"]["read"] for r in dram], "mean_latency_ns"),
                    "fixed_read_latency_ns": _mean([r["by_op"]["read"] for r in fixed], "mean_latency_ns"),
                    "dram_wait_mean_ns": _mean(dram, "dram_wait_mean_ns"),
                    "dram_wait_p99_ns": _mean(dram, "dram_wait_p99_ns"),
                    "pool_imbalance": _mean(dram, "memory_bytes_imbalance"),
                    "completed": sum(r["completed"] for r in fixed + dram),
                    "messages": sum(r["messages"] for r in fixed + dram),
                    "late_responses": sum(r["dram_late_responses"] for r in dram),
                }
                rows.append(row)
                log(_line(row))
    return rows


def placement_balance(rack: str = "100G", seeds: range = range(1, 21), messages: int = 30_000) -> dict[str, tuple]:
    """Per policy, the busiest pool's bytes over the pools' mean on the
    rack's workload (placement alone, no simulation): (mean, min, max) over seeds."""
    import numpy as np

    out = {}
    for policy in POLICIES[1:]:
        ratios = []
        for seed in seeds:
            w = sim.build_workload(sim.config.resolve(point(rack, "edm", policy, messages, seed)))
            per_pool = np.bincount(w.memory, weights=w.size)[BASE["nodes"] - BASE["memory_nodes"]:]
            ratios.append(per_pool.max() / per_pool.mean())
        out[policy] = (float(np.mean(ratios)), float(np.min(ratios)), float(np.max(ratios)))
    return out


def balance_lines(balance: dict[str, tuple]) -> str:
    return "\n".join(f"{policy}: busiest pool / mean {m:.3f} (seeds: {lo:.3f}-{hi:.3f})"
                     for policy, (m, lo, hi) in balance.items())


def _mean(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return sum(values) / len(values) if values else None


def _fmt(v: float | None, digits: int) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


HEADER = ("| rack | protocol | placement | mean slowdown, fixed memory | with DRAM | p99 slowdown, fixed | with DRAM "
          "| read latency ns, fixed | with DRAM | DRAM wait mean ns | DRAM wait p99 ns | busiest pool / mean |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")


def _line(r: dict[str, Any]) -> str:
    return (f"| {r['rack']} | {r['protocol']} | {r['placement']} | {_fmt(r['fixed_mean_slowdown'], 3)} "
            f"| {_fmt(r['mean_slowdown'], 3)} | {_fmt(r['fixed_p99_slowdown'], 2)} | {_fmt(r['p99_slowdown'], 2)} "
            f"| {_fmt(r['fixed_read_latency_ns'], 0)} | {_fmt(r['read_latency_ns'], 0)} "
            f"| {_fmt(r['dram_wait_mean_ns'], 1)} | {_fmt(r['dram_wait_p99_ns'], 0)} | {_fmt(r['pool_imbalance'], 2)} |")


def table(rows: list[dict[str, Any]]) -> str:
    return "\n".join([HEADER] + [_line(r) for r in rows])


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Mean slowdown (with the DRAM model) and mean DRAM wait per policy and
    protocol, a column per rack."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(RACKS), figsize=(5 * len(RACKS), 6.5), squeeze=False)
    width = 0.8 / len(PROTOCOLS)
    for col, rack in enumerate(RACKS):
        for k, protocol in enumerate(PROTOCOLS):
            mine = {r["placement"]: r for r in rows if r["rack"] == rack and r["protocol"] == protocol}
            xs = [i + (k - (len(PROTOCOLS) - 1) / 2) * width for i in range(len(POLICIES))]
            slow = [mine[p]["mean_slowdown"] for p in POLICIES]
            wait = [mine[p]["dram_wait_mean_ns"] for p in POLICIES]
            axes[0][col].bar(xs, slow, width, label=protocol)
            axes[1][col].bar(xs, wait, width, label=protocol)
        for row, ylabel in enumerate(("mean slowdown", "mean DRAM wait per line (ns)")):
            ax = axes[row][col]
            ax.set_xticks(range(len(POLICIES)), POLICIES)
            ax.set_ylabel(ylabel)
            ax.set_title(f"rack {rack}: " + ("64 B at 100 Gb/s" if rack == "100G" else "1 KB at 400 Gb/s"))
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def reproduce_section(out: Path, quick: bool = False) -> str:
    """The "related systems: Puri" subsection for ``edm reproduce``: runs
    the grid, writes its files under ``out`` and returns the markdown."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    rows = run_grid(quick=quick, log=lambda _line: None)
    (out / "pools.json").write_text(json.dumps(rows, indent=2))
    plot(rows, out / "pools.png")
    text = ("### Memory pools: DRAM contention and placement (Puri et al.)\n\n"
            f"{len(rows)} rows, {time.time() - start:.0f} s; configuration in "
            "python/edm/related/pools.py, discussion in docs/related.md.\n\n" + table(rows) + "\n\n"
            "Placement alone (rack 100G, seeds 1-20):\n\n" + balance_lines(placement_balance()) + "\n\n![](pools.png)\n")
    (out / "pools.md").write_text(text)
    return text


def _cmd(args: argparse.Namespace) -> int:
    out = Path(args.out)
    start = time.time()
    print(HEADER, flush=True)
    rows = run_grid(quick=args.quick, log=lambda line: print(line, flush=True))
    out.mkdir(parents=True, exist_ok=True)
    (out / "pools.json").write_text(json.dumps(rows, indent=2))
    (out / "pools.md").write_text(table(rows) + "\n")
    plot(rows, out / "pools.png")
    print(balance_lines(placement_balance()))
    late = sum(r["late_responses"] for r in rows)
    unfinished = sum(r["messages"] - r["completed"] for r in rows)
    print(f"{len(rows)} rows in {time.time() - start:.0f} s -> {out}/pools.{{json,md,png}}; "
          f"unfinished messages {unfinished}, late responses {late}")
    return 1 if late or unfinished else 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pools", help="rack memory pools (Puri): DRAM contention and placement policies")
    p.add_argument("--quick", action="store_true", help="5 000 messages, one seed (default 30 000, seeds 1-3)")
    p.add_argument("--out", type=out_dir, default="results/related/pools", help="output folder")
    p.set_defaults(func=_cmd)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="edm related")
    add_parser(parser.add_subparsers(dest="command", required=True))
    sys.exit(_cmd(parser.parse_args(["pools", *sys.argv[1:]])))

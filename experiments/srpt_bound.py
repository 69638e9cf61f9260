"""A reference for application slowdowns: one link under preemptive SRPT
(M/G/1, Schrage & Miller 1966) at the given load, on each application's
message sizes. SRPT minimises mean response time on one link (and is close to
optimal for mean slowdown); EDM and the baselines need two links per message
(the source's uplink and the destination's downlink) free at once, so this is
a floor to read their figures against, not a proof of one.

    .venv/bin/python experiments/srpt_bound.py [--load 0.5] [--gbps 100]
"""

from __future__ import annotations

import argparse

import numpy as np

from edm.sim.workloads import CDF_UNIT_BYTES, load_cdf

APPS = ("hadoop", "spark", "sparksql", "graphlab", "memcached")


def size_distribution(app: str, samples: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """(sizes in bytes, their probabilities): the CDF interpolated and rounded as the simulator does."""
    points = load_cdf(app)
    size = np.array([s for s, _ in points])
    prob = np.array([p for _, p in points])
    q = (np.arange(samples) + 0.5) / samples
    sizes = np.maximum(np.round(np.interp(q, prob, size)), 1) * CDF_UNIT_BYTES
    values, counts = np.unique(sizes, return_counts=True)
    return values, counts / counts.sum()


def srpt_mean_slowdown(sizes: np.ndarray, prob: np.ndarray, load: float, gbps: float) -> float:
    """Mean (response time / service time) of M/G/1 with preemptive SRPT."""
    t = sizes * 8 / gbps  # service time, ns
    lam = load / float((prob * t).sum())
    rho = np.cumsum(lam * prob * t)  # load of jobs of size <= x
    second = np.cumsum(lam * prob * t * t)
    tail = 1 - np.cumsum(prob)
    waiting = (second + lam * t * t * tail) / (2 * (1 - rho) ** 2)
    rho_before = np.concatenate([[0.0], rho[:-1]])
    residence = np.cumsum(np.diff(np.concatenate([[0.0], t])) / (1 - rho_before))
    return float((prob * (waiting + residence) / t).sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--gbps", type=float, default=100)
    args = ap.parse_args()
    print(f"# one link, preemptive SRPT, load {args.load}: mean slowdown")
    for app in APPS:
        sizes, prob = size_distribution(app)
        print(f"{app}: {srpt_mean_slowdown(sizes, prob, args.load, args.gbps):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

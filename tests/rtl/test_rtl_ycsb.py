"""The YCSB key-value store over the whole RTL fabric (tests/rtl/tb_ycsb.py):
one compute node, the switch, one memory node; every value comes from the
RTL memory node's DRAM model and is checked against the client's dict."""

from __future__ import annotations


def test_ycsb_workloads_d_and_f_over_the_rtl_fabric():
    """D inserts (CAS claims, 1000 B writes in chunks) and reads the newest
    keys; F reads and rewrites (read-modify-write); several in flight."""
    from edm.ycsb.rtl import run_rtl

    for workload in ("d", "f"):
        r = run_rtl(workload, operations=40, outstanding=3, seed=5, records=60)
        assert r["operations"] == 40 and r["requests"] >= 40
        assert r["requests_per_second"] > 0 and r["p99_ns"] >= r["mean_ns"] > 0


def test_ycsb_workload_a_with_write_acknowledgements():
    """A (half updates) on the fabric built with write acknowledgements
    (ACKS = 1, docs/protocol.md §4b): every read checked as above, every
    write acknowledged (none failed, none re-sent: no error counter moved),
    its acknowledged time after its posted one."""
    from edm.ycsb.rtl import run_rtl

    r = run_rtl("a", operations=40, outstanding=3, seed=5, records=60, acks=True)
    assert r["operations"] == 40 and r["writes"]["count"] > 0
    assert r["writes"]["acked"]["mean_ns"] > r["writes"]["posted"]["mean_ns"] > 0

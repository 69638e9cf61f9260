"""The YCSB key-value store (python/edm/ycsb): generators against their known
moments, the store against a Python dict under concurrency, the wire models
against hand-computed frames, and the `edm ycsb` command."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from edm.ycsb import generators as g
from edm.ycsb.store import (LOCAL, MemoryImage, StoreCheckError, TAG_BYTES, new_client, run_reference)
from edm.ycsb.workload import Workload


def sigma(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


# ---------------------------------------------------------------- generators
def test_fnvhash64_matches_fnv1a_reference_values():
    # FNV-1a 64 of eight zero bytes / of 1 as 8 LE bytes, computed by the
    # textbook definition (xor then multiply, offset basis cbf29ce484222325).
    def fnv1a(data: bytes) -> int:
        h = 0xCBF29CE484222325
        for b in data:
            h = ((h ^ b) * 0x100000001B3) % (1 << 64)
        return h
    for v in (0, 1, 12345, 2**40 + 7):
        h = fnv1a(v.to_bytes(8, "little"))
        signed = h - (1 << 64) if h >> 63 else h
        assert g.fnvhash64(v) == abs(signed)


def test_zeta_tail_formula_matches_ycsb_constant():
    # YCSB's ScrambledZipfianGenerator.ZETAN = zeta(10^10 + 1 items, 0.99) = 26.46902820178302
    assert g.zeta(g.SCRAMBLED_ITEM_COUNT + 1, 0.99) == pytest.approx(26.46902820178302, rel=1e-9)
    assert g.zeta(3, 0.5) == pytest.approx(1 + 2**-0.5 + 3**-0.5)


def test_zipfian_rank_one_and_two_frequencies_are_the_closed_form():
    n, draws, theta = 1000, 100_000, 0.99
    z = g.ZipfianGenerator(np.random.default_rng(5), 0, n - 1, theta)
    counts = Counter(z.next() for _ in range(draws))
    zn = g.zeta(n, theta)
    for item, p in ((0, 1 / zn), (1, 0.5**theta / zn)):
        assert abs(counts[item] / draws - p) < 5 * sigma(p, draws), (item, counts[item] / draws, p)
    assert min(counts) >= 0 and max(counts) <= n - 1


def test_scrambled_zipfian_hottest_key_is_the_hash_of_rank_one():
    n, draws = 5000, 60_000
    z = g.ScrambledZipfianGenerator(np.random.default_rng(6), 0, n - 1)
    counts = Counter(z.next() for _ in range(draws))
    hottest, c = counts.most_common(1)[0]
    assert hottest == g.fnvhash64(0) % n
    p = 1 / g.zeta(g.SCRAMBLED_ITEM_COUNT + 1, 0.99)
    # Other ranks hashed onto the same key can only add to it.
    assert p - 5 * sigma(p, draws) < c / draws < p + 0.01
    assert min(counts) >= 0 and max(counts) <= n - 1


def test_uniform_mean_and_variance():
    n, draws = 1000, 100_000
    u = g.UniformGenerator(np.random.default_rng(7), 0, n - 1)
    x = np.array([u.next() for _ in range(draws)], dtype=float)
    mean, var = (n - 1) / 2, (n * n - 1) / 12
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / draws)
    assert abs(x.var() / var - 1) < 0.02
    assert x.min() == 0 and x.max() == n - 1


def test_latest_favours_the_newest_key():
    basis = g.CounterGenerator(0)
    basis.last = 999
    lat = g.SkewedLatestGenerator(np.random.default_rng(8), basis)
    draws = 50_000
    counts = Counter(lat.next() for _ in range(draws))
    p = 1 / g.zeta(1000, 0.99)
    assert abs(counts[999] / draws - p) < 5 * sigma(p, draws)
    basis.acknowledge(1000)      # a new key becomes the hottest
    counts = Counter(lat.next() for _ in range(draws))
    assert counts.most_common(1)[0][0] == 1000


def test_workload_mixes_and_determinism():
    for name, share in (("a", 0.5), ("b", 0.05), ("f", 0.5)):
        w = Workload(name, 1000, seed=9)
        ops = [w.next(i) for i in range(20_000)]
        writes = sum(o.op != "read" for o in ops) / len(ops)
        assert abs(writes - share) < 5 * sigma(share, len(ops)), (name, writes)
    a = [(o.op, o.key, o.field, o.value) for o in (Workload("a", 100, seed=3).next(i) for i in range(50))]
    b = [(o.op, o.key, o.field, o.value) for o in (Workload("a", 100, seed=3).next(i) for i in range(50))]
    assert a == b
    with pytest.raises(ValueError, match="'e'.*scans"):
        Workload("e", 100, seed=1)
    with pytest.raises(ValueError, match="distribution"):
        Workload("a", 100, seed=1, distribution="hotspot")


# ---------------------------------------------------------------- the store
def image_matches(client, image: MemoryImage) -> None:
    """Every key's record in memory equals the reference dict."""
    lay = client.store.layout
    for key, fields in client.ref.items():
        node, slot = client.store.where[key]
        a = lay.addr(slot)
        m = image.mem[node]
        assert int.from_bytes(m[a:a + TAG_BYTES], "little") == key + 1
        assert bytes(m[a + TAG_BYTES:a + TAG_BYTES + lay.field_count * lay.field_bytes]) == b"".join(fields), key


@pytest.mark.parametrize("workload", ["a", "b", "c", "d", "f"])
@pytest.mark.parametrize("outstanding", [1, 32])
def test_every_read_returns_the_last_completed_update(workload, outstanding):
    """Random completion order of concurrent requests; the client checks every
    read against the dict, and the memory equals the dict at the end."""
    c, image = new_client(workload, records=300, operations=3000, outstanding=outstanding, seed=11,
                          nodes=3, distribution=None)
    run_reference(c, image, seed=12)
    assert len(c.ops) == 3000 and all(r.end_ps >= 0 for r in c.ops)
    image_matches(c, image)
    if workload == "d":
        assert c.workload.inserts.last > 299   # inserted keys were read back


def test_store_with_a_small_table_probes_and_claims_by_cas():
    """Many collisions: inserts claim slots by CAS, reads probe tag words."""
    c, image = new_client("d", records=30, operations=2000, outstanding=8, seed=13, nodes=1, slots=128)
    run_reference(c, image, seed=14)
    image_matches(c, image)
    inserts = sum(o.op == "insert" for o in c.ops)
    assert len(c.ref) == 30 + inserts > 100           # nearly full: 119 keys in 128 slots
    # One request per read and two per insert, plus the failed CAS claims.
    assert c.requests > 2000 + inserts + 50


def test_check_catches_a_fabric_that_loses_writes():
    """A fabric that acknowledges writes without applying them: the next read
    of the key must fail the check (the check can fail)."""
    c, image = new_client("a", records=20, operations=400, outstanding=4, seed=15, nodes=1)
    apply = image.apply
    image.apply = lambda r: b"" if r.kind == "write" else apply(r)
    with pytest.raises(StoreCheckError, match="last completed update"):
        run_reference(c, image, seed=16)


def test_local_fraction_places_keys_locally():
    c, image = new_client("a", records=2000, operations=10, outstanding=1, seed=1, nodes=1, local_fraction=0.25)
    local = sum(c.store.where[k][0] == LOCAL for k in range(2000)) / 2000
    assert abs(local - 0.25) < 5 * sigma(0.25, 2000)


# ---------------------------------------------------------------- the models
def test_roce_frames_match_hand_computed_frames():
    """Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + (RETH 16 | AETH 4) + payload
    + ICRC 4 + FCS 4, at least 64 B, plus preamble/SFD 8 and IFG 12."""
    from edm.ycsb.models import roce_frames
    from edm.ycsb.store import MemRequest
    read = roce_frames(MemRequest("read", 0, 0, 1024))
    assert read == ([14 + 20 + 8 + 12 + 16 + 4 + 4 + 20], [14 + 20 + 8 + 12 + 4 + 1024 + 4 + 4 + 20])
    assert read == ([98], [1110])
    write = roce_frames(MemRequest("write", 0, 0, 100))
    assert write == ([14 + 20 + 8 + 12 + 16 + 100 + 4 + 4 + 20], [14 + 20 + 8 + 12 + 4 + 4 + 4 + 20])
    assert write == ([198], [86])
    # A 4-byte write pads to the 64-byte minimum frame: 14+20+8+12+16+4+4+4 = 82 > 64; a
    # bare ACK is 66 B; an 8-byte READ request is 78 B. A 2 KB read: two 1024 B packets, AETH on both.
    assert roce_frames(MemRequest("read", 0, 0, 2048))[1] == [1110, 1110]
    assert roce_frames(MemRequest("read", 0, 0, 3072))[1] == [1110, 1106, 1110]
    cas = roce_frames(MemRequest("cas", 0, 0, 8))
    assert cas == ([14 + 20 + 8 + 12 + 28 + 4 + 4 + 20], [14 + 20 + 8 + 12 + 4 + 8 + 4 + 4 + 20])


def test_roce_and_edm_fixed_latencies_are_table_1():
    from edm import protocol as P
    from edm.ycsb import models
    assert models.edm_fixed_ps("read") == P.PAPER_EDM_READ_TOTAL_PS
    assert models.edm_fixed_ps("write") == P.PAPER_EDM_WRITE_TOTAL_PS
    assert models.roce_one_way_ps() == 1_017_840      # Table 1 RoCEv2 write: 1.02 us (1017.84 ns)
    # EDM's 1 KB read: RREQ 3 blocks, RRES in 256 B chunks of 34 blocks each (from the codec).
    from edm.ycsb.store import MemRequest
    c = models.edm_cost(MemRequest("read", 0, 0, 1024), gbps=25, chunk=256)
    assert c.latency_ps == P.PAPER_EDM_READ_TOTAL_PS + (3 - 1 + 4 * 34 - 1) * P.BLOCK_PS_25G
    assert c.wire_ps["m_down"] == (3 + 3) * P.BLOCK_PS_25G    # the RREQ and three more grants


def test_cxl_model_matches_the_simulators_alone_latency():
    from edm.sim import alone_ps
    from edm.sim.config import resolve
    from edm.ycsb import models
    from edm.ycsb.store import MemRequest
    cfg = resolve({"protocol": "cxl", "link_gbps": 25, "nodes": 4})
    for op, kind in ((0, "read"), (1, "write")):
        for size in (8, 100, 1024):
            ours = models.cxl_cost(MemRequest(kind, 0, 0, size), gbps=25).latency_ps
            assert ours == pytest.approx(alone_ps(cfg, op, size)), (kind, size)


@pytest.mark.parametrize("gbps", [25, 100])
def test_edm_model_matches_the_simulators_alone_latency(gbps):
    """Two oracles of EDM's unloaded latency (issue 39): this model and the simulator's
    closed form (protocol edm-paper, whose chunks follow one another as the model's do)."""
    from edm.sim import alone_ps
    from edm.sim.config import resolve
    from edm.ycsb import models
    from edm.ycsb.store import MemRequest
    cfg = resolve({"protocol": "edm-paper", "link_gbps": gbps, "nodes": 4})
    for op, kind, sizes in ((0, "read", (8, 64, 100, 256, 1024, 4096)), (1, "write", (8, 64, 100, 256, 1024, 4096)),
                            (2, "cas", (8,))):
        for size in sizes:
            ours = models.edm_cost(MemRequest(kind, 0, 0, size), gbps=gbps).latency_ps
            assert ours == alone_ps(cfg, op, size), (kind, size)


def test_edm_beats_roce_on_throughput_and_latency():
    from edm.ycsb.run import run_model
    for k in (1, 32):
        e = run_model("a", "edm", operations=1500, outstanding=k, seed=2, records=500)
        r = run_model("a", "roce", operations=1500, outstanding=k, seed=2, records=500)
        assert e["requests_per_second"] > r["requests_per_second"]
        assert e["mean_ns"] < r["mean_ns"]


def test_edm_ycsb_command_quick(tmp_path, capsys):
    import json
    from edm.cli import main
    out = tmp_path / "y.json"
    assert main(["ycsb", "--workload", "a", "f", "--fabric", "edm", "roce", "cxl", "--requests", "300",
                 "--records", "200", "--outstanding", "1", "8", "--json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert len(runs) == 2 * 3 * 2
    for r in runs:
        assert r["requests_per_second"] > 0 and r["p99_ns"] >= r["mean_ns"] > 0
    assert "| A | edm | 1 |" in capsys.readouterr().out
    assert main(["ycsb", "--workload", "e"]) == 2
    assert "--workload 'e'" in capsys.readouterr().err
    assert main(["ycsb", "--requests", "0"]) == 2
    assert "--requests: 0 must be at least 1" in capsys.readouterr().err


def test_rack_scale_message_stream_through_the_simulator():
    """Every request of every client becomes a simulator message with the
    store's memory node and address; all complete; EDM beats RoCEv2."""
    from edm.ycsb.rack import message_stream, run_rack
    rows, clients = message_stream("a", nodes=12, memory_nodes=3, operations=450, load=0.3, gbps=100, seed=3,
                                   records=300)
    assert len(clients) == 9 and len(rows) == sum(c.requests for c in clients)
    assert {r[3] for r in rows} == {9, 10, 11}
    for _, _, _, _, _, size, addr in rows:
        assert addr % 1024 in (0, *(8 + 100 * f for f in range(10))) and size in (1024, 100)
    e = run_rack("a", "edm", nodes=12, memory_nodes=3, load=0.3, gbps=100, operations=450, seed=3, records=300)
    r = run_rack("a", "pfc_dcqcn", nodes=12, memory_nodes=3, load=0.3, gbps=100, operations=450, seed=3,
                 records=300)
    assert e["operations"] == e["operations_issued"] == 450 and e["deadlocked"] == 0
    assert e["mean_ns"] < r["mean_ns"]


def test_reproduce_runs_figures_6_and_7_and_reuses_them(tmp_path, capsys):
    """edm reproduce's YCSB part: both presets stored, re-used while the code is
    unchanged, and the report's rows computed from them."""
    from edm.reproduce import ycsb as reproduce_ycsb

    doc = reproduce_ycsb.measure(tmp_path, quick=True)
    assert doc["requests"] == reproduce_ycsb.REQUESTS["quick"]
    rows6, rows7 = reproduce_ycsb.fig6_rows(doc), reproduce_ycsb.fig7_rows(doc)
    assert len(rows6) == 6 and len(rows7) == 4
    for row in rows6:  # EDM carries more requests than RoCEv2 in every case
        assert float(row["EDM / RoCEv2"]) > 1.0, row
    assert reproduce_ycsb.measure(tmp_path, quick=True) == doc
    assert "ycsb: reused" in capsys.readouterr().err

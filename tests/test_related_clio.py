"""Clio's translation model, allocation interface and workload (edm.related.clio*)."""

from __future__ import annotations

import pytest

from edm.protocol import codec
from edm.related import clio
from edm.related.clio_model import BucketFull, PageTable, Tlb, Translator, bucket_of, page_key


def test_tlb_is_lru_with_invalid_entries_first():
    t = Tlb(4)
    from edm.related.clio_model import Mapping

    m = Mapping(7, True)
    for v in range(4):
        assert t.fill(1, v, m) == v          # free entries first, lowest index
    t.touch(t.find(1, 0))                    # 0 is now the most recent: 1 is the LRU
    assert t.fill(1, 9, m) == 1
    t.invalidate(1, 2)
    assert t.fill(1, 10, m) == 2             # an invalid entry before the LRU one
    t.invalidate(1)
    assert all(e is None for e in t.entries)


def test_page_table_refuses_a_full_bucket_and_walks_one_bucket():
    pt = PageTable(buckets_log2=2, ways=2)
    key_bucket = bucket_of(page_key(5, 1), 2)
    same = [v for v in range(1, 200) if bucket_of(page_key(5, v), 2) == key_bucket][:3]
    pt.install(5, same[0], 10)
    pt.install(5, same[1], 11, writable=False)
    with pytest.raises(BucketFull):
        pt.install(5, same[2], 12)
    assert not pt.fits(5, [same[2]])
    xl = Translator(pt, tlb_entries=2)
    r = xl.translate(5, (same[1] << 12) + 8, 8, write=False)
    assert (r.address, r.denied, r.walked) == ((11 << 12) + 8, False, True)
    assert xl.translate(5, (same[1] << 12) + 8, 8, write=True).denied      # read-only
    assert xl.translate(5, (same[0] << 12) + 4092, 8, write=False).denied  # crosses the page
    assert xl.translate(6, same[0] << 12, 8, write=False).denied           # another space
    assert xl.translate(5, same[0] << 12, 0, write=False).address == 10 << 12
    # A slot's words are what the RTL reads.
    slot = pt.remove(5, same[0])
    assert pt.slot_words(slot) == (0, 0)


def test_allocation_skips_full_buckets_and_free_returns_shootdowns():
    node = clio.MemoryNodeSpaces(0, frames=64, buckets_log2=2, ways=2, seed=3)
    a, b = node.create_space(), node.create_space()
    assert a != b
    regions = []
    with pytest.raises(clio.AllocationError):
        for _ in range(20):                  # 8 slots: the table fills before the frames run out
            regions.append(node.allocate(a, 4096))
    assert node.retries > 0 and len(regions) == 8
    shoot = node.free(a, regions[0])
    assert shoot == [(a, regions[0] >> 12)] and node.table.lookup(a, regions[0] >> 12) is None
    assert node.destroy_space(a) == [(a, None)]
    assert not any(s for bucket in node.table.slots.values() for s in bucket)
    with pytest.raises(clio.AllocationError, match="no address space"):
        node.allocate(a, 10)


def test_region_addresses_carry_the_space():
    mem = clio.RemoteMemory({0: clio.MemoryNodeSpaces(0, frames=16)})
    r = mem.allocate(0, 10_000)
    assert codec.split_space_address(r.address(9_999)) == (r.asid, r.vaddr + 9_999)
    with pytest.raises(ValueError, match="outside"):
        r.address(10_000)
    assert len(mem.free(r)) == 3


def test_requests_stay_in_a_page_and_nothing_outside_is_served():
    args = clio.default_args(frames=1024, buckets_log2=8, processes=4, regions=3, requests=5000, outside=0.2,
                             seed=5)
    r = clio.run(args)
    assert r["requests"] == 5000 and r["served_outside"] == 0 and r["denied_inside"] == 0
    assert r["denied"] > 500 and r["served"] > 3000
    assert r["tlb_hits"] + r["walks"] > 0
    assert clio.run(args)["tlb_hits"] == r["tlb_hits"]       # the seed fixes everything
    assert all(n for _, n in clio.split_at_pages(4090, 20, 12))
    assert clio.split_at_pages(4090, 20, 12) == [(4090, 6), (4096, 14)]


def test_cli_reports_and_fails_on_a_leak(capsys, monkeypatch):
    from edm.cli import main

    assert main(["related", "clio", "--requests", "2000", "--processes", "2"]) == 0
    assert "served outside a mapping: 0" in capsys.readouterr().out
    monkeypatch.setattr(clio, "_outside", lambda *a: True)   # every served access now counts as a leak
    assert main(["related", "clio", "--requests", "200", "--processes", "2"]) == 1


def test_cli_names_what_ran_out():
    from edm.cli import main

    with pytest.raises(SystemExit, match="frames free"):
        main(["related", "clio", "--frames", "8", "--requests", "10"])


def test_simulated_translation_costs_hits_and_misses():
    """docs/related.md: a baseline's memory node pays each read's own
    translation (seeded hits and misses); EDM's switch plans every read for the
    bound, so each read pays the miss cost unless every access hits."""
    from edm import sim

    base = {"nodes": 8, "load": 0.001, "messages": 400, "write_ratio": 0.0, "seed": 4}
    xl = {"translate_hit_ps": 2_000, "translate_miss_ps": 33_280, "tlb_hit_rate": 0.7, "translate_seed": 9}
    plain = sim.run({**base, "protocol": "pfabric"}).messages
    translated = sim.run({**base, "protocol": "pfabric", **xl}).messages
    added = translated["complete_ps"] - plain["complete_ps"]
    # pFabric's memory node starts the response flow that much later; a 2 ns
    # hit hides in its sender's slack, a miss shows (less that slack).
    slower = added[added > 0]
    assert 0.2 < len(slower) / len(added) < 0.4 and 20_000 < slower.median() <= 33_280
    again = sim.run({**base, "protocol": "pfabric", **xl}).messages
    assert again["complete_ps"].tolist() == translated["complete_ps"].tolist()
    for op in (0, 1):   # EDM, alone: a read pays the bound, a write nothing
        cfg = {**base, "protocol": "edm"}
        extra = sim.alone_ps({**cfg, **xl}, op, 64) - sim.alone_ps(cfg, op, 64)
        assert extra == (33_280 if op == 0 else 0), (op, extra)
    # Off by default: a run with the fields at their defaults is the same run.
    off = sim.run({**base, "protocol": "edm", "translate_seed": 0, "tlb_hit_rate": 1.0}).messages
    assert off["complete_ps"].tolist() == sim.run({**base, "protocol": "edm"}).messages["complete_ps"].tolist()


def test_report_section_for_reproduce():
    text = clio.report_section(seed=2)
    assert text.startswith("### Clio") and "| 0 | 0 |" in text


def test_huge_pages_raise_the_tlb_hit_rate():
    small = clio.run(clio.default_args(requests=20_000))
    huge = clio.run(clio.default_args(requests=20_000, page_bits=21, frames=64))
    assert huge["served_outside"] == 0 and huge["tlb_hit_rate"] > 3 * small["tlb_hit_rate"]


def test_simulated_protection_serves_nothing_outside_on_every_protocol():
    """docs/related.md "Clio": the simulator's memory nodes check every request
    against the requester's mappings, for EDM and every baseline."""
    from edm import sim

    base = {"nodes": 8, "load": 0.2, "messages": 1000, "message_bytes": 512, "seed": 3, "protection": 1,
            "protection_outside": 0.2, "protection_page_bits": 12, "protection_seed": 5}
    seen = set()
    for protocol in clio.SIM_PROTOCOLS:
        r = sim.run({**base, "protocol": protocol})
        s = r.summary
        denied = s["denied_reads"] + s["denied_writes"]
        assert s["protection_checks"] == 1000 and (s["served_outside"], s["denied_inside"]) == (0, 0), protocol
        assert 150 < denied < 250 and s["denied_reads"] > 50 and s["denied_writes"] > 50, (protocol, denied)
        assert (r.messages["complete_ps"] >= 0).all(), f"{protocol}: a denied read completes with its empty response"
        # Bytes: a denied read delivers none, a denied write is dropped.
        assert s["delivered_bytes"] == (1000 - denied) * 512, protocol
        seen.add((s["denied_reads"], s["denied_writes"]))
    assert len(seen) == 1, f"the same workload and mappings give the same verdicts everywhere: {seen}"
    # A run aimed more outside denies more; off, nothing is checked.
    more = sim.run({**base, "protocol": "pfabric", "protection_outside": 0.6}).summary
    assert more["denied_reads"] + more["denied_writes"] > 2 * min(seen.pop())
    off = sim.run({**base, "protocol": "edm", "protection": 0}).summary
    assert "denied_reads" not in off and off["delivered_bytes"] == 1000 * 512
    with pytest.raises(ValueError, match="protection_page_bits: message 0 has 5000 bytes"):
        sim.run({**base, "message_bytes": 5000})


def test_a_denied_read_is_answered_sooner_and_the_cli_reports_the_simulator():
    rows = clio.simulate(seed=2, messages=600, protocols=("edm", "pfabric", "cxl"))
    for row in rows:
        assert row["served_outside"] == 0 and row["denied_inside"] == 0
        # No memory access and no data: sooner, on every protocol.
        assert row["read_denied_ns"] < row["read_served_ns"], row
    assert any("| pfabric |" in line for line in clio.simulation_table(rows))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_python_model_and_the_simulators_protection_agree_on_random_spaces_and_addresses(seed):
    """Two oracles of the memory node's rules (issue 39): edm.related.clio_model (the RTL's
    model: hash page table, TLB) given the simulator's mappings, and the simulator's own
    verdict (memory/protection.rs, `Layout::translate`) on seeded random queries, most near
    a mapping's edges: the same denials and the same physical addresses."""
    import random

    from edm import _core

    nodes, page_bits = 4, 12
    config = {"nodes": nodes, "protection": 1, "protection_page_bits": page_bits, "protection_regions": 3,
              "protection_read_only": 0.5, "protection_seed": seed}
    entries, _ = _core.protection_verdicts(config, [])
    assert entries and any(not w for *_, w in entries) and any(w for *_, w in entries)
    translators = [Translator(PageTable(buckets_log2=10, ways=8, page_bits=page_bits), tlb_entries=4)
                   for _ in range(nodes)]
    for memory, asid, vpn, frame, writable in entries:
        translators[memory].table.install(asid, vpn, frame, writable)
    rng = random.Random(seed)
    mapped = [(m, a, v) for m, a, v, _, _ in entries]
    queries = []
    for _ in range(6000):
        if rng.random() < 0.7:  # at or next to a mapped page, at a random or edge offset
            memory, asid, vpn = rng.choice(mapped)
            vpn += rng.choice([-1, 0, 0, 0, 1])
            off = rng.choice([0, rng.randrange(1 << page_bits), (1 << page_bits) - rng.choice([1, 8, 64])])
        else:  # anywhere: another space (ASID 0 and the memory node's own included), another node
            memory, asid, vpn = rng.randrange(nodes), rng.randrange(nodes + 2), rng.randrange(64)
            off = rng.randrange(1 << page_bits)
        va = max(vpn, 0) << page_bits | off
        queries.append((memory, codec.space_address(asid, va), rng.choice([0, 1, 8, 64, 256, 4096]),
                        rng.random() < 0.5))
    _, verdicts = _core.protection_verdicts(config, queries)
    served = 0
    for (memory, addr, nbytes, write), rust in zip(queries, verdicts):
        asid, va = codec.split_space_address(addr)
        model = translators[memory].translate(asid, va, nbytes, write)
        assert (None if model.denied else model.address) == rust, (memory, asid, hex(va), nbytes, write)
        served += rust is not None
    assert 1000 < served < 5000  # both verdicts are well exercised
    assert sum(t.hits for t in translators) > 100  # and the model's TLB, not only its walks

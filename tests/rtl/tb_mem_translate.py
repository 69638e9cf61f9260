"""cocotb: edm_mem_translate, the memory node's translation and protection,
against the Python model (edm.related.clio_model) and the page table itself.

The bench plays every neighbour of the stage, cycle by cycle:
  * edm_rx: request units (RREQ, WREQ, RMWREQ, built with the reference codec,
    addresses from edm.protocol.codec.space_address) block by block with random gaps,
    some ending in in_error, some cut short by in_abort, and /G/ grants in the
    gaps. Addresses are inside a mapping, cross a page, hit a read-only page or
    name random spaces and pages.
  * the DRAM: in-order answers 1..LAT cycles after a read is accepted, random
    ready; the page table's words come from the model's PageTable, other words
    from a fixed function of the address.
  * the engine: random reads of its own on eng_rd_*, whose answers must come
    back on eng_rsp_* in order and unchanged.
Checks: the events leave in the order and with the contents they came; each
committed unit's xl_addr / xl_deny equal the model's (TLB and page table
replayed in the same order), and independently of the model no unit that is
not denied is outside a mapping (page mapped for its space, writable for a
write, its bytes inside the page, the frame the table holds); the counters
equal the model's; alone in the stage (directed test) a TLB hit is never held
and a miss is held exactly the walk's bound.
"""

from __future__ import annotations

from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly

from edm import protocol
from edm.protocol import codec
from edm.related.clio_model import PageTable, Translator
from tbutil import clock_and_reset, seeded_random

PAGE_BITS = 12
PAGE = 1 << PAGE_BITS
PT_BASE = 0x4_0000
PT_BUCKETS_LOG2 = 4       # small: buckets fill up, so allocation must skip full ones
PT_WAYS = 4
TLB_ENTRIES = 8
NODE, SRC = 9, 5
WALK_READS = 2 * PT_WAYS


def data_word(addr: int) -> int:
    return (addr * 0x9E37_79B9_7F4A_7C15 + 0x1234) % (1 << 64)


def pack(block):
    return block[0] | (block[1] << 2)


class Bench:
    def __init__(self, dut, seed, *, lat=(1, 6), p_ready=0.8, p_eng=0.3, p_gap=0.3, pace=8):
        self.dut, self.rng = dut, seeded_random(seed)
        self.lat, self.p_ready, self.p_eng, self.p_gap = lat, p_ready, p_eng, p_gap
        self.pace = pace               # events in the stage at most (the link's pacing)
        self.mgmt = None               # (asid, vpn or None) to invalidate in the next cycle
        self.model = Translator(PageTable(PT_BUCKETS_LOG2, PT_WAYS, PT_BASE, PAGE_BITS), TLB_ENTRIES)
        self.table = self.model.table
        self.events = deque()          # input events to drive: dict per cycle
        self.sent = []                 # every event driven, in order
        self.got = []                  # every event delivered, in order
        self.expect_xl = deque()       # per unit looked up: (meta, Translation)
        self.commits = []              # (meta, addr, deny, held cycles)
        self.answers = deque()         # DRAM: (due, data, owner is the engine)
        self.last_due = 0
        self.eng_expect = deque()
        self.eng_reads = 0
        self.cycle = 0
        self.rx_open = None            # the unit on the output: [meta, blocks seen]
        self.denied_expected = 0
        self.input_cycle = {}          # id of a unit -> cycle its last block went in
        self.max_hold = {"hit": 0, "miss": 0}
        self.next_id = 0

    async def start(self):
        await clock_and_reset(self.dut, in_valid=0, in_block=0, in_first=0, in_last=0, in_error=0, in_abort=0,
                              grant_valid=0, grant_dst=0, grant_msg_id=0, grant_size=0, eng_rd_valid=0,
                              eng_rd_addr=0, dram_rd_ready=0, dram_rsp_valid=0, dram_rsp_data=0, mgmt_valid=0,
                              mgmt_asid=0, mgmt_vpn=0, mgmt_whole_space=0)

    # ------------------------------------------------------------ mappings
    def map_pages(self, asid: int, pages: int, writable=True) -> list[int]:
        """Maps `pages` pages of `asid` at the lowest free virtual pages whose
        buckets have room (the overflow-free rule); returns their vpns."""
        vpns, vpn = [], 1
        while len(vpns) < pages:
            if self.table.lookup(asid, vpn) is None and self.table.fits(asid, [vpn]):
                self.table.install(asid, vpn, 0x100 + self.rng.randrange(1 << 20), writable)
                vpns.append(vpn)
            vpn += 1
        return vpns

    # ------------------------------------------------------------ units
    def unit(self, kind, asid, va, n, fate="good"):
        """Queues a request unit; fate: good, error (in_error on its last
        block), abort (in_abort after a random number of its blocks)."""
        i, self.next_id = self.next_id, (self.next_id + 1) % 256
        addr = codec.space_address(asid, va)
        if kind == "RREQ":
            m = codec.Message("RREQ", SRC, NODE, i, n, addr=addr)
        elif kind == "WREQ":
            m = codec.Message("WREQ", SRC, NODE, i, n, addr=addr, data=bytes(self.rng.getrandbits(8) for _ in range(n)))
        else:
            m = codec.Message("RMWREQ", SRC, NODE, i, 8, addr=addr, op=protocol.RMW_FAA, arg0=1)
        blocks = codec.encode_message(m)
        if fate == "abort":
            blocks = blocks[:self.rng.randrange(1, len(blocks))]
        meta = dict(kind=kind, asid=asid, va=va, n=8 if kind == "RMWREQ" else n, fate=fate, uid=len(self.sent))
        # The model looks up every unit whose address arrived (T[2]), in order.
        if len(blocks) >= 3:
            self.expect_xl.append((meta, self.model.translate(asid, va, meta["n"], kind != "RREQ")))
        for j, b in enumerate(blocks):
            last = j == len(blocks) - 1 and fate != "abort"
            self.events.append(dict(in_valid=1, in_block=pack(b), in_first=int(j == 0), in_last=int(last),
                                    in_error=int(last and fate == "error"), meta=meta if last else None))
        if fate == "abort":
            self.events.append(dict(in_abort=1))
        self.gap()

    def gap(self):
        while self.rng.random() < self.p_gap:
            if self.rng.random() < 0.3:
                self.events.append(dict(grant_valid=1, grant_dst=self.rng.randrange(1024),
                                        grant_msg_id=self.rng.randrange(256), grant_size=self.rng.randrange(1 << 16)))
            else:
                self.events.append({})

    def random_unit(self, spaces):
        rng = self.rng
        kind = rng.choice(["RREQ", "RREQ", "WREQ", "RMWREQ"])
        n = {"RREQ": rng.choice([0, 8, 64, rng.randint(1, 1024)]), "WREQ": rng.randint(0, 64), "RMWREQ": 8}[kind]
        fate = rng.choices(["good", "error", "abort"], [0.85, 0.08, 0.07])[0]
        r = rng.random()
        if r < 0.6:                    # inside a mapping (may still cross a page or hit a read-only one)
            asid, vpns = rng.choice(spaces)
            off = rng.randrange(0, PAGE - max(n, 1) + 1) if rng.random() < 0.9 else rng.randrange(PAGE)
            va = (rng.choice(vpns) << PAGE_BITS) + off
        elif r < 0.8:                  # a mapped page of another space, or a neighbouring page
            asid, vpns = rng.choice(spaces)
            va = ((rng.choice(vpns) + rng.choice([-1, 1, 64])) << PAGE_BITS) + rng.randrange(PAGE - 64)
            asid = rng.choice([asid, asid ^ 1, rng.randrange(1 << 16)])
        else:                          # anywhere
            asid, va = rng.randrange(1 << 16), rng.randrange(1 << 48) & ~0x3F
        if kind == "RMWREQ":
            va &= ~7
        self.unit(kind, asid, va, n, fate)

    # ------------------------------------------------------------ one cycle
    def mem_word(self, addr):
        if PT_BASE <= addr < PT_BASE + self.table.size_bytes:
            slot = addr - (addr - PT_BASE) % 16
            return self.table.slot_words(slot)[(addr - slot) // 8]
        return data_word(addr)

    async def step(self, drive=True):
        dut, rng = self.dut, self.rng
        await FallingEdge(dut.clk)
        room = len(self.sent) - len(self.got) < self.pace
        ev = self.events.popleft() if (drive and room and self.events) else {}
        mgmt, self.mgmt = self.mgmt, None
        dut.mgmt_valid.value = int(mgmt is not None)
        dut.mgmt_asid.value = mgmt[0] if mgmt else 0
        dut.mgmt_vpn.value = (mgmt[1] or 0) if mgmt else 0
        dut.mgmt_whole_space.value = int(mgmt is not None and mgmt[1] is None)
        for name in ("in_valid", "in_first", "in_last", "in_error", "in_abort", "grant_valid"):
            getattr(dut, name).value = ev.get(name, 0)
        dut.in_block.value = ev.get("in_block", 0)
        for name in ("grant_dst", "grant_msg_id", "grant_size"):
            getattr(dut, name).value = ev.get(name, 0)
        if ev:
            self.sent.append(tuple(ev.get(k, 0) for k in EVENT_KEYS))
            if ev.get("meta"):
                self.input_cycle[ev["meta"]["uid"]] = self.cycle
        eng = rng.random() < self.p_eng
        eng_addr = (0x100_0000 + rng.randrange(1 << 16)) & ~7
        dut.eng_rd_valid.value = int(eng)
        dut.eng_rd_addr.value = eng_addr
        dut.dram_rd_ready.value = int(rng.random() < self.p_ready)
        rsp = self.answers.popleft() if self.answers and self.answers[0][0] <= self.cycle else None
        dut.dram_rsp_valid.value = int(rsp is not None)
        dut.dram_rsp_data.value = rsp[1] if rsp else 0
        await ReadOnly()
        # DRAM channel
        if dut.dram_rd_valid.value and dut.dram_rd_ready.value:
            addr = int(dut.dram_rd_addr.value)
            due = max(self.last_due + 1, self.cycle + rng.randint(*self.lat))
            self.last_due = due
            self.answers.append((due, self.mem_word(addr)))
        if eng and dut.eng_rd_ready.value:
            assert dut.dram_rd_valid.value and int(dut.dram_rd_addr.value) == eng_addr, \
                f"cycle {self.cycle}: the engine's read did not reach the DRAM as issued"
            self.eng_expect.append(data_word(eng_addr))
            self.eng_reads += 1
        if dut.eng_rsp_valid.value:
            assert self.eng_expect, f"cycle {self.cycle}: an answer reached the engine that it never asked for"
            assert int(dut.eng_rsp_data.value) == self.eng_expect.popleft(), f"cycle {self.cycle}: engine answer"
        # Output events
        out = {}
        if dut.out_valid.value:
            out.update(in_valid=1, in_block=int(dut.out_block.value), in_first=int(dut.out_first.value),
                       in_last=int(dut.out_last.value), in_error=int(dut.out_error.value))
        if dut.out_abort.value:
            out["in_abort"] = 1
        if dut.out_grant_valid.value:
            out.update(grant_valid=1, grant_dst=int(dut.out_grant_dst.value),
                       grant_msg_id=int(dut.out_grant_msg_id.value), grant_size=int(dut.out_grant_size.value))
        if out:
            self.got.append(tuple(out.get(k, 0) for k in EVENT_KEYS))
            self.observe(out, int(dut.xl_addr.value), int(dut.xl_deny.value))
        self.cycle += 1

    def observe(self, out, xl_addr, xl_deny):
        """Follows the units on the output; checks each commit."""
        if out.get("in_abort"):
            self.rx_open = None
        if not out.get("in_valid"):
            return
        if out["in_first"]:
            self.rx_open = 0
            return
        if self.rx_open is None:
            return
        self.rx_open += 1
        if self.rx_open == 2:          # T[2]: the unit was looked up
            self.current = self.expect_xl.popleft()
        if out["in_last"]:
            meta, xl = self.current
            self.rx_open = None
            if out["in_error"]:
                return
            held = self.cycle - self.input_cycle[meta["uid"]]
            self.commits.append((meta, xl_addr, xl_deny, held))
            assert xl_deny == int(xl.denied), f"cycle {self.cycle}: {meta}: deny {xl_deny}, model {xl}"
            if not xl.denied:
                assert xl_addr == xl.address, f"cycle {self.cycle}: {meta}: addr {xl_addr:#x}, model {xl}"
            else:
                self.denied_expected += 1
            self.check_protection(meta, xl_addr, xl_deny)
            if xl.hit:
                self.max_hold["hit"] = max(self.max_hold["hit"], held)
            elif xl.walked:
                self.max_hold["miss"] = max(self.max_hold["miss"], held)

    def check_protection(self, meta, xl_addr, xl_deny):
        """Independently of the TLB model: what is served is inside a mapping."""
        if xl_deny:
            return
        asid, va, n = meta["asid"], meta["va"], meta["n"]
        m = self.table.lookup(asid, va >> PAGE_BITS)
        assert m is not None, f"{meta}: served without a mapping"
        assert meta["kind"] == "RREQ" or m.writable, f"{meta}: a write served on a read-only page"
        assert (va % PAGE) + n <= PAGE, f"{meta}: served across a page boundary"
        assert xl_addr == (m.frame << PAGE_BITS) | (va % PAGE), f"{meta}: wrong frame {xl_addr:#x}"

    async def run_out(self, limit=20000):
        """Drives every queued event, then lets everything leave."""
        while self.events:
            await self.step()
            assert self.cycle < limit, "the stage stopped delivering"
        for _ in range(60):
            await self.step(drive=False)
        assert len(self.got) == len(self.sent), f"{len(self.sent)} events in, {len(self.got)} out"

    async def invalidate(self, asid, vpn=None):
        """Removes the mapping(s) from the table, then shoots down the TLB."""
        for v in [vpn] if vpn is not None else [k & ((1 << 48) - 1) for b in self.table.slots.values()
                                                 for s in b if s and s[0] >> 48 == asid for k in [s[0]]]:
            self.table.remove(asid, v)
        self.model.tlb.invalidate(asid, vpn)
        self.mgmt = (asid, vpn)
        await self.step(drive=False)

    def check_counters(self):
        dut = self.dut
        assert self.sent == self.got, "events were changed, lost or reordered"
        assert int(dut.cnt_tlb_hit.value) == self.model.hits, (int(dut.cnt_tlb_hit.value), self.model.hits)
        assert int(dut.cnt_tlb_miss.value) == self.model.walks, (int(dut.cnt_tlb_miss.value), self.model.walks)
        assert int(dut.cnt_denied.value) == self.denied_expected, (int(dut.cnt_denied.value), self.denied_expected)
        assert int(dut.cnt_overflow.value) == 0
        assert not self.expect_xl and not self.eng_expect


EVENT_KEYS = ("in_valid", "in_block", "in_first", "in_last", "in_error", "in_abort",
              "grant_valid", "grant_dst", "grant_msg_id", "grant_size")


@cocotb.test()
async def tlb_hit_miss_eviction(dut):
    """Directed: 8 misses fill the TLB, 8 hits, a 9th page evicts the least
    recently used, LRU order after touches, a read-only page, a cross-page
    access, a removed page; hit and miss cycles with a fixed DRAM latency."""
    b = Bench(dut, seed=1, lat=(4, 4), p_ready=1.0, p_eng=0.0, p_gap=0.0)
    await b.start()
    vpns = b.map_pages(7, 10)
    ro = b.map_pages(8, 1, writable=False)[0]
    page = lambda i, off=0: (vpns[i] << PAGE_BITS) + off  # noqa: E731

    async def access(kind, asid, va, n=8):
        b.unit(kind, asid, va, n)
        b.events.extend({} for _ in range(2 * WALK_READS + 20))  # alone in the stage
        await b.run_out()
        return b.commits[-1]

    for i in range(8):
        await access("RREQ", 7, page(i, 64))
    assert (int(dut.cnt_tlb_miss.value), int(dut.cnt_tlb_hit.value)) == (8, 0)
    for i in range(8):
        _, addr, deny, held = await access("RREQ", 7, page(i, 8 * i))
        assert not deny and held == 0, "a TLB hit must not hold the unit"
    assert (int(dut.cnt_tlb_miss.value), int(dut.cnt_tlb_hit.value)) == (8, 8)
    # Page 0 is the least recently used: page 8 evicts it; page 0 then misses
    # and evicts page 1; page 2 still hits.
    await access("RREQ", 7, page(8))
    await access("RREQ", 7, page(0))
    assert int(dut.cnt_tlb_miss.value) == 10
    await access("RREQ", 7, page(2))
    assert int(dut.cnt_tlb_hit.value) == 9
    await access("RREQ", 7, page(1))
    assert int(dut.cnt_tlb_miss.value) == 11
    miss_held = b.commits[-1][3]
    # Read-only page: reads pass, writes and RMWs are denied.
    assert not (await access("RREQ", 8, ro << PAGE_BITS))[2]
    assert (await access("WREQ", 8, ro << PAGE_BITS, 16))[2]
    assert (await access("RMWREQ", 8, ro << PAGE_BITS))[2]
    # Across a page boundary, another space's page, and a removed page.
    assert (await access("RREQ", 7, page(3, PAGE - 4), 8))[2]
    assert (await access("RREQ", 9, page(3)))[2]
    assert not (await access("WREQ", 7, page(3), 64))[2]
    await b.invalidate(7, vpns[3])
    assert (await access("WREQ", 7, page(3), 64))[2], "a removed mapping must be refused"
    b.check_counters()
    dut._log.info(f"translation cycles: TLB hit +0, miss +{miss_held} (DRAM latency 4, {WALK_READS} reads)")
    # The walk's bound: its reads one per cycle, the last answer LAT later, one
    # cycle to fill the TLB and one to resolve.
    assert miss_held == WALK_READS + 4 + 1, f"a miss held {miss_held} cycles"


@cocotb.test()
async def random_spaces_never_leak(dut):
    """Random address spaces, mappings and accesses from three sources of
    trouble (cross-page, read-only, unmapped), with errors, aborts, grants,
    engine reads and removals between rounds: every translation equals the
    model's and nothing outside a mapping is ever let through."""
    b = Bench(dut, seed=24)
    await b.start()
    spaces = []
    for asid in b.rng.sample(range(1, 1 << 16), 5):
        spaces.append((asid, b.map_pages(asid, b.rng.randint(1, 12), writable=b.rng.random() < 0.8)))
    for rnd in range(4):
        for _ in range(150):
            b.random_unit(spaces)
        await b.run_out()
        # Remove a page of one space and every page of another, then go on.
        asid, vpns = spaces[rnd % len(spaces)]
        if vpns:
            v = vpns.pop(b.rng.randrange(len(vpns)))
            await b.invalidate(asid, v)
        if rnd == 2:
            asid, vpns = spaces.pop()
            await b.invalidate(asid)
            b.map_pages(asid ^ 0x8000, 3)
    b.check_counters()
    denied = sum(1 for c in b.commits if c[2])
    dut._log.info(f"{len(b.commits)} units committed, {denied} denied, {b.model.hits} TLB hits, "
                  f"{b.model.walks} walks; held at most {b.max_hold}")
    assert denied > 50 and len(b.commits) - denied > 100 and b.model.hits > 50 and b.model.walks > 50

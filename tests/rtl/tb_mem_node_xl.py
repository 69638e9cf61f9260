"""cocotb: edm_mem_node_xl, the memory node with translation and protection
(edm_mem_translate in front of the edm_mem_node engine), against the engine's
reference bench (tb_mem_node.Bench) with the Clio model in front of it.

Requests name (address space, virtual address); a few spaces map random
virtual pages onto 15 physical frames (some read-only, some frames shared by
two spaces) through a hash page table in the node's last page, written into
the DRAM as the management side would. Each unit is translated by the model
(edm.related.clio_model) in arrival order from the blocks as sent, so even a
corrupted address is looked up as the RTL sees it; a denied RREQ or RMWREQ
must get an empty STATUS_DENIED response, a denied WREQ must change nothing.
Checks, beyond the engine bench's (every response byte, grant order, the
memory equal to the model at the end, counters): every DRAM read is of a
mapped frame or the page table, every DRAM write of a frame some space maps
writable, and cnt_denied / cnt_tlb_hit / cnt_tlb_miss equal the model's.

`translation_latency` also runs on the plain edm_mem_node (no translation):
the cycles from an RREQ's last block to its first DRAM read and to its first
response block, written as JSON for `edm rtl latency --translation`.
"""

from __future__ import annotations

import dataclasses
import json
import os

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly

from edm import protocol
from edm.protocol import codec
from edm.related.clio_model import PageTable, Translator
from tb_mem_node import BASE, MAX_WRITE, NODE, REQUESTERS, Bench, pack
from tbutil import Dram

PAGE_BITS = 12
PAGE = 1 << PAGE_BITS
FRAMES = 15                          # data frames; the page table takes the 16th page
PT_BASE = BASE + FRAMES * PAGE
PT_BUCKETS_LOG2 = 4
PT_WAYS = 4
FIRST_FRAME = BASE >> PAGE_BITS


class XlBench(Bench):
    def __init__(self, dut, seed, **kw):
        super().__init__(dut, seed, **kw)
        init = bytes(self.rng.getrandbits(8) for _ in range(FRAMES * PAGE)) + bytes(PAGE)
        self.model, self.dram = bytearray(init), bytearray(init)
        self.mem = Dram(self.dram, BASE, self.rng, self.lat)
        self.mem_accept = self.mem.accept
        self.mem.accept = self.accept_checked
        self.xlm = Translator(PageTable(PT_BUCKETS_LOG2, PT_WAYS, PT_BASE, PAGE_BITS), 8)
        self.xl = {}                   # id(message) -> its Translation
        self.denied = 0
        self.readable, self.writable = set(), set()
        self.spaces = []
        for asid in self.rng.sample(range(1 << 16), 4):
            vpns = []
            for vpn in self.rng.sample(range(1, 1 << 20), 6):
                if self.xlm.table.fits(asid, [vpn]):
                    self.install(asid, vpn, FIRST_FRAME + self.rng.randrange(FRAMES), self.rng.random() < 0.8)
                    vpns.append(vpn)
            self.spaces.append((asid, vpns))

    def install(self, asid, vpn, frame, writable):
        """The management side: the slot's two words into the DRAM (and the model's copy)."""
        slot = self.xlm.table.install(asid, vpn, frame, writable)
        words = self.xlm.table.slot_words(slot)
        raw = words[0].to_bytes(8, "little") + words[1].to_bytes(8, "little")
        o = slot - BASE
        self.dram[o:o + 16] = raw
        self.model[o:o + 16] = raw
        self.readable.add(frame)
        if writable:
            self.writable.add(frame)

    def accept_checked(self, cycle, rd_addr=None, wr_addr=None, wr_data=0, wr_mask=0):
        if rd_addr is not None:
            assert rd_addr >> PAGE_BITS in self.readable or PT_BASE <= rd_addr < PT_BASE + PAGE, \
                f"cycle {cycle}: read of {rd_addr:#x}, no space maps it"
        if wr_addr is not None:
            assert wr_addr >> PAGE_BITS in self.writable, f"cycle {cycle}: write of {wr_addr:#x}, no space may"
        self.mem_accept(cycle, rd_addr, wr_addr, wr_data, wr_mask)

    # ------------------------------------------------------------ requests
    def rand_addr(self, n, align=1):
        rng = self.rng
        asid, vpns = rng.choice(self.spaces)
        r = rng.random()
        if r < 0.75:                   # inside a mapped page
            off = rng.randrange(0, PAGE - n + 1)
            va = (rng.choice(vpns) << PAGE_BITS) + off - off % align
        elif r < 0.85:                 # across the end of a mapped page
            va = (rng.choice(vpns) << PAGE_BITS) + PAGE - max(align, n // 2) // align * align
        else:                          # another space's or an unmapped page
            other, _ = rng.choice(self.spaces)
            va = (rng.choice(vpns + [rng.randrange(1 << 20)]) << PAGE_BITS) + rng.randrange(0, PAGE - n + 1)
            va -= va % align
            asid = rng.choice([other, rng.randrange(1 << 16)])
        return codec.space_address(asid, va)

    def add(self, m, fate="good"):
        super().add(m, fate)
        blocks = self.units[-1][0]
        if m.kind == "RRES" or len(blocks) < 3:
            return
        # The address word as the node receives it: T[1][63:16], then T[2]'s
        # first two bytes (the /MT/ tail of an RREQ).
        t2 = blocks[2][1] >> 16 if blocks[2][0] == protocol.SYNC_CTRL else blocks[2][1]
        asid, va = codec.split_space_address((blocks[1][1] >> 16) | ((t2 & 0xFFFF) << 48))
        n = protocol.RMW_OPERAND_BYTES if m.kind == "RMWREQ" else m.length
        self.xl[id(m)] = self.xlm.translate(asid, va, n, m.kind != "RREQ")

    def apply(self, m):
        xl = self.xl.pop(id(m), None)
        if xl is None:                 # an RRES: not a request, dropped
            return super().apply(m)
        if xl.denied:
            self.denied += 1
            if m.kind == "WREQ":       # never written (an oversize one is also dropped)
                if m.length > MAX_WRITE:
                    self.expect["dropped"] += 1
                return
            self.responses_denied += 1
            return self.respond(m, b"", protocol.STATUS_DENIED)
        super().apply(dataclasses.replace(m, addr=xl.address))

    def check_final(self):
        super().check_final()
        got = [int(self.dut.cnt_denied.value), int(self.dut.cnt_tlb_hit.value), int(self.dut.cnt_tlb_miss.value)]
        assert got == [self.denied, self.xlm.hits, self.xlm.walks], (got, self.denied, self.xlm.hits, self.xlm.walks)


async def new_xl_bench(dut, seed, **kw):
    b = XlBench(dut, seed, **kw)
    await b.start()
    dut.mgmt_valid.value = 0
    return b


@cocotb.test()
async def protected_random_mix(dut):
    """Reads, writes and RMWs from four address spaces, a quarter outside their
    mappings, with the engine bench's faults (corrupted and aborted units,
    random grants, DRAM latency and back-pressure, TX stalls)."""
    b = await new_xl_bench(dut, 11)
    for _ in range(600):
        fate = b.rng.choices(["good", "error", "abort", "abort_ms"], [90, 4, 3, 3])[0]
        b.rand_any(fate, read_bytes=lambda: b.rng.choice([8, 64, b.rng.randint(1, 1024)]))
    await b.run()
    b.check_final()
    dut._log.info("protected mix: %s, %d denied, %d TLB hits, %d walks, %d cycles",
                  b.expect, b.denied, b.xlm.hits, b.xlm.walks, b.cycle)
    assert b.denied > 60 and b.expect["rreq"] > 100 and b.expect["wreq"] > 100 and b.expect["rmw"] > 30
    assert b.xlm.hits > 100 and b.xlm.walks > 50


@cocotb.test()
async def translation_latency(dut):
    """One 64 B read alone, DRAM latency 4, no back-pressure: cycles from its
    last block in to its first data read and to its response's first block;
    with translation on a TLB miss (the first read of a page) and a hit."""
    translating = hasattr(dut, "cnt_tlb_hit")
    b = (await new_xl_bench(dut, 12, lat=(4, 4), p_ready=1.0)) if translating else None
    if b is None:
        b = Bench(dut, 12, lat=(4, 4), p_ready=1.0)
        await b.start()
    for name in ("in_valid", "in_first", "in_last", "in_error", "in_abort", "grant_valid"):
        getattr(dut, name).value = 0
    dut.dram_rd_ready.value = 1
    dut.dram_wr_ready.value = 1
    dut.out_ready.value = 1

    clock = [0]   # the DRAM model's cycle, across reads

    async def one_read(addr, phys, msg_id):
        blocks = codec.encode_message(codec.Message("RREQ", REQUESTERS[0], NODE, msg_id, 64, addr=addr))
        start = cycle = clock[0]
        last_in = first_rd = first_out = None
        while first_out is None:
            await FallingEdge(dut.clk)
            i = cycle - start
            dut.in_valid.value = int(i < len(blocks))
            dut.in_block.value = pack(blocks[i]) if i < len(blocks) else 0
            dut.in_first.value = int(i == 0)
            dut.in_last.value = int(i == len(blocks) - 1)
            answer = b.mem.answer(cycle)
            dut.dram_rsp_valid.value = int(answer is not None)
            dut.dram_rsp_data.value = answer or 0
            await ReadOnly()
            if i == len(blocks) - 1:
                last_in = cycle
            if int(dut.dram_rd_valid.value):
                rd = int(dut.dram_rd_addr.value)
                b.mem.accept(cycle, rd)
                if rd == phys and first_rd is None:
                    first_rd = cycle
            if int(dut.out_valid.value):
                first_out = cycle
            cycle += 1
            assert cycle - start < 200, "no response"
        for _ in range(30):            # the rest of the response leaves
            await FallingEdge(dut.clk)
            dut.in_valid.value = 0
            answer = b.mem.answer(cycle)
            dut.dram_rsp_valid.value = int(answer is not None)
            dut.dram_rsp_data.value = answer or 0
            cycle += 1
        clock[0] = cycle
        return {"to_first_dram_read": first_rd - last_in, "to_first_response_block": first_out - last_in}

    if translating:
        asid, vpns = next((a, v) for a, v in b.spaces if v)
        va = (vpns[0] << PAGE_BITS) + 64
        phys = b.xlm.table.lookup(asid, vpns[0]).frame * PAGE + 64
        result = {"miss": await one_read(codec.space_address(asid, va), phys, 1),
                  "hit": await one_read(codec.space_address(asid, va), phys, 2),
                  "walk_reads": 2 * PT_WAYS, "dram_latency": 4}
    else:
        result = {"plain": await one_read(BASE + 64, BASE + 64, 1), "dram_latency": 4}
    dut._log.info("translation latency: %s", result)
    out = os.environ.get("EDM_XL_LATENCY_JSON")
    if out:
        with open(out, "w") as f:
            json.dump(result, f)

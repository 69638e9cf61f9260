"""cocotb: the dual switch in RTL (tests/rtl/tb_dual_fabric_top.sv, paper
§3.3, docs/faults.md §6): two planes, each an edm_switch with a link to every
host; compute hosts mirror every request on both planes (edm_mirror, an
engine per plane), memory hosts apply the first copy of each write and RMW
(edm_dup_filter in front of an engine per plane, both on one memory).

The bench plays the applications, each compute engine's local memory (its
plane's receive buffer; a write's data is put in both) and each memory
node's DRAM (the two engines' channels on one byte array). Traffic from
every compute node to every memory node: reads of a region nobody writes,
writes each to bytes never written before, and fetch-and-add on a word per
(compute node, memory node), one at a time per word; at the end every
written region is read back through the fabric.

Faults (a cut: every block on the wire garbled in both directions, so both
link guards take the link down, as loss of signal would):
  * compute_link_cut: compute node 0's plane-0 link is cut with traffic in
    flight and restored 400 cycles later.
  * memory_link_cut: memory node 0's plane-1 link, likewise (the compute
    nodes do not see it).
  * switch_stopped: plane 1's switch is held in reset (its state lost) and
    its links cut, for good, with traffic in flight.
  * two_link_cuts: compute_link_cut, then, once that plane is whole again,
    memory node 0's plane-1 link (a fault on each plane in turn).
  * no_fault: both planes whole.
Order across a memory node's two engines (no fault): shared_word (writes and
fetch-and-adds of one word: one sequential order explains them) and
shared_reads (reads, writes and adds of a region, each checked against the
engines' commit order).
Checks: every request completes exactly once (no hang), with STATUS_OK (an
RMW whose answer was lost with its plane gets the result kept for its second
copy); every
read's bytes, from the receive buffer of the plane the completion names,
equal the model; every DRAM equals the model byte for byte at the end; the
DRAM word writes equal those of every write and RMW applied exactly once;
fetch-and-add returns exactly the running sums (each applied once, in
order); without a fault every write chunk and RMW is marked once as a
second copy at its memory node and every request's second completion is
dropped; with one, at most that many.
Failover figures (logged, and written as JSON to $EDM_DUAL_JSON when set):
requests in flight at the fault, lost (not completed) and duplicated
(applied twice), and for the hosts behind the fault the longest time
without a completion before and after it, and from the fault to the first
completion of a request issued after it.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
import tbutil
from tbutil import Dram, drive_requests, start_fabric

RBASE = 0x0000_1000_0000_0000
RSIZE = 32768
RO_SIZE = 4096            # read-only region [0, RO_SIZE)
WR_BASE, WR_END = 4096, 28672   # each byte written at most once
ATOM_BASE = 28672         # the fetch-and-add word of compute node c: ATOM_BASE + 8 c
SHARED = ATOM_BASE + 64   # the word every compute node writes and adds to (shared_word)
REGION, REGION_SIZE = ATOM_BASE + 128, 32   # the words every compute node reads, writes and adds to (shared_reads)
LBASE = 0x0000_0040_0000_0000
LSIZE = 1 << 18
K_RREQ, K_WREQ, K_RMW = protocol.KIND_RREQ, protocol.KIND_WREQ, protocol.KIND_RMWREQ
OK = protocol.STATUS_OK
UNKNOWN = protocol.STATUS_DENIED   # ACKS: an RMW re-sent whose result the memory node no longer kept
CUT = ((1 << 66) - 1) & ~0b10   # payload garbled, sync header invalid (01 -> 00, 10 -> 11)
TAGS = 16                        # edm_mirror's TAGS_LOG2 = 4
CHUNK = protocol.DEFAULT_CHUNK_BYTES


def field(bus: int, k: int, w: int) -> int:
    return (bus >> (k * w)) & ((1 << w) - 1)


def is_ctrl(block: int, subtype: int) -> bool:
    """A 66-bit {payload, sync} block is the EDM control block of this subtype."""
    return block & 3 == protocol.SYNC_CTRL and (block >> 2) & 0xFFFF == subtype << 8


def ms_kind(block: int) -> int:
    """The kind an /MS/ block's header names (message bytes start at payload byte 2)."""
    return (block >> 18) & 7


class AnswerTimes:
    """$EDM_DUAL_ANSWER=1: how long each healthy host's engine takes to answer
    a control unit (docs/faults.md §5, the circuit timeout's bound): per link,
    the cycles from a /G/ (or, at a memory node, a forwarded RREQ/RMWREQ's
    /MS/) reaching the engine to the engine's /MS/ of the WREQ or RRES unit
    that answers it (hosts answer in order). Runs without faults only (a
    stray or lost grant has no answer); the longest per kind of host is
    logged and written to the JSON summary."""

    def __init__(self, dut, nc, n):
        self.dut, self.nc, self.n = dut, nc, n
        self.waiting = [deque() for _ in range(2 * n)]
        self.longest = {"compute": 0, "memory": 0}
        self.answered = {"compute": 0, "memory": 0}

    def sample(self, cyc):
        d = self.dut
        ev, er, eb = int(d.e_valid.value), int(d.e_ready.value), int(d.e_block.value)
        rv, rf, rb = int(d.r_valid.value), int(d.r_first.value), int(d.r_block.value)
        gv = int(d.g_valid.value)
        for k in range(2 * self.n):
            host = "compute" if k // 2 < self.nc else "memory"
            if gv >> k & 1:
                self.waiting[k].append(cyc)
            b = field(rb, k, 66)
            if rv >> k & rf >> k & 1 and ms_kind(b) in (K_RREQ, K_RMW):
                self.waiting[k].append(cyc)
            b = field(eb, k, 66)
            if ev >> k & er >> k & 1 and is_ctrl(b, protocol.SUB_MS) and ms_kind(b) in (K_WREQ, protocol.KIND_RRES):
                assert self.waiting[k], f"cycle {cyc}: link {k} sent a unit no control unit asked for"
                self.longest[host] = max(self.longest[host], cyc - self.waiting[k].popleft())
                self.answered[host] += 1

    def summary(self):
        return dict(longest=self.longest, answered=self.answered)


class PortLog:
    """$EDM_DUAL_PORTS=y: plane y logged cycle by cycle at its hosts' engines
    (diagnosis, docs/faults.md §6): each /N/ (destination, id, bytes) and
    RREQ/RMWREQ a host's engine sends, each grant it receives, the circuits the switch
    gives up or units it drops per ingress, and the compute engines' /N/
    re-sends, stray grants and timeouts."""

    def __init__(self, dut, plane, n):
        self.dut, self.plane, self.n = dut, plane, n
        self.last = {}

    def changed(self, key, now):
        moved = now != self.last.get(key, 0)
        self.last[key] = now
        return moved

    def sample(self, cyc):
        d, y, log = self.dut, self.plane, self.dut._log.info
        ev, er, eb = int(d.e_valid.value), int(d.e_ready.value), int(d.e_block.value)
        gv, gd, gi, gs = int(d.g_valid.value), int(d.g_dst.value), int(d.g_id.value), int(d.g_size.value)
        rv, rf, rb = int(d.r_valid.value), int(d.r_first.value), int(d.r_block.value)
        lost, dropped = int(d.sw_cnt_lost_grants.value), int(d.sw_cnt_dropped.value)
        for x in range(self.n):
            k = 2 * x + y
            b = field(eb, k, 66)
            if ev >> k & er >> k & 1 and is_ctrl(b, protocol.SUB_N):   # payload {.., size, id, dst, SUB_N, BT_EDM}
                log(f"PORTS {cyc} host {x} sends /N/ -> {(b >> 18) & 0x3FF} id {(b >> 28) & 0xFF} "
                    f"{(b >> 36) & 0xFFFF} B")
            if ev >> k & er >> k & 1 and is_ctrl(b, protocol.SUB_MS) and ms_kind(b) in (K_RREQ, K_RMW):
                log(f"PORTS {cyc} host {x} sends {'RREQ' if ms_kind(b) == K_RREQ else 'RMWREQ'} -> "
                    f"{(b >> 31) & 0x3FF} id {(b >> 41) & 0xFF}")
            if ev >> k & er >> k & 1 and is_ctrl(b, protocol.SUB_MS) and ms_kind(b) == protocol.KIND_RRES:
                log(f"PORTS {cyc} host {x} sends RRES -> {(b >> 31) & 0x3FF} id {(b >> 41) & 0xFF}")
            r = field(rb, k, 66)
            if rv >> k & rf >> k & 1 and is_ctrl(r, protocol.SUB_MS):
                log(f"PORTS {cyc} host {x} receives kind {ms_kind(r)} from {(r >> 21) & 0x3FF} id {(r >> 41) & 0xFF}")
            if gv >> k & 1:
                log(f"PORTS {cyc} host {x} gets /G/ -> {field(gd, k, 10)} id {field(gi, k, 8)} {field(gs, k, 16)} B")
            if self.changed(("lost", k), field(lost, k, 16)):
                log(f"PORTS {cyc} switch gives up a circuit of ingress {x} ({field(lost, k, 16)})")
            if self.changed(("dropped", k), field(dropped, k, 16)):
                log(f"PORTS {cyc} switch drops a unit of ingress {x} ({field(dropped, k, 16)})")
        for name in ("cn_cnt_retries", "cn_cnt_stray", "cn_cnt_timeouts"):
            v = int(getattr(d, name).value)
            for c in range(len(d.req_valid)):
                if self.changed((name, c), field(v, 2 * c + y, 16)):
                    log(f"PORTS {cyc} compute node {c} {name} {field(v, 2 * c + y, 16)}")


class BitErrors:
    """Bit errors on every link's line (scrambled blocks, sync headers included),
    both directions, both planes, from their own seeded stream: each bit starts
    an error burst with probability ber / burst, independently; a burst of
    `burst` bits flips its first and last bit and each bit between with
    probability 1/2 (burst 1: single bit errors at `ber`). A burst is cut at
    its block's end. draw() gives one cycle's (up_flip, down_flip) buses."""

    def __init__(self, links, ber, burst, seed, log=None):
        self.links, self.burst, self.log = links, max(1, burst), log
        self.rng = random.Random(seed)
        self.p = ber / self.burst                   # burst starts per bit
        self.bits = 2 * links * 66                  # line bits per cycle, up then down
        self.next = self.gap()
        self.bursts = 0
        self.flipped = 0

    def gap(self):
        u = 1.0 - self.rng.random()
        return int(math.log(u) / math.log1p(-self.p)) if self.p > 0 else 1 << 62

    def draw(self):
        buses = [0, 0]
        while self.next < self.bits:
            way, bit = divmod(self.next, self.links * 66)
            start = bit % 66
            n = min(self.burst, 66 - start)
            mask = 1 | (1 << (n - 1)) | sum(1 << k for k in range(1, n - 1) if self.rng.random() < 0.5)
            buses[way] |= mask << bit
            if self.log is not None:   # $EDM_DUAL_FLIPS: each burst logged (diagnosis)
                self.log(f"FLIP {'down' if way else 'up'} link {bit // 66} (port {bit // 132}, plane "
                         f"{bit // 66 % 2}) bits {mask << start:#x}")
            self.bursts += 1
            self.flipped += bin(mask).count("1")
            self.next += 1 + self.gap()
        self.next -= self.bits
        return buses


class Dual:
    def __init__(self, dut, seed):
        self.dut = dut
        self.rng = random.Random(seed)
        self.nc = len(dut.req_valid)
        self.nm = len(dut.dram_rd_valid) // 2
        self.n = self.nc + self.nm
        rng = self.rng
        init = [bytes(rng.getrandbits(8) for _ in range(RSIZE)) for _ in range(self.nm)]
        self.init = init                   # the memories as they start (bit_errors: bytes no copy wrote)
        self.run_limit = 40000             # run(): cycles before "the fabric did not finish (hang)"
        # $EDM_DUAL_ACKS (the top built with ACKS = 1): cycles without /A/ before a
        # write is re-sent (edm_write_retry); each write's outcome, (cycle, c, dst, id, tag, ok).
        self.ack_timeout = int(os.environ.get("EDM_DUAL_ACKS") or 0)
        self.outcomes: list = []
        self.dram = [bytearray(b) for b in init]
        self.model = [bytearray(b) for b in init]
        for m in range(self.nm):
            for o in [ATOM_BASE + 8 * c for c in range(self.nc)] + [SHARED]:
                self.dram[m][o:o + 8] = self.model[m][o:o + 8] = bytes(8)
        self.mem = [[Dram(self.dram[m], RBASE, rng, (1, 4)) for _ in range(2)] for m in range(self.nm)]
        self.lmem = [[bytearray(LSIZE) for _ in range(2)] for _ in range(self.nc)]
        self.lrd_q = [[deque() for _ in range(2)] for _ in range(self.nc)]
        self.lrd_due = [[0, 0] for _ in range(self.nc)]
        self.lalloc = [0] * self.nc
        self.wr_next = [WR_BASE] * self.nm
        self.submit = [deque() for _ in range(self.nc)]
        self.outstanding = [dict() for _ in range(self.nc)]
        self.free_tags = [list(range(TAGS)) for _ in range(self.nc)]
        self.done: list = []
        self.writes: list = []
        self.faa: dict = {}                 # (c, m) -> requests in issue order
        self.faa_busy: set = set()
        self.dram_words = [0] * self.nm     # word writes the DRAM took
        self.cuts: set = set()              # (port, plane) cut now
        self.run_switch = [1, 1]
        self.cycle = 0
        self.cpl_cycles = [[] for _ in range(self.nc)]
        self.to_issue = [0] * self.nc      # random requests still to make
        self.faults: list = []             # cycles at which a fault began
        self.extra_words = 0               # DRAM word writes beyond every write and RMW once
        self.shared: list = []             # shared_word: its requests, checked by serialize()
        self.ordered: list = []            # shared_reads: its requests, checked by replay_commits()
        self.commits: list | None = None   # (cycle, plane, src, id, kind, dup) of memory node 0's engines
        self.races = 0                     # a word read by one engine and written by the other in one cycle
        self.stale_reads: list = []        # reads whose bytes differ from the commit-order model
        self.region_start = bytes(self.dram[0][REGION:REGION + REGION_SIZE])
        self.dram_ready = 1.0              # how often each DRAM channel takes a request
        self.ber = None                    # bit_errors: the BitErrors on every link
        self.fcommits: list | None = None  # bit_errors: the filters' verdicts (cycle, m, plane, src, id, kind, seq, dup, stale)
        self.allow_fail = False            # bit_errors: a read or RMW may complete failed (its answers lost)
        self.ids: dict = {}                # (c, m, id) -> requests given that id, in issue order
        self.dram_log: list = []           # bit_errors: every DRAM word write (diagnosis)
        plane = os.environ.get("EDM_DUAL_PORTS")   # a plane's switch events, logged (diagnosis)
        self.port_log = None if plane is None else PortLog(dut, int(plane), self.n)
        self.answer_times = AnswerTimes(dut, self.nc, self.n) if os.environ.get("EDM_DUAL_ANSWER") else None

    # ---------------------------------------------------------------- requests
    def request(self, c, kind, m, off, size=8, **kw):
        r = dict(c=c, kind=kind, m=m, dst=self.nc + m, off=off, len=size, **{"op": 0, "arg0": 0, "arg1": 0, **kw})
        assert self.lalloc[c] + size <= LSIZE, "local buffers used up: a shorter run"
        r["loff"] = self.lalloc[c]
        self.lalloc[c] += (size + 63) // 64 * 64
        if kind == K_WREQ:
            data = bytes(self.rng.getrandbits(8) for _ in range(size))
            for y in range(2):
                self.lmem[c][y][r["loff"]:r["loff"] + size] = data
            r["data"] = data
            self.model[m][off:off + size] = data
            self.writes.append(r)
        self.submit[c].append(r)
        return r

    def random_request(self, c):
        rng = self.rng
        m = rng.randrange(self.nm)
        x = rng.random()
        if x < 0.15 and (c, m) not in self.faa_busy:
            self.faa_busy.add((c, m))
            r = self.request(c, K_RMW, m, ATOM_BASE + 8 * c, op=protocol.RMW_FAA, arg0=rng.randrange(1, 1 << 20))
            self.faa.setdefault((c, m), []).append(r)
        elif x < 0.55:
            size = rng.choice([8, 64, 100, 256, 300, 512])
            off = rng.randrange(0, RO_SIZE - size)
            self.request(c, K_RREQ, m, off, size, expect=bytes(self.model[m][off:off + size]))
        else:
            size = rng.choice([8, 64, 100, 256, 300, 512])
            off = self.wr_next[m] + rng.randrange(8)
            if off + size > WR_END:
                return
            self.wr_next[m] = off + size
            self.request(c, K_WREQ, m, off, size)

    def ber_request(self, c):
        """bit_errors' traffic: most requests to memory node 0 (a source's ids
        there run fast), fetch-and-adds of one word per memory node that every
        compute node adds to, several in flight; reads of the read-only region;
        writes each to bytes never written before."""
        rng = self.rng
        m = 0 if rng.random() < 0.7 else rng.randrange(self.nm)
        x = rng.random()
        size = rng.choice([8, 64, 100, 256, 300, 512])
        off = self.wr_next[m] + rng.randrange(8)
        if x < 0.3:
            self.faa.setdefault((c, m), []).append(
                self.request(c, K_RMW, m, SHARED, op=protocol.RMW_FAA, arg0=rng.getrandbits(40)))
        elif x < 0.65 or off + size > WR_END:
            off = rng.randrange(0, RO_SIZE - size)
            self.request(c, K_RREQ, m, off, size, expect=bytes(self.model[m][off:off + size]))
        else:
            self.wr_next[m] = off + size
            self.request(c, K_WREQ, m, off, size)

    def busy(self):
        return any(self.submit) or any(self.outstanding) or any(self.to_issue)

    def feed(self):
        """Random requests are made as the queue empties, so a fetch-and-add can
        wait for the previous one on its word."""
        for c in range(self.nc):
            while self.to_issue[c] and len(self.submit[c]) < 2:
                self.to_issue[c] -= 1
                (self.random_request if self.fcommits is None else self.ber_request)(c)

    # ---------------------------------------------------------------- the clock
    async def start(self, timeout=1500, retry=2000, sw_run=3):
        await start_fabric(self.dut, sw_run=sw_run, cfg_timeout=timeout, cfg_retry=retry, h_enc_block=0, s_enc_block=0,
                           cfg_ack_timeout=self.ack_timeout, cfg_give_up=GIVE_UP)

    async def step(self):
        d, rng, nc, nm = self.dut, self.rng, self.nc, self.nm
        await FallingEdge(d.clk)
        cyc = self.cycle
        # ---- drive
        heads = []
        for c in range(nc):
            r = self.submit[c][0] if self.submit[c] else None
            if r is not None and "tag" not in r:
                if not self.free_tags[c]:
                    r = None
                else:
                    r["tag"] = self.free_tags[c].pop(0)
                    r["t_offer"] = cyc   # an engine may take it (and send it) before the other
            heads.append(r)
        drive_requests(d, heads, RBASE, LBASE)
        cpl_ready = sum(1 << c for c in range(nc) if rng.random() < 0.85)
        d.cpl_ready.value = cpl_ready
        d.lrd_ready.value = sum(1 << e for e in range(2 * nc) if rng.random() < 0.85)
        d.lwr_ready.value = (1 << 2 * nc) - 1   # local memories keep up with the links
        dram_rd_ready = dram_wr_ready = (1 << 2 * nm) - 1
        if self.dram_ready < 1:   # (no draws otherwise: the other tests' traffic stays as it was)
            dram_rd_ready = sum(1 << e for e in range(2 * nm) if rng.random() < self.dram_ready)
            dram_wr_ready = sum(1 << e for e in range(2 * nm) if rng.random() < self.dram_ready)
        d.dram_rd_ready.value, d.dram_wr_ready.value = dram_rd_ready, dram_wr_ready
        v = data = 0
        for c in range(nc):
            for y in range(2):
                q = self.lrd_q[c][y]
                if q and q[0][0] <= cyc:
                    v |= 1 << (2 * c + y)
                    data |= q.popleft()[1] << (64 * (2 * c + y))
        d.lrd_rsp_valid.value, d.lrd_rsp_data.value = v, data
        v = data = 0
        for m in range(nm):
            for y in range(2):
                answer = self.mem[m][y].answer(cyc)
                if answer is not None:
                    v |= 1 << (2 * m + y)
                    data |= answer << (64 * (2 * m + y))
        d.dram_rsp_valid.value, d.dram_rsp_data.value = v, data
        flip = sum(CUT << (66 * (2 * p + y)) for p, y in self.cuts)
        if self.ber is None:
            d.up_flip.value = d.down_flip.value = flip
        else:
            up, down = self.ber.draw()
            d.up_flip.value, d.down_flip.value = flip | up, flip | down
        d.sw_run.value = self.run_switch[0] | self.run_switch[1] << 1
        # ---- sample
        await ReadOnly()
        req_ready = int(d.req_ready.value)
        if self.ack_timeout:
            wv, wd, wi, wt, wk = (int(d.wo_valid.value), int(d.wo_dst.value), int(d.wo_id.value),
                                  int(d.wo_tag.value), int(d.wo_ok.value))
            self.outcomes += [(cyc, c, field(wd, c, 10), field(wi, c, 8), field(wt, c, 8), wk >> c & 1)
                              for c in range(nc) if wv >> c & 1]
        for c in range(nc):
            r = heads[c]
            if r is not None and req_ready >> c & 1:
                self.submit[c].popleft()
                r["t_req"] = cyc
                if self.commits is not None or self.fcommits is not None:
                    r["id"] = field(int(d.req_msg_id.value), c, 8)   # edm_mirror's message id
                    self.ids.setdefault((c, r["m"], r["id"]), []).append(r)
                self.outstanding[c][r["tag"]] = r
        lrd_v, lrd_a = int(d.lrd_valid.value), int(d.lrd_addr.value)
        lrd_ready = int(d.lrd_ready.value)
        lwr_v, lwr_a, lwr_d, lwr_m = (int(d.lwr_valid.value), int(d.lwr_addr.value), int(d.lwr_data.value),
                                      int(d.lwr_mask.value))
        for c in range(nc):
            for y in range(2):
                e = 2 * c + y
                if lrd_v >> e & 1 and lrd_ready >> e & 1:
                    o = field(lrd_a, e, 64) - LBASE
                    assert 0 <= o < LSIZE, hex(o)
                    due = max(self.lrd_due[c][y] + 1, cyc + rng.randint(1, 4))
                    self.lrd_due[c][y] = due
                    self.lrd_q[c][y].append((due, int.from_bytes(self.lmem[c][y][o:o + 8], "little")))
                if lwr_v >> e & 1:
                    o = field(lwr_a, e, 64) - LBASE
                    w = field(lwr_d, e, 64).to_bytes(8, "little")
                    mask = field(lwr_m, e, 8)
                    assert 0 <= o < LSIZE, hex(o)
                    for k in range(8):
                        if mask >> k & 1:
                            self.lmem[c][y][o + k] = w[k]
        cv = int(d.cpl_valid.value)
        for c in range(nc):
            if cv >> c & 1 and cpl_ready >> c & 1:
                self.complete(c, field(int(d.cpl_tag.value), c, 8), field(int(d.cpl_status.value), c, 8),
                              field(int(d.cpl_dst.value), c, 10), int(d.cpl_plane.value) >> c & 1, cyc)
        if self.commits is not None:
            commit, src, mid, kind, dup = (int(d.mn_commit.value), int(d.mn_commit_src.value),
                                           int(d.mn_commit_id.value), int(d.mn_commit_kind.value),
                                           int(d.mn_commit_dup.value))
            for y in range(2):   # memory node 0's engines
                if commit >> y & 1:
                    self.commits.append((cyc, y, field(src, y, 10), field(mid, y, 8), field(kind, y, 3), dup >> y & 1))
        if self.fcommits is not None:
            commit = int(d.f_commit.value)
            if commit:
                src, mid, kind, seq, dup, stale = (int(d.f_commit_src.value), int(d.f_commit_id.value),
                                                   int(d.f_commit_kind.value), int(d.f_commit_seq.value),
                                                   int(d.f_commit_dup.value), int(d.f_commit_stale.value))
                for e in range(2 * nm):
                    if commit >> e & 1:
                        self.fcommits.append((cyc, e // 2, e % 2, field(src, e, 10), field(mid, e, 8),
                                              field(kind, e, 3), field(seq, e, 12), dup >> e & 1, stale >> e & 1))
        rdv, wrv = int(d.dram_rd_valid.value) & dram_rd_ready, int(d.dram_wr_valid.value) & dram_wr_ready
        rda, wra, wrd, wrm = (int(d.dram_rd_addr.value), int(d.dram_wr_addr.value), int(d.dram_wr_data.value),
                              int(d.dram_wr_mask.value))
        for m in range(nm):
            # The two engines' channels on one memory: their order within a cycle
            # is not defined, so the order rule must keep a word's read and write apart.
            for y in range(2):
                e, q = 2 * m + y, 2 * m + 1 - y
                if rdv >> e & 1 and wrv >> q & 1 and field(rda, e, 64) == field(wra, q, 64):
                    self.races += 1
            for y in range(2):
                e = 2 * m + y
                read, write = rdv >> e & 1, wrv >> e & 1
                self.mem[m][y].accept(cyc, field(rda, e, 64) if read else None, field(wra, e, 64) if write else None,
                                      field(wrd, e, 64), field(wrm, e, 8))
                self.dram_words[m] += write
                if write and self.fcommits is not None:
                    self.dram_log.append((cyc, m, y, field(wra, e, 64) - RBASE, field(wrd, e, 64), field(wrm, e, 8)))
        if self.port_log is not None:
            self.port_log.sample(cyc)
        if self.answer_times is not None:
            self.answer_times.sample(cyc)
        await RisingEdge(d.clk)
        self.cycle += 1

    def complete(self, c, tag, status, dst, plane, cyc):
        assert tag in self.outstanding[c], f"cycle {cyc}: compute node {c}: completion for tag {tag} not outstanding"
        r = self.outstanding[c].pop(tag)
        self.free_tags[c].append(tag)
        assert dst == r["dst"], f"compute node {c}: completion names {dst}, want {r['dst']}"
        # Nothing fails, an RMW whose answer was lost with its plane included: the
        # other plane's copy is answered with the first copy's result. (With bit
        # errors or two faults a read's or RMW's answers can be lost on both
        # planes, and a write fail to be sent: reported, write_outcomes counts it.)
        assert status == OK or self.allow_fail, \
            f"cycle {cyc}: compute node {c}: status {status} for {r}; {self.counters()}"
        r["t_cpl"], r["plane"], r["status"] = cyc, plane, status
        self.cpl_cycles[c].append(cyc)
        if r["kind"] in (K_RREQ, K_RMW) and status == OK:
            size = r["len"] if r["kind"] == K_RREQ else 8
            r["got"] = bytes(self.lmem[c][plane][r["loff"]:r["loff"] + size])
            if r["kind"] == K_RREQ and "expect" in r:
                assert r["got"] == r["expect"], \
                    f"cycle {cyc}: compute node {c}: read of {size} B at {r['off']:#x} of memory node {r['m']} " \
                    f"(plane {plane}) differs"
        if r["kind"] == K_RMW:
            self.faa_busy.discard((c, r["m"]))
        self.done.append(r)

    async def run(self, limit=None, events=()):
        """Steps until every request is done, at most `limit` cycles (else
        $EDM_DUAL_LIMIT, else run_limit); events: (cycle, function) to call then."""
        limit = limit or int(os.environ.get("EDM_DUAL_LIMIT") or self.run_limit)
        events = sorted(events, key=lambda e: e[0])
        start = self.cycle
        while self.busy() or events:
            while events and events[0][0] <= self.cycle:
                events.pop(0)[1]()
            self.feed()
            await self.step()
            if os.environ.get("EDM_DUAL_TRACE") and self.cycle % 100 == 0:
                cnt = {k: v for k, v in self.counters().items() if any(v)}
                self.dut._log.info(f"cycle {self.cycle} cuts {sorted(self.cuts)}: {cnt}")
            assert self.cycle - start < limit, f"the fabric did not finish (hang): {self.status()}"

    def counters(self):
        d = self.dut
        out = {}
        for name, k in (("mirror_cnt_dup", self.nc), ("mirror_cnt_stale", self.nc),
                        ("mirror_cnt_unmirrored", 2 * self.nc), ("wr_cnt_resent", self.nc),
                        ("cn_cnt_dropped", 2 * self.nc), ("cn_cnt_stray", 2 * self.nc),
                        ("cn_cnt_timeouts", 2 * self.nc), ("cn_cnt_late", 2 * self.nc),
                        ("cn_cnt_retries", 2 * self.nc), ("cn_cnt_failed_all", 2 * self.nc),
                        ("mn_cnt_dropped", 2 * self.nm), ("mn_cnt_stray", 2 * self.nm), ("mn_cnt_overflow", 2 * self.nm),
                        ("filter_cnt_dup", 2 * self.nm), ("filter_cnt_stale", 2 * self.nm),
                        ("filter_cnt_untracked", 2 * self.nm),
                        ("wr_cnt_rmw", 3 * self.nc),   # per compute node: RMWs re-sent, given up, unknown
                        ("h_cnt_corrupted", 2 * self.n), ("sw_cnt_dropped", 2 * self.n),
                        ("sw_cnt_lost_grants", 2 * self.n), ("sw_cnt_unknown", 2 * self.n)):
            v = int(getattr(d, name).value)
            out[name] = [field(v, i, 16) for i in range(k)]
        return out

    def status(self):
        pend = {c: [(r["kind"], r["dst"], r["len"], r.get("t_req")) for r in self.outstanding[c].values()]
                for c in range(self.nc)}
        acks = ""
        if self.ack_timeout:   # the write retry's state (tb_dual_fabric_top wr_state)
            v = int(self.dut.wr_state.value)
            t = int(self.dut.cn_table.value)
            acks = (f"write retry {[hex(field(v, c, 128)) for c in range(self.nc)]}; "
                    f"engine tables {[hex(field(t, e, 128)) for e in range(2 * self.nc)]}; ")
        return (f"cycle {self.cycle}; waiting {[len(q) for q in self.submit]}; outstanding {pend}; {acks}"
                f"counters {self.counters()}; switches {self.switch_state()}")

    def switch_state(self):
        """The memory engines' states, and each plane's switch, per port
        (diagnosis of a hang; tb_dual_fabric_top's sw_* outputs): circuits open
        into the port (z_open), queued per ingress (txc_count), control units not
        sent (fq_count), circuits parking it as a destination and for which
        source, and {sk_pend, fq_valid}."""
        v = int(self.dut.mn_state.value)
        out = [{"memory engines {e_state, cmd_valid, c_kind, replay, dup, memo_ready, hazards r/peer r/peer w}": [
            f"{field(v, e, 13):013b}" for e in range(2 * self.nm)]}]
        for y in range(2):
            vals = {}
            for name in ("sw_z_open", "sw_txc_count", "sw_fq_count", "sw_park_cnt", "sw_park_src", "sw_flags"):
                vals[name] = hex(field(int(getattr(self.dut, name).value), y, 64))
            out.append(vals)
        return out

    # ---------------------------------------------------------------- checks
    def units(self):
        """The write chunks and RMWs sent: each has at most one second copy."""
        return sum((r["len"] + CHUNK - 1) // CHUNK for r in self.writes) + sum(len(v) for v in self.faa.values())

    def check_second_copies(self):
        """With a fault: at most one second copy of each write chunk and RMW is
        marked at the memory nodes, at most one second completion of each
        request dropped at the compute nodes, and the restored or surviving
        plane still marks some."""
        cnt = self.counters()
        marked = sum(cnt["filter_cnt_dup"]) + sum(cnt["filter_cnt_stale"])
        dropped = sum(cnt["mirror_cnt_dup"]) + sum(cnt["mirror_cnt_stale"])
        assert 0 < marked <= self.units(), (marked, self.units(), cnt)
        assert 0 < dropped <= len(self.done), (dropped, len(self.done), cnt)
        assert not any(cnt["filter_cnt_untracked"]), cnt

    def check(self):
        """Every byte; every write applied once; every fetch-and-add (all
        completed OK) applied once, in order, returning the running sum. Returns
        the DRAM word writes beyond those (asserted 0)."""
        applied = [0] * self.nm
        for (c, m), reqs in self.faa.items():
            total = 0
            for r in reqs:
                old = int.from_bytes(r["got"], "little")
                assert old == total, f"fetch-and-add of {c} at memory node {m}: old {old}, running sum {total}"
                total += r["arg0"]
            o = ATOM_BASE + 8 * c
            final = int.from_bytes(self.dram[m][o:o + 8], "little")
            assert final == total, f"fetch-and-add word of {c} at memory node {m}: {final}, running sum {total}"
            applied[m] += len(reqs)
            self.model[m][o:o + 8] = final.to_bytes(8, "little")
        for m in range(self.nm):
            mine = [r for r in self.shared if r["m"] == m]
            if mine:
                final = int.from_bytes(self.dram[m][SHARED:SHARED + 8], "little")
                serialize(mine, final)
                applied[m] += sum(1 for r in mine if r["kind"] == K_RMW)
                self.model[m][SHARED:SHARED + 8] = self.dram[m][SHARED:SHARED + 8]
        if self.ordered:
            final = self.replay_commits()
            assert self.dram[0][REGION:REGION + REGION_SIZE] == final, \
                f"shared region {self.dram[0][REGION:REGION + REGION_SIZE].hex()}, commit order gives {final.hex()}"
            self.model[0][REGION:REGION + REGION_SIZE] = final
            applied[0] += sum(1 for r in self.ordered if r["kind"] == K_RMW)
        if not os.environ.get("EDM_DUAL_UNORDERED"):
            assert self.races == 0, f"{self.races} words read by one engine and written by the other in one cycle"
        for m in range(self.nm):
            assert self.dram[m] == self.model[m], \
                f"memory node {m}: DRAM differs from the model at {[k for k in range(RSIZE) if self.dram[m][k] != self.model[m][k]][:8]}"
            # Each chunk writes the words it touches (a word two chunks share, twice).
            words = sum(((r["off"] + k) % 8 + min(CHUNK, r["len"] - k) + 7) // 8
                        for r in self.writes if r["m"] == m for k in range(0, r["len"], CHUNK))
            words += applied[m]
            assert self.dram_words[m] == words, \
                f"memory node {m}: {self.dram_words[m]} DRAM word writes, {words} for every write and RMW once"
            self.extra_words += self.dram_words[m] - words

    def check_copies(self):
        """bit_errors' end checks, from the filters' verdicts: each write chunk and
        RMW by its copies (applied: committed unmarked; marked: a second copy or
        older than the window), the memory replayed from the applied ones. Counts
        (returned): chunks and RMWs applied twice, refused (copies arrived, all
        marked: a first copy refused), lost on the wire (no copy arrived intact);
        RMWs answered OK, applied but reported failed, reported unknown (ACKS:
        STATUS_DENIED, a re-send finding its result gone; not failures, and of
        those the applied ones); reads failed; the largest
        id lag of a first copy (how far its source's newest id at the filter was
        ahead of it) and of any copy. Asserts every OK fetch-and-add's old value
        against the applied order, every OK read, and the DRAM (bytes and word
        writes) against the applied copies."""
        newest: dict = {}
        lag_first = lag_any = 0
        applied_rmw: dict = {}            # m -> [(cycle, plane, request)]
        for cyc, m, y, src, mid, kind, seq, dup, stale in self.fcommits:
            hi = newest.get((m, src))
            if hi is None or 0 < (mid - hi) % 256 < 128:
                newest[(m, src)] = hi = mid
            behind = (hi - mid) % 256
            lag_any = max(lag_any, behind)
            if kind not in (K_WREQ, K_RMW):
                continue
            mine = [q for q in self.ids.get((src, m, mid), []) if q["t_offer"] <= cyc]
            assert mine and mine[-1]["kind"] == kind, \
                f"cycle {cyc}: memory node {m} (plane {y}) committed kind {kind} seq {seq} of source {src} id {mid}, " \
                f"issued as {[(q['kind'], q['t_req']) for q in self.ids.get((src, m, mid), [])]}"
            r = mine[-1]
            r.setdefault("copies", {}).setdefault(seq, []).append((cyc, y, dup, stale))
            if not dup and not stale:
                lag_first = max(lag_first, behind)
                if kind == K_RMW:
                    applied_rmw.setdefault((m, r["off"]), []).append((cyc, y, r))
        out = dict(applied_twice=0, refused_first=0, refused_first_writes=0, lost_on_wire=0, lost_on_wire_writes=0,
                   rmw_ok=0, rmw_applied_reported_failed=0, reads_failed=0, rmw_failed=0, rmw_unknown=0,
                   rmw_unknown_applied=0,
                   stale_marks=0, lag_first=lag_first, lag_any=lag_any)
        words = [0] * self.nm
        for r in self.writes + [q for v in self.faa.values() for q in v]:
            chunks = (r["len"] + CHUNK - 1) // CHUNK if r["kind"] == K_WREQ else 1
            for seq in range(chunks):
                copies = r.get("copies", {}).get(seq, [])
                applied = sum(1 for _, _, dup, stale in copies if not dup and not stale)
                out["stale_marks"] += sum(stale for *_, stale in copies)
                out["applied_twice"] += applied > 1
                if not applied:
                    what = "refused_first" if copies else "lost_on_wire"
                    out[what] += 1
                    out[what + "_writes"] += r["kind"] == K_WREQ
                    if r["kind"] == K_WREQ:   # (the model took every write when it was made)
                        o, n = r["off"] + seq * CHUNK, min(CHUNK, r["len"] - seq * CHUNK)
                        self.model[r["m"]][o:o + n] = self.init[r["m"]][o:o + n]
                    if copies:
                        self.dut._log.info(f"REFUSED {r['kind']} of compute node {r['c']} to memory node {r['m']} "
                                           f"id {r['id']} seq {seq}: copies {copies}")
                    continue
                if r["kind"] == K_WREQ:
                    o, n = r["off"] + seq * CHUNK, min(CHUNK, r["len"] - seq * CHUNK)
                    self.model[r["m"]][o:o + n] = r["data"][seq * CHUNK:seq * CHUNK + n]
                    words[r["m"]] += (o % 8 + n + 7) // 8 * applied
                else:
                    words[r["m"]] += applied
        for (m, o) in {(r["m"], r["off"]) for v in self.faa.values() for r in v}:
            total = 0
            for _, _, r in sorted(applied_rmw.get((m, o), []), key=lambda e: e[:2]):
                r["sum_before"] = total
                total = (total + r["arg0"]) % (1 << 64)
            self.model[m][o:o + 8] = total.to_bytes(8, "little")
        for v in self.faa.values():
            for r in v:
                if r["status"] == OK:
                    out["rmw_ok"] += 1
                    assert "sum_before" in r, f"fetch-and-add answered OK, never applied: {r}"
                    got = int.from_bytes(r["got"], "little")
                    assert got == r["sum_before"], \
                        f"fetch-and-add of compute node {r['c']}: old {got:#x}, applied order gives {r['sum_before']:#x}"
                elif r["status"] == UNKNOWN and self.ack_timeout:
                    out["rmw_unknown"] += 1
                    out["rmw_unknown_applied"] += "sum_before" in r
                else:
                    out["rmw_failed"] += 1
                    out["rmw_applied_reported_failed"] += "sum_before" in r
        out["reads_failed"] = sum(1 for r in self.done if r["kind"] == K_RREQ and r["status"] != OK)
        for m in range(self.nm):
            differ = [k for k in range(RSIZE) if self.dram[m][k] != self.model[m][k]]
            if differ:
                k0 = differ[0] // 8 * 8
                mine = [e for e in self.dram_log if e[1] == m and e[3] == k0]
                self.dut._log.info(f"DRAM writes of word {k0:#x} at memory node {m}: {mine}")
                for cyc, _, y, _a, data, _mask in mine:
                    b = data.to_bytes(8, "little")
                    self.dut._log.info(f"  cycle {cyc} plane {y}: in writes "
                                       f"{[(w['c'], w['m'], w['id'], w['off'], w['data'].find(b)) for w in self.writes if b in w['data']]}; "
                                       f"other words of that engine around: {[(e[0], hex(e[3])) for e in self.dram_log if e[1] == m and e[2] == y and abs(e[0] - cyc) < 40]}")
            assert not differ, \
                f"memory node {m}: DRAM differs from the applied copies at {differ[:8]} ({len(differ)} bytes); " \
                f"writes there: {[(w['c'], w['id'], w['off'], w['len'], w.get('copies'), w['t_offer'], w['t_req'], w['t_cpl'], [e for e in self.fcommits if e[1] == m and e[3] == w['c'] and e[4] == w['id']], self.dram[m][differ[0]:differ[0] + 16].hex(), w['data'][differ[0] - w['off']:differ[0] - w['off'] + 16].hex()) for w in self.writes if w['m'] == m and w['off'] <= differ[0] < w['off'] + w['len']]}"
            assert self.dram_words[m] == words[m], \
                f"memory node {m}: {self.dram_words[m]} DRAM word writes, {words[m]} for the applied copies"
        for r in self.done:
            if r["kind"] == K_RREQ and r["status"] == OK and "expect" not in r:   # the read-back
                assert r["got"] == bytes(self.model[r["m"]][r["off"]:r["off"] + r["len"]]), \
                    f"read-back of {r['len']} B at {r['off']:#x} of memory node {r['m']} differs"
        return out

    async def settle_outcomes(self):
        """ACKS: steps until every write has its outcome, or its give-up and the
        outcome queue's drain have passed."""
        if not self.ack_timeout:
            return
        posted = [w["t_cpl"] for w in self.writes if w["len"] and "t_cpl" in w]
        while len(self.outcomes) < len(posted) and self.cycle < max(posted, default=0) + GIVE_UP + 2000:
            await self.step()

    def write_outcomes(self):
        """Each write by what its host learned and what its memory holds (after
        check_copies, from the filters' verdicts): acknowledged (ACKS: its /A/
        came); failed and reported (its posted completion failed, posted_failed,
        or ACKS: no /A/ within the give-up), of those applied whole anyway;
        lost unseen (not applied whole, yet acknowledged, or without ACKS
        completed OK);
        unresolved (ACKS: no outcome); applied twice (a chunk applied by two
        copies). Outcomes are matched to writes by (compute node, destination,
        id, tag), the earliest after the write's posted completion."""
        by: dict = {}
        for o in self.outcomes:
            by.setdefault(o[1:5], []).append(o)
        out = dict(writes=0, acknowledged=0, failed_reported=0, posted_failed=0, failed_applied=0, lost_unseen=0,
                   unresolved=0, applied_twice=0)
        lost = []
        for w in sorted((w for w in self.writes if w["len"]), key=lambda w: w["t_cpl"]):
            out["writes"] += 1
            counts = [sum(1 for *_, dup, stale in w.get("copies", {}).get(seq, []) if not dup and not stale)
                      for seq in range(-(-w["len"] // CHUNK))]
            whole = all(counts)
            out["applied_twice"] += any(k > 1 for k in counts)
            reported = w["status"] != OK
            out["posted_failed"] += reported
            acked = False
            if self.ack_timeout:
                mine = [o for o in by.get((w["c"], w["dst"], w["id"], w["tag"]), []) if o[0] >= w["t_cpl"]]
                if mine:
                    o = mine[0]
                    by[o[1:5]].remove(o)
                    acked, reported = bool(o[5]), reported or not o[5]
                elif not reported:
                    out["unresolved"] += 1
                    lost.append(("unresolved", w["c"], w["m"], w["id"], w["t_cpl"], counts))
                    continue
            if reported:
                out["failed_reported"] += 1
                out["failed_applied"] += whole
                lost.append(("failed", w["c"], w["m"], w["id"], w["t_cpl"], counts))
            elif acked or not self.ack_timeout:
                out["acknowledged"] += acked
                if not whole:
                    out["lost_unseen"] += 1
                    lost.append(("lost", w["c"], w["m"], w["id"], w["t_cpl"], counts))
        stray = [o for v in by.values() for o in v]
        assert not stray, f"write outcomes matching no write: {stray[:4]}"
        if lost:
            self.dut._log.info(f"WRITES lost unseen, unresolved or failed (what, compute node, memory node, id, "
                               f"posted at, copies applied per chunk): {lost}; {self.outcome_counters()}")
        return out

    def outcome_counters(self):
        """Diagnosis (ACKS): per compute host the writes its edm_write_retry
        stopped re-sending and the /A/ ids its edm_write_outcome matched to no write."""
        d = self.dut
        return {name: [field(int(getattr(d, name).value), c, 16) for c in range(self.nc)]
                for name in ("wr_cnt_resent", "wr_cnt_gave_up", "wo_cnt_stray")}

    def replay_commits(self):
        """The shared region replayed in the order the memory node's engines
        committed the units (by cycle, plane 0 first in a cycle: the filter's
        order): writes and fetch-and-adds at their first copy (the one the
        filter did not mark), each read at the copy whose answer the host kept
        (the plane its completion names). Asserts every add's old value; a read
        whose bytes differ from its copy's view is kept in stale_reads (and
        asserted against unless $EDM_DUAL_UNORDERED). Returns the region's
        final bytes."""
        copies: dict = {}
        for cyc, y, src, mid, kind, dup in self.commits:
            copies.setdefault((src, mid), []).append((cyc, y, kind, dup))
        events = []
        for r in self.ordered:
            mine = sorted(copies.pop((r["c"], r["id"]), []))
            planes, kinds = {copy[1] for copy in mine}, {copy[2] for copy in mine}
            assert len(mine) == 2 and planes == {0, 1} and kinds == {r["kind"]}, \
                f"{r['kind']} of compute node {r['c']}, id {r['id']}: committed {mine}"
            r["first"] = mine[0][1]
            if r["kind"] != K_RREQ:   # the filter marks the later copy
                assert [dup for *_, dup in mine] == [0, 1], f"copies {mine} of {r}"
                events.append((mine[0][:2], r))
            else:
                r["views"] = {}
                events += [(copy[:2], r) for copy in mine]
        region = bytearray(self.region_start)
        for (_, y), r in sorted(events, key=lambda e: e[0]):
            o = r["off"] - REGION
            if r["kind"] == K_WREQ:
                region[o:o + r["len"]] = r["data"]
            elif r["kind"] == K_RMW:
                old = int.from_bytes(region[o:o + 8], "little")
                got = int.from_bytes(r["got"], "little")
                assert got == old, f"fetch-and-add of compute node {r['c']} at {r['off']:#x}: old {got:#x}, " \
                                   f"commit order gives {old:#x}"
                region[o:o + 8] = ((old + r["arg0"]) % (1 << 64)).to_bytes(8, "little")
            else:
                r["views"][y] = bytes(region[o:o + r["len"]])
        for r in self.ordered:
            if r["kind"] == K_RREQ and r["got"] != r["views"][r["plane"]]:
                self.stale_reads.append(r)
        if not os.environ.get("EDM_DUAL_UNORDERED"):
            assert not self.stale_reads, \
                f"{len(self.stale_reads)} reads differ from the commit order, e.g. {self.stale_reads[0]}"
        return region

    async def read_back(self):
        for c in range(self.nc):
            for m in range(self.nm):
                for r in [w for w in self.writes if w["m"] == m and w["c"] == c]:
                    if self.fcommits is not None:   # checked against the copies applied (check_copies)
                        self.request(c, K_RREQ, m, r["off"], r["len"])
                    else:
                        self.request(c, K_RREQ, m, r["off"], r["len"],
                                     expect=bytes(self.model[m][r["off"]:r["off"] + r["len"]]))
        await self.run()


def serialize(reqs, final, start=0):
    """Asserts that the writes and fetch-and-adds of one word (all completed)
    have a sequential order that explains every add's old value and the final
    value, the word starting at `start`. Arguments and written values are
    random 60- and 64-bit numbers, so each value the word held is reached
    one way only: from the start, and from each write, the adds follow in a
    chain (the add whose old value is the word's value comes next); a
    sequential order is the start's chain, then the writes' chains in any
    order, so every add must be on a chain and the word must end where the
    last chain ends (where the start's does if nothing was written). Two adds
    that saw one value (an update lost) cannot both be on a chain."""
    adds: dict = {}
    for r in reqs:
        if r["kind"] == K_RMW:
            old = int.from_bytes(r["got"], "little")
            assert old not in adds, f"two fetch-and-adds saw {old:#x}: one update was lost"
            adds[old] = r["arg0"]
    writes = [int.from_bytes(r["data"], "little") for r in reqs if r["kind"] == K_WREQ]
    ends = []
    for value in [start] + writes:
        while value in adds:
            value = (value + adds.pop(value)) % (1 << 64)
        ends.append(value)
    assert not adds, f"{len(adds)} fetch-and-adds saw values no sequential order gives: {sorted(map(hex, adds))[:4]}"
    assert final in (ends[1:] or ends), f"final value {final:#x}: no sequential order ends there"


WINDOW = 2000   # cycles before and after a fault the figures look at


def longest_gap(cycles, lo, hi):
    """The longest time without a completion within [lo, hi)."""
    marks = [lo] + [c for c in cycles if lo <= c < hi] + [hi]
    return max(b - a for a, b in zip(marks, marks[1:]))


def failover(f, t, hosts, label):
    """The figures for a fault at cycle t affecting compute nodes `hosts`:
    requests in flight at t (and the planes that completed them, the latest
    completion), the first completion after t of any request and of one
    issued after t, the longest time without a completion in the WINDOW
    cycles before and after t, and completions in each window."""
    mine = [r for r in f.done if r["c"] in hosts]
    start = max(t - WINDOW, min(r["t_req"] for r in mine))   # not before the traffic
    in_flight = [r for r in mine if r["t_req"] < t < r["t_cpl"]]
    first_any = min((r["t_cpl"] for r in mine if r["t_cpl"] > t), default=None)
    first_new = min((r["t_cpl"] for r in mine if r["t_req"] >= t), default=None)
    cycles = sorted(r["t_cpl"] for r in mine)
    return dict(fault=label, cycle=t, in_flight=len(in_flight),
                in_flight_failed=sum(1 for r in in_flight if r["status"] != OK),
                in_flight_planes=sorted({r["plane"] for r in in_flight}),
                in_flight_done_by=max((r["t_cpl"] - t for r in in_flight), default=0),
                first_completion_after=None if first_any is None else first_any - t,
                first_new_completion_after=None if first_new is None else first_new - t,
                longest_gap_before=longest_gap(cycles, start, t),
                longest_gap_after=longest_gap(cycles, t, t + WINDOW),
                window_before=t - start,
                completions_before=sum(1 for c in cycles if start <= c < t),
                completions_after=sum(1 for c in cycles if t <= c < t + WINDOW))


async def traffic(f, rounds, events=()):
    f.to_issue = [rounds] * f.nc
    await f.run(events=events)


def report(f, name, figures, **extra):
    total = len(f.done)
    lost = sum(len(q) for q in f.submit) + sum(len(o) for o in f.outstanding)
    failed = sum(1 for r in f.done if r["status"] != OK)
    summary = dict(test=name, cycles=f.cycle, requests=total, lost=lost, reported_failed=failed,
                   duplicated_dram_words=f.extra_words,
                   bytes_checked=sum(r["len"] for r in f.done if r["kind"] == K_RREQ),
                   writes=len(f.writes), rmw=sum(len(v) for v in f.faa.values()), faults=figures,
                   counters=f.counters(), **extra)
    if f.answer_times is not None:
        summary["answer_times"] = f.answer_times.summary()
    f.dut._log.info(json.dumps(summary))
    path = os.environ.get("EDM_DUAL_JSON")
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(summary) + "\n")
    return summary


def rounds() -> int:
    return int(os.environ.get("EDM_DUAL_ROUNDS", "100"))


def seed(base: int) -> int:
    """Each test's seed, moved by the run's seed (tbutil.seed, $EDM_SEED) in
    steps of 10: the streams experiments/dual_fabric.py and docs/faults.md
    name by seed."""
    s = tbutil.seed()
    cocotb.log.info("random stimulus from seed %d (EDM_SEED)", s)
    return base + 10 * s


@cocotb.test()
async def no_fault(dut):
    """Both planes whole: every write and RMW arrives twice, the second copy marked."""
    f = Dual(dut, seed(250))
    await f.start()
    await traffic(f, rounds())
    await f.read_back()
    for _ in range(300):
        await f.step()
    f.check()
    cnt = f.counters()
    units = f.units()
    assert sum(cnt["filter_cnt_dup"]) == units, f"second copies marked {cnt['filter_cnt_dup']}, units {units}: {cnt}"
    for name in ("filter_cnt_stale", "filter_cnt_untracked", "mirror_cnt_unmirrored", "cn_cnt_timeouts",
                 "cn_cnt_dropped", "mn_cnt_dropped", "mn_cnt_overflow", "sw_cnt_dropped", "sw_cnt_lost_grants",
                 "h_cnt_corrupted", "sw_cnt_unknown"):
        assert not any(cnt[name]), f"{name} = {cnt[name]}"
    # Every request's second completion is dropped (or comes after its tag was
    # reused): an RMW's second copy too, answered OK with the first's result.
    second = sum(cnt["mirror_cnt_dup"]) + sum(cnt["mirror_cnt_stale"])
    assert second == len(f.done), (second, len(f.done), cnt)
    report(f, "no_fault", [])


def cut(f, port, plane, on):
    def act():
        (f.cuts.add if on else f.cuts.discard)((port, plane))
        if on:
            f.faults.append(f.cycle)
    return act


async def link_cuts(dut, name, base_seed, cuts, n_rounds=None, events=(), run_on=3000, extra=None):
    """Links cut with traffic in flight and restored (each link comes back a
    clean BER window after its cut ends): cuts are (port, plane, cut at,
    restored at, hosts behind it, label); the run goes on at least run_on
    cycles after the last is restored. Every check; returns the bench.
    $EDM_DUAL_FAILURES, or write acknowledgements ($EDM_DUAL_ACKS): requests
    may fail; what failed, each write's outcome and the copies applied are
    counted (check_copies, write_outcomes) instead, and with
    acknowledgements no write may be lost unseen, unresolved or applied
    twice. `extra` goes into the summary."""
    f = Dual(dut, seed(base_seed))
    counting = bool(os.environ.get("EDM_DUAL_FAILURES")) or bool(f.ack_timeout)
    if counting:   # a double fault: count what fails instead (check_copies)
        f.fcommits, f.allow_fail = [], True
    await f.start()
    acts = [(t1, cut(f, port, plane, True)) for port, plane, t1, _, _, _ in cuts]
    acts += [(t2, cut(f, port, plane, False)) for port, plane, _, t2, _, _ in cuts]
    await traffic(f, n_rounds or rounds(), events=acts + list(events))
    back = max(c[3] for c in cuts)
    assert f.cycle > back + run_on, f"the run ended at {f.cycle}, soon after the last link was back (at {back})"
    await f.read_back()
    for _ in range(300):
        await f.step()
    await f.settle_outcomes()
    extra = dict(extra or {})
    if not counting:
        f.check()
        f.check_second_copies()
    else:
        extra["copies"] = f.check_copies()
        extra["write_outcomes"] = f.write_outcomes()
        extra["failed"] = {K_RREQ: 0, K_WREQ: 0, K_RMW: 0}
        for r in f.done:
            extra["failed"][r["kind"]] += r["status"] != OK
        dut._log.info(f"{name}: {extra}")
    figures = [failover(f, t1, hosts, label) for _, _, t1, _, hosts, label in cuts]
    if not counting:   # (counted runs report a cut with nothing in flight: the table's column)
        for fig in figures:
            assert fig["in_flight"] > 0, f"no request in flight at the cut: {fig}"
    report(f, name, figures, **extra)
    if counting:
        assert extra["copies"]["applied_twice"] == 0, extra
    if f.ack_timeout:   # and a write sent is re-sent until acknowledged: none fails after its posted completion
        wo = extra["write_outcomes"]
        assert wo["lost_unseen"] == wo["unresolved"] == wo["applied_twice"] == 0, wo
        assert wo["failed_reported"] == wo["posted_failed"], f"writes sent, not acknowledged: {wo}"
    return f


@cocotb.test()
async def compute_link_cut(dut):
    """Compute node 0's plane-0 link cut at cycle 1500 and restored at 1900:
    its requests go on plane 1 at once (its link guard reports the link down
    to edm_mirror)."""
    f = await link_cuts(dut, "compute_link_cut", 251, [(0, 0, 1500, 1900, [0], "compute node 0, plane 0 link cut")])
    assert f.counters()["mirror_cnt_unmirrored"][0] > 0   # compute node 0 went on without plane 0


@cocotb.test()
async def memory_link_cut(dut):
    """Memory node 0's plane-1 link cut at 1500 and restored at 1900: the
    compute nodes do not see it; plane 0 carries what plane 1 loses."""
    nc = len(dut.req_valid)
    f = await link_cuts(dut, "memory_link_cut", 253,
                        [(nc, 1, 1500, 1900, list(range(nc)), "memory node 0, plane 1 link cut")])
    assert sum(f.counters()["filter_cnt_dup"]) > 0


@cocotb.test()
async def two_link_cuts(dut):
    """Compute node 0's plane-0 link cut (1500-1900), then, once it is back,
    memory node 0's plane-1 link (6000-6400), 150 rounds: plane 0 must be
    whole again by then (no request left out of it in the 1000 cycles before
    the second cut), so the second cut loses nothing either.
    $EDM_DUAL_SECOND_CUT moves the second cut (400 cycles long) into the first
    one's recovery (docs/faults.md §6); every end check holds there too."""
    nc = len(dut.req_valid)
    unmirrored = {}
    second = int(os.environ.get("EDM_DUAL_SECOND_CUT", "6000"))   # moved: into the first cut's recovery

    def snapshot(t):
        def act():
            v = int(dut.mirror_cnt_unmirrored.value)
            unmirrored[t] = [field(v, i, 16) for i in range(2 * nc)]
        return act
    events = [(5000, snapshot(5000)), (second, snapshot(second))]
    f = await link_cuts(dut, "two_link_cuts", 251, [
        (0, 0, 1500, 1900, [0], "compute node 0, plane 0 link cut"),
        (nc, 1, second, second + 400, list(range(nc)), "memory node 0, plane 1 link cut")],
        n_rounds=rounds() * 3 // 2, events=events, run_on=1000, extra={"unmirrored": unmirrored})
    dut._log.info(f"requests left out of a plane, by cycle: {unmirrored}; at the end "
                  f"{f.counters()['mirror_cnt_unmirrored']}")
    if second == 6000 and f.fcommits is None:   # (counted runs: unmirrored in the summary)
        assert unmirrored[5000][0] > 0, unmirrored   # compute node 0 went on without plane 0
        assert unmirrored[6000] == unmirrored[5000], f"a plane not whole again before the second cut: {unmirrored}"


@cocotb.test()
async def switch_stopped(dut):
    """Plane 1's switch stops for good (state lost, links down) mid-run."""
    f = Dual(dut, seed(252))
    await f.start()
    t1 = 1500

    def stop():
        f.faults.append(f.cycle)
        f.run_switch[1] = 0
        for p in range(f.n):
            f.cuts.add((p, 1))
    await traffic(f, rounds(), events=[(t1, stop)])
    await f.read_back()
    for _ in range(300):
        await f.step()
    f.check()
    f.check_second_copies()
    fig = failover(f, t1, list(range(f.nc)), "plane 1 switch stopped")
    assert fig["in_flight"] > 0, fig
    report(f, "switch_stopped", [fig])


@cocotb.test()
async def shared_word(dut):
    """Both compute nodes write and fetch-and-add one word of memory node 0,
    several requests in flight each, with both planes whole: the first copies
    come on either plane and are applied by either engine. The adds' old
    values and the final value must come from one sequential order (no add
    lost or reordered against a write), every request once."""
    f = Dual(dut, seed(254))
    await f.start()
    rng = f.rng
    n = int(os.environ.get("EDM_DUAL_SHARED", "100"))   # each; without the order: lost updates
    for _ in range(n):
        for c in range(f.nc):
            if rng.random() < 0.7:
                r = f.request(c, K_RMW, 0, SHARED, op=protocol.RMW_FAA, arg0=rng.getrandbits(60))
            else:
                r = f.request(c, K_WREQ, 0, SHARED, 8)
            f.shared.append(r)
    await f.run()
    for _ in range(300):
        await f.step()
    f.check()
    report(f, "shared_word", [])


@cocotb.test()
async def shared_reads(dut):
    """Both compute nodes read, write and fetch-and-add the words of one
    32-byte region of memory node 0, several requests in flight each, with
    both planes whole and a DRAM that takes a request on each channel 30 %
    of the time: reads of 1 to 32 bytes at any offset, writes likewise,
    fetch-and-add of a random 60-bit number on one word. The first copies come
    on either plane and each read is answered on both. Every read must return
    the region as the commit order leaves it at the copy whose answer the host
    kept (replay_commits; with the rule, that copy sees every write and add
    committed before it on either plane and none after), every add's old
    value the commit order's. Without the rule for reads (tb_dual_fabric_top
    READ_ORDER = 0) reads return stale bytes; $EDM_DUAL_UNORDERED then counts
    them instead (and asserts there is one)."""
    f = Dual(dut, seed(255))
    f.commits = []
    f.dram_ready = 0.3   # a busy memory: writes wait longer, and reads with them
    await f.start()
    rng = f.rng
    n = int(os.environ.get("EDM_DUAL_SHARED", "100"))   # each
    assert n <= 120, "message ids would wrap (8 bits per destination)"
    for _ in range(n):
        for c in range(f.nc):
            x = rng.random()
            if x < 0.3:
                r = f.request(c, K_RMW, 0, REGION + 8 * rng.randrange(REGION_SIZE // 8), op=protocol.RMW_FAA,
                              arg0=rng.getrandbits(60))
            else:
                off = rng.randrange(REGION_SIZE)
                size = rng.randint(1, REGION_SIZE - off)
                r = f.request(c, K_WREQ if x < 0.6 else K_RREQ, 0, REGION + off, size)
            f.ordered.append(r)
    await f.run()
    for _ in range(300):
        await f.step()
    f.check()
    reads = [r for r in f.ordered if r["kind"] == K_RREQ]
    on_plane1 = sum(r["first"] for r in f.ordered)
    order = dict(ordered=len(f.ordered), reads=len(reads), first_on_plane=[len(f.ordered) - on_plane1, on_plane1],
                 answered_by_later_copy=sum(1 for r in reads if r["plane"] != r["first"]),
                 copies_differ=sum(1 for r in reads if r["views"][0] != r["views"][1]),
                 stale_reads=len(f.stale_reads), races=f.races)
    dut._log.info(f"shared_reads: {order}")
    if os.environ.get("EDM_DUAL_UNORDERED"):
        assert f.stale_reads, "no read returned stale bytes"
    report(f, "shared_reads", [], order=order)



GIVE_UP = 60000   # ACKS: cycles from a write's posted completion to its failure (cfg_give_up)

# Cycles with plane 1 cut and no traffic before a one-plane run starts (two of
# the link guards' 512-cycle windows). Plane 1's engines still take some first
# requests and never send them; the mirror fails them once plane 1 has been
# down MIRROR_DEAD_CYCLES, so a write its plane-0 copy lost is re-sent.
ONE_PLANE_SETTLE = 1024
ONE_PLANE_LIMIT = 160000   # cycles of a run() with one plane (Dual.run_limit: 40000)


@cocotb.test()
async def bit_errors(dut):
    """Bit errors on every link of both planes ($EDM_DUAL_BER per bit, default
    1e-5; $EDM_DUAL_BURST bits per burst, default 1), a short /N/ re-send
    timer ($EDM_DUAL_RETRY cycles, default 300) and read timeout
    ($EDM_DUAL_TIMEOUT, default 1500), $EDM_DUAL_ROUNDS requests per compute
    node, most to memory node 0, fetch-and-adds of a word every compute node
    adds to: the conditions that let a plane lag (docs/faults.md §6). Checked
    from the filters' verdicts (check_copies): no write chunk or RMW applied
    twice, no first copy refused (stale), every OK fetch-and-add's old value
    and every OK read, the DRAM against the copies applied. Reads and RMWs
    whose answers were lost on both planes complete failed (counted); write
    chunks hit on both planes are lost on the wire (counted: a write gets no
    answer, docs/faults.md §7), unless the top acknowledges writes ($EDM_DUAL_ACKS):
    then every write is acknowledged and no chunk of it lost.
    $EDM_DUAL_ONE_PLANE=1: plane 1's switch is held in reset and its links cut
    from the start (the mirrors leave it out), so plane 0 alone carries every
    request and a write lost on it has no second copy."""
    f = Dual(dut, seed(256))
    f.fcommits, f.allow_fail = [], True
    ber = float(os.environ.get("EDM_DUAL_BER", "1e-5"))
    burst = int(os.environ.get("EDM_DUAL_BURST", "1"))
    one_plane = bool(os.environ.get("EDM_DUAL_ONE_PLANE"))
    if one_plane:
        f.run_switch[1] = 0
        f.cuts.update((p, 1) for p in range(f.n))
        # A hit request has no second copy: its timers recover it (seed 2 of
        # --ber 4e-5 --acks runs 52 095 cycles), so the hang limit is longer.
        f.run_limit = ONE_PLANE_LIMIT
    await f.start(timeout=int(os.environ.get("EDM_DUAL_TIMEOUT", "1500")),
                  retry=int(os.environ.get("EDM_DUAL_RETRY", "300")), sw_run=1 if one_plane else 3)
    if one_plane:   # no request before the hosts' link guards report plane 1 down
        for _ in range(ONE_PLANE_SETTLE):
            await f.step()
        assert int(dut.mirror_cnt_unmirrored.value) == 0, "a request before the traffic"
    f.ber = BitErrors(2 * f.n, ber, burst, seed(256) + 1,
                      log=dut._log.info if os.environ.get("EDM_DUAL_FLIPS") else None)
    await traffic(f, rounds())
    for c in range(f.nc):   # read back every write (checked against the applied copies)
        for r in [w for w in f.writes if w["c"] == c]:
            f.request(c, K_RREQ, r["m"], r["off"], r["len"])
    await f.run()
    for _ in range(300):
        await f.step()
    await f.settle_outcomes()
    copies = f.check_copies()
    copies.update(ber=ber, burst=burst, bursts=f.ber.bursts, bits_flipped=f.ber.flipped, one_plane=one_plane)
    outcomes = f.write_outcomes()
    dut._log.info(f"bit_errors: {copies}; writes {outcomes}; at the end: {f.switch_state()}")
    report(f, "bit_errors", [], copies=copies, write_outcomes=outcomes)
    assert copies["applied_twice"] == 0, copies
    # The top's bound (tb_dual_fabric_top, g_window_check): while no plane was
    # left out, no copy of a write or RMW arrived more than the ids a compute
    # engine's table and FIFO hold (2^3 + 2^2) behind its source's newest.
    if not any(f.counters()["mirror_cnt_unmirrored"]):
        assert copies["lag_first"] <= 12, copies
    if not os.environ.get("EDM_DUAL_COUNT_ONLY"):
        assert copies["refused_first"] == 0, f"first copies refused as stale: {copies}"
    if f.ack_timeout:
        # Write acknowledgements (ACKS = 1): every write acknowledged, a chunk
        # lost on both planes re-sent (docs/protocol.md §4b). The memory node
        # acknowledges a write only whole (edm_dup_filter's out_whole), so no
        # chunk, the last or an earlier one, stays lost.
        writes = [w for w in f.writes if w["len"]]
        oks = sum(ok for *_, ok in f.outcomes)
        dut._log.info(f"bit_errors with /A/: {len(writes)} writes, {oks} acknowledged, "
                      f"{len(f.outcomes) - oks} failed; re-sent {f.counters()['wr_cnt_resent']}")
        assert outcomes["lost_unseen"] == outcomes["unresolved"] == outcomes["applied_twice"] == 0, outcomes
        assert oks == len(writes) == len(f.outcomes), (len(writes), f.outcomes)
        lost = [(w["c"], w["id"], seq, -(-w["len"] // CHUNK)) for w in writes for seq in range(-(-w["len"] // CHUNK))
                if not any(not dup and not stale for *_, dup, stale in w.get("copies", {}).get(seq, []))]
        dut._log.info(f"bit_errors with /A/: write chunks lost (compute node, id, seq, chunks): {lost}")
        assert not lost and copies["lost_on_wire_writes"] == 0, (lost, copies)
    # No plane stopped (issue #25): each switch drains, nothing open, queued or
    # waiting to be sent (a circuit left by a lost unit is given up within its
    # CIRCUIT_TIMEOUT_CYCLES).
    for _ in range(3000):
        if not any(field(int(getattr(dut, k).value), y, 64) for k in ("sw_z_open", "sw_txc_count", "sw_fq_count")
                   for y in range(2)):
            break
        await f.step()
    else:
        raise AssertionError(f"a switch plane stopped: {f.switch_state()}")


DEAD_CYCLES = 4096   # tb_dual_fabric_top's MIRROR_DEAD_CYCLES


@cocotb.test()
async def dead_plane_back(dut):
    """Issue 40's "failed and not applied" across a dead plane that comes back:
    one plane ($EDM_DUAL_ONE_PLANE's set-up), compute node 0's plane-0 link
    cut with writes in flight and restored 2000 cycles after its mirror found
    the plane dead (DEAD_CYCLES) and reported what its engine held as failed.
    The engine was told to fail all it held (edm_compute_node fail_all), so
    no write reported failed is applied when the link is back (checked from
    the filters' verdicts and the DRAM: check_copies, write_outcomes). With
    fail_all tied low the engine re-sends the failed writes' /N/ once its
    link is back and they are applied (seed 0, 2026-11-29: 2 of 76 writes).
    With write acknowledgements ($EDM_DUAL_ACKS, ACKS = 1) an RMW whose answer
    was lost is re-sent (edm_write_retry, same id) once the link is back, and
    the filter's kept result answers it: no RMW is reported failed though
    applied (with RMW_RETRY = 0, the mutant, seed 0 reports one)."""
    f = Dual(dut, seed(258))
    f.fcommits, f.allow_fail = [], True
    f.run_switch[1] = 0
    f.cuts.update((p, 1) for p in range(f.n))
    f.run_limit = ONE_PLANE_LIMIT
    await f.start(retry=300, sw_run=1)
    for _ in range(ONE_PLANE_SETTLE):
        await f.step()
    cut_at = f.cycle + 600
    back = cut_at + DEAD_CYCLES + 2000
    await traffic(f, rounds(), events=[(cut_at, cut(f, 0, 0, True)), (back, cut(f, 0, 0, False))])
    for _ in range(3000):   # the link guard's clean window, then the engine's /N/ re-send timer
        await f.step()
    await f.read_back()
    for _ in range(300):
        await f.step()
    copies = f.check_copies()
    outcomes = f.write_outcomes()
    failed_all = f.counters()["cn_cnt_failed_all"]
    dut._log.info(f"dead_plane_back: {copies}; writes {outcomes}; engines' fail_all: {failed_all}")
    report(f, "dead_plane_back", [], copies=copies, write_outcomes=outcomes)
    assert f.cycle > back + 3000
    assert outcomes["failed_reported"] > 0, f"no write failed with its plane: {outcomes}"
    assert outcomes["failed_applied"] == 0, f"writes reported failed were applied: {outcomes}"
    assert copies["applied_twice"] == 0, copies
    if f.ack_timeout:   # every RMW's outcome is its true one (failed only if not applied)
        assert copies["rmw_applied_reported_failed"] == 0, f"RMWs reported failed were applied: {copies}"
        rmw_resent = f.counters()["wr_cnt_rmw"][0::3]   # per compute node: {re-sent, given up, unknown}
        assert sum(rmw_resent) > 0, f"no RMW re-sent: the case did not lose an RMW's answer ({rmw_resent})"

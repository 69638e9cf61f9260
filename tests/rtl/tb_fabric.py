"""cocotb: the whole EDM fabric in RTL (tests/rtl/tb_fabric_top.sv): compute
nodes and memory nodes with their PHY paths (idle pacer, edm_tx, scrambler, a
link delay line, descrambler, link guard, edm_rx) around one edm_switch, on
one clock, or (a top built with RATE_MATCH = 1) on a clock per host and one
for the switch, a few hundred ppm apart, with an elastic buffer
(pcs_rate_match) at every receiver.

Clocks: the simulator's clock is the fastest; every other clock leaves out
evenly spread edges for its offset (Bresenham: a clock ppm_d below the fastest
ppm_max ticks (10^6 + ppm_d) / (10^6 + ppm_max) of the edges), told to the top
as `tick`. The bench serves each host's interfaces on its own clock's edges
only, and the switch's frames on the switch's.

The bench plays the hosts' applications, local memories and DRAMs, and the
Ethernet frames that share the links; everything between them is RTL.

Tests
  * traffic: random reads, writes, compare-and-swap and fetch-and-add from every
    compute node to every memory node, then a read-back of every written region;
    every byte read equals the model, every DRAM equals the model at the end,
    CAS rounds have exactly one winner per value, fetch-and-add results are
    distinct and sum up; no error counter moves anywhere; frames in both
    directions of every link arrive byte-exact.
  * bit_errors: a bit flipped on the wire inside a WREQ and inside an RRES: the
    write never reaches the DRAM, the read is never completed as valid (it
    times out), each counted once where it is detected.
  * clock_offsets (RATE_MATCH = 1): the traffic test with every host's and the
    switch's clock offset by $EDM_FABRIC_PPM (ppm, hosts then switch): every
    byte and frame checked as above, no block lost or added except idles
    (no overflow, underflow or starved run at any receiver), and each elastic
    buffer's idles deleted minus inserted equal, within its depth, to the
    blocks its sender's clock made more than its receiver's.
  * link_hi_ber (RATE_MATCH = 1, a short BER window): invalid sync headers on one
    compute node's uplink raise the switch-side monitor's hi_ber; the switch
    end's pcs_link_fault is in Local Fault within two cycles and sends remote
    fault blocks, the host end takes Remote Fault from them within the
    block-lock window (64 blocks) and its host stops sending (802.3 Clause 46
    on the line, tb_fabric_port's LINK_FAULT_RS); nothing from the link
    reaches the switch (counted); no other link leaves OK; the other compute
    node's traffic completes, every byte checked; once the errors stop both
    ends return to OK, the link comes back and the host's read, issued while
    it was down, completes.
  * lost_notification, lost_grant (faults build): a write whose /N/, or whose
    /G/, is hit on the wire lands once, whole, through the compute node's /N/
    re-sends and the switch's lost-grant timeout; the counters agree with
    what the bench counts on the lines (docs/faults.md §5).
  * latency: a 64 B read and a 64 B write alone in the fabric, traced at every
    module boundary; writes the Table-1-style breakdown (cycles per step) as
    JSON to $EDM_FABRIC_LATENCY_JSON when set (`edm rtl latency` does this),
    then again with MTU and 9000 B frames filling both directions of every link.
"""

from __future__ import annotations

import json
import os
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import Dram, Driver, drive_requests, read_int, seeded_random, start_fabric

RBASE = 0x0000_1000_0000_0000   # remote memory base at each memory node
RSIZE = 16384
RO_SIZE = 4096                  # read-only region [0, RO_SIZE)
WR_BASE = 4096                  # compute node c writes [WR_BASE + c*WR_SIZE, +WR_SIZE)
WR_SIZE = 2048
ATOMIC_BASE = 12288             # the shared CAS word, then the fetch-and-add word
LBASE = 0x0000_0040_0000_0000
LSIZE = 1 << 16
M64 = (1 << 64) - 1
IDLE = (protocol.SYNC_CTRL, protocol.BT_C8)
K_RREQ, K_WREQ, K_RMW = protocol.KIND_RREQ, protocol.KIND_WREQ, protocol.KIND_RMWREQ


def pack(block) -> int:
    return (block[1] << 2) | block[0]


def unpack(v: int):
    return (v & 3, v >> 2)


def sub(block):
    """The EDM subtype of a control block (None for others)."""
    sync, p = block
    if sync == protocol.SYNC_CTRL and p & 0xFF == protocol.BT_EDM:
        return (p >> 8) & 0xFF
    return None


def field(bus: int, k: int, w: int) -> int:
    return (bus >> (k * w)) & ((1 << w) - 1)


def rate_match() -> bool:
    """Whether the top was built with RATE_MATCH = 1 (told by the runner)."""
    return os.environ.get("EDM_FABRIC_RATE_MATCH", "0") == "1"


def acks() -> bool:
    """Whether the top was built with ACKS = 1 (told by the runner): the
    memory nodes acknowledge writes, each compute node has edm_write_outcome."""
    return os.environ.get("EDM_FABRIC_ACKS", "0") == "1"


def clock_ppm(n: int) -> list:
    """Clock offsets in ppm, hosts 0..n-1 then the switch ($EDM_FABRIC_PPM, else all 0)."""
    text = os.environ.get("EDM_FABRIC_PPM", "")
    ppm = [int(v) for v in text.split(",")] if text else [0] * (n + 1)
    assert len(ppm) == n + 1, f"EDM_FABRIC_PPM={text!r}: want {n + 1} offsets (hosts, then the switch)"
    assert rate_match() or not any(ppm), "clock offsets need a top built with RATE_MATCH = 1"
    return ppm


class Clocks:
    """Which clocks tick on each edge of the simulator's (the fastest) clock."""

    def __init__(self, ppm):
        self.rate = [10**6 + p for p in ppm]
        self.period = max(self.rate)
        k = len(ppm)
        self.acc = [self.period * d // k for d in range(k)]   # spread phases, deterministic
        self.ticks = [0] * k                                  # edges each clock had

    def next(self) -> int:
        mask = 0
        for d, rate in enumerate(self.rate):
            self.acc[d] += rate
            if self.acc[d] >= self.period:
                self.acc[d] -= self.period
                mask |= 1 << d
                self.ticks[d] += 1
        return mask


LOCAL_FAULT, REMOTE_FAULT = 1, 2   # pcs_link_fault's link_fault


def link_cycles() -> int:
    """The top's LINK_CYCLES, passed by the runner (parameters are not visible to cocotb)."""
    return int(os.environ.get("EDM_FABRIC_LINK_CYCLES", "19"))


# Counters of the rate matchers and pacers, and of the link guards (per port).
RATE_COUNTERS = tuple(f"{way}_rm_{what}" for way in ("up", "down")
                      for what in ("deleted", "inserted", "overflow", "underflow", "starved")) + ("h_cnt_paced",)
LINK_COUNTERS = tuple(f"{way}_cnt_{what}" for way in ("up", "down") for what in ("bad_sync", "hi_ber", "discarded"))
# The switch's L2 stage (edm_l2_stage), per port.
L2_COUNTERS = tuple(f"sw_cnt_{what}" for what in ("rx_frames", "rx_dropped", "rx_bad", "ordered_sets", "filtered",
                                                  "tx_frames", "tx_dropped"))
# Counters that move in a run without faults (the rest count errors).
NOT_ERRORS = ("up_rm_deleted", "up_rm_inserted", "down_rm_deleted", "down_rm_inserted",
              "h_cnt_paced", "sw_cnt_rx_frames", "sw_cnt_tx_frames", "sw_cnt_ordered_sets")
BROADCAST = b"\xff" * 6


def host_mac(p: int) -> bytes:
    """Host p's MAC address (locally administered)."""
    return bytes([0x02, 0, 0, 0, 0x0E, p])


class Fabric:
    def __init__(self, dut, seed, *, dram_lat=(1, 1), lmem_lat=(1, 1), p_ready=1.0, p_sink=1.0, trace=False,
                 bench_frames=True):
        self.dut = dut
        # bench_frames: the hosts' frames are this bench's (h_enc_*), checked
        # here; else another model's (a top built with XGMII_MACS), checked there.
        self.bench_frames = bench_frames
        self.rng = seeded_random(seed)
        self.drive = Driver()   # step's inputs, each written when it changes
        self.nc = len(dut.req_valid)
        self.nm = len(dut.dram_rd_valid)
        self.n = self.nc + self.nm
        # p_ready: host-side handshakes (requests' completions, local-memory reads);
        # p_sink: local-memory writes and DRAM, which must keep up with the link
        # (neither edm_rx nor the switch can be held), so only short stalls.
        self.dram_lat, self.lmem_lat, self.p_ready, self.p_sink = dram_lat, lmem_lat, p_ready, p_sink
        self.cycle = 0
        init = [bytes(self.rng.getrandbits(8) for _ in range(RSIZE)) for _ in range(self.nm)]
        self.dram = [bytearray(b) for b in init]
        self.model = [bytearray(b) for b in init]
        self.mem = [Dram(self.dram[m], RBASE, self.rng, dram_lat) for m in range(self.nm)]
        self.lmem = [bytearray(self.rng.getrandbits(8) for _ in range(LSIZE)) for _ in range(self.nc)]
        self.lrd_q = [deque() for _ in range(self.nc)]
        self.lrd_due = [0] * self.nc
        self.lalloc = [0] * self.nc
        self.submit = [deque() for _ in range(self.nc)]
        self.outstanding = [dict() for _ in range(self.nc)]  # tag -> request
        self.order = [{} for _ in range(self.nc)]             # dst -> deque of tags
        self.tags = [0] * self.nc
        self.done: list = []
        self.all_writes: list = []
        # Frames, host to host through the switch's L2 stage: per host, the
        # blocks it sends, the frames it sent (h_sent) and those it must get
        # (s_sent: addressed to it, or broadcast by another host).
        self.h_frames = [deque() for _ in range(self.n)]
        self.h_sent = [[] for _ in range(self.n)]
        self.s_sent = [[] for _ in range(self.n)]
        self.h_got = [[] for _ in range(self.n)]    # frames the switch received from host p
        self.s_got = [[] for _ in range(self.n)]    # frames host p's decoder received
        self.rx_sw = [codec.RxDemux() for _ in range(self.n)]
        self.rx_dec = [codec.RxDemux() for _ in range(self.n)]
        self.trace = trace
        self.events: list = []   # (cycle, where, port, what)
        # Every memory unit each host sends and receives (for diagnostics).
        self.log_tx = [codec.RxDemux() for _ in range(self.n)]
        self.log_rx = [codec.RxDemux() for _ in range(self.n)]
        self.unit_log: list = []  # (cycle, "tx"/"rx", port, message)
        self.flips: dict = {}     # cycle -> [("up" / "down", port, 66-bit mask)]: bit errors on the wire
        self.clocks = Clocks(clock_ppm(self.n))   # hosts 0..n-1, then the switch
        self.outcomes: list = []  # ACKS: (cycle, c, dst, id, tag, ok, age) of each write outcome

    # ---------------------------------------------------------------- requests
    def laddr(self, c, size):
        size = (size + 63) // 64 * 64
        if self.lalloc[c] + size > LSIZE:
            self.lalloc[c] = 0
        a = self.lalloc[c]
        self.lalloc[c] += size
        return a

    def request(self, c, kind, m, off, size=8, *, op=0, arg0=0, arg1=0, expect=None):
        """Queues a request of compute node c to memory node m (index)."""
        r = dict(c=c, kind=kind, dst=self.nc + m, m=m, off=off, len=size, op=op, arg0=arg0, arg1=arg1,
                 expect=expect)
        r["loff"] = self.laddr(c, size)
        if kind == K_WREQ:
            data = bytes(self.rng.getrandbits(8) for _ in range(size))
            self.lmem[c][r["loff"]:r["loff"] + size] = data
            r["data"] = data
            self.all_writes.append(r)
        self.submit[c].append(r)
        return r

    def busy(self):
        return any(self.submit) or any(self.outstanding)

    # ---------------------------------------------------------------- frames
    def add_frames(self, port, size, count, *, to_host):
        """Frames on port's downlink (to_host: from host port - 1) or on its
        uplink (to host port + 1): every host's frames go to the next host, so
        each host gets its frames from one ingress, in order."""
        src = (port - 1) % self.n if to_host else port
        for _ in range(count):
            self.send_frame(src, (src + 1) % self.n, size)

    def send_frame(self, src, dst, size):
        """A frame of `size` bytes from host src to host dst (None: broadcast)."""
        head = (BROADCAST if dst is None else host_mac(dst)) + host_mac(src)
        data = head + bytes(self.rng.getrandbits(8) for _ in range(size - len(head)))
        self.h_sent[src].append(data)
        for p in range(self.n):
            if p == dst or (dst is None and p != src):
                self.s_sent[p].append(data)
        self.h_frames[src].extend(codec.encode_frame(data) + [IDLE])

    def frames_pending(self):
        return any(self.h_frames) or any(len(g) < len(s) for g, s in zip(self.s_got, self.s_sent))

    # ---------------------------------------------------------------- the clock
    async def start(self):
        # Every clock runs through reset.
        await start_fabric(self.dut, cfg_timeout=0, cfg_retry=0, tick=(1 << (self.n + 1)) - 1)
        # The switch learns every host's address from a broadcast of it, so
        # that later frames go only where they are addressed.
        for p in range(self.n if self.bench_frames else 0):
            self.send_frame(p, None, 64)
        while self.frames_pending():
            await self.step()
            assert self.cycle < 5000, f"the hosts' broadcasts did not arrive: {self.status()}"

    async def step(self):
        d, rng, nc, nm, n = self.dut, self.rng, self.nc, self.nm, self.n
        put = self.drive.put
        await FallingEdge(d.clk)
        # ---- drive. A host or the switch takes what is driven only on its own
        # clock's edges: nothing is handed over (popped) on an edge it skips.
        ticks = self.clocks.next()
        put(d.tick, ticks)
        on = [bool(ticks >> p & 1) for p in range(n + 1)]   # hosts, then the switch
        heads = []
        for c in range(nc):
            r = self.submit[c][0] if self.submit[c] else None
            heads.append(r)
            if r is not None and "tag" not in r:
                while self.tags[c] in self.outstanding[c]:
                    self.tags[c] = (self.tags[c] + 1) % 256
                r["tag"] = self.tags[c]
                self.tags[c] = (self.tags[c] + 1) % 256
        drive_requests(d, heads, RBASE, LBASE, put)
        def ready(k, p):
            return sum(1 << i for i in range(k) if rng.random() < p)
        cpl_ready, lrd_ready = ready(nc, self.p_ready), ready(nc, self.p_ready)
        lwr_ready, dram_rd_ready, dram_wr_ready = ready(nc, self.p_sink), ready(nm, self.p_sink), ready(nm, self.p_sink)
        put(d.cpl_ready, cpl_ready), put(d.lrd_ready, lrd_ready), put(d.lwr_ready, lwr_ready)
        put(d.dram_rd_ready, dram_rd_ready), put(d.dram_wr_ready, dram_wr_ready)
        v = data = 0
        for c in range(nc):
            if on[c] and self.lrd_q[c] and self.lrd_q[c][0][0] <= self.cycle:
                v |= 1 << c
                data |= self.lrd_q[c].popleft()[1] << (64 * c)
        put(d.lrd_rsp_valid, v), put(d.lrd_rsp_data, data)
        v = data = 0
        dram_rsp = [False] * nm
        for m in range(nm):
            answer = self.mem[m].answer(self.cycle) if on[nc + m] else None
            if answer is not None:
                v |= 1 << m
                data |= answer << (64 * m)
                dram_rsp[m] = True
        put(d.dram_rsp_valid, v), put(d.dram_rsp_data, data)
        hv = hb = 0
        for p in range(n):
            if self.h_frames[p]:
                hv |= 1 << p
                hb |= pack(self.h_frames[p][0]) << (66 * p)
        put(d.h_enc_valid, hv), put(d.h_enc_block, hb)
        flip = {"up": 0, "down": 0}
        for way, p, mask in self.flips.pop(self.cycle, []):
            flip[way] |= mask << (66 * p)
        put(d.up_flip, flip["up"]), put(d.down_flip, flip["down"])
        # ---- sample (before the rising edge)
        await ReadOnly()
        cyc = self.cycle
        req_ready = read_int(d.req_ready)
        for c in range(nc):
            if on[c] and heads[c] is not None and req_ready >> c & 1:
                r = self.submit[c].popleft()
                r["t_req"] = cyc
                self.outstanding[c][r["tag"]] = r
                self.order[c].setdefault(r["dst"], deque()).append(r["tag"])
                if self.trace:
                    self.events.append((cyc, "req", c, r["kind"]))
        lrd_v, lrd_a = read_int(d.lrd_valid), read_int(d.lrd_addr)
        lwr_v = read_int(d.lwr_valid)
        for c in range(nc):
            if not on[c]:
                continue
            if lrd_v >> c & 1 and lrd_ready >> c & 1:
                o = field(lrd_a, c, 64) - LBASE
                assert 0 <= o < LSIZE, hex(o)
                due = max(self.lrd_due[c] + 1, cyc + rng.randint(*self.lmem_lat))
                self.lrd_due[c] = due
                self.lrd_q[c].append((due, int.from_bytes(self.lmem[c][o:o + 8], "little")))
            if lwr_v >> c & 1 and lwr_ready >> c & 1:
                o = field(read_int(d.lwr_addr), c, 64) - LBASE
                w = field(read_int(d.lwr_data), c, 64).to_bytes(8, "little")
                mask = field(read_int(d.lwr_mask), c, 8)
                assert 0 <= o < LSIZE, hex(o)
                for k in range(8):
                    if mask >> k & 1:
                        self.lmem[c][o + k] = w[k]
                if self.trace:
                    self.events.append((cyc, "lwr", c, None))
        cv = read_int(d.cpl_valid)
        for c in range(nc):
            if on[c] and cv >> c & 1 and cpl_ready >> c & 1:
                self.complete(c, field(read_int(d.cpl_tag), c, 8), field(read_int(d.cpl_status), c, 8),
                              field(read_int(d.cpl_dst), c, 10), cyc)
        if acks():
            wv = read_int(d.wo_valid)
            for c in range(nc):
                if on[c] and wv >> c & 1:
                    self.outcomes.append((cyc, c, field(read_int(d.wo_dst), c, 10), field(read_int(d.wo_id), c, 8),
                                          field(read_int(d.wo_tag), c, 8), read_int(d.wo_ok) >> c & 1,
                                          field(read_int(d.wo_age), c, len(d.wo_age) // nc)))
        rdv, wrv = read_int(d.dram_rd_valid) & dram_rd_ready, read_int(d.dram_wr_valid) & dram_wr_ready
        for m in range(nm):
            if not on[nc + m]:
                continue
            if dram_rsp[m] and self.trace:
                self.events.append((cyc, "dram_rsp", self.nc + m, None))
            read, write = rdv >> m & 1, wrv >> m & 1
            self.mem[m].accept(cyc, field(read_int(d.dram_rd_addr), m, 64) if read else None,
                               field(read_int(d.dram_wr_addr), m, 64) if write else None,
                               field(read_int(d.dram_wr_data), m, 64), field(read_int(d.dram_wr_mask), m, 8))
            if self.trace and read:
                self.events.append((cyc, "dram_rd", self.nc + m, None))
            if self.trace and write:
                self.events.append((cyc, "dram_wr", self.nc + m, field(read_int(d.dram_wr_addr), m, 64)))
        her = read_int(d.h_enc_ready)
        for p in range(n):
            if on[p] and hv >> p & 1 and her >> p & 1:
                self.h_frames[p].popleft()
        dec_v, dec_b = read_int(d.h_dec_valid), read_int(d.h_dec_block)
        sw_in = read_int(d.sw_in)
        tx_l, rx_l = read_int(d.h_tx_line), read_int(d.h_rx_line)
        for p in range(n):
            if not on[p]:
                continue
            for side, demux, bus in (("tx", self.log_tx[p], tx_l), ("rx", self.log_rx[p], rx_l)):
                for e in demux.push(unpack(field(bus, p, 66))):
                    if e[0] == "message":
                        m = e[1]
                        self.unit_log.append((cyc, side, p, f"{m.kind} {m.src}->{m.dst} id {m.msg_id} "
                                              f"seq {m.seq} len {m.length} last {m.last}"))
        probes = {}
        if self.trace:
            probes = {"tx": int(d.h_tx_line.value), "sw_in": sw_in, "sw_out": int(d.sw_out.value),
                      "rx": int(d.h_rx_line.value)}
        for p in range(n):
            if on[n] and self.bench_frames:
                for e in self.rx_sw[p].push(unpack(field(sw_in, p, 66))):
                    if e[0] == "frame":
                        self.h_got[p].append(e[1])
            if on[p] and dec_v >> p & 1 and self.bench_frames:
                for e in self.rx_dec[p].push(unpack(field(dec_b, p, 66))):
                    if e[0] == "frame":
                        self.s_got[p].append(e[1])
            for where, bus in probes.items():
                if not on[n if where.startswith("sw") else p]:
                    continue
                b = unpack(field(bus, p, 66))
                s = sub(b)
                if s is not None:
                    self.events.append((cyc, where, p, s))
        await RisingEdge(d.clk)
        self.cycle += 1

    def complete(self, c, tag, status, dst, cyc):
        assert tag in self.outstanding[c], f"compute node {c}: completion for unknown tag {tag}"
        r = self.outstanding[c].pop(tag)
        q = self.order[c][r["dst"]]
        assert dst == r["dst"] and q[0] == tag, f"compute node {c}: completion out of order for {dst}"
        q.popleft()
        assert status == r.get("expect_status", protocol.STATUS_OK), \
            f"compute node {c}: status {status} for {self.describe(r)} at cycle {cyc}; {self.status()}"
        r["t_cpl"] = cyc
        if r["kind"] in (K_RREQ, K_RMW) and status == protocol.STATUS_OK:
            size = r["len"] if r["kind"] == K_RREQ else 8
            r["got"] = bytes(self.lmem[c][r["loff"]:r["loff"] + size])
            if r["expect"] is not None and r["got"] != r["expect"]:
                bad = [k for k in range(size) if r["got"][k] != r["expect"][k]]
                dram = self.dram[r["m"]][r["off"]:r["off"] + size]
                o = r["off"] + bad[0]
                hist = [(w["c"], w["off"], w["len"], w.get("t_req"), w.get("t_cpl"),
                         bytes(dram[bad[0]:bad[0] + 4]) in w["data"])
                        for w in self.all_writes if w["m"] == r["m"] and w["off"] <= o < w["off"] + w["len"]]
                raise AssertionError(
                    f"writes covering it (c, off, len, issued, completed, holds DRAM's bytes): {hist}; "
                    f"compute node {c}: {self.describe(r)}: {len(bad)} bytes differ, first at +{bad[0]}; "
                    f"DRAM there now {'equals' if dram == r['expect'] else 'differs from'} the model; "
                    f"got {r['got'][bad[0]:bad[0] + 16].hex()} want {r['expect'][bad[0]:bad[0] + 16].hex()} "
                    f"dram {dram[bad[0]:bad[0] + 16].hex()}; counters {self.counters()}; units of that write: "
                    f"{[u for u in self.unit_log if 1400 < u[0] < 2100 and 'WREQ 2->' in u[3]]}")
        self.done.append(r)
        if self.trace:
            self.events.append((cyc, "cpl", c, r["kind"]))

    async def run(self, limit=60000):
        start = self.cycle
        while self.busy() or self.frames_pending():
            await self.step()
            assert self.cycle - start < limit, f"the fabric did not finish (hang): {self.status()}"
        for _ in range(200):   # let frames and last writes drain
            await self.step()

    def counters(self):
        d, nc, nm, n = self.dut, self.nc, self.nm, self.n
        out = {}
        for name, k in (("cn_cnt_dropped", nc), ("cn_cnt_stray", nc), ("cn_cnt_timeouts", nc),
                        ("cn_cnt_late", nc), ("cn_cnt_rx_overflow", nc), ("cn_cnt_retries", nc), ("mn_cnt_dropped", nm),
                        ("mn_cnt_overflow", nm), ("mn_cnt_rejected", nm), ("mn_cnt_stray", nm),
                        ("h_cnt_corrupted", n), ("h_cnt_unknown", n), ("h_cnt_ctl_missed", n),
                        ("sw_cnt_bad_notif", n),
                        ("sw_cnt_unknown", n), ("sw_cnt_dropped", n), ("sw_cnt_lost_grants", n), ("sw_cnt_overflow", 1),
                        ("sw_cnt_conflict", 1)) + tuple((name, n) for name in RATE_COUNTERS + LINK_COUNTERS + L2_COUNTERS):
            v = int(getattr(d, name).value)
            out[name] = [field(v, i, 16) for i in range(k)]
        return out

    @staticmethod
    def describe(r):
        return (f"{ {K_RREQ: 'RREQ', K_WREQ: 'WREQ', K_RMW: 'RMWREQ'}[r['kind']]} of {r['len']} B at "
                f"{r['off']:#x} of memory node {r['m']} (issued at cycle {r.get('t_req')}, tag {r.get('tag')})")

    def status(self):
        pend = {c: [(r["kind"], r["dst"], r["len"], r.get("t_req")) for r in self.outstanding[c].values()]
                for c in range(self.nc)}
        log = "\n".join(str(u) for u in self.unit_log[-60:])
        return (f"last units:\n{log}\ncycle {self.cycle}; waiting {[len(q) for q in self.submit]}; outstanding {pend}; "
                f"counters {self.counters()}")

    def check_clean(self):
        """No error counter moved anywhere, frames arrived byte-exact, DRAM = model.
        sw_cnt_conflict included: under the switch's zero-queue rules no data
        block ever waits in the switch (docs/hardware.md)."""
        nm, n = self.nm, self.n
        for name, v in self.counters().items():
            if name not in NOT_ERRORS:
                assert not any(v), f"{name} = {v}"
        for p in range(n if self.bench_frames else 0):
            assert self.h_got[p] == self.h_sent[p], f"port {p}: frames host -> switch differ"
            for src in range(n):   # in order per source; sources interleave at the switch
                got = [x for x in self.s_got[p] if x[6:12] == host_mac(src)]
                sent = [x for x in self.s_sent[p] if x[6:12] == host_mac(src)]
                assert got == sent, f"port {p}: frames from host {src} through the switch differ"
            assert len(self.s_got[p]) == len(self.s_sent[p]), f"port {p}: frames it was not sent"
        for m in range(nm):
            assert self.dram[m] == self.model[m], f"memory node {m}: DRAM differs from the model"


async def new_fabric(dut, seed, **kw):
    f = Fabric(dut, seed, **kw)
    await f.start()
    return f


# -------------------------------------------------------------------- traffic
FRAME_SIZES = (64, 65, 200, 1500, 1518, 9000)
BATCH_ROUNDS = 60   # at most about 20 KB of local buffers per compute node


@cocotb.test()
async def random_traffic(dut):
    """Reads, writes, CAS and fetch-and-add from every compute node to every
    memory node, random back-pressure and DRAM / local-memory latencies,
    frames on every link; then every written region is read back."""
    f = await new_fabric(dut, 71, dram_lat=(1, 6), lmem_lat=(1, 4), p_ready=0.85, p_sink=0.97)
    await traffic(f)


async def traffic(f, rounds=60, frame_sizes=FRAME_SIZES):
    """The random_traffic test's load on fabric f, every byte checked."""
    dut, rng = f.dut, f.rng
    nc, nm = f.nc, f.nm
    cas_off, faa_off = ATOMIC_BASE, ATOMIC_BASE + 8
    for m in range(nm):   # the atomic words start at 0
        for o in (cas_off, faa_off):
            f.dram[m][o:o + 8] = bytes(8)
            f.model[m][o:o + 8] = bytes(8)
    for p in range(f.n):
        for to_host in (False, True):
            for _ in range(6):
                f.add_frames(p, rng.choice(frame_sizes), 1, to_host=to_host)
    faa_adds = {m: [] for m in range(nm)}
    cas_reqs = {m: [] for m in range(nm)}
    seen = {}
    # In batches of BATCH_ROUNDS: a request's local buffer is taken (and a
    # write's data put there) when it is queued, and the buffers wrap at LSIZE.
    for first_round in range(0, rounds, BATCH_ROUNDS):
        batch_cas = {m: [] for m in range(nm)}
        for _ in range(min(BATCH_ROUNDS, rounds - first_round)):
            for c in range(nc):
                m = rng.randrange(nm)
                x = rng.random()
                if x < 0.35:
                    size = rng.choice([8, 64, 64, 100, 256, 300, 700])
                    off = rng.randrange(0, RO_SIZE - size)
                    f.request(c, K_RREQ, m, off, size, expect=bytes(f.model[m][off:off + size]))
                elif x < 0.7:
                    size = rng.choice([8, 64, 64, 100, 256, 300, 520])
                    off = WR_BASE + c * WR_SIZE + rng.randrange(0, WR_SIZE - size)
                    r = f.request(c, K_WREQ, m, off, size)
                    f.model[m][off:off + size] = r["data"]
                elif x < 0.85:
                    add = rng.randrange(1, 1000)
                    faa_adds[m].append(f.request(c, K_RMW, m, faa_off, op=protocol.RMW_FAA, arg0=add))
                else:
                    # CAS rounds: every requester tries to move the word from v to v+1
                    # for the v it last saw (0 first); exactly one wins each v.
                    batch_cas[m].append(f.request(c, K_RMW, m, cas_off, op=protocol.RMW_CAS))
        # CAS arguments: simpler than from what the requester has seen, each
        # compute node guesses 0, 1, 2, ... in order.
        for m in range(nm):
            for r in batch_cas[m]:
                k = (r["c"], m)
                r["arg0"] = seen.get(k, 0)
                r["arg1"] = r["arg0"] + 1
                seen[k] = r["arg0"] + 1
            cas_reqs[m] += batch_cas[m]
        await f.run()
    for m in range(nm):
        total = sum(r["arg0"] for r in faa_adds[m])
        olds = sorted(int.from_bytes(r["got"], "little") for r in faa_adds[m])
        assert len(set(olds)) == len(olds), "fetch-and-add returned the same old value twice"
        f.model[m][faa_off:faa_off + 8] = total.to_bytes(8, "little")
        wins = [r for r in cas_reqs[m] if int.from_bytes(r["got"], "little") == r["arg0"]]
        vals = sorted(r["arg0"] for r in wins)
        assert vals == list(range(len(vals))), f"CAS winners per value at memory node {m}: {vals}"
        f.model[m][cas_off:cas_off + 8] = len(vals).to_bytes(8, "little")
    # Read back every written region through the fabric.
    for c in range(nc):
        for m in range(nm):
            for k in range(0, WR_SIZE, 512):
                off = WR_BASE + c * WR_SIZE + k
                f.request(c, K_RREQ, m, off, 512, expect=bytes(f.model[m][off:off + 512]))
    await f.run()
    f.check_clean()
    n_kinds = {k: sum(1 for r in f.done if r["kind"] == k) for k in (K_RREQ, K_WREQ, K_RMW)}
    dut._log.info(f"{len(f.done)} requests done in {f.cycle} cycles: {n_kinds}; "
                  f"CAS winners {[len([r for r in cas_reqs[m] if int.from_bytes(r['got'], 'little') == r['arg0']]) for m in range(nm)]}")


# -------------------------------------------------------------------- clock offsets
# The longest run without an idle the receivers' buffers absorb at an offset
# (docs/faults.md §1): 8 spare entries. A 9000-byte frame (1130 blocks) may go
# only where offsets stay under 8 / 1130 = 7000 ppm; the idle rule covers 488.
MAX_PPM_FOR_JUMBO = 7000


@cocotb.test(skip=not rate_match())
async def clock_offsets(dut):
    """The traffic test with the clocks of $EDM_FABRIC_PPM ($EDM_FABRIC_ROUNDS
    rounds), then every elastic buffer's figures; written as JSON to
    $EDM_FABRIC_PPM_JSON when set (experiments/fabric_ppm.py)."""
    f = await new_fabric(dut, 74, dram_lat=(1, 6), lmem_lat=(1, 4), p_ready=0.85, p_sink=0.97)
    ppm = clock_ppm(f.n)
    jumbo = max(ppm) - min(ppm) <= MAX_PPM_FOR_JUMBO
    await traffic(f, int(os.environ.get("EDM_FABRIC_ROUNDS", "60")),
                  FRAME_SIZES if jumbo else tuple(s for s in FRAME_SIZES if s < 9000))
    got, ticks, n = f.counters(), f.clocks.ticks, f.n
    links = []
    for p in range(n):
        for way, sender, receiver in (("up", p, n), ("down", n, p)):
            c = {what: got[f"{way}_rm_{what}"][p] for what in ("deleted", "inserted", "overflow", "underflow", "starved")}
            # Every block the sender's clock made more than the receiver's went
            # as a deleted idle, or is still in the buffer or on the link (at
            # most its depth, 32, plus the link and the start: the receiver
            # reads once 16 are in).
            surplus = ticks[sender] - ticks[receiver]
            slack = 32 + link_cycles() + 24
            net = c["deleted"] - c["inserted"]
            assert abs(net - surplus) <= slack, (way, p, c, surplus)
            if surplus > slack:
                assert c["deleted"] > 0 and c["inserted"] == 0, (way, p, c, surplus)
            if surplus < -slack:
                assert c["inserted"] > 0 and c["deleted"] == 0, (way, p, c, surplus)
            links.append(dict(port=p, way=way, sender_ppm=ppm[sender], receiver_ppm=ppm[receiver],
                              sender_blocks=ticks[sender], receiver_blocks=ticks[receiver], **c))
    checked = sum(r["len"] for r in f.done)
    frames = sum(len(x) for x in f.h_sent) + sum(len(x) for x in f.s_sent)
    dut._log.info(f"clocks {ppm} ppm: {len(f.done)} requests ({checked} bytes) and {frames} frames checked in "
                  f"{f.cycle} cycles; paced {got['h_cnt_paced']}; links {links}")
    path = os.environ.get("EDM_FABRIC_PPM_JSON")
    if path:
        with open(path, "w") as fh:
            json.dump(dict(ppm=ppm, cycles=f.cycle, requests=len(f.done), bytes_checked=checked, frames=frames,
                           paced=got["h_cnt_paced"], links=links), fh, indent=1)


# -------------------------------------------------------------------- link disable
@cocotb.test(skip=not rate_match())
async def link_hi_ber(dut):
    """Invalid sync headers on compute node 0's uplink raise the switch-side
    BER monitor; the switch end signals remote fault on the line and the host
    stops; the other compute node's traffic goes on; then the link comes back."""
    f = await new_fabric(dut, 75)
    c, other, n = 0, 1, f.n
    bad = int(os.environ.get("EDM_FABRIC_BER_THRESHOLD", "4")) + 2
    for k in range(20):   # the other node's load, to both memory nodes
        m = k % f.nm
        off = f.rng.randrange(0, RO_SIZE - 256)
        f.request(other, K_RREQ, m, off, 256, expect=bytes(f.model[m][off:off + 256]))
        off = WR_BASE + other * WR_SIZE + f.rng.randrange(0, WR_SIZE - 256)
        r = f.request(other, K_WREQ, m, off, 256)
        f.model[m][off:off + 256] = r["data"]
    for _ in range(50):
        await f.step()
    t_err = f.cycle + 5
    for k in range(bad):  # one sync bit flipped: 01 -> 00, 10 -> 11, both invalid
        f.flips[t_err + k] = [("up", c, 1)]
    # 802.3 link fault signalling on the line (tb_fabric_port, LINK_FAULT_RS):
    # the switch's receiver (hi_ber) is in Local Fault at once and sends remote
    # fault blocks; the host takes Remote Fault from them and stops sending.
    seen = {}   # (where, state) -> first cycle

    def watch():
        states = {"hi_ber": field(int(dut.up_cnt_hi_ber.value), c, 16),
                  "switch end": field(int(dut.up_link_fault.value), c, 2),
                  "host end": field(int(dut.down_link_fault.value), c, 2)}
        for where, state in states.items():
            seen.setdefault((where, state), f.cycle)
        for p in range(n):
            if p != c:
                assert field(int(dut.up_link_fault.value), p, 2) == field(int(dut.down_link_fault.value), p, 2) == 0
    while not int(dut.link_down.value) >> c & 1:
        await f.step()
        watch()
        assert f.cycle < t_err + 100, "hi_ber did not take the link down"
    t_down = f.cycle
    t_hi = seen[("hi_ber", 1)]
    assert seen[("switch end", LOCAL_FAULT)] - t_hi <= 2, seen
    # Within the block-lock window (64 blocks) of the fault: over the link, the
    # elastic buffer, edm_rx and the decoder, and four fault columns.
    assert seen[("host end", REMOTE_FAULT)] - seen[("switch end", LOCAL_FAULT)] <= 64, seen
    assert seen[("host end", REMOTE_FAULT)] == t_down, seen
    off = RO_SIZE // 4
    r = f.request(c, K_RREQ, 0, off, 64, expect=bytes(f.model[0][off:off + 64]))
    tx_before = sum(1 for u in f.unit_log if u[1] == "tx" and u[2] == c)
    while int(dut.link_down.value) >> c & 1:
        await f.step()
        watch()
        assert f.cycle < t_down + 5000, "the link never came back"
        if r.get("t_req") is not None:
            assert r.get("t_cpl") is None, "a read completed over a disabled link"
    t_up = f.cycle
    assert sum(1 for u in f.unit_log if u[1] == "tx" and u[2] == c) == tx_before, "the host sent while down"
    # Back to OK: the switch end 128 clean columns after its hi_ber fell, the
    # host end 128 columns after the last remote fault block reached it.
    assert field(int(dut.up_link_fault.value), c, 2) == field(int(dut.down_link_fault.value), c, 2) == 0
    assert ("host end", LOCAL_FAULT) not in seen, seen
    await f.run()
    assert r.get("t_cpl") is not None and r["t_cpl"] > t_up and r["got"] == r["expect"]
    got = f.counters()
    want = {("up_cnt_bad_sync", c): bad, ("up_cnt_hi_ber", c): 1,
            # the invalid blocks before hi_ber reached the switch: counted there
            ("sw_cnt_unknown", c): bad - 2,
            # the two after it were discarded at the switch's guard
            ("up_cnt_discarded", c): 2}
    for name, values in got.items():
        if name in NOT_ERRORS:
            continue
        for i, v in enumerate(values):
            assert v == want.get((name, i), 0), (name, i, v, got)
    assert all(f.dram[m] == f.model[m] for m in range(f.nm))
    dut._log.info(f"hi_ber at cycle {t_hi}, switch end local fault at {seen[('switch end', LOCAL_FAULT)]}, "
                  f"host end remote fault at {seen[('host end', REMOTE_FAULT)]}")
    dut._log.info(f"link {c} down from cycle {t_down} to {t_up} ({t_up - t_down} cycles); "
                  f"{len(f.done)} requests checked; counters {got}")


@cocotb.test(skip=not rate_match())
async def a_down_port_is_never_granted(dut):
    """Memory node 0's uplink disabled (hi_ber at the switch's receiver): while
    the switch end's link is down (sw_link_up, edm_switch port_link_up), compute
    node 0's reads and writes toward it wait in the switch: once the
    scheduler's pipeline has drained (GRANT_LAG cycles), no /G/ naming the port
    on any egress and nothing but idles out of the datapath toward it (no
    forwarded RREQ, no circuit data, sw_out); after the link is back every
    request completes, every byte checked, and no data block waited in the
    switch. A frame for the port sent meanwhile (compute node 1's) waits in
    the switch's egress queue and arrives whole after the link is back."""
    f = await new_fabric(dut, 76)
    c, m = 0, 0
    port = f.nc + m
    bad = int(os.environ.get("EDM_FABRIC_BER_THRESHOLD", "4")) + 2
    for _ in range(50):
        await f.step()
    t_err = f.cycle + 5
    for k in range(bad):  # one sync bit flipped on the memory node's uplink
        f.flips[t_err + k] = [("up", port, 1)]
    while int(dut.sw_link_up.value) >> port & 1:
        await f.step()
        assert f.cycle < t_err + 100, "hi_ber did not take the switch end's link down"
    t_down = f.cycle
    reqs = []
    for _ in range(6):   # queued toward the down port: reads and writes
        off = f.rng.randrange(0, RO_SIZE - 256)
        reqs.append(f.request(c, K_RREQ, m, off, 256, expect=bytes(f.model[m][off:off + 256])))
        off = WR_BASE + c * WR_SIZE + f.rng.randrange(0, WR_SIZE - 256)
        reqs.append(f.request(c, K_WREQ, m, off, 256))
        f.model[m][off:off + 256] = reqs[-1]["data"]
    frames_before = len(f.s_got[port])
    f.send_frame(1, port, 200)
    GRANT_LAG = 8   # an iteration begun before the link fell, its /G/ a cycle later
    named = []      # (cycle, egress, what): grants for the port while it was down
    while not int(dut.sw_link_up.value) >> port & 1:
        await f.step()
        assert f.cycle < t_down + 5000, "the link never came back"
        if f.cycle - t_down <= GRANT_LAG:
            continue
        out = int(dut.sw_out.value)
        for e in range(f.n):
            blk = unpack(field(out, e, 66))
            if sub(blk) == protocol.SUB_G:
                seq = codec.implied_seq(blk)
                g = codec.decode_control(blk, seq) if seq is not None else None
                if e == port or (g is not None and g[1] == port):
                    named.append((f.cycle, e, g))
            elif e == port and blk != IDLE:
                named.append((f.cycle, e, sub(blk)))
    t_up = f.cycle
    assert not named, f"the switch granted port {port} while its link was down: {named[:5]}"
    assert len(f.s_got[port]) == frames_before, "a frame crossed a link that was down"
    assert all(r.get("t_cpl") is None for r in reqs), "a request completed over a disabled link"
    await f.run()
    for r in reqs:
        assert r.get("t_cpl") is not None and r["t_cpl"] > t_up, r
        if r["kind"] == K_RREQ:
            assert r["got"] == r["expect"]
    assert all(f.dram[i] == f.model[i] for i in range(f.nm))
    got = f.counters()
    assert got["sw_cnt_conflict"] == [0] and got["sw_cnt_overflow"] == [0], got
    assert got["sw_cnt_dropped"] == [0] * f.n and got["sw_cnt_lost_grants"] == [0] * f.n, got
    # (f.run waited for the frame: without the hold it never arrives, a hang.)
    assert f.s_got[port] == f.s_sent[port], f"port {port}: the frame held while its link was down differs"
    dut._log.info(f"port {port} down at the switch from cycle {t_down} to {t_up} ({t_up - t_down} cycles): "
                  f"{len(reqs)} requests waited, all completed after it")


# -------------------------------------------------------------------- bit errors
async def next_event(f, where, port, what):
    """Steps until the probe `where` of `port` shows the EDM subtype `what`; its cycle."""
    seen = len(f.events)
    while True:
        await f.step()
        for cyc, w, p, s in f.events[seen:]:
            if (w, p, s) == (where, port, what):
                return cyc
        seen = len(f.events)


@cocotb.test()
async def bit_errors(dut):
    """One bit error on the wire inside a 64 B WREQ (compute node -> switch) and
    then inside a 64 B RRES (switch -> compute node), in a middle data block
    (the descrambler spreads it over that block and the next): the write never
    reaches the DRAM (the memory node drops the unit; the whole DRAM still
    equals the model, which never saw that write) and the read is never
    completed as valid (dropped at the compute node, it times out); then the
    same write and read go through normally."""
    f = await new_fabric(dut, 73, trace=True)
    dut.cfg_timeout.value = 400
    link, c, m = link_cycles(), 0, 0
    fourth = 4   # the unit's fifth block, an /MD/ in the middle of a 64 B unit
    f.request(c, K_WREQ, m, WR_BASE, 64)                 # the model keeps the old bytes
    t = await next_event(f, "tx", c, protocol.SUB_MS)    # the WREQ leaves the compute node's edm_tx
    f.flips[t + fourth + 1 + link] = [("up", c, 1 << 40)]   # + scrambler, link
    off = RO_SIZE // 2
    r = f.request(c, K_RREQ, m, off, 64, expect=bytes(f.model[m][off:off + 64]))
    r["expect_status"] = protocol.STATUS_TIMEOUT
    t = await next_event(f, "sw_out", c, protocol.SUB_MS)   # the RRES leaves the switch toward c
    f.flips[t + fourth + 2 + link] = [("down", c, 1 << 40)]  # + switch edm_tx, scrambler, link
    await f.run()
    got = f.counters()
    counted = {("h_cnt_corrupted", f.nc + m): 1, ("mn_cnt_dropped", m): 1,     # the WREQ
               ("h_cnt_corrupted", c): 1, ("cn_cnt_dropped", c): 1, ("cn_cnt_timeouts", c): 1}  # the RRES
    for name, values in got.items():
        for i, v in enumerate(values):
            assert v == counted.get((name, i), 0) or name in NOT_ERRORS, (name, i, got)
    assert f.dram[m] == f.model[m], "the corrupted write changed the DRAM"
    r = f.request(c, K_WREQ, m, WR_BASE, 64)
    f.model[m][WR_BASE:WR_BASE + 64] = r["data"]
    await f.run()
    f.request(c, K_RREQ, m, off, 64, expect=bytes(f.model[m][off:off + 64]))
    f.request(c, K_RREQ, m, WR_BASE, 64, expect=bytes(f.model[m][WR_BASE:WR_BASE + 64]))
    await f.run()
    assert f.dram[m] == f.model[m] and f.counters() == got, (f.counters(), got)


# -------------------------------------------------------------------- latency
# The paper's cycles for steps that both breakdowns contain: one PHY hop (a PCS
# pass each side) and the switch from a notification in to its first grant out.
PAPER_PHY_HOP = 2 * protocol.PCS_PASS_CYCLES
PAPER_SW_FIRST_GRANT = (protocol.SW_CLASSIFY_CYCLES + protocol.SW_NQ_INSERT_CYCLES + protocol.SW_PIM_ITER_CYCLES
                        + protocol.SW_GEN_GRANT_CYCLES)


def first(events, after, where, port, what=None):
    for cyc, w, p, s in events:
        if cyc >= after and w == where and p == port and (what is None or s == what):
            return cyc
    raise AssertionError(f"no {where} event at port {port} ({what}) after cycle {after}")


def last_before(events, before, where, port):
    cycles = [cyc for cyc, w, p, _ in events if cyc <= before and w == where and p == port]
    assert cycles, f"no {where} at port {port}"
    return cycles[-1]


def read_breakdown(f, r, link):
    """Cycle stamps of one traced read (compute node c, memory node port m)."""
    ev, c, m = f.events, r["c"], r["dst"]
    MS, MT = protocol.SUB_MS, protocol.SUB_MT
    t0 = r["t_req"]
    t_tx = first(ev, t0, "tx", c, MS)               # RREQ leaves the compute node's edm_tx
    t_si = first(ev, t_tx, "sw_in", c, MS)
    t_so = first(ev, t_si, "sw_out", m, MS)         # forwarded to the memory node
    t_rx = first(ev, t_so, "rx", m, MS)
    t_rx_mt = first(ev, t_rx, "rx", m, MT)
    t_dr = first(ev, t_rx, "dram_rd", m)
    t_dl = [cyc for cyc, w, p, _ in ev if w == "dram_rsp" and p == m and cyc >= t_dr]
    t_rtx = first(ev, t_dr, "tx", m, MS)            # RRES leaves the memory node's edm_tx
    t_rsi = first(ev, t_rtx, "sw_in", m, MS)
    t_rso = first(ev, t_rsi, "sw_out", c, MS)
    t_rrx = first(ev, t_rso, "rx", c, MS)
    t_rrx_mt = first(ev, t_rrx, "rx", c, MT)
    t_lwr = last_before(ev, r["t_cpl"], "lwr", c)   # last byte written to local memory
    # The data are the requester's only with their verdict: the end is the
    # completion (the writes may go first, cut-through, see edm_compute_node).
    t_end = max(t_lwr, r["t_cpl"])
    dram = t_dl[0] - t_dr if t_dl else 0           # the DRAM model's latency (not the fabric's)
    rows = [
        ("compute node: request -> RREQ /MS/ on the line", t_tx - t0, protocol.HOST_GEN_REQ_CYCLES),
        ("PHY hop to the switch: scrambler, descrambler", t_si - t_tx - link, PAPER_PHY_HOP),
        ("switch: RREQ in -> forwarded RREQ out (classify, queue, PIM, first grant)", t_so - t_si,
         PAPER_SW_FIRST_GRANT),
        ("PHY hop to the host: switch TX mux, scrambler, descrambler", t_rx - t_so - link, PAPER_PHY_HOP),
        ("memory node: RREQ /MS/ in -> RRES /MS/ out (less the DRAM's latency)", t_rtx - t_rx - dram,
         protocol.HOST_PROC_GRANT_CYCLES + protocol.HOST_PROC_RREQ_EXTRA_CYCLES
         + protocol.HOST_READ_GRANT_CYCLES + protocol.HOST_GEN_DATA_CYCLES),
        ("PHY hop to the switch: scrambler, descrambler", t_rsi - t_rtx - link, PAPER_PHY_HOP),
        ("switch: RRES block in -> out (circuit)", t_rso - t_rsi, protocol.SW_FORWARD_CYCLES),
        ("PHY hop to the host: switch TX mux, scrambler, descrambler", t_rrx - t_rso - link, PAPER_PHY_HOP),
        ("RRES serialization at the compute node (/MS/ -> /MT/)", t_rrx_mt - t_rrx, 0),
        ("compute node: RRES /MT/ in -> completion (data written, CRC verdict)", t_end - t_rrx_mt,
         protocol.HOST_PROC_DATA_CYCLES),
    ]
    detail = {"compute node: RRES /MT/ in -> last local-memory write": t_lwr - t_rrx_mt,
              "memory node: RREQ /MT/ in -> DRAM read": t_dr - t_rx_mt,
              "memory node: DRAM answer -> RRES /MS/ out": (t_rtx - t_dl[0]) if t_dl else None}
    return dict(total=t_end - t0, links=4 * link, dram=dram, rows=rows, detail=detail)


def write_breakdown(f, r, link):
    ev, c, m = f.events, r["c"], r["dst"]
    MS, MT, N, G = protocol.SUB_MS, protocol.SUB_MT, protocol.SUB_N, protocol.SUB_G
    t0 = r["t_req"]
    t_n = first(ev, t0, "tx", c, N)
    t_nsi = first(ev, t_n, "sw_in", c, N)
    t_g = first(ev, t_nsi, "sw_out", c, G)
    t_grx = first(ev, t_g, "rx", c, G)
    t_wtx = first(ev, t_grx, "tx", c, MS)
    t_wsi = first(ev, t_wtx, "sw_in", c, MS)
    t_wso = first(ev, t_wsi, "sw_out", m, MS)
    t_wrx = first(ev, t_wso, "rx", m, MS)
    t_wrx_mt = first(ev, t_wrx, "rx", m, MT)
    wr = [cyc for cyc, w, p, _ in ev if w == "dram_wr" and p == m and cyc >= t_wrx]
    t_end = wr[-1]                                  # last word written to DRAM
    rows = [
        ("compute node: request -> /N/ on the line", t_n - t0, protocol.HOST_GEN_REQ_CYCLES),
        ("PHY hop to the switch: scrambler, descrambler", t_nsi - t_n - link, PAPER_PHY_HOP),
        ("switch: /N/ in -> /G/ out (classify, queue, PIM, grant)", t_g - t_nsi,
         PAPER_SW_FIRST_GRANT),
        ("PHY hop to the host: switch TX mux, scrambler, descrambler", t_grx - t_g - link, PAPER_PHY_HOP),
        ("compute node: /G/ in -> WREQ /MS/ out (process /G/, read grant, fetch, generate)", t_wtx - t_grx,
         protocol.HOST_PROC_GRANT_CYCLES + protocol.HOST_READ_GRANT_CYCLES + protocol.HOST_GEN_DATA_CYCLES),
        ("PHY hop to the switch: scrambler, descrambler", t_wsi - t_wtx - link, PAPER_PHY_HOP),
        ("switch: WREQ block in -> out (circuit)", t_wso - t_wsi, protocol.SW_FORWARD_CYCLES),
        ("PHY hop to the host: switch TX mux, scrambler, descrambler", t_wrx - t_wso - link, PAPER_PHY_HOP),
        ("WREQ serialization at the memory node (/MS/ -> /MT/)", t_wrx_mt - t_wrx, 0),
        ("memory node: WREQ /MT/ in -> last DRAM write", t_end - t_wrx_mt, protocol.HOST_PROC_DATA_CYCLES),
    ]
    return dict(total=t_end - t0, links=4 * link, dram=0, rows=rows, detail={})


async def one_alone(f, kind, c, m, off):
    """One 64 B read or write with nothing else in the fabric (except frames
    already queued), traced; returns its breakdown."""
    for _ in range(60):
        await f.step()
    f.events = []
    f.trace = True
    path = (c, f.nc + m)
    frames = all(f.h_frames[p] and f.h_frames[(p - 1) % f.n] for p in path)   # still competing on every link
    if kind == K_RREQ:
        r = f.request(c, K_RREQ, m, off, 64, expect=bytes(f.model[m][off:off + 64]))
    else:
        r = f.request(c, K_WREQ, m, off, 64)
        f.model[m][off:off + 64] = r["data"]
    while r.get("t_cpl") is None:
        await f.step()
    for _ in range(3 * link_cycles() + 60):   # a write's data are still on their way
        await f.step()
    f.trace = False
    link = link_cycles()
    b = (read_breakdown if kind == K_RREQ else write_breakdown)(f, r, link)
    measured = sum(v for _, v, _ in b["rows"])
    assert measured + b["links"] + b["dram"] == b["total"], (b, measured)
    assert all(v >= 0 for _, v, _ in b["rows"]), b
    b["frames_competing"] = frames
    return b


@cocotb.test()
async def latency(dut):
    """Unloaded 64 B read and write, then the same under MTU and jumbo frames."""
    f = await new_fabric(dut, 72)
    out = {"link_cycles": link_cycles(), "cases": {}}
    c, m = 0, 0
    for case, size in (("unloaded", None), ("mtu_frames", 1500), ("jumbo_frames", 9000)):
        res = {}
        for kind, name in ((K_RREQ, "read"), (K_WREQ, "write")):
            if size:
                # Frames back to back in both directions of both links on the path.
                for p in (c, f.nc + m):
                    f.add_frames(p, size, 3, to_host=False)
                    f.add_frames(p, size, 3, to_host=True)
                for _ in range(40):   # the frames are under way
                    await f.step()
            off = (RO_SIZE // 2) if kind == K_RREQ else WR_BASE
            res[name] = await one_alone(f, kind, c, m, off)
            while f.frames_pending():
                await f.step()
        out["cases"][case] = res
        for name in ("read", "write"):
            dut._log.info(f"{case} {name}: {res[name]['total']} cycles end to end "
                          f"({res[name]['links']} of them links, {res[name]['dram']} DRAM)")
    for _ in range(300):
        await f.step()
    f.check_clean()
    # With preemption, frames cost a memory message at most a few block times.
    for case in ("mtu_frames", "jumbo_frames"):
        for name in ("read", "write"):
            assert out["cases"][case][name]["frames_competing"], f"{case}: frames had drained before the {name}"
            extra = out["cases"][case][name]["total"] - out["cases"]["unloaded"][name]["total"]
            assert extra <= 8, f"{case}: {name} {extra} cycles slower than unloaded"
    path = os.environ.get("EDM_FABRIC_LATENCY_JSON")
    if path:
        with open(path, "w") as fh:
            json.dump(out, fh, indent=1)


# -------------------------------------------------------------------- lost control blocks
RETRY_CYCLES = 600   # the compute nodes' cfg_retry in these tests


async def lost_control(dut, seed, way, what, write_elsewhere=False):
    """A 512-byte write (two chunks) of compute node 0 to memory node 0 whose
    first /N/ (way "up", what SUB_N) or first /G/ ("down", SUB_G) is hit by a
    bit error on the wire: it lands once, in full, through /N/ re-sends; then
    writes and reads to both memory nodes check that nothing was misrouted.
    write_elsewhere: right after that write, while the switch still holds
    the circuits of grants that brought no data, a 64-byte write to memory
    node 1: its unit is not for the oldest circuit's destination but for a
    later circuit's, so the switch gives up the older ones at once and
    forwards it (docs/faults.md §5); it lands, every byte checked against the
    model, nothing dropped. (A switch that drops it fails the DRAM check.)"""
    f = await new_fabric(dut, seed, trace=True)
    dut.cfg_retry.value = RETRY_CYCLES
    link, c, m = link_cycles(), 0, 0
    off = WR_BASE + 512
    r = f.request(c, K_WREQ, m, off, 512)
    f.model[m][off:off + 512] = r["data"]
    where = "tx" if way == "up" else "sw_out"
    t = await next_event(f, where, c, what)
    f.flips[t + (1 if way == "up" else 2) + link] = [(way, c, 1 << 40)]   # + (edm_tx,) scrambler, link
    await f.run()
    assert r.get("t_cpl") is not None
    if write_elsewhere:
        before = f.counters()["sw_cnt_lost_grants"][c]
        other = f.request(c, K_WREQ, 1, WR_BASE + c * WR_SIZE, 64)
        f.model[1][WR_BASE + c * WR_SIZE:WR_BASE + c * WR_SIZE + 64] = other["data"]
        await f.run()
        assert other.get("t_cpl") is not None
        # It came while surplus circuits still waited: they were given up for it.
        assert f.counters()["sw_cnt_lost_grants"][c] > before, (before, f.counters())
    # The switch gives up one surplus circuit per timeout: wait until a whole
    # timeout passes with none given up.
    quiet, last = 0, None
    while quiet < int(os.environ.get("EDM_FABRIC_CIRCUIT_TIMEOUT", "0")) + 100:
        await f.step()
        now = f.counters()["sw_cnt_lost_grants"][c]
        quiet = quiet + 1 if now == last else 0
        last = now
    got = f.counters()
    assert all(f.dram[mm] == f.model[mm] for mm in range(f.nm)), "a write landed twice, wrong or misrouted"
    retries = got["cn_cnt_retries"][c]
    assert retries >= 1, got
    # Every grant the switch sent that brought no data was given up, no more;
    # nothing was dropped.
    grants = sum(1 for _, w, p, s in f.events if (w, p, s) == ("sw_out", c, protocol.SUB_G))
    chunks = sum(1 for _, side, p, u in f.unit_log if side == "tx" and p == c and u.startswith("WREQ"))
    assert got["sw_cnt_dropped"][c] == 0, got
    assert got["sw_cnt_lost_grants"][c] == grants - chunks, (grants, chunks, got)
    for mm in range(f.nm):   # nothing misrouted since: writes and reads everywhere
        for k in range(3):
            o = WR_BASE + c * WR_SIZE + 256 * k
            w = f.request(c, K_WREQ, mm, o, 256)
            f.model[mm][o:o + 256] = w["data"]
        f.request(c, K_RREQ, mm, off, 512, expect=bytes(f.model[mm][off:off + 512]))
        f.request(c, K_RREQ, mm, WR_BASE + c * WR_SIZE, 768,
                  expect=bytes(f.model[mm][WR_BASE + c * WR_SIZE:WR_BASE + c * WR_SIZE + 768]))
    await f.run()
    assert f.counters() == got, (f.counters(), got)   # the later traffic was clean
    for mm in range(f.nm):
        assert f.dram[mm] == f.model[mm], f"memory node {mm}: DRAM differs from the model"
    dut._log.info(f"lost {way} control block: write done after {r['t_cpl'] - r['t_req']} cycles, "
                  f"{retries} /N/ re-sent, {grants} grants for {chunks} chunks; counters {got}")
    return got, retries


@cocotb.test(skip=not rate_match())
async def lost_notification(dut):
    """The /N/ is lost at the switch (CRC-8), and its first re-send is
    rejected too (the uplink's numbering lost step, docs/protocol.md §5a):
    every /N/ the switch rejected was one the compute node re-sent later."""
    got, retries = await lost_control(dut, 76, "up", protocol.SUB_N)
    assert got["sw_cnt_bad_notif"][0] == retries, got
    assert not any(got["sw_cnt_lost_grants"]) and not any(got["cn_cnt_stray"]), got


@cocotb.test(skip=not rate_match())
async def lost_grant(dut):
    """The first /G/ is lost at the compute node (and the next with it, the
    downlink's numbering resynchronising); the /N/ re-sent for the bytes not
    granted brings new grants; the switch gives up the circuits whose data
    never came (one per grant the compute node did not act on). A write to
    the other memory node meanwhile is forwarded, not dropped."""
    got, retries = await lost_control(dut, 77, "down", protocol.SUB_G, write_elsewhere=True)
    lost = got["sw_cnt_lost_grants"][0]
    assert lost >= 1 and got["h_cnt_ctl_missed"][0] >= 1, got
    assert not any(got["sw_cnt_lost_grants"][1:]), got


# -------------------------------------------------------------------- write outcomes
GIVE_UP = 6000   # cycles from a write's posted completion to its failure (15 us)
# Cycles from a write's posted completion without /A/ to its re-send (3.8 us): above the
# round trip plus an /A/'s longest wait, its pair slot (ACK_PAIR_GAP_BLOCKS) and the node
# slots of 4 requesters and 4 spilled /A/ (docs/protocol.md §4b).
ACK_TIMEOUT = 1500


def resent(f):
    """Writes each compute node's edm_write_retry sent again."""
    return [field(int(f.dut.wr_cnt_resent.value), c, 16) for c in range(f.nc)]


def dups(f):
    """Second copies each memory node's edm_dup_filter marked."""
    return [field(int(f.dut.mn_cnt_dup.value), m, 16) for m in range(f.nm)]


def outcomes_of(f, writes):
    """Each write's outcome (matched per compute node and tag, in order)."""
    by = {}
    for o in f.outcomes:
        by.setdefault((o[1], o[4]), []).append(o)
    out = []
    for r in sorted(writes, key=lambda r: r["t_cpl"]):
        got = by.get((r["c"], r["tag"]))
        assert got, f"no outcome for {f.describe(r)}"
        o = got.pop(0)
        assert o[2] == r["dst"] and o[0] >= r["t_cpl"], (o, f.describe(r))
        out.append((r, o))
    left = [o for v in by.values() for o in v]
    assert not left, f"outcomes for no write: {left[:4]}"
    return out


async def sole_outcome(f, w, what):
    """Runs the fabric until the one write `w` has its outcome (within its give-up); the outcome."""
    await f.run()
    while not f.outcomes:
        await f.step()
        assert f.cycle - w["t_cpl"] < GIVE_UP + 1000, f"no outcome for {what}"
    [(_, o)] = outcomes_of(f, [w])
    return o


@cocotb.test(skip=not acks())
async def writes_are_acknowledged(dut):
    """ACKS = 1 (docs/protocol.md §4b): every write gets one outcome at its
    compute node, and a lost one is sent again (edm_write_retry). Alone, a
    64 B write is acknowledged (its /A/ from the memory node through the
    switch) some cycles after its posted completion; under random traffic
    from both compute nodes to both memory nodes every write is acknowledged
    and none re-sent; a write whose data a bit error hits on the memory
    node's downlink is dropped there, re-sent by its compute node
    cfg_ack_timeout after its posted completion with the same id, written to
    DRAM once and acknowledged, with no re-issue by the bench; a write whose
    /A/ a bit error hits on the compute node's downlink is re-sent, marked a
    second copy by the memory node's edm_dup_filter, not written again, and
    acknowledged by the second /A/; a two-chunk write whose first chunk a bit
    error hits on the memory node's downlink is not acknowledged at its last
    chunk (edm_dup_filter: not whole), re-sent, its first chunk written then,
    its last marked a second copy and acknowledged, each DRAM word written
    once; the DRAM equals the model throughout."""
    f = await new_fabric(dut, 79, trace=True)
    dut.cfg_timeout.value = 0
    dut.cfg_give_up.value = GIVE_UP
    dut.cfg_ack_timeout.value = ACK_TIMEOUT
    # The /A/ hit below is a control block lost on the downlink: the next /G/
    # is rejected too (docs/protocol.md §5a), so the re-send's /N/ is repeated.
    dut.cfg_retry.value = RETRY_CYCLES
    # Alone: a write, then a read, each with nothing else in the fabric.
    c, m = 0, 0
    w = f.request(c, K_WREQ, m, WR_BASE, 64)
    f.model[m][WR_BASE:WR_BASE + 64] = w["data"]
    await f.run()
    r = f.request(c, K_RREQ, m, 128, 64, expect=bytes(f.model[m][128:192]))
    await f.run()
    [(_, o)] = outcomes_of(f, [w])
    assert o[5] == 1, f"the write alone was not acknowledged: {o}"
    posted, acked, read = w["t_cpl"] - w["t_req"], w["t_cpl"] - w["t_req"] + o[6], r["t_cpl"] - r["t_req"]
    ns = protocol.CYCLE_PS / 1000
    dut._log.info(f"ALONE 64 B: write posted {posted} cycles ({posted * ns:.1f} ns), acknowledged {acked} "
                  f"cycles ({acked * ns:.1f} ns: +{o[6]} after posted); read {read} cycles ({read * ns:.1f} ns)")
    f.outcomes.clear()
    # Random writes (and reads of the read-only region) from both compute nodes.
    writes = []
    for k in range(160):
        c, m = f.rng.randrange(f.nc), f.rng.randrange(f.nm)
        if f.rng.random() < 0.7:
            size = f.rng.choice([8, 64, 64, 100, 200])
            off = WR_BASE + c * WR_SIZE + f.rng.randrange(0, WR_SIZE - size)
            w = f.request(c, K_WREQ, m, off, size)
            f.model[m][off:off + size] = w["data"]
            writes.append(w)
        else:
            off = f.rng.randrange(0, RO_SIZE - 64)
            f.request(c, K_RREQ, m, off, 64, expect=bytes(f.model[m][off:off + 64]))
        if k % 8 == 7:
            await f.run()
    await f.run()
    for _ in range(400):
        await f.step()
    got = outcomes_of(f, writes)
    assert all(o[5] for _, o in got), [o for _, o in got if not o[5]][:4]
    ages = [o[6] for _, o in got]
    dut._log.info(f"{len(writes)} writes under traffic, all acknowledged; /A/ after the posted completion: "
                  f"min {min(ages)} mean {sum(ages) / len(ages):.0f} max {max(ages)} cycles; "
                  f"memory nodes sent {[field(int(dut.mn_cnt_acks.value), k, 16) for k in range(f.nm)]} /A/")
    assert resent(f) == [0] * f.nc, f"writes re-sent without a fault: {resent(f)}"
    f.outcomes.clear()

    def dram_writes(since, m, off, size):
        return sum(1 for cyc, w, p, a in f.events if w == "dram_wr" and p == f.nc + m and cyc >= since
                   and off // 8 <= (a - RBASE) // 8 < (off + size + 7) // 8)

    # A bit error on memory node 0's downlink inside a 64 B WREQ: dropped there, re-sent.
    c, m, link, fourth = 1, 0, link_cycles(), 4
    before = f.counters()
    before_resent, before_dup = resent(f), dups(f)
    off = WR_BASE + c * WR_SIZE
    lost = f.request(c, K_WREQ, m, off, 64)
    f.model[m][off:off + 64] = lost["data"]          # its re-send must land
    t = await next_event(f, "sw_out", f.nc + m, protocol.SUB_MS)   # the WREQ leaves the switch
    f.flips[t + fourth + 2 + link] = [("down", f.nc + m, 1 << 40)]
    o = await sole_outcome(f, lost, "the write hit by the bit error")
    after = f.counters()
    assert after["mn_cnt_dropped"][m] == before["mn_cnt_dropped"][m] + 1, (before, after)
    assert o[5] == 1 and ACK_TIMEOUT <= o[6] < GIVE_UP, f"the lost write's outcome: {o}"
    assert resent(f)[c] == before_resent[c] + 1 and dups(f) == before_dup, (resent(f), dups(f))
    assert dram_writes(t, m, off, 64) == 8, f"the re-sent write wrote {dram_writes(t, m, off, 64)} words"
    assert f.dram[m] == f.model[m], "the DRAM differs after the re-send"
    dut._log.info(f"the write hit on the downlink: re-sent, acknowledged {o[6]} cycles after its posted "
                  f"completion, 8 DRAM words written once")
    f.outcomes.clear()
    # A bit error on compute node 1's downlink in the /A/ of a 64 B write: the
    # write is re-sent, its second copy marked and acknowledged again.
    before_resent, before_dup = resent(f), dups(f)
    off2 = off + 64
    w2 = f.request(c, K_WREQ, m, off2, 64)
    f.model[m][off2:off2 + 64] = w2["data"]
    t2 = await next_event(f, "sw_out", c, protocol.SUB_A)   # the /A/ leaves the switch toward c
    f.flips[t2 + 2 + link] = [("down", c, 1 << 40)]
    o = await sole_outcome(f, w2, "the write whose /A/ was hit")
    assert o[5] == 1 and o[6] >= ACK_TIMEOUT, f"the write whose /A/ was lost: {o}"
    assert resent(f)[c] == before_resent[c] + 1, resent(f)
    assert dups(f)[m] == before_dup[m] + 1, f"the re-send was not marked a second copy: {dups(f)}"
    assert dram_writes(w2["t_req"], m, off2, 64) == 8, "the write whose /A/ was lost was applied twice"
    assert all(f.dram[k] == f.model[k] for k in range(f.nm))
    dut._log.info(f"the write whose /A/ was hit: re-sent, marked a second copy, acknowledged {o[6]} cycles "
                  f"after its posted completion")
    f.outcomes.clear()
    # A bit error on memory node 0's downlink in chunk 0 of a two-chunk write:
    # chunk 1 arrives and is written, but the write is not whole there, so no
    # /A/; the re-send brings chunk 0 (new: written) and chunk 1 (a second
    # copy: not written again, now whole: acknowledged).
    before = f.counters()
    before_resent, before_dup = resent(f), dups(f)
    size = 2 * int(dut.CHUNK_BYTES.value)
    off3 = WR_BASE + c * WR_SIZE + 256
    w3 = f.request(c, K_WREQ, m, off3, size)
    f.model[m][off3:off3 + size] = w3["data"]
    t3 = await next_event(f, "sw_out", f.nc + m, protocol.SUB_MS)   # chunk 0 leaves the switch
    f.flips[t3 + fourth + 2 + link] = [("down", f.nc + m, 1 << 40)]
    o = await sole_outcome(f, w3, "the write whose chunk 0 was hit")
    after = f.counters()
    assert after["mn_cnt_dropped"][m] == before["mn_cnt_dropped"][m] + 1, (before, after)
    assert o[5] == 1 and ACK_TIMEOUT <= o[6] < GIVE_UP, f"the write whose chunk 0 was lost: {o}"
    assert resent(f)[c] == before_resent[c] + 1, resent(f)
    assert dups(f)[m] == before_dup[m] + 1, f"chunk 1's re-send was not marked a second copy: {dups(f)}"
    words = dram_writes(t3, m, off3, size)
    assert words == size // 8, f"the write whose chunk 0 was lost wrote {words} words, not {size // 8} once each"
    assert all(f.dram[k] == f.model[k] for k in range(f.nm)), "the DRAM differs after the re-send filled chunk 0"
    dut._log.info(f"the {size} B write with chunk 0 hit on the downlink: not acknowledged at chunk 1, re-sent, "
                  f"acknowledged {o[6]} cycles after its posted completion, {words} DRAM words written once")

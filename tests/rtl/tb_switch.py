"""cocotb: edm_switch (ingress classification, scheduler, /G/ generation,
RREQ forwarding, circuits, egress mux) with Python hosts on every port.

Ports 0..N/2-1 are compute hosts, the rest memory hosts. Every block a host
sends or receives goes through the reference codec (encode_message,
encode_notification, RxDemux). Compute hosts send /N/ + WREQ chunks when
granted, RREQs and RMWREQs (fetch-and-add); memory hosts answer a forwarded
RREQ with the first RRES chunk and each later /G/ with the next, from a Python
memory. Hosts answer a grant (a /G/ or a whole forwarded request) after a fixed
HOST_LAT cycles, data units first. Checked: every unit arrives at the right port,
in per-pair order, exactly once, with the right bytes; memory = expected at the
end; every write a memory host received in full is acknowledged by an /A/
(docs/protocol.md §4b: the memory host sends it, aggregated per requester, the
switch forwards it to the requester naming the memory host, numbered with the
egress's /G/) and no other write is; no host receiver counts an error; the switch's counters equal the injected
corrupted /N/, unknown and Ethernet blocks; no overflow or drop; no data
block waits in the switch (cnt_conflict) under the zero-queue rules, and some
do without them (ZERO_QUEUE = 0); a host that discards grants (stray ones)
leaves circuits its later units skip, none dropped; a circuit whose answer
never comes is given up after the circuit timeout, one answered just before
it is kept; every egress, every cycle:
no IDLE_PERIOD_BLOCKS blocks in a row without an idle (the egress idle rule);
a source whose destination port another source keeps parked is granted
within a bound set by PARK_AGE_CYCLES (the parked port's age rule); a unit
cut short on its uplink (its /MT/ hit, an unknown block inside it, or cut by
the next /MS/) ends on its egress as an aborted unit, counted, and the ports
carry traffic after it, even with its pair's RREQ store filled to the last block.
"""

from __future__ import annotations

import hashlib
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

HOST_LAT = 2
M64 = (1 << 64) - 1
IDLE = (protocol.SYNC_CTRL, protocol.BT_C8)
REGION = 4096          # bytes per (compute host) region at each memory host
RO_BASE = 0            # read-only region, then one write region per compute host


def pack(block) -> int:
    return (block[1] << 2) | block[0]


def unpack(v: int):
    return (v & 3, v >> 2)


class Host:
    def __init__(self, bench, port: int):
        self.b, self.port = bench, port
        self.rx = codec.RxDemux()
        self.ctl = codec.ControlTx()      # numbers the /N/ of this uplink (docs/protocol.md §5a)
        self.bad_n_last = False           # the last /N/ queued was a rejected one
        self.ctrl: deque = deque()        # lists of blocks (units, /N/, injected blocks), sent in order
        self.data: deque = deque()        # (ready cycle, blocks)
        self.cur: list = []
        self.sent_ms: dict = {}           # data /MS/ block -> cycle sent

    def next_block(self, cycle: int):
        if not self.cur:
            if self.data and self.data[0][0] <= cycle:
                self.cur = list(self.data.popleft()[1])
                self.sent_ms.setdefault(self.cur[0], []).append(cycle)
            elif self.ctrl:
                self.cur = list(self.ctrl.popleft())
        return self.cur.pop(0) if self.cur else IDLE

    def receive(self, block, cycle: int):
        if block[0] == protocol.SYNC_CTRL and block[1] & 0xFFFF == protocol.SUB_MS << 8:
            self.b.arrived_ms.append((self.port, block, cycle))
        for ev in self.rx.push(block):
            if ev == ("error", "frames_bad") and self.b.frames_bad_due[self.port]:
                self.b.frames_bad_due[self.port] -= 1   # the /MT/ turned data where the cut unit ended
                continue
            if ev == ("error", "corrupted") and self.b.cuts_due[self.port]:
                self.b.cuts_due[self.port] -= 1   # a unit the switch cut short (its end an /E/)
                self.b.cuts_seen[self.port] += 1
                continue
            self.handle(ev, cycle)


class Compute(Host):
    def __init__(self, bench, port):
        super().__init__(bench, port)
        self.writes = {}      # (m, id) -> [addr, data, offset, seq]
        self.reads = {}       # (m, id) -> [expected bytes, offset, seq]
        self.active = {}      # m -> outstanding ops
        self.ids = {}
        self.rres_got = {}    # m -> [(id, seq, len)]
        self.fai = {}         # m -> running fetch-and-add total
        self.ignored = set()  # (m, id): grants discarded, as for a lost /G/'s re-sent /N/
        self.grants_ignored = 0
        self.lie = {}         # (m, id) -> the destination its WREQ header names instead (a header hit)
        self.mangle = {}      # (m, id) -> f(blocks) -> the WREQ unit as sent (a bit error on the uplink)
        self.unacked = set()  # (m, id): writes issued and not yet acknowledged by an /A/
        self.acks_got = 0

    def new_id(self, m):
        i = self.ids.get(m, 0)
        self.ids[m] = (i + 1) % 256
        return i

    def write(self, m, size, rng):
        mid = self.new_id(m)
        addr = REGION * (1 + self.port) + rng.randrange(REGION - size)
        data = bytes(rng.randrange(256) for _ in range(size))
        self.writes[(m, mid)] = [addr, data, 0, 0]
        assert (m, mid) not in self.unacked, f"id {mid} to {m} reused while unacknowledged"
        self.unacked.add((m, mid))
        self.b.expect_w[(self.port, m)].append(mid)
        self.active[m] = self.active.get(m, 0) + 1
        self.ctrl.append([self.ctl.notification(m, mid, size)])
        self.bad_n_last = False

    def read(self, m, size, rng):
        mid = self.new_id(m)
        addr = RO_BASE + rng.randrange(REGION - size)
        self.reads[(m, mid)] = [bytes(self.b.ro[m][addr:addr + size]), 0, 0]
        self.active[m] = self.active.get(m, 0) + 1
        self.b.expect_r[(m, self.port)].append(mid)
        self.ctrl.append(codec.encode_message(codec.Message("RREQ", self.port, m, mid, size, addr=addr)))

    def rmw(self, m, rng):
        mid = self.new_id(m)
        arg = rng.randrange(1, 1000)
        old = self.fai.get(m, 0)
        self.fai[m] = old + arg
        self.reads[(m, mid)] = [old.to_bytes(8, "little"), 0, 0]
        self.active[m] = self.active.get(m, 0) + 1
        self.b.expect_r[(m, self.port)].append(mid)
        addr = self.b.fai_addr(self.port)
        self.ctrl.append(codec.encode_message(codec.Message("RMWREQ", self.port, m, mid, 8, addr=addr,
                                                            op=protocol.RMW_FAA, arg0=arg)))

    def handle(self, ev, cycle):
        assert ev[0] in ("grant", "message", "ack"), \
            f"port {self.port}: unexpected {ev} at cycle {cycle}; switch: {self.b.status()}"
        if ev[0] == "ack":   # NG_DST names the memory host that applied the writes
            _, m, base, applied = ev
            ids = codec.acked_ids(base, applied)
            assert m in self.b.memory and ids, f"port {self.port}: /A/ {ev}"
            for mid in ids:
                assert (m, mid) in self.unacked, f"port {self.port}: /A/ for a write not outstanding: {m}/{mid}"
                assert (self.port, mid) in self.b.hosts[m].applied, f"port {self.port}: /A/ for {m}/{mid} not applied"
                self.unacked.discard((m, mid))
                self.b.hosts[m].applied.discard((self.port, mid))
            self.acks_got += 1
            self.b.ack_seen.append((self.port, cycle))
            return
        if ev[0] == "grant":
            _, m, mid, size = ev
            if (m, mid) in self.ignored:   # a stray grant: its circuit brings no data
                self.grants_ignored += 1
                return
            w = self.writes.get((m, mid))
            assert w is not None, f"port {self.port}: grant for unknown write {m}/{mid}"
            addr, data, off, seq = w
            assert 0 < size <= len(data) - off and size == min(self.b.chunk, len(data) - off), (size, off)
            last = off + size == len(data)
            msg = codec.Message("WREQ", self.port, self.lie.get((m, mid), m), mid, size, addr=addr + off, seq=seq,
                                last=last, data=data[off:off + size])
            self.data.append((cycle + HOST_LAT, self.mangle.get((m, mid), list)(codec.encode_message(msg))))
            w[2], w[3] = off + size, seq + 1
            if last:
                del self.writes[(m, mid)]
                self.active[m] -= 1
        else:
            msg = ev[1]
            assert msg.kind == "RRES" and msg.dst == self.port, f"port {self.port} got {msg}"
            r = self.reads.get((msg.src, msg.msg_id))
            assert r is not None, f"port {self.port}: RRES for unknown read {msg}"
            exp, off, seq = r
            assert msg.seq == seq and msg.op == protocol.STATUS_OK, msg
            assert msg.data == exp[off:off + msg.length], f"RRES bytes {msg}"
            assert msg.length == min(self.b.chunk, len(exp) - off)
            self.rres_got.setdefault(msg.src, []).append((msg.msg_id, msg.seq))
            r[1], r[2] = off + msg.length, seq + 1
            assert msg.last == (r[1] == len(exp))
            if msg.last:
                del self.reads[(msg.src, msg.msg_id)]
                self.active[msg.src] -= 1
                self.b.done_bytes += len(exp)


class Memory(Host):
    def __init__(self, bench, port):
        super().__init__(bench, port)
        self.mem = bytearray(bench.ro[port]) + bytearray(REGION * bench.n)
        self.resp = {}        # (c, id) -> [data, offset, seq]
        self.wreq_got = {}    # c -> [(id, seq)]
        self.slow = {}        # (c, id) -> extra cycles before answering that request (None: never)
        self.requests_seen = {}   # (c, id) -> cycle its /MT/ arrived
        self.applied = set()      # (c, id): writes received in full, their /A/ not yet received
        self.ack_open = {}        # c -> [entry in ctrl, base, map, number]: an /A/ not yet sent

    def acknowledge(self, c, mid):
        """Queues an /A/ for write (c, mid), or adds it to the one still
        waiting for c if it falls in that one's 16 ids (docs/protocol.md §4b)."""
        self.applied.add((c, mid))
        open_ = self.ack_open.get(c)
        if open_ and any(e is open_[0] for e in self.ctrl) and (mid - open_[1]) % 256 < protocol.ACK_MAP_W:
            open_[2] |= 1 << (mid - open_[1]) % 256
            open_[0][0] = codec.encode_ack(c, open_[1], open_[2], open_[3])
            return
        entry = [self.ctl.ack(c, mid, 1)]
        self.ack_open[c] = [entry, mid, 1, codec.implied_seq(entry[0])]
        self.ctrl.append(entry)

    def send_chunk(self, c, mid, size, cycle, extra=0):
        data, off, seq = self.resp[(c, mid)]
        assert size == min(self.b.chunk, len(data) - off), (size, off, len(data))
        last = off + size == len(data)
        msg = codec.Message("RRES", self.port, c, mid, size, seq=seq, last=last, data=data[off:off + size])
        self.data.append((cycle + HOST_LAT + extra, codec.encode_message(msg)))
        self.resp[(c, mid)] = [data, off + size, seq + 1]
        if last:
            del self.resp[(c, mid)]

    def handle(self, ev, cycle):
        assert ev[0] in ("grant", "message"), \
            f"port {self.port}: unexpected {ev} at cycle {cycle}; switch: {self.b.status()}"
        if ev[0] == "grant":
            _, c, mid, size = ev
            assert (c, mid) in self.resp, f"memory {self.port}: grant for unknown response {c}/{mid}"
            self.send_chunk(c, mid, size, cycle)
            return
        msg = ev[1]
        assert msg.dst == self.port, f"memory {self.port} got {msg}"
        if msg.kind == "WREQ":
            self.mem[msg.addr:msg.addr + msg.length] = msg.data
            self.wreq_got.setdefault(msg.src, []).append((msg.msg_id, msg.seq))
            if msg.last:
                self.b.done_bytes += 1
                self.acknowledge(msg.src, msg.msg_id)
            return
        assert (msg.src, msg.msg_id) not in self.resp
        self.requests_seen[(msg.src, msg.msg_id)] = cycle
        extra = self.slow.get((msg.src, msg.msg_id), 0)
        if extra is None:   # never answered (as a memory node that lost it)
            return
        if msg.kind == "RREQ":
            data = bytes(self.mem[msg.addr:msg.addr + msg.length])
        else:
            assert msg.kind == "RMWREQ" and msg.op == protocol.RMW_FAA
            old = int.from_bytes(self.mem[msg.addr:msg.addr + 8], "little")
            self.mem[msg.addr:msg.addr + 8] = ((old + msg.arg0) & M64).to_bytes(8, "little")
            data = old.to_bytes(8, "little")
        self.resp[(msg.src, msg.msg_id)] = [data, 0, 0]
        self.send_chunk(msg.src, msg.msg_id, min(self.b.chunk, len(data)), cycle, extra)   # the RREQ is the first grant


class Bench:
    def __init__(self, dut, seed):
        self.dut = dut
        self.n = int(dut.N.value)
        self.chunk = int(dut.CHUNK_BYTES.value)
        self.rng = seeded_random(seed)
        self.ro = {m: bytes(self.rng.randrange(256) for _ in range(REGION)) for m in range(self.n)}
        self.compute = list(range(self.n // 2))
        self.memory = list(range(self.n // 2, self.n))
        self.expect_w = {(c, m): [] for c in range(self.n) for m in range(self.n)}
        self.expect_r = {(m, c): [] for c in range(self.n) for m in range(self.n)}
        self.hosts = [Compute(self, p) if p in self.compute else Memory(self, p) for p in range(self.n)]
        self.cycle = 0
        # Every egress block of every cycle: equal digests show a retimed
        # switch behaves cycle for cycle as before (docs/hardware.md).
        self.egress_trace = hashlib.sha256()
        self.arrived_ms = []
        self.done_bytes = 0
        self.injected = {k: [0] * self.n for k in ("bad_notif", "unknown", "non_edm", "dropped")}
        self.cuts_due = [0] * self.n  # units cut short by the switch that a host's receiver is still to see
        self.cuts_seen = [0] * self.n
        self.frames_bad_due = [0] * self.n
        self.g_seen = []      # (port, cycle) of each /G/ on an egress
        self.ack_seen = []    # (port, cycle) of each /A/ a compute host received
        self.run = [0] * self.n       # non-idle blocks in a row on each egress
        self.longest_run = [0] * self.n
        self.idle_rule = bool(int(dut.ZERO_QUEUE.value)) and bool(int(dut.EGRESS_IDLE_RULE.value))

    def fai_addr(self, c):
        return REGION * (1 + self.n) - 8 * (c + 1)

    async def start(self):
        await clock_and_reset(self.dut, in_block=pack(IDLE) * sum(1 << (66 * i) for i in range(self.n)),
                              port_link_up=(1 << self.n) - 1)

    async def step(self):
        await FallingEdge(self.dut.clk)
        out = int(self.dut.out_block.value)
        self.egress_trace.update(out.to_bytes(66 * self.n // 8 + 1, "little"))
        for p, h in enumerate(self.hosts):
            blk = unpack((out >> (66 * p)) & ((1 << 66) - 1))
            self.run[p] = 0 if blk == IDLE else self.run[p] + 1
            self.longest_run[p] = max(self.longest_run[p], self.run[p])
            if self.idle_rule:
                assert self.run[p] < protocol.IDLE_PERIOD_BLOCKS, \
                    f"egress {p}: {self.run[p]} blocks without an idle at cycle {self.cycle}"
            if blk[0] == protocol.SYNC_CTRL and blk[1] & 0xFFFF == protocol.SUB_G << 8:
                self.g_seen.append((p, self.cycle))
            h.receive(blk, self.cycle)
        v = 0
        for p, h in enumerate(self.hosts):
            v |= pack(h.next_block(self.cycle)) << (66 * p)
        self.dut.in_block.value = v
        self.cycle += 1

    def status(self):
        return {k: int(getattr(self.dut, k).value) for k in ("cnt_overflow", "cnt_conflict")} | {
            k: self.counters(k) for k in ("cnt_dropped", "cnt_unknown")}

    def counters(self, name):
        v = int(getattr(self.dut, name).value)
        return [(v >> (16 * i)) & 0xFFFF for i in range(self.n)]

    def inject(self, c):
        """A bad /N/, an unknown block or a short Ethernet frame from port c.
        Bad /N/ blocks take no number of the uplink (docs/protocol.md §5a), so
        the host's own /N/ stay in step and all its writes complete."""
        h, rng = self.hosts[c], self.rng
        r = rng.random()
        if r < 0.5 and h.bad_n_last:
            # Two rejected /N/ in a row whose numbers happen to follow each
            # other would resynchronise the uplink past the host's next /N/
            # (docs/protocol.md §5a), and the writes behind it would never
            # complete: one rejected /N/ between good ones at a time.
            r = 0.35  # the flipped sync header: not a control block
        if r < 0.5:
            sync, p = codec.encode_notification(rng.choice(self.memory), rng.randrange(256), rng.randrange(1, 500),
                                                h.ctl.next)
            if r < 0.3:  # a corrupted copy of the next /N/
                for k in rng.sample(range(16, 64), rng.randrange(1, 4)):   # fields, reserved bits, CRC
                    p ^= 1 << k
            elif r < 0.4:  # the next /N/ with its sync header flipped: a data block
                sync = protocol.SYNC_DATA
            else:  # an /N/ numbered like the previous one (a replay): out of sequence
                sync, p = codec.encode_notification(rng.choice(self.memory), rng.randrange(256),
                                                    rng.randrange(1, 500), (h.ctl.next - 1) % 256)
            h.ctrl.append([(sync, p)])
            h.bad_n_last = h.bad_n_last or sync == protocol.SYNC_CTRL
            self.injected["bad_notif"][c] += 1
        elif r < 0.85:
            blk = rng.choice([(protocol.SYNC_CTRL, (protocol.SUB_MST << 8) | rng.randrange(1 << 16) << 16),
                              (protocol.SYNC_CTRL, (0x12 << 8)),
                              (rng.choice([0, 3]), rng.randrange(1 << 64)),
                              (protocol.SYNC_CTRL, 0x5A | rng.randrange(1 << 56) << 8),
                              codec.encode_grant(rng.randrange(self.n), 1, 64, 0)])
            h.ctrl.append([blk])
            self.injected["unknown"][c] += 1
        else:
            blocks = codec.encode_frame(bytes(rng.randrange(256) for _ in range(rng.randrange(60, 100))))
            h.ctrl.append(blocks)
            self.injected["non_edm"][c] += len(blocks)

    def busy(self):
        return any(h.cur or h.data or h.ctrl for h in self.hosts) or any(
            h.reads or h.writes for h in self.hosts if isinstance(h, Compute)) or any(
            h.resp for h in self.hosts if isinstance(h, Memory))

    async def traffic(self, cycles, rate, kinds=("W", "R", "RMW"), max_size=300, bad=0.0, x=2):
        for _ in range(cycles):
            for c in self.compute:
                h = self.hosts[c]
                if self.rng.random() < rate and len(h.ctrl) < 3:
                    m = self.rng.choice(self.memory)
                    if h.active.get(m, 0) < x:
                        k = self.rng.choice(kinds)
                        size = self.rng.choice([self.rng.randrange(1, max_size + 1), self.chunk, 8, 1])
                        if k == "W":
                            h.write(m, size, self.rng)
                        elif k == "R":
                            h.read(m, size, self.rng)
                        else:
                            h.rmw(m, self.rng)
                if self.rng.random() < bad:
                    self.inject(c)
            await self.step()

    async def drain(self, limit=20000):
        for _ in range(limit):
            if not self.busy():
                break
            await self.step()
        assert not self.busy(), "traffic did not complete"
        for _ in range(20):
            await self.step()

    def check_end(self, conflict_free=True):
        self.dut._log.info(f"egress trace sha256 {self.egress_trace.hexdigest()[:16]} over {self.cycle} cycles; "
                           f"longest runs without an idle {self.longest_run}")
        for h in self.hosts:
            cnt = h.rx.counters
            assert cnt["corrupted"] == self.cuts_seen[h.port], f"host {h.port} receiver counted {cnt}"
            assert cnt["frames_bad"] == 0 or self.frames_bad_due[h.port] == 0
            assert all(cnt[k] == 0 for k in ("unknown", "bad_sync", "frames_ok")), \
                f"host {h.port} receiver counted {cnt}"
            assert self.cuts_due[h.port] == 0, f"host {h.port}: {self.cuts_due[h.port]} cut units did not arrive"
        # Every write applied is acknowledged, exactly once, and no other
        # write is (the /A/ handler refuses the others).
        for m in self.memory:
            assert not self.hosts[m].applied, f"memory {m}: writes applied, never acknowledged: {self.hosts[m].applied}"
        # Per-pair order: writes by notification order, chunks by seq; reads by RREQ order.
        for c in self.compute:
            for m in self.memory:
                got = [i for i, s in self.hosts[m].wreq_got.get(c, []) if s == 0]
                assert got == self.expect_w[(c, m)], f"writes {c}->{m}: {got} != {self.expect_w[(c, m)]}"
                got = [i for i, s in self.hosts[c].rres_got.get(m, []) if s == 0]
                assert got == self.expect_r[(m, c)], f"reads {m}->{c}: {got} != {self.expect_r[(m, c)]}"
        assert self.counters("cnt_bad_notif") == self.injected["bad_notif"], self.counters("cnt_bad_notif")
        assert self.counters("cnt_unknown") == self.injected["unknown"], self.counters("cnt_unknown")
        assert self.counters("cnt_non_edm") == self.injected["non_edm"], self.counters("cnt_non_edm")
        assert self.counters("cnt_dropped") == self.injected["dropped"], self.counters("cnt_dropped")
        assert int(self.dut.cnt_overflow.value) == 0
        if conflict_free:
            assert int(self.dut.cnt_conflict.value) == 0, f"{int(self.dut.cnt_conflict.value)} conflict cycles"

    def data_latencies(self):
        sent = {}
        for h in self.hosts:
            for blk, cycles in h.sent_ms.items():
                sent.setdefault(blk, []).extend(cycles)
        return [cyc - max(c for c in sent[blk] if c <= cyc) for _, blk, cyc in self.arrived_ms if blk in sent]


@cocotb.test()
async def idle_latencies(dut):
    """/N/ in -> /G/ out on an idle fabric; a WREQ's blocks ingress -> egress."""
    b = Bench(dut, 1)
    await b.start()
    for _ in range(5):
        await b.step()
    h = b.hosts[0]
    m = b.memory[0]
    h.write(m, 40, b.rng)
    t0 = b.cycle                      # the /N/ is driven in this step
    await b.drain()
    g = [cyc for p, cyc in b.g_seen if p == 0]
    lat_g = g[0] - t0
    lat_d = b.data_latencies()
    dut._log.info(f"LATENCY /N/ in -> /G/ out: {lat_g} cycles; data block ingress -> egress: {lat_d} cycles")
    # (at most 10 cycles with the 3-cycle iteration; the registered tree's is longer)
    iteration = protocol.sw_pim_iter_cycles(b.n, bool(int(dut.SCHED_REGISTERED_TREE.value)))
    assert lat_g <= 7 + iteration and lat_d == [3], (lat_g, lat_d)
    b.check_end()


@cocotb.test()
async def headers_that_cannot_be_queued(dut):
    """Well-formed /N/ and RREQs whose notification cannot be queued (to the
    sender's own port, to no port, of 0 bytes) are dropped and counted, one
    each, nothing of them forwarded; the uplink's /N/ numbering stays in step,
    so the write and the read after them complete."""
    b = Bench(dut, 5)
    await b.start()
    c, m = b.compute[0], b.memory[0]
    h = b.hosts[c]
    h.ctrl.append([h.ctl.notification(c, 1, 100)])
    h.ctrl.append([h.ctl.notification(m, 2, 0)])
    h.ctrl.append([h.ctl.notification(b.n, 3, 100)])
    for dst, size in ((c, 64), (m, 0), (b.n, 64)):
        h.ctrl.append(codec.encode_message(codec.Message("RREQ", c, dst, 4, size, addr=RO_BASE)))
    b.injected["dropped"][c] += 6
    h.write(m, 40, b.rng)
    h.read(m, 40, b.rng)
    await b.drain()
    assert sum(len(v) for v in b.expect_w.values()) == 1 and sum(len(v) for v in b.expect_r.values()) == 1
    b.check_end()


@cocotb.test()
async def acknowledgements_are_forwarded(dut):
    """A memory host's /A/ (docs/protocol.md §4b) leaves on the egress of the
    port its NG_DST names, rewritten to name the memory host, numbered with
    that egress's /G/ (the compute host's receiver checks the CRC-8's
    sequence); alone, in a few cycles. One naming the memory host itself or
    no port is dropped and counted; a corrupted one (bad CRC-8, it takes no
    number) is counted as a bad control block; the memory host's later /A/
    still pass (its uplink's numbering stays in step)."""
    b = Bench(dut, 17)
    await b.start()
    c, m = b.compute[0], b.memory[-1]
    hc, hm = b.hosts[c], b.hosts[m]
    hc.write(m, 40, b.rng)
    await b.drain()
    assert hc.acks_got == 1 and not hc.unacked
    # Alone: an /A/ for id 99 (and 100, in its map) on an idle fabric.
    hc.unacked |= {(m, 99), (m, 100)}
    hm.applied |= {(c, 99), (c, 100)}
    t0 = b.cycle                      # the /A/ is driven in this step
    hm.ctrl.append([hm.ctl.ack(c, 99, 0b11)])
    await b.drain()
    lat = b.ack_seen[-1][1] - t0
    dut._log.info(f"LATENCY /A/ in -> /A/ out at its requester: {lat} cycles")
    assert hc.acks_got == 2 and lat <= 6, (hc.acks_got, lat)
    # Refused ones, then writes acknowledged as usual.
    hm.ctrl.append([hm.ctl.ack(m, 1, 1)])            # names the memory host itself
    hm.ctrl.append([hm.ctl.ack(b.n, 1, 1)])          # names no port
    b.injected["dropped"][m] += 2
    sync, p = codec.encode_ack(c, 7, 1, hm.ctl.next)  # a bit error in its map: takes no number
    hm.ctrl.append([(sync, p ^ 1 << (protocol.ACK_MAP_LSB + 5))])
    b.injected["bad_notif"][m] += 1
    for _ in range(3):
        hc.write(m, b.chunk, b.rng)
    await b.drain()
    assert hc.acks_got >= 3 and not hc.unacked, (hc.acks_got, hc.unacked)
    b.check_end()


@cocotb.test()
async def lost_notification_resynchronises_the_uplink(dut):
    """A /N/ lost on the uplink (its number taken, the block never sent):
    the next /N/ is rejected, the one after it (a second rejected number
    that follows the first) resynchronises the uplink, also rejected, and
    the write behind them is accepted and completes (docs/protocol.md §5a).
    Twice in a row, with a write completing between the losses."""
    b = Bench(dut, 13)
    await b.start()
    c, m = b.compute[0], b.memory[0]
    h = b.hosts[c]
    for _ in range(2):
        h.ctl.notification(m, 250, 64)                       # lost
        h.ctrl.append([h.ctl.notification(m, 251, 64)])      # rejected: out of sequence
        h.ctrl.append([h.ctl.notification(m, 252, 64)])      # rejected: resynchronises
        b.injected["bad_notif"][c] += 2
        h.write(m, 40, b.rng)
        await b.drain()
    assert sum(len(v) for v in b.expect_w.values()) == 2
    b.check_end()


@cocotb.test()
async def units_skip_circuits_that_bring_no_data(dut):
    """A compute host discards every grant of one message (a stray /N/: the
    circuits bring no data, as after a lost /G/) while it writes to another
    memory host: each of its units that names a later circuit's destination
    makes the switch give up the older circuits (cnt_lost_grants; the skip
    acts long before the circuit timeout could) and goes through, never
    dropped; every byte checked (docs/faults.md §5)."""
    b, h, m0, m1 = await stray_message(dut, 11, 3)
    for _ in range(3):
        h.write(m1, b.chunk, b.rng)
        await b.drain()
    assert h.grants_ignored == 3, h.grants_ignored
    assert b.counters("cnt_lost_grants")[h.port] == 3, b.counters("cnt_lost_grants")
    await both_served(b, h, m0, m1, 3)


async def stray_message(dut, seed, chunks, granted=False):
    """A bench whose first compute host will discard every grant of a message
    of `chunks` chunks to the first memory host (its /N/ queued; granted:
    once every grant has come and been discarded)."""
    b = Bench(dut, seed)
    await b.start()
    h, m0, m1 = b.hosts[b.compute[0]], b.memory[0], b.memory[-1]
    h.ignored.add((m0, 200))
    h.ctrl.append([h.ctl.notification(m0, 200, chunks * b.chunk)])
    while granted and h.grants_ignored < chunks:
        await b.step()
        assert b.cycle < 3000, f"{h.grants_ignored} of {chunks} grants"
    return b, h, m0, m1


async def both_served(b, h, m0, m1, given_up):
    """Writes to both memory hosts (m0, the destination of the circuits given
    up, too) land; only h's ingress gave circuits up, `given_up` of them."""
    h.write(m0, 2 * b.chunk, b.rng)
    h.write(m1, 40, b.rng)
    await b.drain()
    assert b.counters("cnt_lost_grants") == [given_up if p == h.port else 0 for p in range(b.n)]
    b.check_end()


@cocotb.test()
async def a_unit_behind_a_skipping_one_waits(dut):
    """A compute host discards the 10 grants of one message to one memory
    host, then answers two grants to another with 8-byte writes back to back:
    the second unit comes while the first still skips the 10 circuits (one a
    cycle); it waits behind it and skips in turn, and both land, none dropped
    (docs/faults.md §5; the switch before this wait dropped it)."""
    b, h, m0, m1 = await stray_message(dut, 17, 10, granted=True)
    c = h.port
    skipping = []   # cycles in which ingress c had a skip under way
    h.write(m1, 8, b.rng)
    h.write(m1, 8, b.rng)
    while b.busy():
        await b.step()
        if int(dut.sk_pend.value) >> c & 1:
            skipping.append(b.cycle)
        assert b.cycle < 5000, "traffic did not complete"
    second = sorted(t for cycles in h.sent_ms.values() for t in cycles)[-1]   # its /MS/ sent then
    assert any(second < t <= second + 3 for t in skipping), (second, skipping)
    await both_served(b, h, m0, m1, 10)


@cocotb.test()
async def a_waiting_unit_whose_circuit_was_skipped_is_discarded(dut):
    """As above, but the first unit's header names the second one's
    destination (a header hit on the wire): it skips the 10 stray circuits
    and its own and takes the second unit's circuit; the second unit, waiting
    behind it, finds no circuit left and is discarded from the data FIFO and
    counted, never sent (docs/faults.md §5). Later writes land."""
    b, h, m0, m1 = await stray_message(dut, 19, 10, granted=True)
    c = h.port
    first = h.new_id(m0)
    h.ids[m0] = first   # h.write takes this id
    h.lie[(m0, first)] = m1
    h.write(m0, 8, b.rng)
    while (m0, first) in h.writes:   # granted: its unit waits (below) until the second is granted too
        await b.step()
        assert b.cycle < 5000, "no grant"
    ready, blocks = h.data[-1]
    h.data[-1] = (ready + 300, blocks)
    second = h.ids.get(m1, 0)
    h.write(m1, 8, b.rng)
    voided = []
    for _ in range(400):   # past the first unit's delay and both skips
        await b.step()
        if int(dut.sk_void.value) >> c & 1:
            voided.append(b.cycle)
    assert not b.busy()
    assert voided, "the second unit did not find its circuit gone"
    # The first write landed at the memory host its header named; the second is lost, counted.
    b.expect_w[(c, m0)].remove(first)
    b.expect_w[(c, m1)] = [i if i != second else first for i in b.expect_w[(c, m1)]]
    b.injected["dropped"][c] += 1
    await both_served(b, h, m0, m1, 11)


def forget_read(b, c, m, mid):
    """Read mid of compute host c from memory host m will never complete."""
    h = b.hosts[c]
    del h.reads[(m, mid)]
    h.active[m] -= 1
    b.expect_r[(m, c)].remove(mid)


async def forwarded_read(b, c, m, extra):
    """Compute host c reads 40 bytes from memory host m, which answers the
    forwarded RREQ `extra` cycles later than usual (None: never); returns
    (its id, the cycle the forward's /MS/ left egress m)."""
    h, mh = b.hosts[c], b.hosts[m]
    mid = h.ids.get(m, 0)
    mh.slow[(c, mid)] = extra
    h.read(m, 40, b.rng)
    t0 = b.cycle
    while (c, mid) not in mh.requests_seen:
        await b.step()
        assert b.cycle < t0 + 100, "the read was not forwarded"
    return mid, mh.requests_seen[(c, mid)] - 2   # an RREQ is 3 blocks: /MT/ 2 cycles after /MS/


@cocotb.test()
async def a_read_never_answered_gives_its_circuit_up(dut):
    """A memory host never answers one forwarded RREQ (as if a bit error had
    cut it) and sends nothing else: the circuit of its answer stays open into
    the compute host's port, which gets no /G/ meanwhile (zero-queue rule b).
    CIRCUIT_TIMEOUT_CYCLES after the forward left, the switch gives the
    circuit up (cnt_lost_grants) and the compute host's writes, held for their
    /G/, complete. With the timeout 0 (the default before 2026-11-26) the
    port stays closed and they never do (docs/faults.md §5)."""
    timeout = int(dut.CIRCUIT_TIMEOUT_CYCLES.value)
    b = Bench(dut, 31)
    await b.start()
    c, m = b.compute[0], b.memory[0]
    h = b.hosts[c]
    mid, t_fwd = await forwarded_read(b, c, m, None)
    forget_read(b, c, m, mid)
    h.write(m, 100, b.rng)
    h.write(b.memory[-1], 40, b.rng)
    given_up = None
    while b.busy():
        await b.step()
        if given_up is None and b.counters("cnt_lost_grants")[m]:
            given_up = b.cycle - 2   # the give-up (its counter lags it by 2 cycles)
        assert b.cycle < t_fwd + (timeout or 1024) + 2000, "the writes were never granted"
    first_g = min(cyc for p, cyc in b.g_seen if p == c)
    dut._log.info(f"unanswered read: forward at {t_fwd}, circuit given up at {given_up}, "
                  f"first /G/ to the compute host at {first_g} (timeout {timeout})")
    assert given_up is not None and timeout <= given_up - t_fwd <= timeout + 1, (t_fwd, given_up)
    assert first_g > given_up, "a /G/ reached the port while the circuit was open"
    await b.drain()
    assert b.counters("cnt_lost_grants") == [1 if p == m else 0 for p in range(b.n)], b.counters("cnt_lost_grants")
    b.check_end()


SLACK = 8   # cycles either side of the circuit timeout


@cocotb.test()
async def a_slow_answer_keeps_its_circuit(dut):
    """A memory host answers a forwarded RREQ late: its RRES enters the switch
    SLACK cycles before CIRCUIT_TIMEOUT_CYCLES have passed since the forward
    left, and arrives whole, nothing given up or dropped. A second read
    answered SLACK cycles after that time has its circuit given up: the late
    RRES finds none and is dropped and counted, never misrouted. So the
    timeout counts the quiet time the header says, to a few cycles; with the
    timeout 0 the second circuit is not given up and the bench fails."""
    timeout = int(dut.CIRCUIT_TIMEOUT_CYCLES.value)
    assert timeout > SLACK + 2 + HOST_LAT, "no circuit timeout (or too short for this bench)"
    b = Bench(dut, 37)
    await b.start()
    c, m = b.compute[0], b.memory[0]
    mh = b.hosts[m]
    for late, gap in ((False, timeout - SLACK), (True, timeout + SLACK)):
        # The host answers HOST_LAT cycles after the forward's /MT/ (2 after its /MS/).
        mid, t_fwd = await forwarded_read(b, c, m, gap - 2 - HOST_LAT)
        if late:
            forget_read(b, c, m, mid)
            b.injected["dropped"][m] += 1
        while mh.resp or mh.data or mh.cur:
            await b.step()
            assert b.cycle < t_fwd + timeout + 100, "the memory host did not answer"
        t_ms = max(t for cycles in mh.sent_ms.values() for t in cycles)
        await b.drain()
        dut._log.info(f"answer {t_ms - t_fwd} cycles after the forward (timeout {timeout}): "
                      f"lost grants {b.counters('cnt_lost_grants')[m]}, dropped {b.counters('cnt_dropped')[m]}")
        assert t_ms - t_fwd == gap, (t_ms, t_fwd, gap)
        assert b.counters("cnt_lost_grants")[m] == int(late), b.counters("cnt_lost_grants")
        assert b.counters("cnt_dropped")[m] == int(late), b.counters("cnt_dropped")
    h = b.hosts[c]
    h.read(m, 100, b.rng)
    h.write(m, 100, b.rng)
    await b.drain()
    b.check_end()


@cocotb.test()
async def writes_have_no_conflicts(dut):
    """Writes only, no injected blocks: every grant is a /G/ (fixed latency) and
    hosts answer after a fixed delay, so two circuits never receive toward one
    egress at once (cnt_conflict stays 0) at any load."""
    b = Bench(dut, 3 + int(dut.N.value))
    await b.start()
    await b.traffic(3000, 0.5, kinds=("W",), x=3)
    await b.drain()
    nw = sum(len(v) for v in b.expect_w.values())
    lat = b.data_latencies()
    dut._log.info(f"writes only: {nw} writes over {b.cycle} cycles; data latency min {min(lat)} "
                  f"mean {sum(lat) / len(lat):.2f} max {max(lat)}; conflicts {int(dut.cnt_conflict.value)}")
    assert nw > 100
    b.check_end(conflict_free=True)


@cocotb.test()
async def random_traffic(dut):
    """Writes, reads, RMWs, corrupted /N/, unknown blocks, Ethernet frames.
    With the zero-queue rules (ZERO_QUEUE = 1) no data block ever waits in the
    switch (cnt_conflict stays 0). Without them (the paper's rules) a forwarded
    RREQ (3 or 5 blocks, and it may wait for a data unit on the memory node's
    link) is a slower first grant than a /G/, so an RRES can overlap the next
    circuit to the same compute node, and /G/ fillers take slots inside data
    units: cnt_conflict counts the cycles a data block waits, and the egress
    serves the units one after the other from the ingress FIFOs."""
    b = Bench(dut, 7 + int(dut.N.value))
    await b.start()
    await b.traffic(2000, 0.05, bad=0.01)
    hot = 0.3 if b.n <= 4 else 0.05    # beyond this the memory links oversubscribe (see edm_switch.sv)
    await b.traffic(4000, 0.1 if b.n <= 4 else 0.04, bad=0.01)   # loaded
    await b.traffic(1500, hot, kinds=("R", "RMW"), max_size=200)
    await b.traffic(1500, hot, kinds=("W",), max_size=200, bad=0.02)
    await b.drain()
    lat = b.data_latencies()
    nw = sum(len(v) for v in b.expect_w.values())
    nr = sum(len(v) for v in b.expect_r.values())
    dut._log.info(f"mixed: {nw} writes, {nr} reads/RMWs over {b.cycle} cycles; data latency min {min(lat)} "
                  f"mean {sum(lat) / len(lat):.2f} max {max(lat)}; injected {b.injected}; "
                  f"conflicts {int(dut.cnt_conflict.value)}")
    assert nw > 100 and nr > 100
    zero_queue = bool(int(dut.ZERO_QUEUE.value))
    if not zero_queue:
        assert int(dut.cnt_conflict.value) > 0, "the serialising path was not exercised"
    b.check_end(conflict_free=zero_queue)


ERROR_BLOCK = (protocol.SYNC_CTRL, sum(protocol.CTRL_ERROR << (8 + 7 * k) for k in range(8)) | protocol.BT_C8)
UNKNOWN_BLOCK = (protocol.SYNC_CTRL, 0x5A)   # a control block of no known type


def cut_unit(blocks, how):
    """A unit as a bit error on the uplink leaves it: its /MT/'s block type
    (mt_type) or sync header (mt_sync: 10 -> 11; mt_data: 10 -> 01, a data
    block, so only the next /MS/ ends the unit) hit, or an unknown block
    inside it (mid_unknown, after the /MS/ and one /MD/ if any)."""
    sync, p = blocks[-1]
    if how == "mt_type":
        return blocks[:-1] + [(sync, p ^ 0x01)]
    if how == "mt_sync":
        return blocks[:-1] + [(3, p)]
    if how == "mt_data":
        return blocks[:-1] + [(protocol.SYNC_DATA, p)]
    assert how == "mid_unknown"
    k = min(2, len(blocks) - 1)
    return blocks[:k] + [UNKNOWN_BLOCK] + blocks[k:]


CUT_CASES = [(kind, how) for kind in ("RREQ", "WREQ") for how in ("mt_type", "mt_sync", "mid_unknown", "mt_data")]


@cocotb.test()
async def units_cut_short_end_on_their_egress(dut):
    """Every case of cut_units, one after the other through one switch."""
    await cut_units(dut, CUT_CASES)


async def cut_units(dut, cases):
    """A bit error cuts a unit short on its uplink: an RREQ or a WREQ whose /MT/
    is hit (block type, sync header) or that carries an unknown block, or whose
    /MT/ became data so that the next /MS/ (an RREQ, dropped too) cuts it. The
    switch ends the unit on its egress with an /E/ (the receiver counts it
    corrupted, never a good unit) and counts the loss (cnt_unknown for the
    block, cnt_dropped per unit lost); a forwarded RREQ cut short leaves a
    circuit for an answer that never comes, which the other compute host's
    next RRES from that memory host skips (cnt_lost_grants; before the circuit timeout could).
    After each case writes and reads through the same ports still complete,
    byte-exact, cnt_conflict 0 (docs/faults.md §6)."""
    b = Bench(dut, 23)
    await b.start()
    c, c2, m = b.compute[0], b.compute[-1], b.memory[0]
    h, h2 = b.hosts[c], b.hosts[c2]
    lost_grants = 0
    for kind, how in cases:
        dut._log.info(f"cut: {kind} {how} at cycle {b.cycle}; {b.status()}")
        next_rreq = []
        if how == "mt_data":   # the next /MS/ cuts the unit: an RREQ of the same pair, lost too
            mid = h.new_id(m)
            next_rreq = codec.encode_message(codec.Message("RREQ", c, m, mid, 40, addr=RO_BASE))
            b.injected["dropped"][c] += 1
            b.frames_bad_due[m] += 1   # the receiver aborts the unit at that data block, then a frame's
        else:
            b.injected["unknown"][c] += 1
        b.injected["dropped"][c] += 1
        b.cuts_due[m] += 1
        if kind == "RREQ":
            mid = h.new_id(m)
            h.ctrl.append(cut_unit(codec.encode_message(codec.Message("RREQ", c, m, mid, 40, addr=RO_BASE)),
                                   how) + next_rreq)
            lost_grants += 1
        else:
            mid = h.ids.get(m, 0)
            h.mangle[(m, mid)] = lambda blocks, how=how, after=next_rreq: cut_unit(blocks, how) + after
            h.write(m, 40, b.rng)
            b.expect_w[(c, m)].remove(mid)
        for _ in range(200):
            await b.step()
        assert b.cuts_due[m] == 0, f"{kind} {how}: the cut unit did not end on egress {m}"
        if kind == "RREQ":
            h2.read(m, 40, b.rng)   # its RRES skips the circuit left for the lost read's answer
        h.write(m, 100, b.rng)
        h.read(m, 100, b.rng)
        h2.write(m, 40, b.rng)
        await b.drain(limit=3000)
    assert b.counters("cnt_lost_grants") == [lost_grants if p == m else 0 for p in range(b.n)], \
        b.counters("cnt_lost_grants")
    b.check_end()


# Each case alone too (units_cut_short_1..8), to see which fail on a switch without the cut.
for _k, _case in enumerate(CUT_CASES, 1):
    async def _one(dut, case=_case):
        await cut_units(dut, [case])
    _one.__name__ = _one.__qualname__ = f"units_cut_short_{_k}"
    _one.__doc__ = f"cut_units with the one case {_case}."
    globals()[_one.__name__] = cocotb.test()(_one)


def rq_count(b, c, m):
    """Blocks in the switch's store of RREQs of compute host c to memory host m."""
    w = int(b.dut.RQ_LOG2.value) + 1
    return int(b.dut.rq_count.value) >> ((c * b.n + m) * w) & ((1 << w) - 1)


async def store_filled_then_cut(b, before, refused):
    """Compute host c keeps its port parked to the other memory host m2 (two
    1 KB reads, so no read of c is forwarded meanwhile); then it sends memory
    host m the requests `before` ("R": a 40-byte RREQ, "A": an RMWREQ) and an
    RMWREQ whose /MT/ became data, cut by the RREQ behind it (5 blocks and
    the /E/ in the pair's store). With `refused`, the store is too full for
    that many blocks: the RMWREQ and the RREQ behind it are refused at their
    /MS/ (counted), never stored; else the RMWREQ ends on m's egress with an
    /E/ (its answer's circuit given up by the timeout) and the RREQ that cut
    it is lost. Returns the most blocks the pair's store held."""
    c, m, m2 = b.compute[0], b.memory[0], b.memory[-1]
    h = b.hosts[c]
    h.read(m2, 1024, b.rng)
    h.read(m2, 1024, b.rng)
    while not h.rres_got.get(m2):   # the port is parked to m2 from its first grant on
        await b.step()
        assert b.cycle < 20000, "no RRES of the long reads"
    for k in before:
        if k == "R":
            h.read(m, 40, b.rng)
        else:
            h.rmw(m, b.rng)
    rmw = codec.encode_message(codec.Message("RMWREQ", c, m, h.new_id(m), 8, addr=b.fai_addr(c),
                                             op=protocol.RMW_FAA, arg0=1))
    rreq = codec.encode_message(codec.Message("RREQ", c, m, h.new_id(m), 40, addr=RO_BASE))
    h.ctrl.append(cut_unit(rmw, "mt_data") + rreq)
    b.injected["dropped"][c] += 2
    if not refused:
        b.cuts_due[m] += 1
        b.frames_bad_due[m] += 1
    most = 0
    for _ in range(60):
        await b.step()
        most = max(most, rq_count(b, c, m))
    await b.drain(limit=6000)
    return most


@cocotb.test()
async def a_full_pair_store_ends_a_cut_rmwreq(dut):
    """A pair's store of RREQs keeps room for the longest unit it can hold, an
    RMWREQ whose /MT/ turned data and the /E/ that ends it (RQ_ROOM,
    RQ_UNIT_MAX = 6 blocks; docs/faults.md §6). With 11 blocks stored (two
    RREQs and an RMWREQ waiting for their grants) the cut RMWREQ is refused:
    the switch before this change (room for 5) stored it, had no room left
    for its /E/, and its forward never ended, stopping the memory host's
    egress for good. With 10 stored (two RMWREQs) it is taken and ends on the
    egress with its /E/, the store full to its last block. Then reads, RMWs
    and writes through the same ports complete, byte-exact."""
    b = Bench(dut, 41)
    await b.start()
    depth = 1 << int(dut.RQ_LOG2.value)
    c, m = b.compute[0], b.memory[0]
    most = await store_filled_then_cut(b, "RRA", refused=True)
    assert most == 11, f"the store held {most} blocks at most (the case needs 11)"
    most = await store_filled_then_cut(b, "AA", refused=False)
    assert most == depth, f"the store held {most} blocks at most, not its {depth}"
    h = b.hosts[c]
    h.read(m, 100, b.rng)
    h.rmw(m, b.rng)
    h.write(m, 100, b.rng)
    await b.drain()
    assert b.counters("cnt_lost_grants")[m] == 1, b.counters("cnt_lost_grants")
    b.check_end()


def unit_blocks(kind, size):
    """Blocks of a data unit of `size` payload bytes (the reference codec's)."""
    return len(codec.encode_message(codec.Message(kind, 0, 1, 0, size, addr=0, data=bytes(size))))


async def keep_writing(b, c, m, size, cycles, extra=None, under_way=3):
    """Compute host c keeps `under_way` writes of `size` bytes to m notified
    for `cycles` cycles (its circuits into m back to back; the bench's host
    sends a /N/ only in a gap of its uplink's data); extra(b) runs every cycle."""
    h = b.hosts[c]
    for _ in range(cycles):
        if h.active.get(m, 0) < under_way and len(h.ctrl) < 2:
            h.write(m, size, b.rng)
        if extra:
            extra(b)
        await b.step()


@cocotb.test()
async def an_egress_booked_solid_keeps_an_idle_per_period(dut):
    """A compute host writes one memory host, 4 KB messages of whole chunks
    back to back (four notified), while the other keeps four 8-byte reads of
    the other memory host under way. With a chunk whose WREQ unit is a whole
    number of scheduler iterations (CHUNK_BYTES = 48: 9 blocks) and the age
    rule off, the memory host's egress carries that source's data with no
    gap for as long as its port stays parked to it (a change of source
    leaves a gap: the new source's data follow its grant).
    The bench checks every egress every cycle for IDLE_PERIOD_BLOCKS blocks
    without an idle; every byte is checked; no data block waits
    (cnt_conflict). With the egress idle rule and the age rule both off that
    run is far longer (the check can fail)."""
    b = Bench(dut, 23)
    await b.start()
    c0, c1, m0, m1 = b.compute[0], b.compute[-1], b.memory[0], b.memory[-1]
    size = (REGION - 1) // b.chunk * b.chunk
    second = b.hosts[c1]

    def more(b):
        if second.active.get(m1, 0) < 4 and len(second.ctrl) < 2:
            second.read(m1, 8, b.rng)

    await keep_writing(b, c0, m0, size, 6000, more, under_way=4)
    await b.drain()
    nw = len(b.expect_w[(c0, m0)])
    nr = len(b.expect_r[(m1, c1)])
    dut._log.info(f"booked solid: {nw} writes of {size} B, {nr} reads of 8 B over {b.cycle} cycles; "
                  f"longest runs without an idle {b.longest_run}")
    assert nw >= 6 and nr > 100
    if not b.idle_rule and int(dut.PARK_AGE_CYCLES.value) == 0:
        assert max(b.longest_run) >= protocol.IDLE_PERIOD_BLOCKS, "the traffic does not need the rule"
    b.check_end()


@cocotb.test()
async def a_parked_port_lets_a_waiting_source_in(dut):
    """A compute host writes one memory host back to back, 1 KB messages with
    three under way, so that memory host's port stays parked to it (zero-queue
    rule a) for about 3000 cycles; soon after it is parked the other compute
    host writes 32 bytes to it. With PARK_AGE_CYCLES its first grant comes within the age,
    the drain of every circuit that can be committed into the port and the
    scheduler's decision (SRPT: the 32 bytes outrank every 1 KB message);
    with PARK_AGE_CYCLES = 0 it waits for the stream to end."""
    b = Bench(dut, 29)
    await b.start()
    c0, c1, m = b.compute[0], b.compute[-1], b.memory[0]
    await keep_writing(b, c0, m, 1024, 60)   # the port is parked from about cycle 10 on
    t_n = b.cycle + 1   # the /N/ goes out on c1's uplink in the next step
    b.hosts[c1].write(m, 32, b.rng)
    await keep_writing(b, c0, m, 1024, 2940)
    await b.drain()
    first = min(cyc for p, cyc in b.g_seen if p == c1 and cyc >= t_n)
    age = int(dut.PARK_AGE_CYCLES.value)
    cq = 1 << int(dut.CQ_LOG2.value)
    # The /N/ reaches the scheduler (3) and is seen in the port's queue (2);
    # the port's age runs out (age + the pause's grant lag, 4); every circuit
    # that can be committed into the port (the parked source's queue and 2
    # grants in flight) drains, each a full unit, after its /G/, the host's
    # answer and the switch's path (7 + HOST_LAT); the release reaches an
    # iteration (3), its grant the egress (4).
    # (With the rule off: the bound the switch's default age would keep.)
    bound = 3 + 2 + (age or 256) + 4 + (cq + 2) * unit_blocks("WREQ", b.chunk) + 7 + HOST_LAT + 3 + 4
    dut._log.info(f"waiting write: /N/ at {t_n}, first grant at {first}: {first - t_n} cycles "
                  f"(bound {bound}, PARK_AGE_CYCLES {age})")
    if age:
        assert first - t_n <= bound, (first - t_n, bound)
    else:
        assert first - t_n > bound, "the port was not kept parked"
    b.check_end()

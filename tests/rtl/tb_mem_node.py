"""cocotb: edm_mem_node, the memory-node engine, against a Python reference.

The bench plays every neighbour of the engine, cycle by cycle:
  * edm_rx: the units (built with the reference codec) block by block with
    mem_first / mem_last, random gaps; some units end in mem_error (with a
    damaged byte) or are cut short by mem_abort (alone or together with the next
    unit's /MS/); in the second-copies test some good units come with in_dup
    (edm_dup_filter's mark: handled as denied), and some RMWREQs with in_dup
    and in_replay (the filter keeps the first copy's result: answered with it).
    A new unit starts only while there is room for its kind
    (in_room_read / in_room_write; the switch's pacing), except in the flood test, which predicts the overflow drops.
  * the switch: after an RREQ has arrived, /G/ grants for its next chunks at
    random times and of random sizes (mostly the chunk size), never more bytes
    than the message has, and at most a few grants ahead of the chunks sent
    (the scheduler's pacing); grants also for RREQs that were corrupted (the
    engine must discard them as strays).
  * the DRAM: a read and a write channel, each with its own random ready;
    every read answered in order 1..LAT cycles later with the memory as it was
    when the read was accepted; writes land with their byte mask when
    accepted. A read and a write accepted in one cycle must not touch the same
    word (the engine's order rule; the memory's order between them is not
    defined).
  * edm_dup_filter's RMW results: for the key the engine shows (rmw_src,
    rmw_id), memo_ready after a random wait, then memo_ok and a random old
    value (or not ok: answered denied); every rmw_done must name a first-copy
    RMWREQ the model applied (or rejected), with its old value.
  * edm_tx: random out_ready; every unit that leaves goes through the
    reference receiver (edm.protocol.codec.RxDemux), which must accept it.
With ACKS = 1 (the write acknowledgements, docs/protocol.md §4b) the
requesters are ports 0, 1, 3 (tracked) and 200 (not: its acknowledgements are
counted as dropped), and the /A/ blocks among the RRES units go through the
same receiver: every WREQ that completes its message and is applied, or
arrives as a second copy, is acknowledged once (so twice if both), nothing
else is, no /A/ leaves inside an RRES unit, and cnt_acks counts them. Some
WREQs come without in_whole (edm_dup_filter has not seen an earlier chunk of
their message): written (or, as second copies, not), never acknowledged.
The reference model applies every good unit in arrival order to a Python byte
array. Checks: every RRES chunk is the expected message's next chunk (seq, size
as granted, last, src/dst/id, status) and its bytes equal the model's; no chunk
leaves before its grant; at the end every response has completed, the DRAM
equals the model byte for byte (so bad, aborted or dropped units and byte masks
changed nothing else), and every counter has its expected value. The CAS test
has several requesters race on one word per round: exactly one winner each.
"""

from __future__ import annotations

from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import Dram, clock_and_reset, seeded_random

NODE = 77                      # this memory node's port
REQUESTERS = [3, 200, 513, 1020]
ACK_REQUESTERS = [0, 1, 3, 200]   # ACKS = 1: 200 is beyond the tracked ports 0..3
BASE = 0x0123_4567_89AB_0000   # the memory region the tests use
SIZE = 4096
CHUNK = protocol.DEFAULT_CHUNK_BYTES
MAX_READ = 1024
MAX_WRITE = protocol.DEFAULT_CHUNK_BYTES
AHEAD = 4                      # grants issued but not yet sent as chunks


def pack(block):
    return block[0] | (block[1] << 2)


class Bench:
    def __init__(self, dut, seed, *, p_gap=0.1, p_ready=0.7, lat=(1, 12), p_out=0.75, p_grant=0.3,
                 pace=True):
        self.dut = dut
        self.rng = seeded_random(seed)
        self.p_gap, self.p_ready, self.lat, self.p_out, self.p_grant = p_gap, p_ready, lat, p_out, p_grant
        self.pace = pace
        init = bytes(self.rng.getrandbits(8) for _ in range(SIZE))
        self.model = bytearray(init)   # reference: good units applied in order
        self.dram = bytearray(init)    # what the RTL did to the memory
        self.cycle = 0
        self.units = deque()           # (blocks, flags per block, meta) to drive
        self.cur = None                # unit being driven: [blocks, index, meta]
        self.mem = Dram(self.dram, BASE, self.rng, lat)
        self.pending = {}              # (requester, id) -> response state
        self.grantable = []            # keys with bytes left to grant
        self.ahead = 0                 # grants given, chunks not yet out
        self.grant_order = deque()     # keys in the order their grants arrived (RREQ = first)
        self.out_blocks = []
        self.rx = codec.RxDemux()
        self.acks = int(dut.ACKS.value) if hasattr(dut, "ACKS") else 0
        self.requesters = ACK_REQUESTERS if self.acks else REQUESTERS
        self.ack_tracked = 1 << int(dut.ACK_SRC_LOG2.value) if self.acks else 0
        self.acks_due = []             # (requester, id) of each acknowledgement expected
        self.acks_got = []             # ... and of each received
        self.acks_untracked = 0
        self.not_whole = set()         # ACKS: (requester, id) of WREQs driven without in_whole
        self.next_id = {r: 0 for r in self.requesters}
        self.done = []                 # completed responses: (key, data, status)
        self.expect = dict(rreq=0, wreq=0, rmw=0, dropped=0, overflow=0, rejected=0, stray=0)
        self.strays_to_give = []       # (key, sizes) of corrupted RREQs: their grants are strays
        self.pending_abort = False
        self.responses_denied = 0      # STATUS_DENIED answers (a translating node's)
        self.memo = {}                 # replayed RMW key -> [ok, old value, cycles to wait]
        self.replays = 0               # RMWREQs answered from the memo
        self.rmw_results = {}          # first-copy RMW key -> (ok, old): its rmw_done to come

    async def start(self):
        await clock_and_reset(self.dut, in_valid=0, in_block=0, in_first=0, in_last=0, in_error=0,
                              in_abort=0, grant_valid=0, grant_dst=0, grant_msg_id=0, grant_size=0,
                              dram_rd_ready=0, dram_wr_ready=0, dram_rsp_valid=0, dram_rsp_data=0,
                              out_ready=0)
        self.has_dup = hasattr(self.dut, "in_dup")   # edm_mem_node_xl ties it off
        if self.has_dup:
            self.dut.in_dup.value = 0
            self.dut.in_replay.value = 0
            self.dut.in_whole.value = 1
            self.dut.memo_ready.value = 1
            self.dut.memo_ok.value = 0
            self.dut.memo_old.value = 0

    # ------------------------------------------------------------ requests
    def new_id(self, req):
        i = self.next_id[req]
        self.next_id[req] = (i + 1) % 256
        assert (req, i) not in self.pending, "message id reused while pending"
        return i

    def add(self, m: codec.Message, fate="good"):
        """Queues the unit of m; fate: good, error (mem_error on the /MT/), abort,
        abort_ms (aborted by the next unit's /MS/ in the same cycle)."""
        blocks = codec.encode_message(m)
        if fate == "error" and len(blocks) > 2:  # a damaged byte the engine must never use
            j = self.rng.randrange(1, len(blocks) - 1)
            s, p = blocks[j]
            blocks[j] = (s, p ^ (0xFF << (8 * self.rng.randrange(8))))
        if fate.startswith("abort"):
            blocks = blocks[:self.rng.randrange(1, len(blocks))]
        self.units.append((blocks, fate, m))

    def rand_addr(self, n, align=1):
        off = self.rng.randrange(0, SIZE - n + 1)
        return BASE + off - off % align

    def rand_read(self, req=None, n=None, fate="good"):
        req = req if req is not None else self.rng.choice(self.requesters)
        n = n if n is not None else self.rng.randint(1, MAX_READ)
        self.add(codec.Message("RREQ", req, NODE, self.new_id(req), n, addr=self.rand_addr(min(n, SIZE))), fate)

    def rand_write(self, req=None, n=None, fate="good"):
        req = req if req is not None else self.rng.choice(self.requesters)
        n = n if n is not None else self.rng.choice([self.rng.randint(1, 16), self.rng.randint(1, MAX_WRITE)])
        data = bytes(self.rng.getrandbits(8) for _ in range(n))
        i = self.new_id(req)
        if self.acks and self.rng.random() < 0.15:   # an earlier chunk of its message was lost
            self.not_whole.add((req, i))
        self.add(codec.Message("WREQ", req, NODE, i, n, addr=self.rand_addr(n), data=data), fate)

    def rand_rmw(self, req=None, op=None, addr=None, arg0=None, arg1=None, fate="good"):
        req = req if req is not None else self.rng.choice(self.requesters)
        op = op if op is not None else self.rng.choice([protocol.RMW_CAS, protocol.RMW_FAA, protocol.RMW_SWAP])
        addr = addr if addr is not None else self.rand_addr(8, 8)
        if arg0 is None:  # a CAS that may succeed: the current value, sometimes
            arg0 = self.rng.getrandbits(64)
        arg1 = arg1 if arg1 is not None else self.rng.getrandbits(64)
        self.add(codec.Message("RMWREQ", req, NODE, self.new_id(req), protocol.RMW_OPERAND_BYTES,
                               addr=addr, op=op, arg0=arg0, arg1=arg1), fate)

    def rand_any(self, fate="good", read_bytes=None):
        """A read (40 %; `read_bytes()` long if given), write (40 %) or RMW."""
        r = self.rng.random()
        if r < 0.4:
            self.rand_read(n=read_bytes() if read_bytes else None, fate=fate)
        elif r < 0.8:
            self.rand_write(fate=fate)
        else:
            self.rand_rmw(fate=fate)

    # ------------------------------------------------------------ the model
    def first_chunk(self, n):
        return min(CHUNK, n)

    def apply(self, m: codec.Message):
        """A good, stored unit: its effect and its expected response."""
        if m.kind == "WREQ":
            if m.length > MAX_WRITE:
                self.expect["dropped"] += 1
                return
            o = m.addr - BASE
            self.model[o:o + m.length] = m.data
            self.expect["wreq"] += 1
            self.acknowledged(m)
            return
        status, data = protocol.STATUS_OK, b""
        if m.kind == "RREQ":
            if m.length > MAX_READ:
                status = protocol.STATUS_ERROR
                self.expect["rejected"] += 1
            else:
                o = m.addr - BASE
                data = bytes(self.model[o:o + m.length])
                self.expect["rreq"] += 1
        elif m.kind == "RMWREQ":
            o = m.addr - BASE
            if m.op not in (protocol.RMW_CAS, protocol.RMW_FAA, protocol.RMW_SWAP) or m.addr % 8:
                status = protocol.STATUS_ERROR
                self.expect["rejected"] += 1
                self.rmw_results[(m.src, m.msg_id)] = (False, None)
            else:
                old = int.from_bytes(self.model[o:o + 8], "little")
                new = {protocol.RMW_CAS: m.arg1 if old == m.arg0 else old,
                       protocol.RMW_FAA: (old + m.arg0) % (1 << 64),
                       protocol.RMW_SWAP: m.arg0}[m.op]
                self.model[o:o + 8] = new.to_bytes(8, "little")
                data = old.to_bytes(8, "little")
                self.expect["rmw"] += 1
                self.rmw_results[(m.src, m.msg_id)] = (True, old)
        else:
            self.expect["dropped"] += 1  # RRES at a memory node
            return
        self.respond(m, data, status)

    def respond(self, m: codec.Message, data: bytes, status: int):
        """The response m is expected to get: its first chunk is granted."""
        key = (m.src, m.msg_id)
        first = self.first_chunk(len(data))
        self.pending[key] = dict(msg=m, data=data, status=status, grants=[first], granted=first,
                                 sent=0, chunks=0)
        self.ahead += 1
        self.grant_order.append(key)
        if first < len(data):
            self.grantable.append(key)

    def second_copy(self, m: codec.Message):
        """A good unit marked in_dup (edm_dup_filter): handled as denied, a
        WREQ not written, a request answered empty with STATUS_DENIED."""
        if m.kind != "WREQ":
            self.responses_denied += 1
            self.respond(m, b"", protocol.STATUS_DENIED)
        else:
            self.acknowledged(m)   # acknowledged again: its first copy's /A/ may be lost

    def acknowledged(self, m: codec.Message):
        """A WREQ applied or seen again: acknowledged if it completes its message whole."""
        if self.acks and m.last and (m.src, m.msg_id) not in self.not_whole:
            if m.src < self.ack_tracked:
                self.acks_due.append((m.src, m.msg_id))
            else:
                self.acks_untracked += 1

    def replayed(self, m: codec.Message):
        """An RMWREQ marked in_dup and in_replay: answered with the result the
        filter keeps (8 bytes, OK; if that is not ok, 8 zero bytes, DENIED),
        once the filter has it; memory untouched."""
        ok, old = self.rng.random() < 0.8, self.rng.getrandbits(64)
        self.memo[(m.src, m.msg_id)] = [ok, old, self.rng.choice([0, 0, 3, 40])]
        self.replays += 1
        self.respond(m, old.to_bytes(8, "little") if ok else bytes(8),
                     protocol.STATUS_OK if ok else protocol.STATUS_DENIED)

    def bad(self, m: codec.Message):
        """A unit dropped as bad: counted; an RREQ's later grants are strays."""
        self.expect["dropped"] += 1
        if m.kind == "RREQ" and min(m.length, MAX_READ) > CHUNK:
            rest = m.length - CHUNK
            sizes = []
            while rest > 0:
                sizes.append(min(CHUNK, rest))
                rest -= sizes[-1]
            self.strays_to_give.append(((m.src, m.msg_id), sizes))

    # ------------------------------------------------------------ one cycle
    async def step(self):
        dut, rng = self.dut, self.rng
        await FallingEdge(dut.clk)
        # edm_rx side
        in_valid = first = last = error = abort = dup = replay = 0
        whole = 1
        block = rng.getrandbits(66)
        pending_abort, self.pending_abort = self.pending_abort, False
        if self.cur is None and self.units and rng.random() >= self.p_gap:
            kind = self.units[0][2].kind
            room = int(dut.in_room_write.value if kind == "WREQ" else dut.in_room_read.value)
            if room or not self.pace:
                blocks, fate, m = self.units.popleft()
                self.cur = [blocks, 0, fate, m, bool(room)]
                if not room:
                    self.expect["overflow"] += 1
        if self.cur is not None and (self.cur[1] == 0 or rng.random() >= self.p_gap):
            blocks, i, fate, m, stored = self.cur
            in_valid = 1
            block = pack(blocks[i])
            first = int(i == 0)
            self.cur[1] += 1
            if self.cur[1] == len(blocks):
                self.cur = None
                if fate in ("good", "error", "dup", "replay"):
                    last = 1
                    error = int(fate == "error")
                    dup = int(fate in ("dup", "replay"))
                    replay = int(fate == "replay")
                    whole = int((m.src, m.msg_id) not in self.not_whole)
                    if stored:
                        {"good": self.apply, "error": self.bad, "dup": self.second_copy,
                         "replay": self.replayed}[fate](m)
                else:  # cut short: the abort comes in a later cycle
                    if stored:
                        self.bad(m)
                    self.pending_abort = fate
        if pending_abort == "abort" or (pending_abort == "abort_ms" and (first or (not self.units and not self.cur))):
            abort = 1  # alone, or with the next unit's /MS/ (as edm_rx does)
        elif pending_abort:
            self.pending_abort = pending_abort  # wait for the next /MS/
        dut.in_valid.value = in_valid
        dut.in_block.value = block
        dut.in_first.value = first
        dut.in_last.value = last
        dut.in_error.value = error
        dut.in_abort.value = abort
        if self.has_dup:
            dut.in_dup.value = dup
            dut.in_replay.value = replay
            dut.in_whole.value = whole
            # the filter's result for the engine's key (held back a while)
            entry = self.memo.get((int(dut.rmw_src.value), int(dut.rmw_id.value)))
            ready = entry is None or entry[2] == 0
            if entry is not None and entry[2] > 0:
                entry[2] -= 1
            dut.memo_ready.value = int(ready)
            dut.memo_ok.value = int(ready and entry is not None and entry[0])
            dut.memo_old.value = entry[1] if entry is not None else rng.getrandbits(64)
        # the switch: grants (never with a unit's last block: edm_rx delivers one
        # block's result per cycle, and the grant order must be the wire order)
        gv = 0
        strays_queued = self.expect["stray"] - int(dut.cnt_stray_grants.value)
        if last:
            pass
        elif self.strays_to_give and strays_queued < 2 and rng.random() < self.p_grant / 2:
            key, sizes = self.strays_to_give[0]
            dut.grant_dst.value, dut.grant_msg_id.value = key
            dut.grant_size.value = sizes.pop(0)
            if not sizes:
                self.strays_to_give.pop(0)
            self.expect["stray"] += 1
            gv = 1
        elif self.grantable and self.ahead < AHEAD and rng.random() < self.p_grant:
            key = rng.choice(self.grantable)
            st = self.pending[key]
            rest = len(st["data"]) - st["granted"]
            size = min(CHUNK, rest) if rng.random() < 0.7 else rng.randint(1, min(CHUNK, rest))
            st["grants"].append(size)
            st["granted"] += size
            if st["granted"] == len(st["data"]):
                self.grantable.remove(key)
            self.ahead += 1
            self.grant_order.append(key)
            dut.grant_dst.value, dut.grant_msg_id.value = key
            dut.grant_size.value = size
            gv = 1
        dut.grant_valid.value = gv
        # the DRAM
        rd_ready = int(rng.random() < self.p_ready)
        wr_ready = int(rng.random() < self.p_ready)
        dut.dram_rd_ready.value = rd_ready
        dut.dram_wr_ready.value = wr_ready
        answer = self.mem.answer(self.cycle)
        if answer is not None:
            dut.dram_rsp_valid.value = 1
            dut.dram_rsp_data.value = answer
        else:
            dut.dram_rsp_valid.value = 0
            dut.dram_rsp_data.value = rng.getrandbits(64)
        # edm_tx
        out_ready = int(rng.random() < self.p_out)
        dut.out_ready.value = out_ready

        await ReadOnly()
        if self.has_dup and int(dut.rmw_done.value):
            key = (int(dut.rmw_src.value), int(dut.rmw_id.value))
            assert key in self.rmw_results, f"cycle {self.cycle}: rmw_done for {key}, no first-copy RMW"
            ok, old = self.rmw_results.pop(key)
            assert int(dut.rmw_ok.value) == ok, (key, ok)
            assert not ok or int(dut.rmw_old.value) == old, f"{key}: rmw_old {int(dut.rmw_old.value):#x}, model {old:#x}"
        write = int(dut.dram_wr_valid.value) and wr_ready
        self.mem.accept(self.cycle, int(dut.dram_rd_addr.value) if int(dut.dram_rd_valid.value) and rd_ready else None,
                        int(dut.dram_wr_addr.value) if write else None,
                        int(dut.dram_wr_data.value), int(dut.dram_wr_mask.value))
        if int(dut.out_valid.value) and out_ready:
            blk = int(dut.out_block.value)
            b = (blk & 3, blk >> 2)
            sub = (b[1] >> 8) & 0xFF if b[0] == protocol.SYNC_CTRL and b[1] & 0xFF == protocol.BT_EDM else None
            if sub == protocol.SUB_A:   # an /A/: a unit of its own, between RRES units
                assert self.acks and not self.out_blocks and int(dut.out_last.value), \
                    f"cycle {self.cycle}: /A/ inside a unit or without ACKS"
                events = self.rx.push(b)
                assert len(events) == 1 and events[0][0] == "ack", f"cycle {self.cycle}: /A/ rejected: {events}"
                _, peer, base, applied = events[0]
                self.acks_got += [(peer, i) for i in codec.acked_ids(base, applied)]
                self.cycle += 1
                await RisingEdge(dut.clk)
                return
            self.out_blocks.append(b)
            if len(self.out_blocks) == 1:
                self.check_grant_before_chunk(b)
            assert bool(int(dut.out_last.value)) == (sub == protocol.SUB_MT)
            events = self.rx.push(b)
            if int(dut.out_last.value):
                assert len(events) == 1 and events[0][0] == "message", \
                    f"cycle {self.cycle}: reference receiver rejected the unit: {events} {self.rx.counters}"
                self.check_chunk(events[0][1])
                self.out_blocks = []
            else:
                assert events == [], events
        self.cycle += 1
        await RisingEdge(dut.clk)

    def check_grant_before_chunk(self, ms):
        hdr = ms[1] >> 16
        key = ((hdr >> protocol.HDR_DST_LSB) & 0x3FF, (hdr >> protocol.HDR_ID_LSB) & 0xFF)
        seq = (hdr >> protocol.HDR_SEQ_LSB) & 0xFFF
        assert key in self.pending, f"cycle {self.cycle}: chunk for an unknown message {key}"
        assert seq < len(self.pending[key]["grants"]), \
            f"cycle {self.cycle}: chunk {seq} of {key} leaves before its grant"

    def check_chunk(self, m: codec.Message):
        key = (m.dst, m.msg_id)
        st = self.pending.get(key)
        assert st is not None, f"cycle {self.cycle}: RRES for no pending request: {m}"
        k = st["chunks"]
        assert m.kind == "RRES" and m.src == NODE and m.seq == k, (m, k)
        # The switch routes chunks by circuit order: they must leave in grant order.
        want_key = self.grant_order.popleft()
        assert key == want_key, f"cycle {self.cycle}: chunk of {key} leaves before one of {want_key}"

        assert k < len(st["grants"]), f"chunk {k} of {key} without a grant"
        size = st["grants"][k]
        assert m.length == size == len(m.data), f"{key} chunk {k}: {m.length} bytes, granted {size}"
        assert m.op == st["status"], (m, st["status"])
        want = st["data"][st["sent"]:st["sent"] + size]
        assert m.data == want, f"{key} chunk {k} at {st['sent']}: data differs from the model " \
                               f"({st['msg'].kind} {st['msg'].addr:#x} {st['msg'].length})"
        st["sent"] += size
        st["chunks"] += 1
        self.ahead -= 1
        assert m.last == (st["sent"] == len(st["data"])), (m.last, st["sent"], len(st["data"]))
        if m.last:
            self.done.append((key, st["data"], st["status"], st["msg"]))
            del self.pending[key]

    # ------------------------------------------------------------ run
    async def run(self, limit=400_000):
        start = self.cycle
        while (self.units or self.cur or self.pending or self.pending_abort or self.strays_to_give
               or self.mem.answers or self.out_blocks or not self.served_all()
               or len(self.acks_got) < len(self.acks_due)):
            await self.step()
            assert self.cycle - start < limit, \
                f"stuck: {len(self.units)} units, pending {list(self.pending)[:5]}, {self.ahead} ahead"
        for _ in range(30):  # let stray grants drain, nothing may leave
            await self.step()
        assert not self.out_blocks

    def served_all(self):
        return all(int(getattr(self.dut, f"cnt_{n}").value) == self.expect[n]
                   for n in ("rreq", "wreq", "rmw", "rejected"))

    def check_final(self):
        assert self.dram == self.model, "memory differs from the model: " + str(
            [hex(BASE + i) for i in range(SIZE) if self.dram[i] != self.model[i]][:8])
        got = {name: int(getattr(self.dut, f"cnt_{name}").value)
               for name in ("rreq", "wreq", "rmw", "dropped", "overflow", "rejected")}
        got["stray"] = int(self.dut.cnt_stray_grants.value)
        assert got == self.expect, f"counters {got} != expected {self.expect}"
        n_resp = (self.expect["rreq"] + self.expect["rmw"] + self.expect["rejected"] + self.responses_denied
                  + self.replays)
        if self.has_dup:
            assert not self.rmw_results, f"no rmw_done for {list(self.rmw_results)[:4]}"
        assert len(self.done) == n_resp and not self.pending, (len(self.done), n_resp)
        assert self.rx.counters["corrupted"] == 0 and self.rx.counters["unknown"] == 0
        if self.acks:
            assert sorted(self.acks_got) == sorted(self.acks_due), \
                f"acknowledged {len(self.acks_got)} ids, expected {len(self.acks_due)}: " \
                f"missing {sorted(set(self.acks_due) - set(self.acks_got))[:6]}, " \
                f"extra {sorted(set(self.acks_got) - set(self.acks_due))[:6]}"
            assert self.acks_due or not self.expect["wreq"], "writes applied, none to acknowledge"
            self.dut._log.info("acknowledged %d writes in %d /A/; %d not (untracked requester)",
                               len(self.acks_got), self.rx.counters["acks_ok"], self.acks_untracked)
            assert int(self.dut.cnt_acks.value) == self.rx.counters["acks_ok"]
            assert int(self.dut.cnt_ack_dropped.value) == self.acks_untracked
        else:
            assert self.rx.counters["acks_ok"] == 0


async def new_bench(dut, seed, **kw):
    b = Bench(dut, seed, **kw)
    await b.start()
    return b


# ---------------------------------------------------------------- tests


@cocotb.test()
async def random_mix(dut):
    """Reads 1..1024 B, writes 1..256 B and RMWs at random addresses, random
    grant timing and sizes, DRAM latency and back-pressure, TX stalls; 12 % of
    the units corrupted or aborted."""
    b = await new_bench(dut, 1)
    for _ in range(700):
        fate = b.rng.choices(["good", "error", "abort", "abort_ms"], [88, 5, 4, 3])[0]
        b.rand_any(fate)
    await b.run()
    b.check_final()
    assert b.expect["dropped"] > 20 and b.expect["stray"] > 3, b.expect
    dut._log.info("random mix: %s in %d cycles", b.expect, b.cycle)


@cocotb.test()
async def second_copies(dut):
    """Units marked in_dup with their /MT/ (edm_dup_filter's second copies) are
    handled as denied: a WREQ changes nothing, a request gets an empty
    STATUS_DENIED answer (its switch booked a circuit for it); mixed with good,
    corrupted and aborted units."""
    b = await new_bench(dut, 6)
    for _ in range(400):
        fate = b.rng.choices(["good", "dup", "replay", "error", "abort"], [60, 20, 10, 5, 5])[0]
        if fate == "replay":
            b.rand_rmw(fate=fate)
        else:
            b.rand_any(fate)
    await b.run()
    b.check_final()
    assert b.responses_denied > 30 and b.replays > 20, (b.responses_denied, b.replays)
    dut._log.info("second copies: %d answered denied, %d from the kept result, %s", b.responses_denied,
                  b.replays, b.expect)


@cocotb.test()
async def read_lengths(dut):
    """Every read length 1..1024 once, in random order, each at a random byte
    alignment, with random writes in between; fast memory."""
    b = await new_bench(dut, 2, p_gap=0.0, p_ready=0.9, lat=(1, 4), p_out=0.95, p_grant=0.6)
    lengths = list(range(1, MAX_READ + 1))
    b.rng.shuffle(lengths)
    for n in lengths:
        if b.rng.random() < 0.2:
            b.rand_write()
        b.rand_read(n=n)
    await b.run()
    b.check_final()
    assert b.expect["rreq"] == MAX_READ


@cocotb.test()
async def cas_rounds(dut):
    """Each round every requester sends CAS(current, its own value) to one word
    (with FAAs and SWAPs on a neighbour word and reads of both in between):
    exactly one CAS wins per round, and FAAs add up."""
    b = await new_bench(dut, 3, p_ready=0.5, lat=(4, 20))
    lock = BASE + 1024
    counter = BASE + 1032
    value = int.from_bytes(b.model[1024:1032], "little")
    rounds = []
    adds = 0
    for rnd in range(25):
        order = list(REQUESTERS)
        b.rng.shuffle(order)
        ids = []
        for req in order:
            ids.append((req, b.next_id[req]))
            b.rand_rmw(req=req, op=protocol.RMW_CAS, addr=lock, arg0=value, arg1=(rnd << 16) | req)
            if b.rng.random() < 0.5:
                inc = b.rng.randint(1, 1000)
                adds += inc
                b.rand_rmw(op=protocol.RMW_FAA, addr=counter, arg0=inc)
            if b.rng.random() < 0.3:
                b.rand_read(n=b.rng.randint(1, 24), req=req)
        rounds.append((value, ids))
        value = (rnd << 16) | order[0]   # the first CAS to arrive wins
    await b.run()
    b.check_final()
    results = {key: (data, msg) for key, data, _, msg in b.done}
    for rnd, (expected, ids) in enumerate(rounds):
        winners = [k for k in ids if int.from_bytes(results[k][0], "little") == expected]
        assert len(winners) == 1, f"round {rnd}: {len(winners)} CAS winners"


@cocotb.test()
async def corner_cases(dut):
    """Empty and oversize reads, bad RMW opcodes and unaligned RMWs (STATUS_ERROR
    responses), empty and oversize WREQs, an RRES sent to a memory node, and
    grants for corrupted reads."""
    b = await new_bench(dut, 4)
    r = REQUESTERS[0]
    b.add(codec.Message("RREQ", r, NODE, b.new_id(r), 0, addr=BASE))
    b.add(codec.Message("RREQ", r, NODE, b.new_id(r), MAX_READ + 1, addr=BASE))
    b.add(codec.Message("RREQ", r, NODE, b.new_id(r), 65535, addr=BASE))
    b.rand_rmw(op=0)
    b.rand_rmw(op=9)
    b.rand_rmw(op=protocol.RMW_SWAP, addr=BASE + 13)
    b.add(codec.Message("WREQ", r, NODE, b.new_id(r), 0, addr=BASE + 5))
    b.rand_write(n=MAX_WRITE + 1)
    b.add(codec.Message("RRES", r, NODE, b.new_id(r), 5, data=b"12345"))
    for _ in range(6):
        b.rand_read(n=b.rng.randint(CHUNK + 1, MAX_READ), fate="error")
        b.rand_read()
        b.rand_write(fate="abort")
        b.rand_write(fate="abort_ms")
        b.rand_write()
    await b.run()
    b.check_final()
    # rejected: 2 oversize reads, 2 bad opcodes, 1 unaligned RMW; dropped: the
    # oversize WREQ, the RRES and the 18 corrupted or aborted units
    assert b.expect["rejected"] == 5 and b.expect["dropped"] == 20, b.expect


@cocotb.test()
async def overflow_is_dropped(dut):
    """Units arrive back to back while the memory is slow, ignoring in_room: the
    ones that start without room are dropped and counted, nothing else changes."""
    b = await new_bench(dut, 5, p_gap=0.0, p_ready=0.3, lat=(5, 15), pace=False)
    for _ in range(120):
        if b.rng.random() < 0.7:
            b.rand_write(n=b.rng.randint(100, MAX_WRITE))
        else:
            b.rand_read(n=b.rng.randint(1, 64))
    await b.run()
    b.check_final()
    assert b.expect["overflow"] > 10, b.expect

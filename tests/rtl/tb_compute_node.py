"""cocotb: edm_compute_node back to back with two edm_mem_node instances
(tests/rtl/tb_compute_mem_top.sv), with a Python model of the switch between them.

The bench plays, cycle by cycle:
  * the host: random RREQ / WREQ / RMWREQ requests (each with its own local
    buffer), random completion back-pressure;
  * the compute node's local memory: a read port (random ready, in-order answers
    1..4 cycles later) and a byte-masked write port (random ready);
  * the switch: every unit the compute node sends goes through the reference
    receiver (edm.protocol.codec.RxDemux), which must accept it. /N/ gets /G/ grants
    (random sizes, at most two ahead of the chunks); RREQ / RMWREQ / WREQ chunks
    are forwarded to the memory node named as destination; each memory node's
    RRES chunks get further /G/ grants (the forwarded RREQ is the first) and are
    forwarded to the compute node's RX side (rx_clk, which may run at another
    period), where some tests corrupt, drop, delay or invent units;
  * each memory node's DRAM (as in tb_mem_node.py).
A Python model applies every unit to the memory node's byte array in the order
the switch forwards it (the order the memory node serves it), so it knows each
read's and RMW's data. Checks: every WREQ chunk's size is min(grant, bytes left),
its address and data are the local buffer's; every completed read's local buffer
equals the model, an RMW's old value lands in local memory; completions come in
request order per destination with the expected status; never more than X
messages active per destination (and X is reached); at the end every DRAM equals
its model and every counter its expected value.
"""

from __future__ import annotations

from dataclasses import replace
from collections import deque

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from edm import protocol
from edm.protocol import codec
from tbutil import Dram, NodePorts, seeded_random

CN = 5                          # the compute node's port
MNS = [77, 300]                 # memory node ports (instances g_mn[0..1].mn)
RBASE = 0x0123_4567_89AB_0000   # remote region on each memory node
RSIZE = 4096
LBASE = 0x0000_0040_0000_0000   # the compute node's local memory
LSIZE = 1 << 16
CHUNK = protocol.DEFAULT_CHUNK_BYTES
BOGUS_GRANT = 100   # no chunk of the lost-grant test's writes has this size


def chunk_size(length, k):
    """Bytes of a WREQ's chunk k: [k CHUNK, min((k + 1) CHUNK, length))."""
    return min(CHUNK, length - k * CHUNK)


def expected_chunk(length, sent, size):
    """The chunk a grant of `size` bytes is answered with: the lowest unsent one
    of that size (only the last can be short), None if none (a stray grant)."""
    for k in range((length + CHUNK - 1) // CHUNK):
        if k not in sent and chunk_size(length, k) == size:
            return k
    return None
MAX_READ = 1024                 # edm_mem_node's default MAX_READ_BYTES
X = protocol.DEFAULT_MAX_ACTIVE_NOTIFS
K_RREQ, K_WREQ, K_RMW = protocol.KIND_RREQ, protocol.KIND_WREQ, protocol.KIND_RMWREQ
KIND_NAME = {K_RREQ: "RREQ", K_WREQ: "WREQ", K_RMW: "RMWREQ"}
MASK64 = (1 << 64) - 1


def pack(block):
    return block[0] | (block[1] << 2)


def unpack(v):
    return (v & 3, v >> 2)


class MemNode:
    """One edm_mem_node instance and its DRAM."""

    def __init__(self, bench, idx, port):
        self.b, self.dut, self.rng = bench, bench.dut, bench.rng
        self.idx, self.port = idx, port
        init = bytes(self.rng.getrandbits(8) for _ in range(RSIZE))
        self.model = bytearray(init)
        self.dram = bytearray(init)
        self.units = deque()     # blocks of units to drive
        self.cur = None
        self.mem = Dram(self.dram, RBASE, self.rng, (1, 6))
        self.rx = codec.RxDemux()
        self.reads = {}          # (CN, id) -> dict(len, granted, chunks, grants)
        self.n_units = 0

    def s(self, name):
        return self.b.mn_ports.port(name, self.idx)

    def forward(self, m):
        """The switch forwards unit m to this node: apply it to the model."""
        o = m.addr - RBASE
        result = None
        if m.kind == "WREQ":
            self.model[o:o + m.length] = m.data
        elif m.kind == "RREQ":
            result = bytes(self.model[o:o + m.length])
            self.reads[(m.src, m.msg_id)] = dict(len=m.length, granted=min(CHUNK, m.length), chunks=0,
                                                 grants=[min(CHUNK, m.length)], outstanding=1)
        else:
            old = int.from_bytes(self.model[o:o + 8], "little")
            new = {protocol.RMW_CAS: m.arg1 if old == m.arg0 else old,
                   protocol.RMW_FAA: (old + m.arg0) & MASK64, protocol.RMW_SWAP: m.arg0}[m.op]
            self.model[o:o + 8] = new.to_bytes(8, "little")
            result = old.to_bytes(8, "little")
            self.reads[(m.src, m.msg_id)] = dict(len=8, granted=8, chunks=0, grants=[8], outstanding=1)
        self.units.append(codec.encode_message(m))
        self.n_units += 1
        return result

    def drive(self):
        rng = self.rng
        v = first = last = 0
        blk = rng.getrandbits(66)
        if self.cur is None and self.units and int(self.s("in_room").value) and rng.random() < 0.9:
            self.cur = [self.units.popleft(), 0]
        if self.cur is not None and (self.cur[1] == 0 or rng.random() < 0.9):
            blocks, i = self.cur
            v, blk, first, last = 1, pack(blocks[i]), int(i == 0), int(i == len(blocks) - 1)
            self.cur[1] += 1
            if self.cur[1] == len(blocks):
                self.cur = None
        self.s("in_valid").value = v
        self.s("in_block").value = blk
        self.s("in_first").value = first
        self.s("in_last").value = last
        self.s("in_error").value = 0
        self.s("in_abort").value = 0
        # grants for the next RRES chunks (only once the first chunk has left);
        # never beside a unit's block: edm_rx delivers one block's result per cycle
        gv = 0
        cands = [k for k, r in self.reads.items() if r["chunks"] > 0 and r["granted"] < r["len"]
                 and r["outstanding"] < 2]
        if cands and not v and rng.random() < self.b.p_grant:
            k = rng.choice(cands)
            r = self.reads[k]
            rest = r["len"] - r["granted"]
            size = min(CHUNK, rest) if rng.random() < 0.6 else rng.randint(1, min(CHUNK, rest))
            r["granted"] += size
            r["grants"].append(size)
            r["outstanding"] += 1
            self.s("grant_dst").value, self.s("grant_msg_id").value = k
            self.s("grant_size").value = size
            gv = 1
        self.s("grant_valid").value = gv
        self.rd_ready, self.wr_ready = int(rng.random() < 0.7), int(rng.random() < 0.7)
        self.s("dram_rd_ready").value = self.rd_ready
        self.s("dram_wr_ready").value = self.wr_ready
        answer = self.mem.answer(self.b.cycle)
        if answer is not None:
            self.s("dram_rsp_valid").value = 1
            self.s("dram_rsp_data").value = answer
        else:
            self.s("dram_rsp_valid").value = 0
        self.out_ready = int(rng.random() < 0.8)
        self.s("out_ready").value = self.out_ready

    def sample(self):
        read = int(self.s("dram_rd_valid").value) and self.rd_ready
        write = int(self.s("dram_wr_valid").value) and self.wr_ready
        self.mem.accept(self.b.cycle, int(self.s("dram_rd_addr").value) if read else None,
                        int(self.s("dram_wr_addr").value) if write else None,
                        int(self.s("dram_wr_data").value), int(self.s("dram_wr_mask").value))
        if int(self.s("out_valid").value) and self.out_ready:
            blk = unpack(int(self.s("out_block").value))
            self.blocks = getattr(self, "blocks", []) + [blk]
            ev = self.rx.push(blk)
            if int(self.s("out_last").value):
                assert len(ev) == 1 and ev[0][0] == "message", ev
                m = ev[0][1]
                r = self.reads[(m.dst, m.msg_id)]
                assert m.length == r["grants"][r["chunks"]], (m, r)
                r["chunks"] += 1
                r["outstanding"] -= 1
                if m.last:
                    del self.reads[(m.dst, m.msg_id)]
                self.b.rres_from_mn(m, self.blocks)
                self.blocks = []


class Bench:
    def __init__(self, dut, seed, *, rx_period=2000, p_grant=0.3, p_lrd=0.8, p_lwr=0.95, p_cpl=0.8,
                 p_out=0.85, timeout=0, retry=0):
        self.dut = dut
        self.rng = seeded_random(seed)
        self.rx_period = rx_period
        self.p_grant, self.p_lrd, self.p_lwr, self.p_cpl, self.p_out = p_grant, p_lrd, p_lwr, p_cpl, p_out
        self.timeout = timeout
        self.retry = retry
        self.cycle = 0
        self.mn_ports = NodePorts(dut, "mn_", len(MNS))
        self.mns = {port: MemNode(self, i, port) for i, port in enumerate(MNS)}
        self.lmem = bytearray(self.rng.getrandbits(8) for _ in range(LSIZE))
        self.lalloc = 0
        self.to_submit = deque()
        self.tag = 0
        self.issued = deque()        # submitted requests whose first unit has not left
        self.by_key = {}             # (dst, id) -> request
        self.by_tag = {}
        self.cpl_order = {d: deque() for d in MNS}
        self.active = {d: 0 for d in MNS}
        self.max_active = 0
        self.cn_rx = codec.RxDemux()
        self.cn_blocks = []
        self.writes = {}             # (dst, id) -> request (grant state inside)
        self.rx_units = deque()      # (blocks, fate) toward the compute node's RX (rx_clk side)
        self.rx_grants = deque()     # (dst, id, size)
        self.rx_cur = None
        self.rx_pending_abort = False
        self.lrd_q = deque()
        self.lrd_due = 0
        self.completed = []
        self.expect = dict(dropped=0, stray=0, timeouts=0, late=0, retries=0)
        self.bogus_after_loss = False  # after each lost grant, one of a size no chunk has
        self.drop_next = set()       # request tags whose unit the switch drops
        self.delay_rres = set()      # tags whose response the switch holds back
        self.held = []               # (tag, blocks) held responses
        self.corrupt_rres = {}       # tag -> fate of its (single) response chunk
        self.stamps = {}             # latency stamps (ps)

    async def start(self):
        d = self.dut
        cocotb.start_soon(Clock(d.clk, 2000, units="ps").start())
        cocotb.start_soon(Clock(d.rx_clk, self.rx_period, units="ps").start())
        d.rst_n.value = 0
        d.rx_rst_n.value = 0
        d.cn_node_port.value = CN
        d.cn_cfg_timeout.value = self.timeout
        d.cn_cfg_retry.value = self.retry
        d.cn_fail_all.value = 0
        for n in ("req_valid", "cpl_ready", "lmem_rd_ready", "lmem_rd_rsp_valid", "lmem_wr_ready", "in_valid",
                  "in_first", "in_last", "in_error", "in_abort", "grant_valid", "out_ready"):
            getattr(d, "cn_" + n).value = 0
        for mn in self.mns.values():
            for n in ("in_valid", "in_first", "in_last", "in_error", "in_abort", "grant_valid",
                      "dram_rd_ready", "dram_wr_ready", "dram_rsp_valid", "out_ready"):
                mn.s(n).value = 0
        for _ in range(3):
            await RisingEdge(d.clk)
        await RisingEdge(d.rx_clk)
        await RisingEdge(d.rx_clk)
        await FallingEdge(d.rx_clk)
        d.rx_rst_n.value = 1
        await FallingEdge(d.clk)
        d.rst_n.value = 1
        cocotb.start_soon(self.rx_side())

    # ------------------------------------------------------------ requests
    def lbuf(self, n):
        a = self.lalloc + self.rng.randrange(8)
        if a + n + 8 > LSIZE:
            a = self.rng.randrange(8)
        self.lalloc = (a + n + 8) % LSIZE
        return LBASE + a

    def new_tag(self):
        self.tag = (self.tag + 1) % 256
        assert self.tag not in self.by_tag, "tag reused while outstanding"
        return self.tag

    def request(self, kind, dst, raddr, n=0, op=0, arg0=0, arg1=0, fate=None):
        r = dict(kind=kind, dst=dst, raddr=raddr, len=n if kind != K_RMW else 8, op=op, arg0=arg0, arg1=arg1,
                 fate=fate)
        if kind == K_WREQ:
            r["laddr"] = self.lbuf(n)
            r["data"] = bytes(self.rng.getrandbits(8) for _ in range(n))
            o = r["laddr"] - LBASE
            self.lmem[o:o + n] = r["data"]  # the host's buffer, read by the engine (DMA)
        else:
            r["laddr"] = self.lbuf(r["len"])
        self.to_submit.append(r)
        return r

    def rand_request(self, dst=None, fate=None):
        rng = self.rng
        dst = dst if dst is not None else rng.choice(MNS)
        k = rng.random()
        if k < 0.4:
            n = rng.choice([rng.randint(1, 24), rng.randint(1, MAX_READ)])
            return self.request(K_RREQ, dst, RBASE + rng.randrange(RSIZE - n + 1), n, fate=fate)
        if k < 0.8:
            n = rng.choice([rng.randint(1, 24), rng.randint(1, 1024), 0 if rng.random() < 0.05 else 7])
            return self.request(K_WREQ, dst, RBASE + rng.randrange(RSIZE - n + 1), n)
        op = rng.choice([protocol.RMW_CAS, protocol.RMW_FAA, protocol.RMW_SWAP])
        a = RBASE + 8 * rng.randrange(RSIZE // 8)
        arg0 = rng.getrandbits(64)
        if op == protocol.RMW_CAS and rng.random() < 0.5:
            o = a - RBASE
            arg0 = int.from_bytes(self.mns[dst].model[o:o + 8], "little")  # may still succeed
        return self.request(K_RMW, dst, a, op=op, arg0=arg0, arg1=rng.getrandbits(64), fate=fate)

    # ------------------------------------------------------------ switch side
    def unit_from_cn(self, ev, blocks):
        if ev[0] == "notification":
            _, dst, mid, size = ev
            if (dst, mid) in self.writes:  # a re-sent /N/: for the chunks not yet granted
                r = self.writes[(dst, mid)]
                assert r["grant_left"] == 0 and size == r["len"] - sum(chunk_size(r["len"], k) for k in r["csent"]), \
                    ("re-sent /N/", size, r["len"], sorted(r["csent"]))
                r["grant_left"] = size
                return
            r = self.first_unit(K_WREQ, dst, mid, size)
            r.update(grant_left=size, grants=deque(), sent=0, csent=set(), n_grants=0)
            self.writes[(dst, mid)] = r
            return
        m = ev[1]
        assert m.src == CN, m
        if m.kind == "WREQ":
            r = self.writes[(m.dst, m.msg_id)]
            assert r["grants"], f"WREQ chunk of {(m.dst, m.msg_id)} without a grant"
            # Chunk k is bytes [k C, min((k + 1) C, len)), seq k, whatever grant it answers.
            k = r["grants"].popleft()
            size, off = chunk_size(r["len"], k), k * CHUNK
            assert m.length == size == len(m.data), (m.length, size)
            assert m.seq == k and m.addr == r["raddr"] + off, ("chunk", k, "got seq", m.seq, "addr", m.addr)
            assert m.data == r["data"][off:off + size], "WREQ chunk data differs from the local buffer"
            r["sent"] += size
            assert m.last == (off + size == r["len"])
            self.mns[m.dst].forward(m)
            if r["sent"] == r["len"]:
                del self.writes[(m.dst, m.msg_id)]
                self.active[m.dst] -= 1
            return
        kind = K_RREQ if m.kind == "RREQ" else K_RMW
        r = self.first_unit(kind, m.dst, m.msg_id, m.length)
        assert m.addr == r["raddr"] and m.seq == 0 and m.last
        if kind == K_RMW:
            assert (m.op, m.arg0, m.arg1) == (r["op"], r["arg0"], r["arg1"])
        if r["fate"] == "drop":
            self.active[m.dst] -= 1
            r["expect_status"] = protocol.STATUS_TIMEOUT
            r["late_unit"] = codec.encode_message(codec.Message(
                "RRES", m.dst, CN, m.msg_id, min(r["len"], CHUNK), last=r["len"] <= CHUNK,
                data=bytes(min(r["len"], CHUNK))))
            return
        r["result"] = self.mns[m.dst].forward(m)

    def first_unit(self, kind, dst, mid, size):
        assert self.issued, "a unit for no submitted request"
        r = self.issued.popleft()
        assert (r["kind"], r["dst"], r["len"]) == (kind, dst, size), (r, kind, dst, size)
        r["id"] = mid
        key = (dst, mid)
        assert key not in self.by_key, f"message id {key} reused while active"
        self.by_key[key] = r
        self.active[dst] += 1
        self.max_active = max(self.max_active, self.active[dst])
        assert self.active[dst] <= X, f"{self.active[dst]} messages active toward {dst}"
        return r

    def rres_from_mn(self, m, blocks):
        r = self.by_key[(m.src, m.msg_id)]
        if m.last:
            self.active[m.src] -= 1
        fate = r["fate"]
        if fate in ("error", "abort"):
            assert m.last, "corrupt only single-chunk responses"
            self.rx_units.append((blocks, fate))
            r["expect_status"] = protocol.STATUS_TIMEOUT
            self.expect["dropped"] += 1
            return
        if fate == "forged":
            # A damaged copy (same header, other bytes, CRC failing) goes first:
            # the compute node writes it into the read's buffer cut-through, the
            # real chunk must then overwrite it before the read completes OK.
            m2 = codec.decode_message(blocks)
            fake = bytes(b ^ 0xA5 for b in m2.data)
            self.rx_units.append((codec.encode_message(replace(m2, data=fake)), "error"))
            self.expect["dropped"] += 1
        if fate == "delay":
            self.held.append((r, blocks))
            if m.last:
                r["expect_status"] = protocol.STATUS_TIMEOUT
            return
        self.rx_units.append((blocks, "good"))

    def grant_cn(self):
        rng = self.rng
        cands = [r for r in self.writes.values() if r["grant_left"] > 0 and len(r["grants"]) < 2]
        if cands and rng.random() < self.p_grant and len(self.rx_grants) < 4:
            r = rng.choice(cands)
            g = min(CHUNK, r["grant_left"])  # as edm_pim_scheduler: full chunks first
            r["grant_left"] -= g
            i = r["n_grants"]
            r["n_grants"] += 1
            if i in r.get("lose", ()):
                self.expect["retries"] += 1  # the node asks again for what it missed
                if self.bogus_after_loss:    # and a grant of no chunk's size: stray
                    assert expected_chunk(r["len"], r["csent"], BOGUS_GRANT) is None
                    self.rx_grants.append((r["dst"], r["id"], BOGUS_GRANT))
                    self.expect["stray"] += 1
                return
            k = expected_chunk(r["len"], r["csent"], g)
            assert k is not None, "the switch model granted no chunk"
            r["csent"].add(k)
            r["grants"].append(k)
            self.rx_grants.append((r["dst"], r["id"], g))

    # ------------------------------------------------------------ the RX clock domain
    async def rx_side(self):
        d, rng = self.dut, self.rng
        while True:
            await FallingEdge(d.rx_clk)
            v = first = last = err = abort = 0
            blk = rng.getrandbits(66)
            pend, self.rx_pending_abort = self.rx_pending_abort, False
            if self.rx_cur is None and self.rx_units and rng.random() < 0.9:
                blocks, fate = self.rx_units.popleft()
                if fate == "error":
                    blocks = list(blocks)
                    j = rng.randrange(1, len(blocks) - 1) if len(blocks) > 2 else 1
                    s, p = blocks[j]
                    blocks[j] = (s, p ^ (1 << rng.randrange(16, 64)))
                if fate == "abort":
                    blocks = blocks[:rng.randrange(1, len(blocks))]
                self.rx_cur = [blocks, 0, fate]
            if self.rx_cur is not None and (self.rx_cur[1] == 0 or rng.random() < 0.9):
                blocks, i, fate = self.rx_cur
                v, blk, first = 1, pack(blocks[i]), int(i == 0)
                self.rx_cur[1] += 1
                if self.rx_cur[1] == len(blocks):
                    self.rx_cur = None
                    if fate == "abort":
                        self.rx_pending_abort = True
                    else:
                        last, err = 1, int(fate == "error")
                        self.stamps["rres_last_in"] = get_sim_time("ps")
            abort = int(pend)
            d.cn_in_valid.value = v
            d.cn_in_block.value = blk
            d.cn_in_first.value = first
            d.cn_in_last.value = last
            d.cn_in_error.value = err
            d.cn_in_abort.value = abort
            if self.rx_grants and rng.random() < 0.8:
                d.cn_grant_dst.value, d.cn_grant_msg_id.value, d.cn_grant_size.value = self.rx_grants.popleft()
                d.cn_grant_valid.value = 1
                self.stamps["grant_in"] = get_sim_time("ps")
            else:
                d.cn_grant_valid.value = 0

    # ------------------------------------------------------------ one clk cycle
    async def step(self):
        d, rng = self.dut, self.rng
        await FallingEdge(d.clk)
        # host: requests
        rv = int(bool(self.to_submit) and rng.random() < 0.7)
        if rv:
            r = self.to_submit[0]
            d.cn_req_kind.value = r["kind"]
            d.cn_req_dst.value = r["dst"]
            d.cn_req_raddr.value = r["raddr"]
            d.cn_req_len.value = r["len"] if r["kind"] != K_RMW else rng.getrandbits(16)
            d.cn_req_laddr.value = r["laddr"]
            d.cn_req_rmw_op.value = r["op"]
            d.cn_req_arg0.value = r["arg0"]
            d.cn_req_arg1.value = r["arg1"]
            if "tag" not in r:
                r["tag"] = self.new_tag()
            d.cn_req_tag.value = r["tag"]
        d.cn_req_valid.value = rv
        cpl_ready = int(rng.random() < self.p_cpl)
        d.cn_cpl_ready.value = cpl_ready
        # local memory
        lrd_ready = int(rng.random() < self.p_lrd)
        d.cn_lmem_rd_ready.value = lrd_ready
        if self.lrd_q and self.lrd_q[0][0] <= self.cycle:
            d.cn_lmem_rd_rsp_valid.value = 1
            d.cn_lmem_rd_rsp_data.value = self.lrd_q.popleft()[1]
        else:
            d.cn_lmem_rd_rsp_valid.value = 0
            d.cn_lmem_rd_rsp_data.value = rng.getrandbits(64)
        lwr_ready = int(rng.random() < self.p_lwr)
        d.cn_lmem_wr_ready.value = lwr_ready
        out_ready = int(rng.random() < self.p_out)
        d.cn_out_ready.value = out_ready
        self.grant_cn()
        for mn in self.mns.values():
            mn.drive()

        await ReadOnly()
        now = get_sim_time("ps")
        if rv and int(d.cn_req_ready.value):
            r = self.to_submit.popleft()
            self.by_tag[r["tag"]] = r
            self.cpl_order[r["dst"]].append(r["tag"])
            if not (r["kind"] == K_WREQ and r["len"] == 0):
                self.issued.append(r)
            self.stamps["req"] = now
        if int(d.cn_lmem_rd_valid.value) and lrd_ready:
            o = int(d.cn_lmem_rd_addr.value) - LBASE
            assert o % 8 == 0 and 0 <= o < LSIZE
            due = max(self.lrd_due + 1, self.cycle + rng.randint(1, 4))
            self.lrd_due = due
            self.lrd_q.append((due, int.from_bytes(self.lmem[o:o + 8], "little")))
        if int(d.cn_lmem_wr_valid.value) and lwr_ready:
            o = int(d.cn_lmem_wr_addr.value) - LBASE
            assert o % 8 == 0 and 0 <= o < LSIZE
            data = int(d.cn_lmem_wr_data.value).to_bytes(8, "little")
            mask = int(d.cn_lmem_wr_mask.value)
            for k in range(8):
                if mask >> k & 1:
                    self.lmem[o + k] = data[k]
            self.stamps["lwr"] = now
        if int(d.cn_out_valid.value) and out_ready:
            blk = unpack(int(d.cn_out_block.value))
            if not self.cn_blocks:
                self.stamps.setdefault("first_out", []).append((now, blk))
            self.cn_blocks.append(blk)
            ev = self.cn_rx.push(blk)
            if int(d.cn_out_last.value):
                assert len(ev) == 1 and ev[0][0] in ("message", "notification"), \
                    f"reference receiver: {ev} {self.cn_rx.counters}"
                self.unit_from_cn(ev[0], self.cn_blocks)
                self.cn_blocks = []
            else:
                assert ev == []
        if int(d.cn_cpl_valid.value) and cpl_ready:
            self.complete(int(d.cn_cpl_tag.value), int(d.cn_cpl_status.value), int(d.cn_cpl_dst.value),
                          int(d.cn_cpl_msg_id.value), int(d.cn_cpl_kind.value))
        for mn in self.mns.values():
            mn.sample()
        self.cycle += 1
        await RisingEdge(d.clk)

    def complete(self, tag, status, dst, mid, kind):
        r = self.by_tag.pop(tag)
        head = self.cpl_order[r["dst"]].popleft()
        assert head == tag, f"completion out of order toward {dst}: tag {tag}, expected {head}"
        assert (dst, kind) == (r["dst"], r["kind"])
        want = r.get("expect_status", protocol.STATUS_OK)
        assert status == want, f"tag {tag} {KIND_NAME[kind]} {r['len']}B: status {status}, expected {want}"
        if "id" in r:
            assert mid == r["id"]
            del self.by_key[(dst, mid)]
        o = r["laddr"] - LBASE
        if status == protocol.STATUS_OK and r["kind"] != K_WREQ:
            got = bytes(self.lmem[o:o + r["len"]])
            assert got == r["result"], f"tag {tag} {KIND_NAME[kind]} of {r['len']} B at {r['raddr']:#x}: " \
                                       f"local buffer differs from the model"
        if status == protocol.STATUS_TIMEOUT:
            self.expect["timeouts"] += 1
            r["timed_out_buf"] = bytes(self.lmem[o:o + r["len"]])
        self.completed.append(r)

    # ------------------------------------------------------------ run
    async def run(self, limit=100_000):
        start = self.cycle
        while self.to_submit or self.by_tag or self.held:
            if self.held and all(h[0]["tag"] not in self.by_tag for h in self.held):
                for _, blocks in self.held:  # late responses after the timeout
                    self.rx_units.append((blocks, "good"))
                    self.expect["late"] += 1
                self.held = []
            await self.step()
            assert self.cycle - start < limit, \
                f"stuck: {len(self.to_submit)} to submit, outstanding {sorted(self.by_tag)[:8]}, " \
                f"writes {[(k, r['grant_left'], len(r['grants'])) for k, r in self.writes.items()]} " \
                f"{self.debug()}"
        for _ in range(200):
            await self.step()

    def debug(self):
        c = self.dut.cn
        names = ["s_valid", "s_done", "s_sent", "s_wbusy", "s_rcvd", "s_len", "s_seq", "ring_used", "rx_open",
                 "bufs_used", "arrived", "cnt_dropped", "cnt_late", "cnt_stray_grants"]
        st = {n: hex(int(getattr(c, n).value)) for n in names}
        mnr = {p: dict(mn.reads) for p, mn in self.mns.items()}
        return f"{st} mn reads {mnr} rx_units {len(self.rx_units)} by_key {[(k, r['tag'], r['len']) for k, r in self.by_key.items()]}"

    def check_final(self):
        d = self.dut
        for port, mn in self.mns.items():
            assert mn.dram == mn.model, f"memory node {port}: DRAM differs from the model"
            assert not mn.reads and not mn.units and mn.cur is None
        assert not self.writes and not self.by_key and not self.rx_units and not self.rx_grants
        got = dict(dropped=int(d.cn_cnt_dropped.value), stray=int(d.cn_cnt_stray_grants.value),
                   timeouts=int(d.cn_cnt_timeouts.value), late=int(d.cn_cnt_late.value),
                   retries=int(d.cn_cnt_retries.value))
        assert got == self.expect, f"counters {got} != expected {self.expect}"
        assert int(d.cn_cnt_rx_overflow.value) == 0
        assert self.cn_rx.counters["corrupted"] == 0 and self.cn_rx.counters["unknown"] == 0
        for r in self.completed:
            if "timed_out_buf" in r:  # nothing arrived after the timeout
                o = r["laddr"] - LBASE
                assert bytes(self.lmem[o:o + r["len"]]) == r["timed_out_buf"], "a late response was written"


async def new_bench(dut, seed, **kw):
    b = Bench(dut, seed, **kw)
    await b.start()
    return b


# ---------------------------------------------------------------- tests


@cocotb.test()
async def random_mix(dut):
    """Random reads (1..1024 B), writes (0..1024 B, several chunks) and RMWs to
    two memory nodes, bursts to one node, stray grants; rx_clk 2.6 ns vs clk 2 ns."""
    b = await new_bench(dut, 11, rx_period=2600)
    for i in range(220):
        b.rand_request(dst=MNS[0] if (i // 20) % 3 == 0 else None)
        if b.rng.random() < 0.03:
            b.rx_grants.append((999, b.rng.randrange(256), 64))  # names no message: stray
            b.expect["stray"] += 1
    await b.run()
    b.check_final()
    assert b.max_active == X, b.max_active
    dut._log.info("random mix: %d requests in %d cycles", len(b.completed), b.cycle)


@cocotb.test()
async def slow_rx_clock(dut):
    """Same traffic with the RX clock slower (3.3 ns) and a tight local memory."""
    b = await new_bench(dut, 12, rx_period=3300, p_lrd=0.5, p_lwr=0.9, p_out=0.6)
    for _ in range(80):
        b.rand_request()
    await b.run()
    b.check_final()


@cocotb.test()
async def cas_rounds(dut):
    """Each round several outstanding CAS(current, own value) on one word (and
    FAAs on its neighbour): exactly one CAS wins per round."""
    b = await new_bench(dut, 13, rx_period=1700)
    lock = RBASE + 512
    mn = b.mns[MNS[1]]
    value = int.from_bytes(mn.model[512:520], "little")
    for rnd in range(20):
        reqs = [b.request(K_RMW, MNS[1], lock, op=protocol.RMW_CAS, arg0=value, arg1=(rnd << 32) | k)
                for k in range(b.rng.randint(2, 5))]
        for _ in range(b.rng.randint(0, 2)):
            b.request(K_RMW, MNS[1], lock + 8, op=protocol.RMW_FAA, arg0=b.rng.randint(1, 99))
        await b.run()
        winners = [r for r in reqs if int.from_bytes(r["result"], "little") == value]
        assert len(winners) == 1, f"round {rnd}: {len(winners)} winners"
        value = winners[0]["arg1"]
        assert int.from_bytes(mn.model[512:520], "little") == value
    b.check_final()


@cocotb.test()
async def timeouts(dut):
    """The switch drops some RREQs / RMWREQs and holds back some responses past
    the timer: those complete with STATUS_TIMEOUT (NULL response, local buffer
    untouched), the others normally; late chunks are discarded and counted."""
    b = await new_bench(dut, 14, rx_period=2300, timeout=2500)
    for _ in range(60):
        fate = b.rng.choice([None, None, "drop", "delay"])
        r = b.rand_request(fate=fate)
        if r["kind"] == K_WREQ:
            r["fate"] = None
        if r["fate"] == "drop":
            b.request(K_RREQ, r["dst"], RBASE, 8)  # a normal one behind it
    await b.run()
    # late responses for the dropped requests too
    for r in b.completed:
        if r["fate"] == "drop":
            b.rx_units.append((r["late_unit"], "good"))
            b.expect["late"] += 1
    for _ in range(300):
        await b.step()
    b.check_final()
    assert b.expect["timeouts"] > 5 and b.expect["late"] > 5, b.expect


@cocotb.test()
async def corrupted_units(dut):
    """RRES units damaged (mem_error) or cut short (mem_abort) on the way to the
    compute node: dropped and counted, the read times out; units of the wrong
    kind and RRES for no message are discarded and counted."""
    b = await new_bench(dut, 15, timeout=800)
    for i in range(40):
        n = b.rng.randint(1, CHUNK)
        fate = b.rng.choice([None, "error", "abort"])
        b.request(K_RREQ, b.rng.choice(MNS), RBASE + b.rng.randrange(RSIZE - n), n, fate=fate)
        if i % 8 == 0:
            b.rx_units.append((codec.encode_message(codec.Message("RREQ", MNS[0], CN, 3, 8, addr=RBASE)), "good"))
            b.expect["dropped"] += 1
            b.rx_units.append((codec.encode_message(codec.Message("RRES", MNS[1], CN, 200 + i, 3, data=b"abc")),
                               "good"))
            b.expect["late"] += 1
    await b.run()
    b.check_final()
    assert b.expect["dropped"] > 10 and b.expect["timeouts"] > 10, b.expect


@cocotb.test()
async def forged_responses(dut):
    """Before some response chunks, a damaged copy with the same header and
    other bytes (mem_error on its /MT/): the compute node writes its words into
    the read's buffer before the verdict (cut-through), drops it on the verdict,
    and the read still completes OK with exactly the model's bytes (checked at
    every completion): no corrupted byte is ever completed as valid."""
    b = await new_bench(dut, 17)
    for _ in range(40):
        n = b.rng.randint(1, 3 * CHUNK)
        b.request(K_RREQ, b.rng.choice(MNS), RBASE + b.rng.randrange(RSIZE - n), n,
                  fate=b.rng.choice([None, "forged"]))
    await b.run()
    b.check_final()
    assert b.expect["dropped"] > 20, b.expect


@cocotb.test()
async def lost_grants(dut):
    """The switch loses a write's first grant (C + 44 bytes: the next grant is
    the 44-byte last chunk's) or a middle one (3 C + 44 bytes), and sends a
    grant of a size no chunk has: each grant is answered with the chunk of its
    size, seq and offset fixed by the message (chunk k = bytes [k C, (k + 1) C)),
    the odd grant is stray, the /N/ re-sent after cfg_retry << 2 quiet cycles
    asks for the missing chunk only, and every byte lands in DRAM (check_final)."""
    b = await new_bench(dut, 18, p_grant=1.0, retry=600)
    b.bogus_after_loss = True
    for i in range(12):
        n, lose = (CHUNK + 44, 0) if i % 2 == 0 else (3 * CHUNK + 44, 1 + i % 3)
        r = b.request(K_WREQ, MNS[i % 2], RBASE + b.rng.randrange(RSIZE - n), n)
        r["lose"] = {lose}   # indices of its grants the switch loses
        if i % 4 == 1:
            b.rand_request()
    await b.run()
    b.check_final()
    assert b.expect["retries"] == 12 and b.expect["stray"] == 12, b.expect


@cocotb.test()
async def fail_all_sends_nothing_held(dut):
    """fail_all (a dead plane, edm_mirror's eng_fail_all): with the link
    stalled (out_ready low), writes, reads and RMWs queued and issued; fail_all
    for 50 cycles takes no request and fails every one held (STATUS_TIMEOUT,
    cnt_failed_all) and
    takes them off the queues: once the link is back, not one block leaves
    and the DRAM is untouched; then the engine works as before."""
    b = await new_bench(dut, 19, p_out=0.0, p_grant=1.0, timeout=0, retry=300)
    for i in range(8):
        b.rand_request(dst=MNS[i % 2])
    for _ in range(300):   # the table and request FIFO fill (the job queue is full), nothing sent
        await b.step()
    held = [r for r in b.by_tag.values() if not (r["kind"] == K_WREQ and r["len"] == 0)]
    assert len(held) >= 4 and b.to_submit and not b.cn_blocks, (len(held), len(b.to_submit))
    waiting = list(b.to_submit)   # offered under fail_all, not taken; sent once it is low
    for r in held:
        r["expect_status"] = protocol.STATUS_TIMEOUT
    dram = {p: bytes(mn.dram) for p, mn in b.mns.items()}
    b.dut.cn_fail_all.value = 1
    for _ in range(50):
        await b.step()
    b.dut.cn_fail_all.value = 0
    assert not b.by_tag, f"not completed under fail_all: {sorted(b.by_tag)}"
    assert len(b.to_submit) == len(waiting), "a request taken under fail_all"
    b.to_submit.clear()
    assert int(dut.cn_cnt_failed_all.value) == len(held)
    b.expect["timeouts"] -= len(held)   # failed by fail_all, not by the read timer (cnt_timeouts)
    b.p_out = 1.0
    for _ in range(2000):   # the /N/ re-send timer (300, quiet x4) has long passed
        await b.step()
    assert not b.cn_blocks and "first_out" not in b.stamps, "a failed request's block left"
    assert {p: bytes(mn.dram) for p, mn in b.mns.items()} == dram
    b.issued.clear()
    b.to_submit.extend(waiting)
    for i in range(6):   # and it works as before
        b.rand_request(dst=MNS[i % 2])
    await b.run()
    b.check_final()


@cocotb.test()
async def latency(dut):
    """Idle pipeline latencies with every port ready (same clock period on both
    sides): request -> first block out; /G/ in -> first WREQ block out; last RRES
    block in -> local write of the last word."""
    b = await new_bench(dut, 16, p_grant=1.0, p_lrd=1.0, p_lwr=1.0, p_cpl=1.0, p_out=1.0)
    period = 2000
    res = {}
    b.request(K_RREQ, MNS[0], RBASE + 64, 64)
    await b.run()
    res["req_to_rreq_out"] = (b.stamps["first_out"][0][0] - b.stamps["req"]) // period
    res["rres_last_in_to_lmem_write"] = (b.stamps["lwr"] - b.stamps["rres_last_in"]) // period
    b.stamps = {}
    b.request(K_WREQ, MNS[0], RBASE + 64, 64)
    await b.run()
    outs = b.stamps["first_out"]
    res["req_to_n_out"] = (outs[0][0] - b.stamps["req"]) // period
    res["grant_in_to_data_out"] = (outs[1][0] - b.stamps["grant_in"]) // period
    b.check_final()
    dut._log.info("LATENCY %s", res)
    assert res["req_to_rreq_out"] <= 4 and res["req_to_n_out"] <= 4, res

"""cocotb: edm_l2_stage (the switch's L2 stage) against a Python model, every cycle.

The model keeps each ingress store's occupancy, the descriptor FIFOs, the MAC
table (its replacement rule), the egress writers and the queues' occupancy,
and decides as the stage's rules say (docs/hardware.md "The frame path"):
each cycle the RTL's decision (fwd_valid, fwd_port, fwd_want, fwd_mask) must
equal the model's; every block an egress hands out must be the next of the
frames the model admitted to it (idles after each /T/ for a 12-byte gap); at the end every
counter equals the model's count.

Tests
  * random_frames: 4 ports, 10 stations (more than the table's 4 entries, one
    moving ports halfway), unicast, broadcast and unknown destinations,
    frames of 64-1518 B starting in lane 0 or 4, random gaps and egress
    back-pressure; some streams carry faults: a frame cut by another start or
    an error block, data outside a frame, a runt, ordered sets between frames.
  * overfill: egresses stalled while every port floods: the queues and then
    the ingress stores fill, and the drop counters must match the model exactly.
"""

from __future__ import annotations

from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

IDLE = (protocol.SYNC_CTRL, protocol.BT_C8)
START_TYPES = (protocol.BT_S0, protocol.BT_C4_S4, protocol.BT_O0_S4)
TERM_TYPES = (protocol.BT_T0, protocol.BT_T1, protocol.BT_T2, protocol.BT_T3,
              protocol.BT_T4, protocol.BT_T5, protocol.BT_T6, protocol.BT_T7)
OS_TYPES = (protocol.BT_O0_O4, protocol.BT_C4_O4, protocol.BT_O0_C4, protocol.BT_O0_S4)


def pack(block) -> int:
    return (block[1] << 2) | block[0]


def unpack(v: int):
    return (v & 3, v >> 2)


def field(bus: int, k: int, w: int) -> int:
    return (bus >> (k * w)) & ((1 << w) - 1)


def frame_blocks(frame: bytes, lane4: bool) -> list:
    """The 66-bit blocks of a frame (its bytes after the SFD), /S/ in lane 0 or 4 (Clause 49)."""
    lanes = [(True, protocol.XGMII_IDLE)] * (4 if lane4 else 0) + [(True, protocol.XGMII_START)]
    lanes += [(False, 0x55)] * 6 + [(False, 0xD5)] + [(False, b) for b in frame] + [(True, protocol.XGMII_TERM)]
    while len(lanes) % 8:
        lanes.append((True, protocol.XGMII_IDLE))
    words = []
    for k in range(0, len(lanes), 8):
        data = sum(b << (8 * i) for i, (_, b) in enumerate(lanes[k:k + 8]))
        ctrl = sum(int(c) << i for i, (c, _) in enumerate(lanes[k:k + 8]))
        words.append((data, ctrl))
    return [tuple(b) for b in codec.xgmii_encode(words)]


def gap_blocks(term) -> int:
    """Idle blocks after a frame ending in block `term`: with the /T/ block's
    own idles, at least 12 bytes of gap."""
    idles_in_term = 7 - TERM_TYPES.index(term[1] & 0xFF)
    return 1 if idles_in_term + 8 >= 12 else 2


def mac(k: int) -> bytes:
    return bytes([0x02, 0, 0, 0, 0, k])


def mac_int(b: bytes) -> int:
    return int.from_bytes(b, "little")


class Model:
    """edm_l2_stage's rules, one call of step() per clock edge."""

    def __init__(self, n, table_size, ib_log2, fd_log2, eq_log2):
        self.n, self.table_size = n, table_size
        self.ib_cap, self.fd_cap, self.eq_cap = 1 << ib_log2, 1 << fd_log2, 1 << eq_log2
        self.stored = [0] * n          # blocks in each ingress store (wp - rp), committed or not
        self.frame = [None] * n        # the open frame: dict(blocks, ovf, lane4, data)
        self.desc = [deque() for _ in range(n)]
        self.table: list = []          # [mac, port], in learning order for replacement
        self.oldest = 0
        self.copy_left = [0] * n       # blocks the copy engine still reads
        self.owned = [None] * n        # egress -> ingress writing
        self.occupancy = [0] * n       # egress queue blocks
        self.expected = [deque() for _ in range(n)]
        self.next = 0
        self.cnt = {k: [0] * n for k in ("rx_frames", "rx_dropped", "rx_bad", "ordered_sets", "filtered",
                                         "tx_frames", "tx_dropped")}

    def want(self, i):
        ln, dst, src, blocks = self.desc[i][0]
        hit = [p for m, p in self.table if m == dst]
        if dst & 1 or not hit:
            return [e != i for e in range(self.n)]
        return [e == hit[0] and e != i for e in range(self.n)]

    def decide(self):
        for k in range(self.n):
            i = (self.next + k) % self.n
            if self.desc[i] and self.copy_left[i] == 0:
                w = self.want(i)
                if not any(w[e] and self.owned[e] is not None for e in range(self.n)):
                    ln = self.desc[i][0][0]
                    mask = [w[e] and self.occupancy[e] + ln <= self.eq_cap for e in range(self.n)]
                    return i, w, mask
        return None

    def step(self, blocks, pops, decision):
        """One edge: blocks[i] the block ingress i takes (or None), pops[e] the
        egress blocks handed out, decision the model's own of this cycle."""
        n = self.n
        reads = [self.copy_left[i] > 0 for i in range(n)]
        for i in range(n):
            if reads[i]:
                self.copy_left[i] -= 1
                if self.copy_left[i] == 0:
                    for e in range(n):
                        if self.owned[e] == i:
                            self.owned[e] = None
        for e in range(n):
            self.occupancy[e] -= pops[e]
        desc_full = [len(self.desc[i]) == self.fd_cap for i in range(n)]
        if decision is not None:
            i, w, mask = decision
            ln, dst, src, blocks_ = self.desc[i].popleft()
            self.next = (i + 1) % n
            if not any(w):
                self.cnt["filtered"][i] += 1
            for e in range(n):
                if w[e] and not mask[e]:
                    self.cnt["tx_dropped"][e] += 1
                if mask[e]:
                    self.cnt["tx_frames"][e] += 1
                    self.owned[e] = i
                    self.occupancy[e] += ln
                    self.expected[e].extend(blocks_ + [IDLE] * gap_blocks(blocks_[-1]))
            if any(mask):
                self.copy_left[i] = ln
            else:
                self.stored[i] -= ln
            if not src & 1:
                for entry in self.table:
                    if entry[0] == src:
                        entry[1] = i
                        break
                else:
                    if len(self.table) < self.table_size:
                        self.table.append([src, i])
                    else:
                        self.table[self.oldest] = [src, i]
                        self.oldest = (self.oldest + 1) % self.table_size
        for i in range(n):
            room_before = self.stored[i] != self.ib_cap
            if reads[i]:
                self.stored[i] -= 1
            b = blocks[i]
            if b is not None:
                self.ingress(i, b, room_before, desc_full[i])

    def ingress(self, i, b, room, desc_full):
        sync, p = b
        ty = p & 0xFF
        ctrl = sync == protocol.SYNC_CTRL
        f = self.frame[i]
        if ctrl and ty in OS_TYPES:
            self.cnt["ordered_sets"][i] += 1
        if ctrl and ty in START_TYPES:
            if f is not None:
                self.cnt["rx_bad"][i] += 1
                self.stored[i] -= len(f["blocks"])
            if ty == protocol.BT_O0_S4:   # idles in place of the ordered set
                b = (sync, (p & ~((1 << 40) - 1)) | protocol.BT_C4_S4)
            f = self.frame[i] = dict(blocks=[], ovf=False, lane4=ty != protocol.BT_S0, data=[])
            if self.stored[i] != self.ib_cap:
                f["blocks"].append(b)
                self.stored[i] += 1
            else:
                f["ovf"] = True
        elif f is not None and (sync == protocol.SYNC_DATA or (ctrl and ty in TERM_TYPES)):
            if room and not f["ovf"]:
                f["blocks"].append(b)
                self.stored[i] += 1
            else:
                f["ovf"] = True
            if sync == protocol.SYNC_DATA and len(f["data"]) < 2:
                f["data"].append(p)
            if ctrl and ty in TERM_TYPES:
                self.frame[i] = None
                if len(f["data"]) < 2:
                    self.cnt["rx_bad"][i] += 1
                    self.stored[i] -= len(f["blocks"])
                elif f["ovf"] or not room or desc_full:
                    self.cnt["rx_dropped"][i] += 1
                    self.stored[i] -= len(f["blocks"])
                else:
                    raw = b"".join(d.to_bytes(8, "little") for d in f["data"])
                    hdr = raw[4:16] if f["lane4"] else raw[:12]
                    self.desc[i].append((len(f["blocks"]), mac_int(hdr[:6]), mac_int(hdr[6:12]), f["blocks"]))
                    self.cnt["rx_frames"][i] += 1
        elif f is not None:
            self.frame[i] = None
            self.stored[i] -= len(f["blocks"])
            self.cnt["rx_bad"][i] += 1
        elif sync == protocol.SYNC_DATA or (ctrl and ty in TERM_TYPES):
            self.cnt["rx_bad"][i] += 1
        elif ctrl and ty == protocol.BT_C8 and p != protocol.BT_C8:
            self.cnt["rx_bad"][i] += 1


PARAMS = dict(N=4, TABLE_SIZE=4, IB_LOG2=8, FD_LOG2=3, EQ_LOG2=9)


def stream(rng, port, stations, sizes, faults, count=12, gaps=(0, 0, 1, 5, 30)):
    """An ingress's blocks (None: no block that cycle)."""
    out = []
    for _ in range(count):
        for _ in range(rng.choice(gaps)):
            out.append(None)
        me = rng.choice(stations[port])
        r = rng.random()
        dst = b"\xff" * 6 if r < 0.15 else (bytes([0x03, 0, 0, 0, 0, 99]) if r < 0.2 else mac(rng.randrange(12)))
        size = rng.choice(sizes)
        frame = dst + mac(me) + bytes(rng.getrandbits(8) for _ in range(size - 12))
        blocks = frame_blocks(frame, rng.random() < 0.3)
        if faults and rng.random() < 0.3:
            kind = rng.choice(("cut_start", "error", "stray", "runt", "oset", "oset_start"))
            if kind == "cut_start":
                blocks = blocks[:rng.randrange(1, len(blocks))] + blocks
            elif kind == "error":
                k = rng.randrange(1, len(blocks) - 1)
                blocks = blocks[:k] + [(protocol.SYNC_CTRL, 0x1E1E1E1E1E1E1E00 | protocol.BT_C8)]
            elif kind == "stray":
                blocks = [(protocol.SYNC_DATA, rng.getrandbits(64))] + blocks
            elif kind == "runt":
                blocks = frame_blocks(frame[:6], False)
            elif kind == "oset":
                blocks = [(protocol.SYNC_CTRL, (rng.getrandbits(56) << 8) | protocol.BT_O0_O4)] + blocks
            else:   # a lane-4 start behind an ordered set (O0_S4): the stage keeps the frame, idles before it
                blocks = frame_blocks(frame, True)
                sync, p = blocks[0]
                blocks[0] = (sync, (p >> 40 << 40) | (rng.getrandbits(24) << 8) | protocol.BT_O0_S4)
        out.extend(blocks)
    return out


async def run(dut, rng, streams, p_ready, model, limit):
    n = model.n
    pos = [0] * n
    cycle = 0
    while cycle < limit:
        cur = [streams[i][pos[i]] if pos[i] < len(streams[i]) else None for i in range(n)]
        dut.in_valid.value = sum(1 << i for i in range(n) if cur[i] is not None)
        dut.in_block.value = sum(pack(cur[i]) << (66 * i) for i in range(n) if cur[i] is not None)
        ready = [rng.random() < p_ready(cycle) for _ in range(n)]
        dut.out_ready.value = sum(1 << e for e in range(n) if ready[e])
        await ReadOnly()
        mine = model.decide()
        got = None
        if int(dut.fwd_valid.value):
            got = (int(dut.fwd_port.value), [bool(int(dut.fwd_want.value) >> e & 1) for e in range(n)],
                   [bool(int(dut.fwd_mask.value) >> e & 1) for e in range(n)])
        assert got == mine, (f"cycle {cycle}: decision {got}, model {mine}; model frames waiting "
                             f"{[len(q) for q in model.desc]}, copying {model.copy_left}, writers {model.owned}; "
                             f"RTL d_valid {dut.d_valid.value} c_busy {dut.c_busy.value} q_owned {dut.q_owned.value}")
        ov, ob = int(dut.out_valid.value), int(dut.out_block.value)
        pops = [0] * n
        for e in range(n):
            if ready[e] and ov >> e & 1:
                blk = unpack(field(ob, e, 66))
                assert model.expected[e], f"cycle {cycle}: egress {e} sends {blk} with nothing expected"
                want = model.expected[e].popleft()
                assert blk == want, f"cycle {cycle}: egress {e} sends {blk}, model {want}"
                pops[e] = int(blk != IDLE)
        model.step(cur, pops, mine)
        for i in range(n):
            pos[i] += 1
        await RisingEdge(dut.clk)
        cycle += 1
        if all(p >= len(s) for p, s in zip(pos, streams)) and not any(model.expected) and not any(model.desc) \
                and not any(model.copy_left) and p_ready(cycle) > 0:
            break
    assert cycle < limit, "the stage did not drain"
    await ReadOnly()
    for k, v in model.cnt.items():
        got = [field(int(getattr(dut, f"cnt_{k}").value), i, 16) for i in range(n)]
        assert got == v, f"cnt_{k} = {got}, model {v}"
    dut._log.info("counters: %s (%d cycles)", model.cnt, cycle)
    return model.cnt


def new_model():
    return Model(PARAMS["N"], PARAMS["TABLE_SIZE"], PARAMS["IB_LOG2"], PARAMS["FD_LOG2"], PARAMS["EQ_LOG2"])


@cocotb.test()
async def random_frames(dut):
    rng = seeded_random("l2_random")
    await clock_and_reset(dut, in_valid=0, out_ready=0)
    n = PARAMS["N"]
    stations = [[p, p + 4, 8] if p == 0 else [p, p + 4] for p in range(n)]
    sizes = (60, 64, 64, 65, 100, 200, 300, 700, 1514)
    streams = [stream(rng, p, stations, sizes, faults=p % 2 == 1, count=40, gaps=(0, 5, 20, 80, 200))
               for p in range(n)]
    # Station 8 moves from port 0 to port 3 for the second half.
    stations = [[p, p + 4] for p in range(n)]
    stations[3].append(8)
    streams = [a + b for a, b in zip(streams, (stream(rng, p, stations, (64, 300), faults=False) for p in range(n)))]
    cnt = await run(dut, rng, streams, lambda c: 0.7, new_model(), 200000)
    assert sum(cnt["tx_frames"]) > 200 and sum(cnt["rx_bad"]) > 5 and sum(cnt["filtered"]) > 0, cnt
    assert sum(cnt["ordered_sets"]) > 2 and sum(cnt["rx_dropped"]) < sum(cnt["rx_frames"]) // 4, cnt


@cocotb.test()
async def overfill(dut):
    rng = seeded_random("l2_overfill")
    await clock_and_reset(dut, in_valid=0, out_ready=0)
    n = PARAMS["N"]
    stations = [[p] for p in range(n)]
    streams = [stream(rng, p, stations, (500, 1514), faults=False) for p in range(n)]
    cnt = await run(dut, rng, streams, lambda c: 0.0 if c < 6000 else 1.0, new_model(), 100000)
    assert sum(cnt["tx_dropped"]) > 0 and sum(cnt["rx_dropped"]) > 0, cnt

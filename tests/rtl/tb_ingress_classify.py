"""cocotb: edm_ingress_classify (the switch's ingress classifier, stages 0 and 1)
against a Python model, every output of every port every cycle.

The model takes each port's blocks in order: the control sequence of
docs/protocol.md §5a (an /N/ is good if its CRC-8 checks for the number
expected next; two rejected ones with consecutive numbers resynchronise; a
data block that is the /N/ expected next is a flipped sync header), the
block's class (data, /MS/, /MT/, standard Ethernet, unknown; an /A/ is
numbered with the /N/, a good one naming another port is to forward), an /MS/'s kind
and destination, and the notification the block makes (a good /N/ to another
port with some bytes, or a well-formed RREQ/RMWREQ's implicit one when its
pair's store has room: rq_room_n, random every cycle).

Test
  * random_blocks: 4 ports, 6 000 cycles each: /N/ and /A/ from the reference
    codec's sender (to every port, sizes 0 included), some with a flipped CRC bit, some
    lost (the sequence resynchronises), some with their sync header flipped;
    memory units of every kind (destinations beyond N included); Ethernet
    frames, ordered sets, idles and random blocks of any sync header.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol as P
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

N = 4
STD_TYPES = (P.BT_C8, P.BT_C4_O4, P.BT_C4_S4, P.BT_O0_S4, P.BT_O0_O4, P.BT_S0, P.BT_O0_C4,
             P.BT_T0, P.BT_T1, P.BT_T2, P.BT_T3, P.BT_T4, P.BT_T5, P.BT_T6, P.BT_T7)
OUTPUTS = ("r_data", "r_nbad", "r_ngood", "r_a_valid", "r_ms", "r_mt", "r_std", "r_unk", "r_rd", "r_wr",
           "r_n_valid")


def bits(p: int, lsb: int, width: int) -> int:
    return (p >> lsb) & ((1 << width) - 1)


class Port:
    """One uplink's classification and control sequence."""

    def __init__(self, i: int):
        self.i, self.expected, self.rej_valid, self.rej_succ = i, 0, False, 1

    def classify(self, block, room: int) -> dict:
        sync, p = block
        i = self.i
        ctrl = sync == P.SYNC_CTRL
        edm = ctrl and p & 0xFF == P.BT_EDM
        sub = (p >> 8) & 0xFF
        ms, mt = edm and sub == P.SUB_MS, edm and sub == P.SUB_MT
        # /N/ and /A/ share the uplink's numbers (docs/protocol.md §4b).
        nany = edm and sub in (P.SUB_N, P.SUB_A)
        nseen = nany and bits(p, 50, 6) == 0
        implied = codec.implied_seq((P.SYNC_CTRL, p))
        ngood = nseen and implied == self.expected
        ncand = sync == P.SYNC_DATA and p & 0xFF == P.BT_EDM and sub in (P.SUB_N, P.SUB_A) and bits(p, 50, 6) == 0
        cid = ncand and implied == self.expected
        if nany:
            resync = nseen and not ngood and self.rej_valid and implied == self.rej_succ
            self.rej_valid = nseen and not ngood and not resync
            self.rej_succ = (implied + 1) % 256
            if ngood or resync:
                self.expected = (implied + 1) % 256
        idle = ctrl and p == P.BT_C8
        std = ctrl and not idle and p & 0xFF in STD_TYPES
        kind = bits(p, 16 + P.HDR_KIND_LSB, 3)
        hdst = bits(p, 16 + P.HDR_DST_LSB, P.HDR_DST_W)
        hlen = bits(p, 16 + P.HDR_LEN_LSB, 16)
        rd = kind in (P.KIND_RREQ, P.KIND_RMWREQ)
        well_formed = hlen == P.RMW_OPERAND_BYTES if kind == P.KIND_RMWREQ else hlen != 0
        rd_pair = sum(1 << m for m in range(N) if ms and rd and hdst == m and m != i and well_formed)
        ndst, nsize = bits(p, P.NG_DST_LSB, P.NG_DST_W), bits(p, P.NG_SIZE_LSB, P.NG_SIZE_W)
        nv = ngood and sub == P.SUB_N and ndst < N and ndst != i and nsize != 0
        av = ngood and sub == P.SUB_A and ndst < N and ndst != i
        pw = (N - 1).bit_length()
        if ms:
            fields = (hdst % (1 << pw), i, bits(p, 16 + P.HDR_ID_LSB, P.NG_ID_W),
                      P.RMW_RESULT_BYTES if kind == P.KIND_RMWREQ else hlen)
        else:
            fields = (i, ndst % (1 << pw), bits(p, P.NG_ID_LSB, P.NG_ID_W), nsize)
        return dict(b1=block[1] << 2 | block[0], r_data=sync == P.SYNC_DATA and not cid,
                    r_nbad=(nany and not ngood) or cid, r_ngood=ngood, r_a_valid=av, r_ms=ms, r_mt=mt, r_std=std,
                    r_unk=sync != P.SYNC_DATA and not nany and not ms and not mt and not idle and not std,
                    r_rd=rd, r_wr=kind in (P.KIND_WREQ, P.KIND_RRES),
                    r_hdst_oh=sum(1 << m for m in range(N) if hdst == m),
                    r_n_valid=nv or (rd_pair & room) != 0, r_rd_room=rd_pair & room, fields=fields)


def stream(rng, i: int, length: int) -> list:
    tx = codec.ControlTx()
    out = []
    while len(out) < length:
        x = rng.random()
        if x < 0.3:
            if rng.random() < 0.3:   # an /A/ (a memory node's), numbered with the /N/
                blk = tx.ack(rng.randrange(N + 2), rng.randrange(256), rng.getrandbits(16))
            else:
                blk = tx.notification(rng.randrange(N + 2), rng.randrange(256), rng.choice((0, 8, 64, 4096)))
            y = rng.random()
            if y < 0.08:
                continue                                            # lost: the sequence moves on
            if y < 0.16:
                blk = (blk[0], blk[1] ^ 1 << (56 + rng.randrange(8)))  # CRC-8 hit
            elif y < 0.22:
                blk = (P.SYNC_DATA, blk[1])                         # sync header flipped
            out.append(blk)
        elif x < 0.6:
            kind = rng.choice(("RREQ", "RMWREQ", "WREQ", "RRES"))
            size = rng.choice((0, 8, 64, 100)) if kind != "RMWREQ" else rng.choice((8, 8, 16))
            data = bytes(rng.getrandbits(8) for _ in range(size)) if kind in ("WREQ", "RRES") else b""
            m = codec.Message(kind, i, rng.randrange(N + 2), rng.randrange(256), size, addr=rng.getrandbits(64),
                              data=data)
            try:
                out += codec.encode_message(m)
            except codec.CodecError:   # a size the codec refuses to encode: its /MS/ alone
                out.append((P.SYNC_CTRL, P.BT_EDM | P.SUB_MS << 8 | rng.getrandbits(48) << 16))
        elif x < 0.7:
            out += codec.encode_frame(bytes(rng.getrandbits(8) for _ in range(rng.randrange(60, 200))))
        elif x < 0.8:
            out.append((P.SYNC_CTRL, P.BT_C8))
        elif x < 0.85:
            out.append((P.SYNC_CTRL, rng.choice((P.BT_O0_O4, P.BT_O0_C4, P.BT_C4_O4)) | rng.getrandbits(56) << 8))
        else:
            out.append((rng.randrange(4), rng.getrandbits(64)))
    return out[:length]


@cocotb.test()
async def random_blocks(dut):
    rng = seeded_random("ingress_classify")
    await clock_and_reset(dut, in_block=0, rq_room_n=0)
    cycles = 6000
    streams = [stream(rng, i, cycles) for i in range(N)]
    ports = [Port(i) for i in range(N)]
    pending = None
    seen = dict.fromkeys(OUTPUTS, 0)
    for t in range(cycles + 1):
        blocks = [s[t] for s in streams] if t < cycles else [(P.SYNC_CTRL, P.BT_C8)] * N
        room = rng.getrandbits(N * N)
        dut.in_block.value = sum((b[1] << 2 | b[0]) << (66 * i) for i, b in enumerate(blocks))
        dut.rq_room_n.value = room
        await ReadOnly()
        if pending is not None:
            for i, want in enumerate(pending):
                for name in OUTPUTS:
                    got = int(getattr(dut, name).value) >> i & 1
                    assert got == int(want[name]), f"cycle {t}, port {i}: {name} {got}, model {int(want[name])}"
                    seen[name] += got
                for name, w in (("b1", 66), ("r_hdst_oh", N), ("r_rd_room", N)):
                    got = (int(getattr(dut, name).value) >> (w * i)) & ((1 << w) - 1)
                    assert got == want[name], f"cycle {t}, port {i}: {name} {got:#x}, model {want[name]:#x}"
                if want["r_n_valid"] or want["r_a_valid"]:
                    pw = (N - 1).bit_length()
                    got = tuple((int(getattr(dut, name).value) >> (w * i)) & ((1 << w) - 1) for name, w in
                                (("r_n_src", pw), ("r_n_dst", pw), ("r_n_id", P.NG_ID_W), ("r_n_size", P.NG_SIZE_W)))
                    assert got == want["fields"], f"cycle {t}, port {i}: notification {got}, model {want['fields']}"
        pending = [ports[i].classify(blocks[i], room >> (N * i) & ((1 << N) - 1)) for i in range(N)]
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    dut._log.info("outputs seen set: %s", seen)
    assert all(v > 20 for v in seen.values()), seen

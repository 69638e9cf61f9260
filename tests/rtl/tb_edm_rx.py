"""cocotb: edm_rx, the RX demultiplexer, against the reference receiver
(`edm.protocol.codec.RxDemux`), block by block.

Every test builds a line the way edm_tx multiplexes it (memory units inserted
before any frame block, idles replaced by units, idle / /N/ /G/ /A/ fillers inside
units), drives it with random in_valid gaps, and checks after EVERY block:
  * the memory event it completes (good unit on mem_last && !mem_error, /N/ on
    notif_*, /G/ on grant_*, /A/ on ack_*) equals the reference's event for
    that block, so events are byte-exact, in order and one cycle after their
    last block;
  * all nine RTL counters equal the reference's counters;
  * the mem_* port is well formed (mem_first .. mem_last or mem_abort).
At the end the decoder-side stream (out_valid blocks) is run through a fresh
reference receiver: its frames equal the reference's frames (so the RTL
forwarded exactly the frame-path blocks, in order), and it sees no EDM block.
Clean lines additionally check the exact forwarding set and latency and that
every frame and memory event sent arrives; corrupted lines check that no
corrupted unit is ever delivered as good, each is counted, and later traffic
still flows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

IDLE = (protocol.SYNC_CTRL, protocol.BT_C8)
COUNTERS = {
    "cnt_msg_ok": "messages_ok",
    "cnt_corrupted": "corrupted",
    "cnt_unknown": "unknown",
    "cnt_notif_ok": "notifications_ok",
    "cnt_grant_ok": "grants_ok",
    "cnt_ack_ok": "acks_ok",
    "cnt_bad_sync": "bad_sync",
    "cnt_ctl_missed": "control_missed",
    "cnt_ctl_in_data": "control_in_data",
}
MEMORY_EVENTS = ("message", "notification", "grant", "ack")


def pack(block):
    return block[0] | (block[1] << 2)


def unpack(v):
    return (v & 3, v >> 2)


def flip(block, bit):
    """The block with bit `bit` of {payload, sync} inverted (0, 1: sync)."""
    return unpack(pack(block) ^ (1 << bit))


def crc8(data: bytes, init: int = 0) -> int:
    crc = init
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ protocol.CRC8_POLY if crc & 0x80 else crc << 1) & 0xFF
    return crc


def control_event(block):
    kind, dst, msg_id, size = codec.decode_control(block, codec.implied_seq(block))
    return ({"N": "notification", "G": "grant", "A": "ack"}[kind], dst, msg_id, size)


# ---------------------------------------------------------------- traffic


def rand_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def rand_message(rng, msg_id, max_len=300):
    kind = rng.choices(["WREQ", "RRES", "RREQ", "RMWREQ"], [4, 4, 1, 1])[0]
    common = dict(src=rng.randrange(1024), dst=rng.randrange(1024), msg_id=msg_id % 256)
    if kind == "WREQ":
        n = rng.randrange(1, max_len + 1)
        return codec.Message("WREQ", length=n, addr=rng.getrandbits(64), seq=rng.randrange(4096),
                             last=rng.random() < 0.5, data=rand_bytes(rng, n), **common)
    if kind == "RRES":
        n = rng.choice([0, rng.randrange(1, max_len + 1)])
        return codec.Message("RRES", length=n, seq=rng.randrange(4096), last=rng.random() < 0.5,
                             op=rng.randrange(3), data=rand_bytes(rng, n), **common)
    if kind == "RREQ":
        return codec.Message("RREQ", length=rng.randrange(1, 65536), addr=rng.getrandbits(64), **common)
    return codec.Message("RMWREQ", length=8, addr=rng.getrandbits(64), op=rng.randrange(1, 4),
                         arg0=rng.getrandbits(64), arg1=rng.getrandbits(64), **common)


def rand_control(rng, msg_id, tx):
    """An /N/, /G/ or /A/, the next control block of the link that `tx` numbers."""
    enc = rng.choice([tx.notification, tx.grant, tx.ack])
    return enc(rng.randrange(1024), msg_id % 256, rng.randrange(65536))


def rand_unit(rng, i, max_len=300):
    """(blocks, event) of one memory unit: a message (70 %), or None for an
    /N/ or a /G/ (numbered when it takes its place on the line)."""
    if rng.random() < 0.7:
        m = rand_message(rng, i, max_len)
        return codec.encode_message(m), ("message", m)
    return None, i


def rand_frame(rng):
    n = rng.choice([64, 64, 65, 71, 128, 333, 600, 1023, 1500, 1518, rng.randrange(64, 1519)])
    if rng.random() < 0.04:
        n = 9000
    return rand_bytes(rng, n)


@dataclass
class Line:
    blocks: list = field(default_factory=list)
    fwd: list = field(default_factory=list)        # clean line: block goes to the decoder
    events: list = field(default_factory=list)     # (index of last block, event, corrupted)
    bad_spans: list = field(default_factory=list)  # (first, last) block of each corrupted unit
    frames: list = field(default_factory=list)     # frame bytes, in order

    def add(self, block, fwd=False):
        self.blocks.append(block)
        self.fwd.append(fwd)


def build_line(rng, n_frames, n_units, *, preempt=0.05, filler=0.1, replace_idle=0.5,
               corrupt=0.0, max_len=300, idle_gaps=(2, 4), tx=None):
    """A line as edm_tx makes it: memory units before any frame block or in
    place of an idle, never split, with idle / /N/ / /G/ fillers inside; its
    control blocks numbered in line order by `tx` (a fresh link if None). With
    `corrupt` > 0 that fraction of units (not their fillers) gets 1 to 3 bit
    errors anywhere in its blocks (sync headers included)."""
    line = Line()
    tx = tx or codec.ControlTx()
    serial = iter(range(1 << 30))
    units = [rand_unit(rng, next(serial), max_len) for _ in range(n_units)]

    def put_unit(blocks, event):
        if blocks is None:  # an /N/ or /G/: the link's next number
            blocks = [rand_control(rng, event, tx)]
            event = control_event(blocks[0])
        bad = rng.random() < corrupt
        if bad:
            blocks = list(blocks)
            hits = {(rng.randrange(len(blocks)), rng.randrange(66)) for _ in range(rng.randint(1, 3))}
            for j, bit in hits:
                blocks[j] = flip(blocks[j], bit)
        first = len(line.blocks)
        for j, b in enumerate(blocks):
            while j > 0 and rng.random() < filler:
                if rng.random() < 0.5:
                    line.add(IDLE)
                else:
                    f = rand_control(rng, next(serial), tx)
                    line.add(f)
                    line.events.append((len(line.blocks) - 1, control_event(f), False))
            line.add(b)
        line.events.append((len(line.blocks) - 1, event, bad))
        if bad:
            line.bad_spans.append((first, len(line.blocks) - 1))

    enc = []
    for _ in range(n_frames):
        data = rand_frame(rng)
        line.frames.append(data)
        enc += codec.encode_frame(data) + [IDLE] * rng.randrange(*idle_gaps)
    for b in enc:
        while units and rng.random() < preempt:
            put_unit(*units.pop(0))
        if b == IDLE and units and rng.random() < replace_idle:
            put_unit(*units.pop(0))  # memory takes the idle's slot
            continue
        line.add(b, fwd=True)
    while units:
        put_unit(*units.pop(0))
        for _ in range(rng.randrange(0, 2)):
            line.add(IDLE, fwd=True)
    line.add(IDLE, fwd=True)
    line.events.sort(key=lambda e: e[0])
    return line


# ---------------------------------------------------------------- driving


@dataclass
class Sample:
    out: tuple | None
    mem: tuple | None   # (block, first, last, error)
    abort: bool
    notif: tuple | None
    grant: tuple | None
    ack: tuple | None
    counters: dict


def sample(dut):
    out = unpack(int(dut.out_block.value)) if dut.out_valid.value else None
    mem = None
    if dut.mem_valid.value:
        mem = (unpack(int(dut.mem_block.value)), bool(dut.mem_first.value),
               bool(dut.mem_last.value), bool(dut.mem_error.value))
    notif = grant = None
    if dut.notif_valid.value:
        notif = ("notification", int(dut.notif_dst.value), int(dut.notif_msg_id.value), int(dut.notif_size.value))
    if dut.grant_valid.value:
        grant = ("grant", int(dut.grant_dst.value), int(dut.grant_msg_id.value), int(dut.grant_size.value))
    ack = None
    if dut.ack_valid.value:
        ack = ("ack", int(dut.ack_peer.value), int(dut.ack_base.value), int(dut.ack_map.value))
    counters = {ref: int(getattr(dut, name).value) for name, ref in COUNTERS.items()}
    return Sample(out, mem, bool(dut.mem_abort.value), notif, grant, ack, counters)


async def run(dut, blocks, gaps=0.1, seed=0):
    """Drives the blocks (with random in_valid gaps); returns one Sample per
    block, taken right after the clock edge that registered it."""
    rng = seeded_random(seed)
    await clock_and_reset(dut, in_valid=0, in_block=0)
    samples = []
    last_counters = None
    for b in blocks:
        while rng.random() < gaps:
            dut.in_valid.value = 0
            dut.in_block.value = rng.getrandbits(66)  # junk must be ignored
            await RisingEdge(dut.clk)
            await ReadOnly()
            s = sample(dut)
            assert s.out is None and s.mem is None and not s.abort and s.notif is None and s.grant is None \
                and s.ack is None, \
                "output without an input block"
            assert last_counters is None or s.counters == last_counters, "counter moved without an input block"
            await FallingEdge(dut.clk)
        dut.in_valid.value = 1
        dut.in_block.value = pack(b)
        await RisingEdge(dut.clk)
        await ReadOnly()
        samples.append(sample(dut))
        last_counters = samples[-1].counters
        await FallingEdge(dut.clk)
    dut.in_valid.value = 0
    return samples


def rtl_events(samples):
    """The memory events the RTL delivers, per block; checks the mem_* protocol."""
    events = []
    unit = None
    for i, s in enumerate(samples):
        ev = []
        if s.abort:
            assert unit is not None, f"block {i}: mem_abort with no unit open"
            unit = None
        if s.mem is not None:
            block, first, last, error = s.mem
            assert not (first and last), f"block {i}: first and last together"
            if first:
                assert unit is None, f"block {i}: mem_first inside an open unit without mem_abort"
                unit = []
            assert unit is not None, f"block {i}: memory block outside a unit"
            unit.append(block)
            if last:
                if not error:
                    try:
                        ev.append(("message", codec.decode_message(unit)))
                    except codec.CodecError as e:
                        raise AssertionError(f"block {i}: RTL delivered a bad unit as good: {e}") from e
                unit = None
        if s.notif:
            ev.append(s.notif)
        if s.grant:
            ev.append(s.grant)
        if s.ack:
            ev.append(s.ack)
        events.append(ev)
    return events, unit


def check_against_reference(line_blocks, samples):
    """Per block: memory events and counters equal the reference's. Returns the
    reference receiver and its events per block."""
    ref = codec.RxDemux()
    got, open_unit = rtl_events(samples)
    ref_events = []
    for i, (b, s) in enumerate(zip(line_blocks, samples)):
        evs = ref.push(b)
        ref_events.append(evs)
        want = [e for e in evs if e[0] in MEMORY_EVENTS]
        assert got[i] == want, f"block {i} {b}: RTL events {got[i]} != reference {want}"
        counters = ref.counters
        for name in COUNTERS.values():
            assert s.counters[name] == counters[name], \
                f"block {i} {b}: {name} RTL {s.counters[name]} != reference {counters[name]} ({evs})"
    # The decoder side: rebuild the frames from the forwarded stream alone.
    out = [s.out for s in samples if s.out is not None]
    dec = codec.RxDemux()
    dec_frames = [e[1] for b in out for e in dec.push(b) if e[0] == "frame"]
    ref_frames = [e[1] for evs in ref_events for e in evs if e[0] == "frame"]
    assert dec_frames == ref_frames, "frames on the decoder side differ from the reference's"
    dc, rc = dec.counters, ref.counters
    for name in ("frames_ok", "frames_bad", "bad_sync"):
        assert dc[name] == rc[name], f"decoder side {name} {dc[name]} != reference {rc[name]}"
    assert dc["messages_ok"] == dc["corrupted"] == dc["unknown"] == 0, f"EDM or unknown block forwarded: {dc}"
    assert all(not (b[0] == protocol.SYNC_CTRL and b[1] & 0xFF == protocol.BT_EDM) for b in out)
    return ref, got, open_unit


def delivered(got):
    return [e for evs in got for e in evs]


async def clean_check(dut, line, gaps, seed):
    samples = await run(dut, line.blocks, gaps, seed)
    ref, got, open_unit = check_against_reference(line.blocks, samples)
    assert open_unit is None
    # Exact forwarding set, each block one cycle after it entered.
    for i, (b, s) in enumerate(zip(line.blocks, samples)):
        assert s.out == (b if line.fwd[i] else None), f"block {i} {b}: forwarded {s.out}, expected {line.fwd[i]}"
    assert delivered(got) == [e for _, e, _ in line.events], "memory events lost, altered or reordered"
    for i, e, _ in line.events:  # each event in the cycle right after its last block
        assert e in got[i]
    c = ref.counters
    assert c["frames_ok"] == len(line.frames) and c["frames_bad"] == 0, c
    dec = codec.RxDemux()
    frames = [e[1] for s in samples if s.out is not None for e in dec.push(s.out) if e[0] == "frame"]
    assert frames == line.frames, "frames not recovered byte-exact from the decoder side"
    assert c["corrupted"] == c["unknown"] == c["bad_sync"] == 0, c
    assert samples[-1].counters["messages_ok"] == sum(e[0] == "message" for _, e, _ in line.events)
    return samples


# ---------------------------------------------------------------- tests


@cocotb.test()
async def mixed_traffic_round_trips(dut):
    """Frames 64..1518 (and 9000) B with WREQ/RRES/RREQ/RMWREQ, /N/, /G/ preempting them."""
    rng = seeded_random(11)
    line = build_line(rng, 40, 150, preempt=0.04)
    await clean_check(dut, line, gaps=0.1, seed=11)


@cocotb.test()
async def preemption_at_every_block_position(dut):
    """Short frames and a unit before almost every block: every position of a
    frame (after /S/, between /D/s, before /T/) gets preempted, fillers inside."""
    rng = seeded_random(12)
    line = build_line(rng, 30, 400, preempt=0.6, filler=0.25, max_len=40, idle_gaps=(1, 3))
    frame_blocks = [i for i, f in enumerate(line.fwd) if f]
    preempted = sum(1 for a, b in zip(frame_blocks, frame_blocks[1:]) if b != a + 1)
    assert preempted > 100, preempted
    await clean_check(dut, line, gaps=0.2, seed=12)


@cocotb.test()
async def no_memory_traffic_is_passed_through(dut):
    rng = seeded_random(13)
    line = build_line(rng, 12, 0)
    samples = await clean_check(dut, line, gaps=0.0, seed=13)
    assert [s.out for s in samples] == line.blocks


@cocotb.test()
async def corrupted_units_are_never_delivered(dut):
    """1-3 bit errors (sync headers included) in 30 % of the units: each one is
    counted while it passes, none is delivered, every intact unit is, and the
    clean traffic after the errors still flows."""
    rng = seeded_random(14)
    tx = codec.ControlTx()
    line = build_line(rng, 25, 400, preempt=0.1, corrupt=0.3, max_len=300, tx=tx)
    # Three clean grants bring the control sequence back in step (docs/protocol.md §5a).
    sync = [tx.grant(1, 2, 3) for _ in range(3)]
    line.blocks += sync
    clean_tail = build_line(rng, 5, 60, preempt=0.1, tx=tx)
    base = len(line.blocks)
    line.blocks += clean_tail.blocks
    line.events += [(i + base, e, False) for i, e, _ in clean_tail.events]
    assert len(line.bad_spans) > 80
    samples = await run(dut, line.blocks, 0.1, 14)
    ref, got, open_unit = check_against_reference(line.blocks, samples)
    assert open_unit is None, "a unit is still open at the end"
    messages = [e for e in delivered(got) if e[0] == "message"]
    assert messages == [e for _, e, bad in line.events if not bad and e[0] == "message"], \
        "a corrupted unit was delivered, or an intact one lost"
    # A corrupted /N/ /G/ takes a number: the next clean one is out of
    # sequence and rejected, the one after resynchronises (rejected too). So
    # each corrupted control block costs at most two clean ones, and nothing
    # else is delivered.
    sent = [e for _, e, bad in line.events if not bad and e[0] != "message"]
    got_controls = [e for e in delivered(got) if e[0] != "message" and e != ("grant", 1, 2, 3)]
    it = iter(sent)
    assert all(any(g == e for e in it) for g in got_controls), "a control block delivered that was not sent"
    bad_controls = sum(1 for _, e, bad in line.events if bad and e[0] != "message")
    assert len(sent) - len(got_controls) <= 2 * bad_controls

    def errors(i):
        c = samples[i].counters if i >= 0 else dict.fromkeys(COUNTERS.values(), 0)
        return c["corrupted"] + c["unknown"] + c["bad_sync"]

    def closes_any_unit(b):  # neither data nor a filler: no unit survives it
        return b[0] != protocol.SYNC_DATA and b != IDLE and not (
            b[0] == protocol.SYNC_CTRL and b[1] & 0xFFFF in (protocol.BT_EDM | protocol.SUB_N << 8,
                                                             protocol.BT_EDM | protocol.SUB_G << 8))
    for first, last in line.bad_spans:
        # Normally counted by its own last block; if the errors made the unit
        # look longer (say len and the /MT/'s sync hit), by the next block that
        # cannot continue it.
        end = next((j for j in range(last + 1, len(line.blocks)) if closes_any_unit(line.blocks[j])),
                   len(line.blocks) - 1)
        assert errors(end) > errors(first - 1), f"corrupted unit at blocks {first}..{last} not counted"
    assert errors(len(samples) - 1) >= len(line.bad_spans)
    # The clean tail: everything in it arrives.
    tail = [e for i, e, _ in line.events if i >= base]
    assert delivered(got[base:]) == tail
    c = ref.counters
    assert c["corrupted"] > 0 and c["messages_ok"] > 0
    dut._log.info("counters after errors: %s", c)


@cocotb.test()
async def random_errors_anywhere_match_the_reference(dut):
    """Bit errors in any block (frames, idles, memory): the RTL's events,
    counters and decoder-side frames equal the reference's, block by block."""
    rng = seeded_random(15)
    line = build_line(rng, 30, 200, preempt=0.08, filler=0.1, max_len=200, idle_gaps=(1, 4))
    blocks = list(line.blocks)
    for i in range(len(blocks)):
        if rng.random() < 0.01:
            for bit in rng.sample(range(66), rng.randint(1, 3)):
                blocks[i] = flip(blocks[i], bit)
        elif rng.random() < 0.001:
            blocks[i] = unpack(rng.getrandbits(66))
    samples = await run(dut, blocks, 0.1, 15)
    ref, _, _ = check_against_reference(blocks, samples)
    dut._log.info("counters: %s", ref.counters)


def ms_with(block, kind=None, length=None):
    """An /MS/ with its header's kind or len overwritten."""
    sync, p = block
    if kind is not None:
        p = p & ~(0x7 << (16 + protocol.HDR_KIND_LSB)) | kind << (16 + protocol.HDR_KIND_LSB)
    if length is not None:
        p = p & ~(0xFFFF << (16 + protocol.HDR_LEN_LSB)) | length << (16 + protocol.HDR_LEN_LSB)
    return (sync, p)


def edm_block(sub, fields=0):
    return (protocol.SYNC_CTRL, protocol.BT_EDM | sub << 8 | fields)


def ng_with_reserved(block):
    """An /N/, /G/ or /A/ with a reserved bit set and a CRC-8 that matches its number."""
    seq = codec.implied_seq(block)
    p = block[1] | 1 << (protocol.NG_SIZE_LSB + protocol.NG_SIZE_W)
    p &= (1 << protocol.NG_CRC_LSB) - 1
    return (block[0], p | crc8(p.to_bytes(8, "little")[:7], seq) << protocol.NG_CRC_LSB)


def flip_sync(block):
    return (block[0] ^ 0b11, block[1])


@cocotb.test()
async def directed_corner_cases(dut):
    """Each case checked block by block against the reference, plus the
    counter changes the spec predicts."""
    rng = seeded_random(16)
    frame = codec.encode_frame(rand_bytes(rng, 100))

    def msg(kind="WREQ", n=20):
        if kind == "RRES":
            m = codec.Message("RRES", 1, 2, 3, n, data=rand_bytes(rng, n))
        elif kind == "WREQ":
            m = codec.Message("WREQ", 1, 2, 3, n, addr=5, data=rand_bytes(rng, n))
        else:
            m = codec.Message("RMWREQ", 1, 2, 3, 8, addr=9, op=1, arg0=4, arg1=5)
        return codec.encode_message(m)

    wreq = msg("WREQ", 20)   # M = 36: MS, 4 MDs (last holds 6 of 8), MT
    rres1 = msg("RRES", 1)   # M = 9: MS, 1 MD with 3 bytes, MT with no tail
    rres0 = msg("RRES", 0)   # MS, MT
    rmw = msg("RMWREQ")
    # The line's control blocks are numbered in line order (the cases below
    # are evaluated in order): n_ok() and g_ok() take the next number;
    # n_next() and g_next() a copy of the next one for a corrupted block that
    # takes no number (as if the corruption had hit some other block).
    tx = codec.ControlTx()

    def n_ok():
        return tx.notification(7, 8, 9)

    def g_ok():
        return tx.grant(10, 11, 12)

    def n_next():
        return codec.encode_notification(7, 8, 9, tx.next)

    def g_next():
        return codec.encode_grant(10, 11, 12, tx.next)

    def a_ok():
        return tx.ack(13, 250, 0x8001)  # ids 250 and 9: the map wraps the id space

    def a_next():
        return codec.encode_ack(13, 250, 0x8001, tx.next)

    def lose():  # a control block sent and lost on the way: it took a number
        tx.grant(0, 0, 1)
        return []
    pad_md = list(rres1)
    pad_md[1] = (pad_md[1][0], pad_md[1][1] | 0xAB << 56)       # padding byte of the last /MD/
    pad_mt = list(rres1)
    pad_mt[2] = (pad_mt[2][0], pad_mt[2][1] | 0x01 << 24)        # /MT/ tail pad (no tail bytes)
    cases = {
        # name: (blocks, {counter: expected change})
        "good units": (wreq + rres1 + rres0 + rmw, {"messages_ok": 4}),
        "/MST/ and unknown subtype and type": (
            [edm_block(protocol.SUB_MST), edm_block(0x01), (protocol.SYNC_CTRL, 0x01), (protocol.SYNC_CTRL, 0x00)],
            {"unknown": 4}),
        "bad sync headers": ([(0, 0), (3, 123)], {"bad_sync": 2}),
        "stray /MT/": ([rres0[1]], {"corrupted": 1}),
        "/MS/ with invalid kind": ([ms_with(wreq[0], kind=0), ms_with(wreq[0], kind=7)] + wreq[1:],
                                   {"corrupted": 3}),  # 2 bad /MS/, then the stray /MT/
        "RMWREQ with len 16": ([ms_with(rmw[0], length=16)] + rmw[1:], {"corrupted": 2}),
        "truncated by a frame": (wreq[:3] + frame + wreq, {"corrupted": 1, "messages_ok": 1}),
        "truncated by a new /MS/": (wreq[:3] + wreq, {"corrupted": 1, "messages_ok": 1}),
        "truncated by an invalid /MS/": (wreq[:3] + [ms_with(wreq[0], kind=5)] + wreq,
                                         {"corrupted": 2, "messages_ok": 1}),
        "truncated by an unknown block": (wreq[:2] + [edm_block(protocol.SUB_MST)] + wreq[2:],
                                          {"corrupted": 2, "unknown": 1}),
        "truncated by a bad sync": (wreq[:2] + [(3, 0)] + wreq, {"corrupted": 1, "bad_sync": 1, "messages_ok": 1}),
        "data block where /MT/ is due": (wreq[:-1] + [wreq[1]] + wreq[-1:], {"corrupted": 2}),
        "/MT/ before the last /MD/": (wreq[:2] + wreq[3:], {"corrupted": 1}),
        "/MT/ right after /MS/": (wreq[:1] + wreq[-1:], {"corrupted": 1}),
        "non-zero /MD/ padding, CRC fine": (pad_md, {"corrupted": 1}),
        "non-zero /MT/ padding, CRC fine": (pad_mt, {"corrupted": 1}),
        "bad CRC-32C": (wreq[:-1] + [flip(wreq[-1], 40)], {"corrupted": 1}),
        "fillers inside a unit": (wreq[:2] + [IDLE, n_ok(), IDLE, g_ok(), flip(n_next(), 30)] + wreq[2:],
                                  {"messages_ok": 1, "notifications_ok": 1, "grants_ok": 1, "corrupted": 1}),
        "/N/ /G/ with reserved bits set, CRC fine": ([ng_with_reserved(n_next()), ng_with_reserved(g_next())],
                                                    {"corrupted": 2}),
        "non-idle C8 inside a unit": (wreq[:2] + [(protocol.SYNC_CTRL, protocol.BT_C8 | 0x1E << 8)] + wreq[2:],
                                      {"corrupted": 2}),
        "frame preempted by every kind": (frame[:3] + wreq + [n_ok()] + rres0 + [g_ok()] + frame[3:],
                                          {"messages_ok": 2, "notifications_ok": 1, "grants_ok": 1}),
        # Issue 25: a /G/ whose sync header flipped inside a frame (it took its
        # number): dropped and counted, the frame intact; the next /G/ is out
        # of sequence, the one after resynchronises (rejected too) and counts
        # the three numbers missed, the third is accepted.
        "a /G/ with a flipped sync header in a frame": (
            frame[:3] + [flip_sync(g_ok())] + frame[3:] + [g_ok(), g_ok(), g_ok()],
            {"control_in_data": 1, "corrupted": 2, "grants_ok": 1, "control_missed": 3}),
        "a /G/ with a flipped sync header in a unit": (
            wreq[:2] + [flip_sync(g_ok())] + wreq[2:] + [g_ok(), g_ok(), g_ok()],
            {"messages_ok": 1, "control_in_data": 1, "corrupted": 2, "grants_ok": 1, "control_missed": 3}),
        # Data holding a valid /G/ of another number: a sync flip does not make it one.
        "data holding another /G/, sync flipped": (
            [(protocol.SYNC_CTRL, codec.encode_grant(10, 11, 12, (tx.next + 77) % 256)[1])],
            {"corrupted": 1}),
        "a replayed /N/": ([n_ok()] * 2 + [n_ok()], {"notifications_ok": 2, "corrupted": 1}),
        "a lost /N/": ([n_ok()] + lose() + [n_ok(), n_ok(), n_ok()],
                       {"notifications_ok": 2, "corrupted": 2, "control_missed": 3}),
        "stray data blocks": ([wreq[1], wreq[2]], {}),
        # /A/ (docs/protocol.md §4b): numbered with /N/ and /G/, a filler too.
        "/A/ in a gap and as a filler": ([a_ok()] + wreq[:2] + [a_ok()] + wreq[2:],
                                         {"acks_ok": 2, "messages_ok": 1}),
        "/N/ /A/ /G/ share the numbers": ([n_ok(), a_ok(), g_ok(), a_ok()],
                                          {"notifications_ok": 1, "acks_ok": 2, "grants_ok": 1}),
        "a corrupted /A/": ([flip(a_next(), 2 + protocol.ACK_MAP_LSB + 3)], {"corrupted": 1}),
        "a corrupted /A/ inside a unit": (wreq[:3] + [flip(a_next(), 2 + protocol.NG_ID_LSB)] + wreq[3:],
                                          {"corrupted": 1, "messages_ok": 1}),
        "/A/ with reserved bits set, CRC fine": ([ng_with_reserved(a_next())], {"corrupted": 1}),
        "an /A/ with a flipped sync header in a frame": (
            frame[:3] + [flip_sync(a_ok())] + frame[3:] + [a_ok(), a_ok(), a_ok()],
            {"control_in_data": 1, "corrupted": 2, "acks_ok": 1, "control_missed": 3}),
        "a lost /A/": ([a_ok()] + lose() + [n_ok(), g_ok(), a_ok()],
                       {"acks_ok": 2, "corrupted": 2, "control_missed": 3}),
    }
    blocks, expectations = [], []
    for name, (case, delta) in cases.items():
        first = len(blocks)
        blocks += case + [IDLE]
        expectations.append((name, first, len(blocks) - 1, delta))
    samples = await run(dut, blocks, 0.2, 16)
    check_against_reference(blocks, samples)
    zero = dict.fromkeys(COUNTERS.values(), 0)
    for name, first, last, delta in expectations:
        before = samples[first - 1].counters if first else zero
        after = samples[last].counters
        change = {k: after[k] - before[k] for k in after if after[k] != before[k]}
        assert change == delta, f"{name}: counters changed by {change}, expected {delta}"


@cocotb.test()
async def counters_saturate(dut):
    """16-bit counters stop at 0xFFFF, also when two errors land in one cycle."""
    await clock_and_reset(dut, in_valid=0, in_block=0)
    bad_n = pack(flip(codec.encode_notification(1, 2, 3, 0), 20))
    good_g = pack(codec.encode_grant(1, 2, 3, 0))
    wreq = codec.encode_message(codec.Message("WREQ", 1, 2, 3, 20, addr=5, data=bytes(20)))
    dut.in_valid.value = 1
    for i in range(0xFFFF):  # 0xFFFE bad /N/ and one good /G/
        dut.in_block.value = good_g if i == 100 else bad_n
        await RisingEdge(dut.clk)
    # An /MS/, then an invalid /MS/ inside it: +2 in one cycle from 0xFFFE.
    for b in [wreq[0], ms_with(wreq[0], kind=0)] + wreq:
        dut.in_block.value = pack(b)
        await RisingEdge(dut.clk)
    dut.in_valid.value = 0
    await RisingEdge(dut.clk)
    await ReadOnly()
    assert int(dut.cnt_corrupted.value) == 0xFFFF, hex(int(dut.cnt_corrupted.value))
    assert int(dut.cnt_grant_ok.value) == 1 and int(dut.cnt_msg_ok.value) == 1
    assert int(dut.cnt_notif_ok.value) == 0 and int(dut.cnt_unknown.value) == 0

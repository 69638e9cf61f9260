"""cocotb: edm_tx multiplexes memory units into an encoder's block stream; the
reference demultiplexer must recover every frame and message byte-exact."""

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

IDLE = codec.xgmii_encode([(int.from_bytes(bytes([protocol.XGMII_IDLE] * 8), "little"), 0xFF)])[0]


def pack(block):
    return block[0] | (block[1] << 2)


def unpack(v):
    return (v & 3, v >> 2)


def make_traffic(rng, frames, messages):
    enc = []
    frame_bytes = []
    for _ in range(frames):
        data = bytes(rng.getrandbits(8) for _ in range(rng.choice([64, 65, 71, 200, 333])))
        frame_bytes.append(data)
        enc += codec.encode_frame(data) + [IDLE] * rng.randrange(2, 4)
    units, sent = [], []
    ctl = codec.ControlTx()  # units leave in order: their /N/ are numbered so
    for i in range(messages):
        r = rng.random()
        if r < 0.2:
            units.append([ctl.notification(rng.randrange(1024), i % 256, rng.randrange(1, 9000))])
            sent.append(("notification",) + codec.decode_control(units[-1][0], (ctl.next - 1) % 256)[1:])
        else:
            m = codec.Message("WREQ", rng.randrange(1024), rng.randrange(1024), i % 256,
                              n := rng.randrange(1, 90), addr=rng.getrandbits(64),
                              data=bytes(rng.getrandbits(8) for _ in range(n)))
            units.append(codec.encode_message(m))
            sent.append(("message", m))
    return enc, frame_bytes, units, sent


async def run(dut, enc, units, mem_stall=0.0, seed=0):
    """Drives both inputs as fast as allowed; returns the line and the largest buffer level."""
    rng = seeded_random(seed)
    await clock_and_reset(dut, enc_valid=0, mem_valid=0)
    mem = [(b, i == len(u) - 1) for u in units for i, b in enumerate(u)]
    e = m = 0
    line, max_level, ready_low = [], 0, False
    idle_run = 0
    while idle_run < 10:
        dut.enc_valid.value = e < len(enc)
        dut.enc_block.value = pack(enc[e]) if e < len(enc) else 0
        mv = m < len(mem) and rng.random() >= mem_stall
        dut.mem_valid.value = mv
        dut.mem_block.value = pack(mem[m][0]) if m < len(mem) else 0
        dut.mem_last.value = mem[m][1] if m < len(mem) else 0
        await ReadOnly()
        if e < len(enc) and dut.enc_ready.value:
            e += 1
        ready_low |= not dut.enc_ready.value
        if mv and dut.mem_ready.value:
            m += 1
        await RisingEdge(dut.clk)
        await ReadOnly()
        block = unpack(int(dut.out_block.value))
        line.append(block)
        max_level = max(max_level, int(dut.buffered.value))
        done = e == len(enc) and m == len(mem)
        idle_run = idle_run + 1 if done and block == IDLE else 0
        await FallingEdge(dut.clk)
    return line, max_level, ready_low


def demux(line):
    rx = codec.RxDemux()
    events = [ev for b in line for ev in rx.push(b)]
    return events, rx.counters


async def check(dut, frames, messages, stall, seed):
    rng = seeded_random(seed)
    enc, frame_bytes, units, sent = make_traffic(rng, frames, messages)
    line, max_level, ready_low = await run(dut, enc, units, stall, seed)
    events, counters = demux(line)
    got_frames = [ev[1] for ev in events if ev[0] == "frame"]
    got_mem = [ev if ev[0] == "notification" else ("message", ev[1]) for ev in events
               if ev[0] in ("message", "notification")]
    assert got_frames == frame_bytes, "frames altered"
    assert got_mem == sent, "memory units altered or reordered"
    assert counters["corrupted"] == counters["unknown"] == counters["frames_bad"] == 0, counters
    assert max_level <= 4
    return line, ready_low


@cocotb.test()
async def mixed_traffic_round_trips(dut):
    _, ready_low = await check(dut, frames=12, messages=40, stall=0.0, seed=1)
    assert ready_low, "memory never back-pressured the encoder"


@cocotb.test()
async def stalled_units_and_preemption(dut):
    await check(dut, frames=10, messages=30, stall=0.3, seed=2)


@cocotb.test()
async def no_memory_traffic_means_the_standard_stream(dut):
    rng = seeded_random(3)
    enc, _, _, _ = make_traffic(rng, 6, 0)
    line, _, _ = await run(dut, enc, [], 0.0, 3)
    first = line.index(enc[0])
    assert line[first:first + len(enc)] == enc

"""cocotb: pcs_rate_match between two clocks that differ by a few hundred ppm.

The link partner's line is made by the reference codec (`edm.protocol.codec.tx_mux`):
memory units (reads, writes, RMW, responses, numbered /N/ and /G/) waiting all
the time, so they fill every inter-frame gap, with Ethernet frames of 64 to
9000 bytes between them; the only idles left are the frames' gaps the memory
units did not take and the ones the multiplexer keeps for rate matching
(IDLE_PERIOD_BLOCKS). The partner sends one block per cycle of `in_clk`; the
bench reads one block per cycle of `out_clk`. Checks, for the whole stream:
  * the blocks that are not idles arrive exactly as sent: none lost, none
    added, in order (so no EDM block or frame is dropped or split);
  * an idle arrives only where the partner sent at least one (only idles are
    inserted, next to idles);
  * the reference receiver finds in the output exactly the messages, /N/ /G/
    and frames it finds in the input, and no error;
  * the buffer never overflows or underflows, and every block is accounted
    for: received = sent - deleted + inserted - left in the buffer;
  * the sign of the offset decides which of deletion and insertion happens.
The starved case strips the idles from part of a fully loaded line (a sender
breaking the idle rule) at a 1 % offset: the long runs are counted
(cnt_idle_starved, against a model), and every block the buffer loses is
counted in cnt_overflow: the output is the input less exactly that many
blocks, none of them idles.

Environment: RATE_CASE names the case (see CASES); RATE_BLOCKS sets the line
length (the test default is small; `experiments/rate_match_ppm.py` runs it
longer and prints the counters); RATE_RESULT names a file to append the
case's figures to as a JSON line.
"""

from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import seeded_random

IDLE = (protocol.SYNC_CTRL, protocol.BT_C8)
OUT_PERIOD_PS = 20_000  # 2 ps of difference is 100 ppm (half periods in whole ps)
# name: (in_clk period in ps, load: "full" or "light", strip idles from a stretch)
CASES = {
    "fast_100ppm": (19_998, "full", False),
    "fast_200ppm": (19_996, "full", False),
    "slow_100ppm": (20_002, "full", False),
    "slow_200ppm": (20_004, "full", False),
    "fast_1pct": (19_800, "light", False),
    "slow_1pct": (20_200, "light", False),
    "starved_fast_1pct": (19_800, "full", True),
}


def pack(block):
    return block[0] | (block[1] << 2)


def unpack(v):
    return (v & 3, v >> 2)


def rand_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def rand_unit(rng, i, tx):
    """The blocks of one memory unit; /N/ and /G/ numbered by `tx` in unit order
    (the multiplexer keeps units in order)."""
    kind = rng.choices(["WREQ", "RRES", "RREQ", "RMWREQ", "N", "G"], [4, 4, 2, 1, 2, 2])[0]
    common = dict(src=rng.randrange(1024), dst=rng.randrange(1024), msg_id=i % 256)
    if kind == "N":
        return [tx.notification(common["dst"], common["msg_id"], rng.randrange(1, 65536))]
    if kind == "G":
        return [tx.grant(common["dst"], common["msg_id"], rng.choice([64, 128, 256]))]
    if kind in ("WREQ", "RRES"):
        n = rng.choice([8, 64, 64, 128, 256])
        extra = dict(addr=rng.getrandbits(64)) if kind == "WREQ" else {}
        m = codec.Message(kind, length=n, seq=rng.randrange(4096), data=rand_bytes(rng, n), **extra, **common)
    elif kind == "RREQ":
        m = codec.Message("RREQ", length=rng.choice([64, 256, 4096]), addr=rng.getrandbits(64), **common)
    else:
        m = codec.Message("RMWREQ", length=8, addr=rng.getrandbits(64) & ~7, op=rng.randrange(1, 4),
                          arg0=rng.getrandbits(64), arg1=rng.getrandbits(64), **common)
    return codec.encode_message(m)


def make_line(rng, blocks, load):
    """About `blocks` blocks of line from the reference multiplexer. "full":
    every unit waits from slot 0; "light": units arrive at about half the line
    rate and frames (up to 1500 bytes) take about a tenth, so idles are common."""
    tx = codec.ControlTx()
    units, times, t = [], [], 0
    total = 0
    while total < blocks * (0.85 if load == "full" else 0.45):
        units.append(rand_unit(rng, len(units), tx))
        total += len(units[-1])
        times.append(0 if load == "full" else t)
        t += 2 * len(units[-1])
    frames, frame_times, t = [], [], 0
    while t < blocks * 0.9:
        # A 9000-byte frame is 1126 blocks without an idle: 11 blocks of drift at 1 %.
        sizes = [64, 64, 128, 600, 1500] + ([9000] if load == "full" else [])
        frames.append(rand_bytes(rng, rng.choice(sizes)))
        frame_times.append(t)
        t += rng.randrange(2 * len(frames[-1]) // 8 * (10 if load == "light" else 1) + 1)
    return codec.tx_mux(frames, units, "fair", frame_times=frame_times, unit_times=times)


def strip_idles(line, start, stop):
    return line[:start] + [b for b in line[start:stop] if b != IDLE] + line[stop:]


def idle_free_runs(line, period):
    """How many maximal runs of non-idle blocks are at least `period` long."""
    runs, count = 0, 0
    for b in line:
        count = 0 if b == IDLE else count + 1
        runs += count == period
    return runs


def gaps_before_each(line):
    """(non-idle blocks, for each the number of idles just before it)."""
    blocks, gaps, idles = [], [], 0
    for b in line:
        if b == IDLE:
            idles += 1
        else:
            blocks.append(b)
            gaps.append(idles)
            idles = 0
    return blocks, gaps


def demux(line):
    rx = codec.RxDemux()
    events = [e for b in line for e in rx.push(b)]
    return events, rx.counters


@cocotb.test()
async def rate_matching_keeps_every_block(dut):
    case = os.environ.get("RATE_CASE", "fast_200ppm")
    in_ps, load, starve = CASES[case]
    n_blocks = int(os.environ.get("RATE_BLOCKS", "30000"))
    rng = seeded_random(f"{case}:{n_blocks}")
    line = make_line(rng, n_blocks, load)
    if starve:
        line = strip_idles(line, len(line) // 4, len(line) // 4 + 3 * protocol.IDLE_PERIOD_BLOCKS)
    sent_blocks, sent_gaps = gaps_before_each(line)

    cocotb.start_soon(Clock(dut.in_clk, in_ps, units="ps").start())
    cocotb.start_soon(Clock(dut.out_clk, OUT_PERIOD_PS, units="ps").start())
    dut.in_rst_n.value = 0
    dut.out_rst_n.value = 0
    dut.in_valid.value = 0
    dut.in_block.value = pack(IDLE)
    await ClockCycles(dut.in_clk, 3)
    await ClockCycles(dut.out_clk, 3)
    dut.in_rst_n.value = 1
    dut.out_rst_n.value = 1

    received = []
    done = False

    async def partner():
        # The line, then idles until every block has come out (the link keeps running).
        i = 0
        while True:
            await FallingEdge(dut.in_clk)
            if done:
                dut.in_valid.value = 0
                return i
            dut.in_valid.value = 1
            dut.in_block.value = pack(line[i] if i < len(line) else IDLE)
            i += 1

    async def read_block():
        await RisingEdge(dut.out_clk)
        await ReadOnly()
        if dut.out_valid.value:
            received.append(unpack(int(dut.out_block.value)))
            return received[-1]
        return None

    sender = cocotb.start_soon(partner())
    non_idle = len(sent_blocks)
    seen = 0
    while seen < non_idle and len(received) < 2 * len(line) + 1000:
        block = await read_block()
        seen += block is not None and block != IDLE
    done = True
    sent_count = await sender
    for _ in range(16):  # the partner has stopped: let the pointers settle, still reading
        await read_block()
    # Sampled in the read phase of the last read: received, rd_bin and the
    # read-side counters all describe the same edge.
    left = (int(dut.elastic.wr_bin.value) - int(dut.elastic.rd_bin.value)) % (2 << int(dut.DEPTH_LOG2.value))
    counters = {n: int(getattr(dut, n).value) for n in
                ("cnt_deleted", "cnt_inserted", "cnt_overflow", "cnt_underflow", "cnt_idle_starved")}
    dut._log.info("%s: %d blocks sent, %d received, %s", case, sent_count, len(received), counters)
    if os.environ.get("RATE_RESULT"):
        with open(os.environ["RATE_RESULT"], "a") as out:
            out.write(json.dumps(dict(case=case, in_period_ps=in_ps, out_period_ps=OUT_PERIOD_PS,
                                      sent=sent_count, not_idle=non_idle, received=len(received), **counters)) + "\n")

    # The blocks written but not yet read are the only ones missing in `received`;
    # blocks that arrived after the last read are still in the buffer.
    assert sent_count - counters["cnt_deleted"] - counters["cnt_overflow"] + counters["cnt_inserted"] - left \
        == len(received), "every block accounted for"
    got_blocks, got_gaps = gaps_before_each(received)
    assert counters["cnt_underflow"] == 0, "the buffer ran empty"
    assert counters["cnt_idle_starved"] == idle_free_runs(line, protocol.IDLE_PERIOD_BLOCKS)
    if starve:
        assert counters["cnt_idle_starved"] >= 1 and counters["cnt_overflow"] > 0, "the test never starved"
        # Exactly cnt_overflow blocks are missing, all of them inside the starved stretch.
        assert len(got_blocks) == non_idle - counters["cnt_overflow"]
        it = iter(sent_blocks)
        assert all(any(b == s for s in it) for b in got_blocks), "received blocks are not a subsequence"
        return
    assert counters["cnt_overflow"] == 0
    assert got_blocks == sent_blocks, "a block that is not an idle was lost, added or reordered"
    assert all(s > 0 for s, g in zip(sent_gaps, got_gaps) if g > 0), "an idle where the partner sent none"
    sent_events, sent_counters = demux(line)
    got_events, got_counters = demux(received)
    assert got_events == sent_events
    errors = ("corrupted", "unknown", "bad_sync", "frames_bad", "control_missed", "control_in_data")
    assert all(got_counters[e] == 0 for e in errors), got_counters
    assert got_counters["frames_ok"] > 0 and got_counters["messages_ok"] > 0 and got_counters["grants_ok"] > 0
    # The partner's clock is faster: idles deleted, about one per 1/offset blocks;
    # slower: idles inserted. The other side acts at most at start-up.
    offset = OUT_PERIOD_PS / in_ps - 1
    drift = abs(offset) * len(received)
    acted, idle = ("cnt_deleted", "cnt_inserted") if offset > 0 else ("cnt_inserted", "cnt_deleted")
    assert abs(counters[acted] - drift) <= 2 ** int(dut.DEPTH_LOG2.value), (counters, drift)
    assert counters[idle] <= 2 ** int(dut.DEPTH_LOG2.value) // 2, counters

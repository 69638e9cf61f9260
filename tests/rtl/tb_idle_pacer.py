"""cocotb: edm_idle_pacer in front of edm_tx (tests/rtl/tb_paced_tx_top.sv)
keeps an idle in every IDLE_PERIOD_BLOCKS blocks of a fully loaded line.

Memory units (writes, /N/) wait all the time and Ethernet frames of up to
9000 bytes come back to back, so edm_tx would fill every gap. Checks: no run
of IDLE_PERIOD_BLOCKS blocks without an idle; the pacer acted; the reference
receiver gets every unit and frame, in order, with no error. With UNPACED = 1
(the pacer bypassed) the same traffic must break the rule, or the test shows
nothing.
"""

from __future__ import annotations

import cocotb

from edm import protocol
from edm.protocol import codec
from tb_edm_tx import run
from tbutil import seeded_random

IDLE = (protocol.SYNC_CTRL, protocol.BT_C8)


def longest_run_without_idle(line):
    longest = run_ = 0
    for b in line:
        run_ = 0 if b == IDLE else run_ + 1
        longest = max(longest, run_)
    return longest


@cocotb.test()
async def an_idle_in_every_period(dut):
    rng = seeded_random(7)
    enc, frames = [], []
    for _ in range(8):
        data = bytes(rng.getrandbits(8) for _ in range(rng.choice([1500, 9000])))
        frames.append(data)
        enc += codec.encode_frame(data) + [IDLE] * 2
    ctl = codec.ControlTx()
    units = []
    for i in range(2200):
        if rng.random() < 0.2:
            units.append([ctl.notification(rng.randrange(1024), i % 256, rng.randrange(1, 9000))])
        else:
            n = rng.choice([8, 64, 128, 256])
            units.append(codec.encode_message(codec.Message(
                "WREQ", rng.randrange(1024), rng.randrange(1024), i % 256, n, addr=rng.getrandbits(64),
                data=bytes(rng.getrandbits(8) for _ in range(n)))))
    line, _, _ = await run(dut, enc, units)
    longest = longest_run_without_idle(line)
    dut._log.info("%d blocks, longest run without an idle %d, memory held %d cycles",
                  len(line), longest, int(dut.cnt_paced.value))
    assert len(line) > 4 * protocol.IDLE_PERIOD_BLOCKS
    if int(dut.UNPACED.value):
        assert longest >= protocol.IDLE_PERIOD_BLOCKS, "the traffic does not need the pacer"
        return
    assert longest < protocol.IDLE_PERIOD_BLOCKS
    assert int(dut.cnt_paced.value) > 0
    rx = codec.RxDemux()
    events = [e for b in line for e in rx.push(b)]
    assert [e[1] for e in events if e[0] == "frame"] == frames
    assert sum(e[0] in ("message", "notification") for e in events) == len(units)
    assert not any(e[0] == "error" for e in events), rx.counters

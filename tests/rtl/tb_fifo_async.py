"""cocotb: edm_fifo_async moves every word across unrelated clocks, in order,
never overflowing or underflowing, under random back-pressure on both sides."""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge
from tbutil import seeded_random


@cocotb.test()
async def crosses_clock_domains_in_order(dut):
    wr_ns, rd_ns = (3, 7) if int(dut.DEPTH_LOG2.value) == 2 else (7, 3)
    cocotb.start_soon(Clock(dut.wr_clk, wr_ns, units="ns").start())
    cocotb.start_soon(Clock(dut.rd_clk, rd_ns, units="ns").start())
    dut.wr_rst_n.value = 0
    dut.rd_rst_n.value = 0
    dut.wr_valid.value = 0
    dut.rd_ready.value = 0
    await ClockCycles(dut.wr_clk, 3)
    await ClockCycles(dut.rd_clk, 3)
    dut.wr_rst_n.value = 1
    dut.rd_rst_n.value = 1
    words = [seeded_random(1).getrandbits(66) for _ in range(400)]
    received = []
    saw_full = False

    async def writer():
        nonlocal saw_full
        rng = seeded_random(2)
        i = 0
        while i < len(words):
            await FallingEdge(dut.wr_clk)
            dut.wr_valid.value = valid = rng.random() < 0.9
            dut.wr_data.value = words[i]
            await ReadOnly()
            saw_full |= not dut.wr_ready.value
            if valid and dut.wr_ready.value:
                i += 1
        await FallingEdge(dut.wr_clk)
        dut.wr_valid.value = 0

    async def reader():
        rng = seeded_random(3)
        while len(received) < len(words):
            await FallingEdge(dut.rd_clk)
            # Read slower on average than the writer writes, so the FIFO fills.
            dut.rd_ready.value = ready = rng.random() < (0.6 if rd_ns > wr_ns else 0.2)
            await ReadOnly()
            if ready and dut.rd_valid.value:
                received.append(int(dut.rd_data.value))

    w = cocotb.start_soon(writer())
    await reader()
    await w
    assert received == words
    assert saw_full, "the test never filled the FIFO"
    await RisingEdge(dut.rd_clk)

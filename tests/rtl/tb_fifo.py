"""cocotb: edm_fifo against a Python deque, with random pushes, pops and stalls."""

from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly

from tbutil import Digest, clock_and_reset, seeded_random


@cocotb.test()
async def fifo_matches_a_deque(dut):
    depth = 1 << int(dut.DEPTH_LOG2.value)
    mask = (1 << int(dut.WIDTH.value)) - 1
    rng = seeded_random(depth)
    await clock_and_reset(dut, wr_valid=0, rd_ready=0)
    model: deque[int] = deque()
    saw_full = False
    popped = 0
    digest = Digest("fifo_matches_a_deque")
    for cycle in range(3000):
        fill = (cycle // 100) % 2 == 0  # phases that mostly fill, then mostly drain
        wr = rng.random() < (0.8 if fill else 0.3)
        rd = rng.random() < (0.3 if fill else 0.8)
        data = rng.getrandbits(80) & mask
        dut.wr_valid.value = wr
        dut.wr_data.value = data
        dut.rd_ready.value = rd
        await ReadOnly()
        digest.add(wr, rd, data, int(dut.rd_data.value) if dut.rd_valid.value else None)
        assert int(dut.count.value) == len(model), f"cycle {cycle}: count"
        assert bool(dut.wr_ready.value) == (len(model) < depth), f"cycle {cycle}: wr_ready"
        assert bool(dut.rd_valid.value) == bool(model), f"cycle {cycle}: rd_valid"
        if model:  # the head is readable whenever valid, popped or not
            assert int(dut.rd_data.value) == model[0], f"cycle {cycle}: wrong head"
        saw_full |= len(model) == depth
        accept = wr and len(model) < depth
        if rd and model:
            assert int(dut.rd_data.value) == model.popleft(), f"cycle {cycle}: wrong word out"
            popped += 1
        if accept:
            model.append(data)
        await FallingEdge(dut.clk)
    digest.log(dut)
    assert saw_full and popped > 500, (saw_full, popped)

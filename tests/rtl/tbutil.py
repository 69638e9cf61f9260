"""Shared cocotb testbench steps."""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge


async def clock_and_reset(dut, **idle_inputs: int) -> None:
    """Starts a 2 ns `clk`, holds `rst_n` low for a cycle with `idle_inputs`
    driven, and returns at a falling edge with reset released."""
    cocotb.start_soon(Clock(dut.clk, 2, units="ns").start())
    dut.rst_n.value = 0
    for name, value in idle_inputs.items():
        getattr(dut, name).value = value
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst_n.value = 1

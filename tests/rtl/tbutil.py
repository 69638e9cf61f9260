"""Shared cocotb testbench steps."""

from __future__ import annotations

import hashlib
import os
import random
from collections import deque

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge


def seed() -> int:
    """The run's seed, the one every random stream of every bench takes:
    $EDM_SEED (rtlsim.simulate sets it; `edm rtl test --seed N`), 0 when unset."""
    return int(os.environ.get("EDM_SEED") or 0)


_seed_logged = False


def seeded_random(stream: int | str) -> random.Random:
    """The bench's random stream `stream` (a number or name that tells the
    bench's streams apart) under the run's seed: seed 0 gives Random(stream),
    the stimulus the benches always had; any other seed, streams of its own."""
    global _seed_logged
    s = seed()
    if not _seed_logged:
        cocotb.log.info("random stimulus from seed %d (EDM_SEED)", s)
        _seed_logged = True
    return random.Random(stream if s == 0 else f"{s}:{stream}")


def read_int(handle) -> int:
    """A signal's value as an int, read without building cocotb's BinaryValue
    (half a bench's Python time on wide buses). Verilator is 2-state: no X/Z."""
    return int(handle._handle.get_signal_val_binstr(), 2)


class Driver:
    """Writes a signal only when its value changes: an input keeps its last
    deposit, and a cocotb write costs about as much as a cycle of logic."""

    def __init__(self):
        self.last: dict[int, int] = {}

    def put(self, handle, value: int) -> None:
        key = id(handle)
        if self.last.get(key) != value:
            handle.value = value
            self.last[key] = value


class Digest:
    """A running SHA-256 of what a bench drove and saw. log() prints it and,
    when $EDM_DIGEST_FILE is set, appends "name digest" there: the same seed
    gives the same digest, so a replay can be checked to be one."""

    def __init__(self, name: str):
        self.name, self.hash = name, hashlib.sha256()

    def add(self, *values) -> None:
        self.hash.update(repr(values).encode())

    def log(self, dut) -> str:
        digest = self.hash.hexdigest()[:16]
        dut._log.info("%s: stimulus and outputs digest %s (seed %d)", self.name, digest, seed())
        if os.environ.get("EDM_DIGEST_FILE"):
            with open(os.environ["EDM_DIGEST_FILE"], "a") as out:
                out.write(f"{self.name} {digest}\n")
        return digest


def record_json(dut, env: str, name: str, out: dict) -> None:
    """Logs a test's summary `out` and, when $`env` names a file, stores it
    there under `name` (one JSON object per test, kept across tests)."""
    import json

    dut._log.info(f"{name}: {json.dumps(out)}")
    path = os.environ.get(env)
    if path:
        old = json.loads(open(path).read()) if os.path.exists(path) else {}
        old[name] = out
        with open(path, "w") as fh:
            json.dump(old, fh, indent=1)


# The fabric tops' host inputs that are idle through reset.
FABRIC_IDLE = ("req_valid", "cpl_ready", "lrd_ready", "lrd_rsp_valid", "lwr_ready", "dram_rd_ready", "dram_wr_ready",
               "dram_rsp_valid", "up_flip", "down_flip", "h_enc_valid", "s_enc_valid")


async def start_fabric(dut, **inputs: int) -> None:
    """A fabric top (tb_fabric_top, tb_dual_fabric_top): starts its 2.56 ns
    clock (the PCS's), holds rst_n low for 3 cycles with FABRIC_IDLE at 0 and
    `inputs` driven, and returns 4 cycles after the release."""
    cocotb.start_soon(Clock(dut.clk, 2560, units="ps").start())
    dut.rst_n.value = 0
    for name, value in {**{n: 0 for n in FABRIC_IDLE}, **inputs}.items():
        if name in inputs or hasattr(dut, name):   # tb_fabric_top has no s_enc_* (its switch has frames)
            getattr(dut, name).value = value
    for _ in range(3):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst_n.value = 1
    for _ in range(4):
        await RisingEdge(dut.clk)


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


class Dram:
    """The memory behind edm_mem_node's two channels, one 8-byte word per request
    on each: a read is answered in order, a random 1..`lat` cycles later (never
    before the previous answer), with the memory as it was when the read was
    accepted; a write lands with its byte mask when accepted. `mem` (a
    bytearray, byte 0 at address `base`) is updated in place. A read and a write
    of one word accepted in one cycle fail: the engine's order rule must keep
    them apart, since a memory's order between its channels is not defined."""

    def __init__(self, mem: bytearray, base: int, rng, lat=(1, 1)):
        self.mem, self.base, self.rng, self.lat = mem, base, rng, lat
        self.answers: deque = deque()   # (due cycle, data)
        self.last_due = 0

    def answer(self, cycle: int):
        """The read answer due in this cycle, or None."""
        if self.answers and self.answers[0][0] <= cycle:
            return self.answers.popleft()[1]
        return None

    def offset(self, addr: int, what: str, cycle: int) -> int:
        o = addr - self.base
        assert addr % 8 == 0 and 0 <= o <= len(self.mem) - 8, f"cycle {cycle}: {what} address {addr:#x}"
        return o

    def accept(self, cycle: int, rd_addr=None, wr_addr=None, wr_data=0, wr_mask=0) -> None:
        """The requests the channels accepted in this cycle (None: none)."""
        if rd_addr is not None:
            o = self.offset(rd_addr, "read", cycle)
            due = max(self.last_due + 1, cycle + self.rng.randint(*self.lat))
            self.last_due = due
            self.answers.append((due, int.from_bytes(self.mem[o:o + 8], "little")))
        if wr_addr is not None:
            assert wr_addr != rd_addr, f"cycle {cycle}: a read and a write of word {wr_addr:#x} in one cycle"
            o = self.offset(wr_addr, "write", cycle)
            data = wr_data.to_bytes(8, "little")
            for k in range(8):
                if wr_mask >> k & 1:
                    self.mem[o + k] = data[k]


class NodePorts:
    """One node's ports on a test top that brings out a port of `count` nodes
    as one packed vector `prefix + name` (node i in slice i, as a generate loop
    indexes it). `port(name, i).value` reads or writes node i's slice. Writes
    go through a copy of the whole vector, so every node may set its slice in
    the same cycle (the last write of the vector carries them all)."""

    def __init__(self, dut, prefix: str, count: int):
        self.dut, self.prefix, self.count = dut, prefix, count
        self.written: dict[str, int] = {}
        self.ports: dict[tuple[str, int], NodePort] = {}

    def port(self, name: str, node: int) -> "NodePort":
        assert 0 <= node < self.count, f"{self.prefix}{name}: node {node} of {self.count}"
        if (name, node) not in self.ports:
            self.ports[(name, node)] = NodePort(self, name, node)
        return self.ports[(name, node)]


class NodePort:
    """Node `node`'s slice of a NodePorts vector, with a handle's `.value`."""

    def __init__(self, ports: NodePorts, name: str, node: int):
        self.handle = getattr(ports.dut, ports.prefix + name)
        self.ports, self.name, self.node = ports, name, node
        self.width = len(self.handle) // ports.count
        self.mask = (1 << self.width) - 1

    @property
    def value(self) -> int:
        return int(self.handle.value) >> (self.node * self.width) & self.mask

    @value.setter
    def value(self, v: int) -> None:
        v = int(v)
        assert 0 <= v <= self.mask, f"{self.ports.prefix}{self.name}[{self.node}] = {v:#x}: wider than {self.width} bits"
        shift = self.node * self.width
        old = self.ports.written.get(self.name, 0)
        new = old & ~(self.mask << shift) | v << shift
        self.ports.written[self.name] = new
        self.handle.value = new


# A request dict's field, as (port of the fabric tops, bits per compute node, value of the request).
REQUEST_FIELDS = (
    ("req_kind", 3, lambda r, rbase, lbase: r["kind"]),
    ("req_dst", 10, lambda r, rbase, lbase: r["dst"]),
    ("req_raddr", 64, lambda r, rbase, lbase: rbase + r["off"]),
    ("req_len", 16, lambda r, rbase, lbase: r["len"]),
    ("req_laddr", 64, lambda r, rbase, lbase: lbase + r["loff"]),
    ("req_rmw_op", 4, lambda r, rbase, lbase: r["op"]),
    ("req_arg0", 64, lambda r, rbase, lbase: r["arg0"]),
    ("req_arg1", 64, lambda r, rbase, lbase: r["arg1"]),
    ("req_tag", 8, lambda r, rbase, lbase: r["tag"]),
)


def drive_requests(dut, heads, rbase: int, lbase: int, put=None) -> None:
    """Drives a fabric top's compute-node request ports (node c in slice c)
    from each node's head request (a dict with kind, dst, off, len, loff, op,
    arg0, arg1, tag; None: no request): remote address rbase + off, local
    address lbase + loff. `put(handle, value)` writes (e.g. a Driver's)."""
    if put is None:
        def put(handle, value):
            handle.value = value
    put(dut.req_valid, sum(1 << c for c, r in enumerate(heads) if r is not None))
    for name, width, value in REQUEST_FIELDS:
        put(getattr(dut, name), sum(value(r, rbase, lbase) << (width * c) for c, r in enumerate(heads) if r is not None))

"""cocotb: edm_unit_receiver against a Python model, cycle by cycle.

The bench plays edm_rx's mem_* port: units of every kind made by the reference
codec (random fields, 0..300 data bytes) block by block with random gaps; some
end in mem_error, some are cut short by mem_abort, alone or together with the
next unit's /MS/ (as edm_rx delivers them). At every /MS/ it decides at random
whether the unit is kept (ms_store), as a node engine does from ms_kind/ms_len.
Checked in every cycle: fresh, cont, commit and bad_end against the model;
at an /MS/, ms_kind and ms_len against the message; while a kept unit is
received, rx_kind/src/dst/id/len/seq0 against the message's own fields and
rx_idx against the blocks taken so far. The T words of a kept unit, put
together (T = 2 zero bytes || M), must carry its address, operands and data
where the message layout puts them, and zeros past M. A kept unit ends in
exactly one commit (when good) or one bad_end; a unit not kept in neither.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

KIND = {"RREQ": protocol.KIND_RREQ, "WREQ": protocol.KIND_WREQ, "RMWREQ": protocol.KIND_RMWREQ,
        "RRES": protocol.KIND_RRES}
HEADER_BYTES = 8


def random_message(rng: random.Random) -> codec.Message:
    kind = rng.choice(list(KIND))
    common = dict(src=rng.randrange(1024), dst=rng.randrange(1024), msg_id=rng.randrange(256))
    n = rng.choice([rng.randint(0, 16), rng.randint(0, 300)])
    if kind == "RREQ":
        return codec.Message(kind, length=rng.randrange(1 << 16), addr=rng.getrandbits(64), **common)
    if kind == "RMWREQ":
        return codec.Message(kind, length=protocol.RMW_OPERAND_BYTES, addr=rng.getrandbits(64) & ~7,
                             op=rng.choice([protocol.RMW_CAS, protocol.RMW_FAA, protocol.RMW_SWAP]),
                             arg0=rng.getrandbits(64), arg1=rng.getrandbits(64), **common)
    seq, last = rng.randrange(1 << protocol.HDR_SEQ_W), rng.random() < 0.5
    data = rng.randbytes(n)
    if kind == "WREQ":
        return codec.Message(kind, length=n, addr=rng.getrandbits(64), seq=seq, last=last, data=data, **common)
    return codec.Message(kind, length=n, seq=seq, last=last, data=data, **common)


def check_t_bytes(m: codec.Message, t: bytes) -> None:
    """T = 2 zero bytes || M: the extension and data after the 8-byte header, zeros past M."""
    mbytes = t[2:]
    ext = mbytes[HEADER_BYTES:]
    want = {"RREQ": m.addr.to_bytes(8, "little"),
            "WREQ": m.addr.to_bytes(8, "little") + m.data,
            "RMWREQ": m.addr.to_bytes(8, "little") + m.arg0.to_bytes(8, "little") + m.arg1.to_bytes(8, "little"),
            "RRES": m.data}[m.kind]
    assert ext[:len(want)] == want, f"{m.kind} len {m.length}: T words carry {ext[:len(want)].hex()}, want {want.hex()}"
    assert not any(ext[len(want):]), f"{m.kind} len {m.length}: bytes past M are not zero: {ext[len(want):].hex()}"


class Bench:
    def __init__(self, dut, seed: int, p_gap=0.2, p_store=0.7):
        self.dut, self.rng = dut, seeded_random(seed)
        self.p_gap, self.p_store = p_gap, p_store
        self.cycle = 0
        # The model: the kept unit (message, T words so far) or None.
        self.kept = None
        self.ends = {"commit": 0, "bad_end": 0, "kept": 0, "fresh": 0}

    async def start(self):
        await clock_and_reset(self.dut, in_valid=0, in_block=0, in_first=0, in_last=0, in_error=0,
                              in_abort=0, ms_store=0)

    async def entry(self, valid=0, block=(0, 0), first=0, last=0, error=0, abort=0, msg=None, store=0):
        """One cycle of the mem_* port (the bench is at a falling edge)."""
        d = self.dut
        d.in_valid.value, d.in_first.value, d.in_last.value = valid, first, last
        d.in_error.value, d.in_abort.value, d.ms_store.value = error, abort, store
        d.in_block.value = block[0] | block[1] << 2
        await ReadOnly()
        at = f"cycle {self.cycle}"
        # The model's verdicts, from the port and the unit it keeps.
        fresh = bool(valid and first)
        cont = bool(valid and not first and self.kept is not None and not abort)
        commit = cont and bool(last) and not error
        bad_end = (self.kept is not None and bool(abort)) or (cont and bool(last) and bool(error))
        got = {n: int(getattr(d, n).value) for n in ("fresh", "cont", "commit", "bad_end")}
        assert got == {"fresh": fresh, "cont": cont, "commit": commit, "bad_end": bad_end}, f"{at}: {got}"
        if fresh:
            assert int(d.ms_kind.value) == KIND[msg.kind] and int(d.ms_len.value) == msg.length, \
                f"{at}: /MS/ kind {int(d.ms_kind.value)} len {int(d.ms_len.value)}, want {msg.kind} {msg.length}"
        if self.kept is not None:
            m, words = self.kept
            fields = {"rx_kind": KIND[m.kind], "rx_src": m.src, "rx_dst": m.dst, "rx_id": m.msg_id,
                      "rx_len": m.length, "rx_seq0": m.seq & 1, "rx_idx": len(words)}
            got = {n: int(getattr(d, n).value) for n in fields}
            assert got == fields, f"{at}: kept unit {got}, want {fields}"
            if cont:
                words.append(int(d.t_word.value))
        if commit or bad_end:
            if commit:
                m, words = self.kept
                check_t_bytes(m, b"".join(w.to_bytes(8, "little") for w in words))
            self.ends["commit" if commit else "bad_end"] += 1
        if abort or (cont and last):
            self.kept = None
        if fresh:
            self.ends["fresh"] += 1
            if store:
                self.kept = (msg, [0])   # T[0]'s word is never used: the header came as fields
                self.ends["kept"] += 1
        await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        self.cycle += 1

    async def gaps(self):
        while self.rng.random() < self.p_gap:
            await self.entry()

    async def run(self, units: int):
        """`units` random units; returns how many kept units ended good and bad."""
        rng = self.rng
        abort_with_ms = False   # the previous unit was cut short; its abort comes with this /MS/
        good = bad = 0
        for _ in range(units):
            m = random_message(rng)
            blocks = codec.encode_message(m)
            fate = rng.choices(["good", "error", "abort", "abort_ms"], [80, 8, 6, 6])[0]
            if fate == "error" and len(blocks) > 2:
                j = rng.randrange(1, len(blocks) - 1)
                s, p = blocks[j]
                blocks[j] = (s, p ^ (0xFF << 8 * rng.randrange(8)))
            if fate.startswith("abort"):
                blocks = blocks[:rng.randrange(1, len(blocks))]
            store = int(rng.random() < self.p_store)
            await self.gaps()
            await self.entry(1, blocks[0], first=1, abort=int(abort_with_ms), msg=m, store=store)
            abort_with_ms = False
            for k, b in enumerate(blocks[1:], 1):
                await self.gaps()
                last = k == len(blocks) - 1 and not fate.startswith("abort")
                await self.entry(1, b, last=int(last), error=int(last and fate == "error"))
            if fate == "abort":
                await self.gaps()
                await self.entry(abort=1)
            abort_with_ms = fate == "abort_ms"
            if store:
                good += fate == "good"
                bad += fate != "good"
        if abort_with_ms:
            await self.entry(abort=1)
        for _ in range(3):
            await self.entry()
        return good, bad


@cocotb.test()
async def units_as_edm_rx_delivers_them(dut):
    """3 000 units of every kind, 20 % idle cycles, 70 % kept."""
    b = Bench(dut, 1)
    await b.start()
    good, bad = await b.run(3000)
    assert b.ends["commit"] == good and b.ends["bad_end"] == bad, (b.ends, good, bad)
    assert good > 1500 and bad > 300, (good, bad)


@cocotb.test()
async def back_to_back_and_none_kept(dut):
    """No gaps (a block every cycle), then units that are never kept: no
    commit or bad_end may come from a unit that is not kept."""
    b = Bench(dut, 2, p_gap=0.0)
    await b.start()
    good, bad = await b.run(1000)
    assert (b.ends["commit"], b.ends["bad_end"]) == (good, bad), (b.ends, good, bad)
    b.p_store = 0.0
    before = dict(b.ends)
    await b.run(300)
    assert b.ends["commit"] == before["commit"] and b.ends["bad_end"] == before["bad_end"], b.ends

"""cocotb: edm_ordered_list (the paper's constant-time ordered list, §3.1.2)
against a Python model of a sorted list, every cycle.

The model applies each operation the cycle it is issued (a stable sorted
insert, removal of the first entry with the id, an update as removal then
insert); the RTL's entry registers must equal the model as it was two cycles
earlier (an operation's result is visible 2 cycles after issue), `ins_ready`
the model one cycle earlier (the list after the operation in flight), and
`res_refused` / `res_miss` the previous cycle's operation's outcome. Every
cycle the bench also drives a random eligibility mask and checks the head and
the first eligible entry (position, one-hot, key, data) against the model.

Directed tests issue their operations in consecutive cycles, so each one's
compare must see the one before (the RTL's forwarding): inserts at the
head, middle and tail and among equal keys, deletes of the head, middle and
tail, updates moving up and down, an operation on the entry inserted or
moved the cycle before, full-list refusal; then a seeded random stream of
mixed operations with few distinct keys and ids (many ties, duplicate and
absent ids).
"""

from __future__ import annotations

import os

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from tbutil import clock_and_reset, seeded_random

NONE, INS, DEL, UPD = 0, 1, 2, 3


class Model:
    def __init__(self, depth: int, id_mask: int):
        self.depth, self.id_mask = depth, id_mask
        self.entries: list[tuple[int, int]] = []   # (key, data), position 0 first

    def _insert(self, key: int, data: int) -> None:
        at = sum(1 for k, _ in self.entries if k <= key)   # stable: behind equal keys
        self.entries.insert(at, (key, data))

    def _find(self, data: int) -> int | None:
        return next((i for i, (_, d) in enumerate(self.entries) if (d ^ data) & self.id_mask == 0), None)

    def apply(self, op: int, key: int, data: int) -> tuple[bool, bool]:
        """Applies one operation; returns (refused, miss)."""
        if op == INS:
            if len(self.entries) == self.depth:
                return True, False
            self._insert(key, data)
        elif op in (DEL, UPD):
            at = self._find(data)
            if at is None:
                return False, True
            del self.entries[at]
            if op == UPD:
                self._insert(key, data)
        return False, False


class Bench:
    def __init__(self, dut, seed: int = 0):
        self.dut = dut
        self.depth = len(dut.e_valid)
        self.key_w = len(dut.head_key)
        self.data_w = len(dut.head_data)
        self.id_w = int(os.environ.get("EDM_OL_ID_W", self.data_w))
        self.model = Model(self.depth, (1 << self.id_w) - 1)
        self.hist = [[], []]   # the model after each cycle's operation (two empty lists before the first)
        self.last = (False, False)
        self.rng = seeded_random(seed)
        self.cycle = 0
        self.counts = {"refused": 0, "miss": 0, "ops": 0}

    async def start(self):
        await clock_and_reset(self.dut, op=0, op_key=0, op_data=0, elig=0)

    def full_next(self) -> bool:
        """The list after every operation issued so far is full (an insert now is refused)."""
        return len(self.model.entries) == self.depth

    def field(self, sig, i: int, w: int) -> int:
        return (int(sig.value) >> (i * w)) & ((1 << w) - 1)

    async def step(self, op: int = NONE, key: int = 0, data: int = 0, elig: int | None = None):
        dut, c = self.dut, self.cycle
        elig = self.rng.getrandbits(self.depth) if elig is None else elig
        key &= (1 << self.key_w) - 1
        data &= (1 << self.data_w) - 1
        dut.op.value = op
        dut.op_key.value = key
        dut.op_data.value = data
        dut.elig.value = elig
        await ReadOnly()
        # Registers: the list as it was after the operation of two cycles ago.
        seen = self.hist[-2]
        ev = int(dut.e_valid.value)
        assert ev == (1 << len(seen)) - 1, f"cycle {c}: e_valid {ev:b}, model {len(seen)} entries {seen}"
        got = [(self.field(dut.e_key, i, self.key_w), self.field(dut.e_data, i, self.data_w))
               for i in range(len(seen))]
        assert got == seen, f"cycle {c}: entries {got}, model {seen}"
        assert int(dut.head_valid.value) == bool(seen), f"cycle {c}: head_valid"
        if seen:
            assert (int(dut.head_key.value), int(dut.head_data.value)) == seen[0], f"cycle {c}: head"
        first = next((i for i in range(len(seen)) if elig >> i & 1), None)
        assert int(dut.fe_valid.value) == (first is not None), f"cycle {c}: fe_valid, mask {elig:b}"
        assert int(dut.fe_onehot.value) == (0 if first is None else 1 << first), f"cycle {c}: fe_onehot"
        if first is not None:
            assert int(dut.fe_pos.value) == first, f"cycle {c}: fe_pos"
            assert (int(dut.fe_key.value), int(dut.fe_data.value)) == seen[first], f"cycle {c}: fe entry"
        # The list after the operation in flight (last cycle's).
        assert int(dut.ins_ready.value) == (len(self.hist[-1]) < self.depth), f"cycle {c}: ins_ready"
        assert (int(dut.res_refused.value), int(dut.res_miss.value)) == self.last, \
            f"cycle {c}: res_refused/res_miss, model {self.last}"
        self.last = self.model.apply(op, key, data)
        self.counts["refused"] += self.last[0]
        self.counts["miss"] += self.last[1]
        self.counts["ops"] += op != NONE
        self.hist = [self.hist[-1], list(self.model.entries)]
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        self.cycle += 1

    async def drain(self, cycles: int = 3):
        for _ in range(cycles):
            await self.step()

    def data(self, ident: int, extra: int = 0) -> int:
        """Data with id `ident` in its low bits and `extra` above (if DATA_W leaves room)."""
        return (ident | extra << self.id_w) & ((1 << self.data_w) - 1)

    def keys(self) -> list[int]:
        return [k for k, _ in self.model.entries]

    def ids(self) -> list[int]:
        return [d & self.model.id_mask for _, d in self.model.entries]


@cocotb.test()
async def insert_head_middle_tail_and_ties(dut):
    """Inserts back to back: into the empty list, at the tail, at the head, in
    the middle; equal keys keep their insertion order (the later one behind)."""
    b = Bench(dut, 1)
    await b.start()
    plan = [(50, 1), (90, 2), (10, 3), (50, 4), (70, 5), (50, 6), (10, 7), (90, 8)]
    for key, ident in plan[:b.depth]:
        await b.step(INS, key, b.data(ident, 1))
    await b.drain()
    if b.depth >= 8:
        assert b.ids() == [3, 7, 1, 4, 6, 5, 2, 8], b.ids()


@cocotb.test()
async def delete_head_middle_tail(dut):
    """Deletes right after the inserts, then of the head, the tail and the
    middle in consecutive cycles; an absent id is flagged (res_miss), and a
    delete of the entry inserted the cycle before finds it."""
    b = Bench(dut, 2)
    await b.start()
    n = min(b.depth, 6)
    for i in range(n):
        await b.step(INS, 100 - 10 * i, b.data(i + 1))
    await b.step(DEL, 0, b.data(n))          # the head (smallest key), inserted last
    await b.step(DEL, 0, b.data(1))          # the tail
    await b.step(DEL, 0, b.data(99))         # absent
    if n >= 5:
        await b.step(DEL, 0, b.data(3))      # the middle
    await b.step(INS, 5, b.data(40))
    await b.step(DEL, 0, b.data(40))         # inserted the cycle before
    await b.step(DEL, 0, b.data(40))         # now absent
    await b.drain()
    assert b.counts["miss"] == 2, b.counts


@cocotb.test()
async def update_key_up_and_down(dut):
    """Updates in consecutive cycles: an entry's key decremented every cycle
    (SRPT: it moves up, past others), increased (moves down), set to an equal
    key (goes behind the equals), an update of the entry moved the cycle
    before, of the entry inserted the cycle before, and of an absent id."""
    b = Bench(dut, 3)
    await b.start()
    n = min(b.depth - 1, 6)   # room left for the insert below
    for i in range(n):
        await b.step(INS, 100 * (i + 1), b.data(i + 1))
    for key in (550, 450, 350, 150, 50, 0):   # the tail moves up to the head, a step a cycle
        await b.step(UPD, key, b.data(n))
    await b.step(UPD, 1000, b.data(n))        # head to tail
    await b.step(UPD, 200, b.data(n))         # back among them, behind the equal key
    await b.step(UPD, 200, b.data(1, 1))      # 100 -> 200: behind both 200s (and data changed)
    await b.step(INS, 150, b.data(30))
    await b.step(UPD, 50, b.data(30))         # the entry inserted the cycle before
    await b.step(UPD, 50, b.data(77))         # absent
    await b.drain()
    assert b.counts["miss"] == 1 and b.counts["refused"] == 0, b.counts


@cocotb.test()
async def full_list_refuses_inserts(dut):
    """Inserts every cycle until full: ins_ready falls as the last one is
    issued, the next insert is refused (res_refused); a delete in flight makes
    room for the insert of the very next cycle; an update of a full list works."""
    b = Bench(dut, 4)
    await b.start()
    for i in range(b.depth):
        await b.step(INS, b.rng.randrange(8), b.data(i))
    await b.step(INS, 3, b.data(200 % (1 << b.id_w)))    # refused
    await b.step(DEL, 0, b.data(0))
    await b.step(INS, 0, b.data(201 % (1 << b.id_w)))    # the room the delete left
    await b.step(INS, 0, b.data(202 % (1 << b.id_w)))    # refused again
    await b.step(UPD, 7, b.data(1))
    await b.drain()
    assert b.counts["refused"] == 2, b.counts


@cocotb.test()
async def peek_and_first_eligible(dut):
    """The head and the first eligible entry under random masks (every mask
    bit pattern of a full list, and masks with only invalid positions set),
    while operations go on."""
    b = Bench(dut, 5)
    await b.start()
    for i in range(b.depth):
        await b.step(INS, b.rng.randrange(4), b.data(i), elig=0)
    for _ in range(4 * b.depth):
        await b.step(elig=b.rng.getrandbits(b.depth))
    for i in range(b.depth):
        await b.step(elig=1 << i)
    for _ in range(b.depth):
        await b.step(DEL, 0, b.data(b.rng.randrange(b.depth)), elig=b.rng.getrandbits(b.depth))
    await b.drain()


@cocotb.test()
async def random_stream(dut):
    """A seeded random stream of every operation, one almost every cycle,
    with few keys and ids: ties, duplicate ids, absent ids, a list that fills
    and empties."""
    seed = 21
    b = Bench(dut, seed)
    rng = seeded_random(seed)
    await b.start()
    keys = max(3, b.depth // 2)
    ids = min(1 << b.id_w, 2 * b.depth)
    cycles = int(os.environ.get("EDM_OL_CYCLES", "3000"))
    fill = 0.6
    for c in range(cycles):
        if c % 500 == 0:
            fill = rng.choice([0.3, 0.6, 0.8])   # phases that drain, hover, fill
        r = rng.random()
        live = b.ids()
        if r < 0.1:
            await b.step()
        elif r < 0.1 + fill * 0.6 or not live:
            await b.step(INS, rng.randrange(keys), b.data(rng.randrange(ids), rng.getrandbits(4)))
        elif r < 0.75:
            ident = rng.choice(live) if rng.random() < 0.9 else rng.randrange(ids)
            await b.step(DEL, 0, b.data(ident))
        else:
            ident = rng.choice(live) if rng.random() < 0.9 else rng.randrange(ids)
            key = rng.randrange(keys)
            await b.step(UPD, key, b.data(ident, rng.getrandbits(4)))
    await b.drain()
    dut._log.info("random stream: %s over %d cycles", b.counts, b.cycle)
    assert b.counts["refused"] > 0 and b.counts["miss"] > 0, b.counts

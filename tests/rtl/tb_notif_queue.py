"""cocotb: edm_notif_queue (one destination's notification queue) against a
Python model of the ordered list it keeps, every cycle.

The model keeps the entries in slots as the RTL allocates them (an insert
takes the lowest free slot) and ranks them the way the reference scheduler
does: SRPT by (remaining bytes, arrival), FCFS by arrival. Each cycle it checks
the outputs against the model: room (a slot is free), nonempty, the request
(the best visible entry that is its pair's head, with pair order, and whose
source and destination ports are free: slot, also one-hot, source, id, bytes,
kind), the slot an insert is written into (wr_slot, one-hot)
and the best visible pair head whatever the ports (priority hold's view). The
ports are given a cycle ahead (src_free_next, dst_free_next), as the scheduler
does. Then it applies the cycle's insert and grant update (a chunk of an entry,
or its end) to the model.

Directed tests exercise each operation back to back: an insert every cycle
into a filling queue, a grant update of the same entry on consecutive cycles (its
key moves past others), a removal and the slot's reuse the next cycle, and an
insert and an update in one cycle; a random test mixes everything.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from tbutil import clock_and_reset, seeded_random

ID_W = protocol.NG_ID_W
SIZE_W = protocol.NG_SIZE_W
VISIBLE_AFTER = protocol.SW_NQ_INSERT_CYCLES  # cycles from insert to first request


class Model:
    def __init__(self, depth: int, srpt: bool, pair_order: bool):
        self.depth, self.srpt, self.pair_order = depth, srpt, pair_order
        self.slots: list[dict | None] = [None] * depth
        self.pending: dict | None = None
        self.order = 0

    def key(self, e: dict):
        return (e["rem"], e["order"]) if self.srpt else (e["order"],)

    def visible(self, cycle: int) -> list[int]:
        return [j for j, e in enumerate(self.slots) if e and cycle - e["cycle"] >= VISIBLE_AFTER]

    def head(self, j: int) -> bool:
        e = self.slots[j]
        return not self.pair_order or not any(
            o and o["src"] == e["src"] and o["order"] < e["order"] for o in self.slots)

    def request(self, cycle: int, src_free: int, dst_free: bool):
        cand = [j for j in self.visible(cycle) if self.head(j)]
        best = min(cand, key=lambda j: self.key(self.slots[j]), default=None)
        elig = [j for j in cand if dst_free and src_free >> self.slots[j]["src"] & 1]
        win = min(elig, key=lambda j: self.key(self.slots[j]), default=None)
        return win, best

    def insert(self, cycle: int, src: int, msg: int, size: int, rres: int) -> None:
        """An insert decided this cycle: it takes its slot (the lowest free one
        then) at the next clock edge, as the RTL writes it from a register."""
        self.pending = {"src": src, "msg": msg, "rem": size, "rres": rres,
                        "order": self.order, "cycle": cycle}
        self.order += 1

    def pending_slot(self) -> int | None:
        """The slot the pending insert is written into at the next clock edge."""
        return None if self.pending is None else self.slots.index(None)

    def place_pending(self) -> None:
        if self.pending is not None:
            self.slots[self.pending_slot()] = self.pending
            self.pending = None


class Bench:
    def __init__(self, dut):
        self.dut = dut
        self.n = int(dut.N.value)
        self.depth = int(dut.DEPTH.value)
        self.model = Model(self.depth, bool(int(dut.SRPT.value)), bool(int(dut.PAIR_ORDER.value)))
        self.cycle = 0
        self.ports = (0, False)   # (source ports, destination port) free this cycle
        self.grants = self.inserts = self.removals = 0

    async def start(self):
        await clock_and_reset(self.dut, ins_v=0, ins_src=0, ins_msg=0, ins_size=0, ins_rres=0,
                              src_free_next=0, dst_free_next=0, g_hit=0, g_j=0, g_last=0, g_rem_next=0)

    def free(self) -> int:
        """Slots an insert may still take (the pending insert has one)."""
        return sum(e is None for e in self.model.slots) - (self.model.pending is not None)

    async def step(self, ins=None, src_free: int | None = None, dst_free: bool = True,
                   grant: tuple[int, int] | None = None):
        """One cycle. ins: (src, msg, size, rres) to insert (if there is room);
        grant: (slot, bytes) granted (the whole rest ends the entry); src_free,
        dst_free: the ports free in the next cycle."""
        dut, n = self.dut, self.n
        src_free = (1 << n) - 1 if src_free is None else src_free
        room = self.free() > 0
        if ins is not None:
            s, m, b, r = ins
            dut.ins_src.value = s
            dut.ins_msg.value = m
            dut.ins_size.value = b
            dut.ins_rres.value = r
        dut.ins_v.value = int(ins is not None and room)
        dut.src_free_next.value = src_free
        dut.dst_free_next.value = int(dst_free)
        last = False
        if grant is not None:
            j, b = grant
            e = self.model.slots[j]
            assert e is not None, f"test bug: grant of empty slot {j}"
            last = b >= e["rem"]
            dut.g_hit.value = 1
            dut.g_j.value = j
            dut.g_last.value = int(last)
            dut.g_rem_next.value = (e["rem"] - b) & ((1 << SIZE_W) - 1)
        else:
            dut.g_hit.value = 0
        await ReadOnly()
        c = self.cycle
        assert int(dut.room.value) == room, f"cycle {c}: room"
        queued = self.model.pending is not None or any(self.model.slots)
        assert int(dut.nonempty.value) == queued, f"cycle {c}: nonempty"
        written = self.model.pending_slot()
        assert int(dut.wr_slot.value) == (0 if written is None else 1 << written), f"cycle {c}: wr_slot"
        waiting = sum({1 << e["src"] for e in self.model.slots if e})
        assert int(dut.src_waiting.value) == waiting, f"cycle {c}: src_waiting"
        win, best = self.model.request(c, *self.ports)
        self.ports = (src_free, dst_free)
        assert int(dut.rq_v.value) == (win is not None), f"cycle {c}: rq_v, model slot {win}"
        if win is None:
            assert int(dut.rq_win.value) == 0, f"cycle {c}: rq_win without a request"
        if win is not None:
            e = self.model.slots[win]
            got = (int(dut.rq_j.value), int(dut.rq_src.value), int(dut.rq_msg.value), int(dut.rq_rem.value),
                   int(dut.rq_rres.value), int(dut.rq_win.value))
            assert got == (win, e["src"], e["msg"], e["rem"], e["rres"], 1 << win), \
                f"cycle {c}: request {got}, model slot {win} {e}"
            if best is not None:
                assert int(dut.rq_best_rem.value) == self.model.slots[best]["rem"], f"cycle {c}: best_rem"
                assert int(dut.rq_not_best.value) == (best != win), f"cycle {c}: not_best"
        # The clock edge: last cycle's insert takes its slot, this cycle's is
        # registered, then the grant update.
        self.model.place_pending()
        if ins is not None and room:
            self.model.insert(c, *ins)
            self.inserts += 1
        if grant is not None:
            j, b = grant
            if last:
                self.model.slots[j] = None
                self.removals += 1
            else:
                self.model.slots[j]["rem"] -= b
            self.grants += 1
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        self.cycle += 1
        return win


def notif(rng: random.Random, b: Bench, size: int | None = None, src: int | None = None):
    return (rng.randrange(b.n) if src is None else src, rng.randrange(1 << ID_W),
            size if size is not None else rng.choice([1, 8, 64, 255, 256, 257, rng.randrange(1, 4000)]),
            rng.randrange(2))


@cocotb.test()
async def inserts_back_to_back_fill_and_refuse(dut):
    """An insert every cycle until the queue is full; then room is low."""
    b = Bench(dut)
    rng = seeded_random(1)
    await b.start()
    while b.free() > 0:
        await b.step(notif(rng, b), src_free=0)
    await b.step(notif(rng, b), src_free=0)
    for _ in range(VISIBLE_AFTER + 1):
        await b.step()
    assert b.inserts == b.depth


@cocotb.test()
async def update_key_moves_an_entry_and_peek_follows(dut):
    """SRPT: granting chunks of one entry on consecutive cycles moves it ahead
    of the others (and, at equal bytes, the older entry still wins); the
    request output follows the very next cycle. FCFS: the order never moves."""
    b = Bench(dut)
    rng = seeded_random(2)
    await b.start()
    sizes = [1000, 700, 700, 300]
    for i, size in enumerate(sizes):
        await b.step(notif(rng, b, size=size, src=i % b.n))
    for _ in range(VISIBLE_AFTER):
        await b.step()
    for _ in range(5):                       # slot 0 (1000 B) loses 200 B a cycle
        await b.step(grant=(0, 200))
    for _ in range(3):
        await b.step(grant=(1, 100))         # 700 -> 400: behind the 300 B entry, ahead of the other 700
    assert b.grants == 8


@cocotb.test()
async def remove_then_reuse_and_insert_with_update(dut):
    """A removal frees its slot the next cycle, a new entry takes it (and is
    younger than every other); an insert and a grant update in one cycle."""
    b = Bench(dut)
    rng = seeded_random(3)
    await b.start()
    for i in range(b.depth):
        await b.step(notif(rng, b, size=64 * (i + 1), src=i % b.n))
    for _ in range(VISIBLE_AFTER):
        await b.step()
    for j in range(b.depth):
        await b.step(notif(rng, b, size=32) if j else None, grant=(j, 1 << 16))
        await b.step(notif(rng, b, size=rng.randrange(1, 600)), grant=(j, 16) if b.model.slots[j] else None)
    assert b.removals >= b.depth


@cocotb.test()
async def random_operations_match_the_model(dut):
    b = Bench(dut)
    rng = seeded_random(4 + b.depth)
    await b.start()
    for _ in range(3000):
        ins = notif(rng, b, src=rng.randrange(2) if rng.random() < 0.5 else None) if rng.random() < 0.6 else None
        live = [j for j, e in enumerate(b.model.slots) if e]
        grant = None
        r = rng.random()
        if live and r < 0.5:
            win, _ = b.model.request(b.cycle, (1 << b.n) - 1, True)
            j = win if win is not None and r < 0.4 else rng.choice(live)
            grant = (j, rng.choice([16, 64, 256, 1 << 16]))
        await b.step(ins, src_free=rng.randrange(1 << b.n), dst_free=rng.random() < 0.9, grant=grant)
    dut._log.info(f"{b.inserts} inserts, {b.grants} grant updates, {b.removals} removals")
    assert b.inserts > 500 and b.removals > 300

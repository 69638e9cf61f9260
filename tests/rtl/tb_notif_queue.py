"""cocotb: edm_notif_queue (one destination's notification queue: N pairs of
X slots, a comparator tree over the pairs) against a Python model, every cycle.

The model keeps the entries in slots as the RTL allocates them (an insert
takes the lowest free slot of its pair) with an unbounded arrival counter,
and ranks them the way the reference scheduler does: SRPT by (remaining
bytes, arrival), FCFS by arrival. The bench gives the RTL each insert's
arrival stamp (the counter mod 2^STAMP_W) as the scheduler does, the cycle the
insert is written. Each cycle it checks the outputs against the model: room
(the queue below DEPTH), pair_room (each pair below X), nonempty,
src_waiting, the request (the best visible entry that is its pair's oldest,
with pair order, and whose source and destination ports are free: pair, slot,
id, bytes, kind, stamp) and, with HOLD_TREE, the best visible candidate
whatever the ports (priority hold's view). The ports are given a cycle ahead
(src_free_next, dst_free_next), as the scheduler does. Then it applies the
cycle's insert and grant update (a chunk of an entry, or its end).
With REGISTERED_TREE the insert is per pair: pair s has two writers, lane s
(sins_v[s], its fields on lw_* the cycle after) and the queue's own lane
(ins_*, Q_LANE), written in lane order, each stamped {inserting cycles; lane};
pair_room[s]: its entries and pending inserts fewer than X (a writer does not
see the other writer of its cycle, so a pair takes at most X + 1, in X + 1
slots); room is always 1 (DEPTH unused).

Directed tests exercise each operation back to back: inserts every cycle into
one pair and then the others until the pair and the queue refuse; a key update
of the same entry on consecutive cycles (it moves past others); a removal at
the last chunk and the slot's reuse the next cycle; an insert and an update of
one pair in one cycle; the best eligible entry granted every cycle while the
ports change. A random test mixes everything; with a small STAMP_W it runs
the stamps around their wrap many times (the bench keeps every live entry
within 2^(STAMP_W-1) arrivals of the newest, the stamps' exact range).
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


Q_LANE = 1   # REGISTERED_TREE: the queue's own lane (its destination port)


class Model:
    def __init__(self, n: int, x: int, depth: int, srpt: bool, pair_order: bool):
        self.n, self.x, self.depth, self.srpt, self.pair_order = n, x, depth, srpt, pair_order
        self.slots: list[list[dict | None]] = [[None] * x for _ in range(n)]
        self.pending: list[dict] = []   # inserts decided this cycle, oldest first
        self.order = 0

    def key(self, e: dict):
        return (e["rem"], e["order"]) if self.srpt else (e["order"],)

    def entries(self):
        return [(s, j, e) for s in range(self.n) for j, e in enumerate(self.slots[s]) if e]

    def count(self) -> int:
        return len(self.entries())

    def request(self, cycle: int, src_free: int, dst_free: bool):
        """(win, best): (pair, slot) of the best eligible entry and of the best candidate."""
        cand = []
        for s, j, e in self.entries():
            if cycle - e["cycle"] < VISIBLE_AFTER:
                continue
            if self.pair_order and any(o and o["order"] < e["order"] for o in self.slots[s]):
                continue
            cand.append((s, j))
        rank = lambda sj: self.key(self.slots[sj[0]][sj[1]])  # noqa: E731
        best = min(cand, key=rank, default=None)
        elig = [sj for sj in cand if dst_free and src_free >> sj[0] & 1]
        return min(elig, key=rank, default=None), best

    def insert(self, cycle: int, src: int, msg: int, size: int, rres: int, order: int | None = None) -> None:
        """An insert decided this cycle: it takes its slot (the lowest free one
        of its pair then) at the next clock edge, as the RTL writes it from a register."""
        if order is None:
            order, self.order = self.order, self.order + 1
        self.pending.append({"src": src, "msg": msg, "rem": size, "rres": rres, "order": order, "cycle": cycle})

    def place_pending(self) -> None:
        for p in sorted(self.pending, key=lambda e: e["order"]):
            pair = self.slots[p["src"]]
            pair[pair.index(None)] = p
        self.pending = []


class Bench:
    def __init__(self, dut):
        self.dut = dut
        self.n = int(dut.N.value)
        self.x = int(dut.X.value)
        self.depth = int(dut.DEPTH.value)
        self.registered = int(dut.REGISTERED_TREE.value)   # inserts per pair (two writers); X + 1 slots per pair
        self.stamp_w = int(dut.STAMP_W.value)
        self.hold_tree = bool(int(dut.HOLD_TREE.value))
        self.model = Model(self.n, self.x + self.registered, self.depth, bool(int(dut.SRPT.value)), bool(int(dut.PAIR_ORDER.value)))
        self.cycle = 0
        self.ports = (0, False)   # (source ports, destination port) free this cycle
        self.grants = self.inserts = self.removals = self.refusals = 0
        self.pw = max(1, (self.n - 1).bit_length())
        self.insert_cycles = 0    # registered: cycles that inserted (the stamps' upper bits)
        self.lane_fields = [(0, 0, 0)] * self.n   # registered: lw_* as driven next cycle

    async def start(self):
        await clock_and_reset(self.dut, ins_v=0, ins_src=0, ins_msg=0, ins_size=0, ins_rres=0, wr_stamp=0,
                              sins_v=0, lw_msg=0, lw_size=0, lw_rres=0, q_lane=Q_LANE,
                              src_free_next=0, dst_free_next=0, g_hit=0, g_src=0, g_j=0, g_last=0, g_rem_next=0)

    def pair_free(self, s: int) -> int:
        """Inserts pair s may still take (the pending inserts have their
        slots; registered: its entries and pending inserts below X)."""
        pend = sum(p["src"] == s for p in self.model.pending)
        if self.registered:
            return self.x - len(self.model.slots[s]) + self.model.slots[s].count(None) - pend
        return self.model.slots[s].count(None) - pend

    def room(self) -> bool:
        """Fewer than DEPTH entries, counting the pending insert (registered: always)."""
        return bool(self.registered) or self.model.count() + len(self.model.pending) < self.depth

    def in_range(self) -> bool:
        """A new arrival keeps every live entry's stamp within the exact range."""
        live = [e["order"] for _, _, e in self.model.entries()]
        nxt = (self.insert_cycles + 1) << self.pw if self.registered else self.model.order
        return not live or nxt - min(live) < (1 << (self.stamp_w - 1)) - 1

    async def step(self, ins=None, src_free: int | None = None, dst_free: bool = True,
                   grant: tuple[int, int, int] | None = None, sins: dict | None = None):
        """One cycle. ins: (src, msg, size, rres) to insert (if there is room;
        registered: from the queue's own lane, or from lane src if src is
        Q_LANE); sins (registered): {pair s: (msg, size, rres)} from lane s;
        grant: (pair, slot, bytes) granted (the whole rest ends the entry);
        src_free, dst_free: the ports free in the next cycle."""
        dut, n = self.dut, self.n
        src_free = (1 << n) - 1 if src_free is None else src_free
        sins = dict(sins or {})
        if self.registered and ins is not None and ins[0] == Q_LANE:
            if Q_LANE not in sins:
                sins[Q_LANE] = ins[1:]
            ins = None
        room = self.room()
        pair_room = sum((self.pair_free(s) > 0) << s for s in range(n))
        take = ins is not None and room and pair_room >> ins[0] & 1 and self.in_range()
        if ins is not None:
            s, m, b, r = ins
            dut.ins_src.value = s
            dut.ins_msg.value = m
            dut.ins_size.value = b
            dut.ins_rres.value = r
            self.refusals += not take
        dut.ins_v.value = int(take)
        stake = {s: f for s, f in sins.items() if pair_room >> s & 1 and self.in_range()}
        self.refusals += len(sins) - len(stake)
        dut.sins_v.value = sum(1 << s for s in stake)
        msg = size = rres = 0
        for s, (m, b, r) in enumerate(self.lane_fields):
            msg |= m << (s * ID_W)
            size |= b << (s * SIZE_W)
            rres |= r << s
        dut.lw_msg.value, dut.lw_size.value, dut.lw_rres.value = msg, size, rres
        p = self.model.pending
        if self.registered:
            dut.wr_stamp.value = (p[0]["order"] >> self.pw << self.pw) % (1 << self.stamp_w) if p else 0
        else:
            dut.wr_stamp.value = p[0]["order"] % (1 << self.stamp_w) if p else 0
        dut.src_free_next.value = src_free
        dut.dst_free_next.value = int(dst_free)
        last = False
        if grant is not None:
            s, j, b = grant
            e = self.model.slots[s][j]
            assert e is not None, f"test bug: grant of empty slot {s}.{j}"
            last = b >= e["rem"]
            dut.g_hit.value = 1
            dut.g_src.value = s
            dut.g_j.value = j
            dut.g_last.value = int(last)
            dut.g_rem_next.value = (e["rem"] - b) & ((1 << SIZE_W) - 1)
        else:
            dut.g_hit.value = 0
        await ReadOnly()
        c = self.cycle
        assert int(dut.room.value) == room, f"cycle {c}: room"
        assert int(dut.pair_room.value) == pair_room, f"cycle {c}: pair_room {int(dut.pair_room.value):b}"
        entries = self.model.entries()
        assert int(dut.nonempty.value) == (bool(p) or bool(entries)), f"cycle {c}: nonempty"
        waiting = sum({1 << s for s, _, _ in entries})
        assert int(dut.src_waiting.value) == waiting, f"cycle {c}: src_waiting"
        win, best = self.model.request(c, *self.ports)
        self.ports = (src_free, dst_free)
        assert int(dut.rq_v.value) == (win is not None), f"cycle {c}: rq_v, model {win}"
        if win is not None:
            s, j = win
            e = self.model.slots[s][j]
            got = (int(dut.rq_src.value), int(dut.rq_j.value), int(dut.rq_msg.value), int(dut.rq_rem.value),
                   int(dut.rq_rres.value), int(dut.rq_stamp.value))
            assert got == (s, j, e["msg"], e["rem"], e["rres"], e["order"] % (1 << self.stamp_w)), \
                f"cycle {c}: request {got}, model {win} {e}"
            if self.hold_tree and best is not None:
                assert int(dut.rq_best_rem.value) == self.model.slots[best[0]][best[1]]["rem"], f"cycle {c}: best_rem"
                assert int(dut.rq_not_best.value) == (best != win), f"cycle {c}: not_best"
        # The clock edge: last cycle's insert takes its slot, this cycle's is
        # registered, then the grant update.
        self.model.place_pending()
        if self.registered:
            # Lane order within the cycle: stamps {inserting cycles; lane}.
            new = ([(Q_LANE, ins)] if take else []) + [(s, (s, *f)) for s, f in stake.items()]
            for lane, x in sorted(new):
                self.model.insert(c, *x, order=(self.insert_cycles << self.pw) + lane)
            self.insert_cycles += bool(new)
            self.inserts += len(new)
            self.lane_fields = [stake.get(s, (0, 0, 0)) for s in range(n)]
        elif take:
            self.model.insert(c, *ins)
            self.inserts += 1
        if grant is not None:
            s, j, b = grant
            if last:
                self.model.slots[s][j] = None
                self.removals += 1
            else:
                self.model.slots[s][j]["rem"] -= b
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
    """An insert every cycle into pair 0 until it is full (pair_room drops,
    the next insert is refused), then into the other pairs until the queue
    holds DEPTH (room drops). With REGISTERED_TREE one writer fills a pair to
    X exactly (its pending inserts counted); its two writers in the same
    cycles (lane s and the queue's own lane) to X + 1 when X is odd (each
    sees the pair as it was at the cycle's start), and the queue to
    N·(X + 1) less the pairs of one writer (its own lane's pair)."""
    b = Bench(dut)
    rng = seeded_random(1)
    await b.start()
    while b.pair_free(0) > 0:
        await b.step(notif(rng, b, src=0), src_free=0)
    await b.step(notif(rng, b, src=0), src_free=0)
    assert b.refusals == 1 and b.inserts == b.x, (b.refusals, b.inserts)
    if b.registered:
        for s in range(1, b.n):
            while b.pair_free(s) > 0:
                await b.step(notif(rng, b, src=s) if s != Q_LANE else None, src_free=0,
                             sins={s: notif(rng, b, src=s)[1:]})
        for _ in range(VISIBLE_AFTER + 1):
            await b.step()
        full = b.x + sum(b.x + b.x % 2 if s != Q_LANE else b.x for s in range(1, b.n))
        assert b.inserts == full and max(len([e for e in p if e]) for p in b.model.slots) <= b.x + 1, b.inserts
        return
    s = 1
    while b.room() and b.in_range():
        if b.pair_free(s) == 0:
            s = (s + 1) % b.n
            continue
        await b.step(notif(rng, b, src=s), src_free=0)
    await b.step(notif(rng, b, src=(s + 1) % b.n), src_free=0)
    for _ in range(VISIBLE_AFTER + 1):
        await b.step()
    full = min(b.depth + b.registered, b.n * (b.x + b.registered), 1 << (b.stamp_w - 1))
    assert b.inserts == full or not b.in_range(), b.inserts


@cocotb.test()
async def update_key_moves_an_entry_and_peek_follows(dut):
    """SRPT: granting chunks of one entry on consecutive cycles moves it ahead
    of the others (within its pair and across pairs; at equal bytes the older
    entry still wins); the request output follows the very next cycle.
    FCFS: the order never moves."""
    b = Bench(dut)
    rng = seeded_random(2)
    await b.start()
    for src, size in [(0, 1000), (1, 700), (0, 700), (1 % b.n, 300), (2 % b.n, 700)]:
        await b.step(notif(rng, b, size=size, src=src))
    for _ in range(VISIBLE_AFTER):
        await b.step()
    for _ in range(4):                       # pair 0 slot 0 (1000 B) loses 200 B a cycle
        await b.step(grant=(0, 0, 200))
    for _ in range(3):
        await b.step(grant=(0, 1, 100))      # 700 -> 400 in pair 0 slot 1
    for _ in range(3):
        await b.step()
    assert b.grants == 7


@cocotb.test()
async def remove_then_reuse_and_insert_with_update(dut):
    """A removal at the last chunk frees its slot the next cycle and a new
    entry of the same pair takes it (the youngest of its pair); an insert and
    an update of one pair in one cycle."""
    b = Bench(dut)
    rng = seeded_random(3)
    await b.start()
    for s in range(b.n):
        for j in range(b.model.x):
            if b.room() and b.in_range():
                await b.step(notif(rng, b, size=64 * (s + j + 1), src=s))
    for _ in range(VISIBLE_AFTER):
        await b.step()
    for s in range(b.n):
        for j in range(b.model.x):
            if b.model.slots[s][j]:
                await b.step(None, grant=(s, j, 1 << 16))                 # removed
                await b.step(notif(rng, b, size=32, src=s))               # its slot reused
                live = [k for k in range(b.model.x) if b.model.slots[s][k]]
                await b.step(notif(rng, b, size=rng.randrange(1, 600), src=s),
                             grant=(s, live[0], 16) if live else None)    # insert + update, one pair
    for _ in range(4):
        await b.step()
    assert b.removals >= min(b.depth, b.n * b.x) // 2


@cocotb.test()
async def best_eligible_granted_back_to_back(dut):
    """The scheduler's use: every cycle the request is granted a chunk (the
    update lands while the next request is read) while inserts arrive and
    the source ports change; the best eligible entry follows each cycle."""
    b = Bench(dut)
    rng = random.Random(5)
    await b.start()
    for _ in range(1500):
        ports = b.ports
        win, _ = b.model.request(b.cycle, *ports)
        grant = (win[0], win[1], rng.choice([16, 64, 256])) if win is not None else None
        ins = notif(rng, b, size=rng.choice([16, 64, 200, 600])) if rng.random() < 0.5 else None
        await b.step(ins, src_free=rng.randrange(1 << b.n) | rng.randrange(1 << b.n), grant=grant)
    dut._log.info(f"{b.inserts} inserts, {b.grants} grants, {b.removals} removals")
    assert b.grants > 500 and b.removals > 100


@cocotb.test()
async def random_operations_match_the_model(dut):
    b = Bench(dut)
    rng = seeded_random(4 + b.depth)
    await b.start()
    for _ in range(3000):
        ins = notif(rng, b, src=rng.randrange(2) if rng.random() < 0.5 else None) if rng.random() < 0.6 else None
        live = [(s, j) for s, j, _ in b.model.entries()]
        grant = None
        r = rng.random()
        if live and r < 0.5:
            win, _ = b.model.request(b.cycle, (1 << b.n) - 1, True)
            s, j = win if win is not None and r < 0.4 else rng.choice(live)
            grant = (s, j, rng.choice([16, 64, 256, 1 << 16]))
        # REGISTERED_TREE: inserts from the pairs' own lanes too, some into the same pair.
        sins = {s: notif(rng, b, src=s)[1:] for s in range(b.n) if rng.random() < 0.15} if b.registered else None
        await b.step(ins, src_free=rng.randrange(1 << b.n), dst_free=rng.random() < 0.9, grant=grant, sins=sins)
    dut._log.info(f"{b.inserts} inserts, {b.grants} grant updates, {b.removals} removals; "
                  f"arrival stamps wrapped {b.model.order >> b.stamp_w} times")
    assert b.inserts > 500 and b.removals > 300
    if b.stamp_w <= 8:
        assert b.model.order >= 8 << b.stamp_w

"""cocotb: edm_pim_scheduler against the reference model edm.sim.Scheduler.

Both get the same notifications in the same cycles (lane order = notify order);
every cycle's grants must be identical. The model takes the DUT's rules from
its parameters: the paper's (pair order, an iteration per 3 cycles, no hold) or
EDM's (PAIR_ORDER = 0, PIPELINED = 1, HOLD = k). Independently of the model,
every cycle also checks: the grants form a matching (no source or destination
twice); each grant is for an unfinished notification of its source-destination
pair (with pair order: the oldest) and for min(chunk, remaining) bytes, so every
byte of every notification is granted exactly once; grant_last marks the last
chunk; no port gets a new grant before the previous chunk's data unit has left
it (nor, pipelined, while the iteration that matched it is in flight), nor
one whose link was down (link_up) when its iteration started;
notif_ready is exactly "the lane's FIFO has room", and each queue inserts one
notification per cycle, the lowest lane's candidate (FIFO head, else the
arriving one), when it has a free slot (the bench keeps the lane FIFOs
itself). With REGISTERED_TREE the insert is per pair: only a FIFO's head is a
candidate (an arrival waits a cycle in its lane's FIFO), lane i carries only
pairs (i, d) or (s, i) (the bench's traffic keeps that precondition and
asserts it), and every head whose pair held fewer than X entries at the
cycle's start is inserted, several per queue and two per pair in one cycle
(lane order = notify order), so a pair holds at most X + 1. occupancy counts
queued entries (with REGISTERED_TREE those of ITER - 2 cycles before: its
count is pipelined a tree level per cycle).
"""

from __future__ import annotations

import os
import random
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from edm.sim import Scheduler
from tbutil import clock_and_reset, seeded_random

LINK_GBPS = {protocol.BLOCK_PS_10G: 10, protocol.BLOCK_PS_25G: 25, protocol.BLOCK_PS_100G: 100,
             protocol.BLOCK_PS_400G: 400}
ID_W = protocol.NG_ID_W
TRACE = bool(os.environ.get("EDM_TB_TRACE"))  # log every cycle's notifications
SIZE_W = protocol.NG_SIZE_W


def field(value: int, lane: int, width: int) -> int:
    return (value >> (lane * width)) & ((1 << width) - 1)


class Bench:
    """The DUT, the model and the invariant bookkeeping, advanced one cycle at a time."""

    def __init__(self, dut):
        self.dut = dut
        self.n = int(dut.N.value)
        self.pw = max(1, (self.n - 1).bit_length())
        self.depth = int(dut.DEPTH.value)
        self.x = int(dut.X.value)                      # slots per source-destination pair
        self.stamp_w = int(dut.STAMP_W.value)
        self.chunk = int(dut.CHUNK_BYTES.value)
        self.srpt = bool(int(dut.SRPT.value))
        self.block_ps = int(dut.BLOCK_PS.value)
        self.cycle_ps = int(dut.CYCLE_PS.value)
        self.pair_order = bool(int(dut.PAIR_ORDER.value))
        self.pipelined = bool(int(dut.PIPELINED.value))
        self.hold = int(dut.HOLD.value)
        self.registered = bool(int(dut.REGISTERED_TREE.value))
        # An iteration's cycles: 3, or a request tree level per cycle + 3.
        self.iter = protocol.sw_pim_iter_cycles(self.n, self.registered)
        # occupancy: the queued entries of occ_lag cycles before (0: this cycle's).
        self.occ_lag = self.iter - 2 if self.registered else 0
        self.occ_hist: deque[int] = deque([0] * self.occ_lag, maxlen=self.occ_lag + 1)
        self.model = Scheduler(self.n, policy="srpt" if self.srpt else "fcfs", chunk_bytes=self.chunk,
                               link_gbps=LINK_GBPS[self.block_ps], cycle_ps=self.cycle_ps,
                               priority_hold=self.hold, pipelined_matching=self.pipelined,
                               pair_order=self.pair_order, registered_tree=self.registered)
        self.cycle = 0
        # (src, dst) -> [msg, remaining, kind, cycle notified], oldest first
        self.pairs: dict[tuple[int, int], deque] = {}
        self.queued = [0] * self.n                     # entries per destination queue
        self.order = 0                                 # notifications inserted (the model's order)
        self.insert_cycles = 0                         # cycles that inserted one (the stamps' count)
        self.live_orders: dict[int, int] = {}          # inserted, not finished: order -> count
        self.src_free = [0] * self.n                   # first cycle a new grant may use the port
        self.dst_free = [0] * self.n
        self.grants = 0
        self.granted_bytes = 0
        self.notified_bytes = 0
        self.refused = 0
        self.multi_per_dst = 0                          # cycles with several lanes to one queue
        self.stage_depth = 1 << int(dut.STAGE_LOG2.value)
        self.stage = [deque() for _ in range(self.n)]   # each lane's waiting notifications
        self.link_up = (1 << self.n) - 1                 # link_up driven from the next step on
        self.link_hist: list[int] = []                  # link_up as driven in each cycle
        self.last_inserts: set[tuple[int, int]] = set()  # (src, dst) inserted the cycle before
        self.max_pair_len = 0
        self.pair_doubles = 0                           # cycles in which a pair took two inserts
        self.queue_multis = 0                           # cycles in which a queue took several
        self.insert_log: list[list[tuple[int, int, int]]] = []   # per cycle: (src, dst, msg) inserted

    async def start(self):
        await clock_and_reset(self.dut, notif_valid=0, notif_src=0, notif_dst=0, notif_msg_id=0,
                              notif_size=0, notif_rres=0, dst_release=0, link_up=self.link_up)

    def pair_len(self, src: int, dst: int) -> int:
        return len(self.pairs.get((src, dst), ()))

    def room(self, dst: int, extra: int = 0, src: int | None = None, extra_pair: int = 0) -> bool:
        """The queue (and the pair) can take one more notification, counting
        those waiting in the lanes; and its stamp would stay within the
        stamps' exact range (STAMP_W) of every live entry's."""
        waiting = sum(x[1] == dst for q in self.stage for x in q)
        pending = sum(len(q) for q in self.stage)
        if self.live_orders and self.order + pending + self.n - min(self.live_orders) >= 1 << (self.stamp_w - 1):
            return False
        if src is not None:
            pair_waiting = sum(x[1] == dst and x[0] == src for q in self.stage for x in q)
            if self.pair_len(src, dst) + pair_waiting + extra_pair >= self.x:
                return False
        return self.queued[dst] + waiting + extra < self.depth

    async def step(self, lanes: list[tuple[int, int, int, int, str] | None]):
        """One cycle: lane i carries lanes[i] = (src, dst, msg, size, kind) or None."""
        dut, n, pw = self.dut, self.n, self.pw
        lanes = list(lanes) + [None] * (n - len(lanes))
        valid = src = dst = msg = size = rres = 0
        for i, x in enumerate(lanes):
            if x is None:
                continue
            s, d, m, b, kind = x
            valid |= 1 << i
            src |= s << (i * pw)
            dst |= d << (i * pw)
            msg |= m << (i * ID_W)
            size |= b << (i * SIZE_W)
            rres |= (kind == "RRES") << i
        dut.notif_valid.value = valid
        dut.notif_src.value = src
        dut.notif_dst.value = dst
        dut.notif_msg_id.value = msg
        dut.notif_size.value = size
        dut.notif_rres.value = rres
        dut.link_up.value = self.link_up
        self.link_hist.append(self.link_up)
        await ReadOnly()
        ready = int(dut.notif_ready.value)
        assert int(dut.lane_foreign.value) == 0, f"cycle {self.cycle}: lane_foreign"
        self.occ_hist.append(sum(self.queued))
        assert int(dut.occupancy.value) == self.occ_hist[0], \
            f"cycle {self.cycle}: occupancy {int(dut.occupancy.value)}, queued {self.occ_lag} cycles before {self.occ_hist[0]}"
        # Expected: a lane is ready iff its FIFO has room; each queue inserts the
        # lowest lane's candidate (FIFO head, else the arriving one; with the
        # registered tree only the head) if it has a slot.
        this_cycle = [0] * n
        cands = [self.stage[i][0] if self.stage[i] else None if self.registered else lanes[i]
                 for i in range(n)]
        won = set()
        inserts = set()
        logged: list[tuple[int, int, int]] = []
        start_len: dict[tuple[int, int], int] = {}     # REGISTERED_TREE: pair lengths at the cycle's start
        any_inserted = False
        for i, c in enumerate(cands):
            inserted = ok = False
            if c is not None and self.registered:
                # An insert per pair: its room from the cycle's start (the
                # other writer of this cycle not counted).
                s, d = c[0], c[1]
                assert i in (s, d), f"test bug: lane {i} carries {s}->{d} (REGISTERED_TREE's precondition)"
                ok = start_len.setdefault((s, d), self.pair_len(s, d)) < self.x
            elif c is not None and c[1] not in won:
                # The lowest lane with a candidate for a queue claims it; the
                # candidate is inserted if the queue and its pair have room.
                won.add(c[1])
                ok = self.queued[c[1]] < self.depth and self.pair_len(c[0], c[1]) < self.x
            if ok:
                s, d, m, b, kind = c
                self.model.notify(s, d, m, b, kind)
                self.pairs.setdefault((s, d), deque()).append([m, b, kind, self.cycle, self.order])
                self.live_orders[self.order] = 1
                self.order += 1
                self.queued[d] += 1
                self.notified_bytes += b
                self.max_pair_len = max(self.max_pair_len, self.pair_len(s, d))
                inserts.add((s, d))
                logged.append((s, d, m))
                inserted = any_inserted = True
            x = lanes[i]
            staged = bool(self.stage[i])
            if x is not None:
                this_cycle[x[1]] += 1
                fits = len(self.stage[i]) < self.stage_depth
                assert bool(ready >> i & 1) == fits, \
                    f"cycle {self.cycle}: notif_ready[{i}]: lane FIFO {len(self.stage[i])} of {self.stage_depth}"
                if not fits:
                    self.refused += 1
            if staged and inserted:
                self.stage[i].popleft()
            if x is not None and fits and (staged or not inserted):
                self.stage[i].append(x)
        self.multi_per_dst += max(this_cycle) > 1
        self.last_inserts = inserts
        self.insert_log.append(logged)
        self.pair_doubles += len(inserts) < len(logged)
        self.queue_multis += len({d for _, d, _ in logged}) < len(logged)
        self.insert_cycles += any_inserted
        if TRACE:
            self.dut._log.info(f"cycle {self.cycle}: notified {[x for x in lanes if x]} ready {ready:b}")
        expected = self.model.step()
        # The link state of this cycle counts for the iterations from the next one on.
        for p in range(n):
            self.model.set_link_up(p, bool(self.link_up >> p & 1))
        await RisingEdge(dut.clk)
        await ReadOnly()
        got = self.read_grants()
        assert got == sorted(expected), f"cycle {self.cycle}: RTL grants {got}, model {sorted(expected)}"
        self.check(got)
        self.cycle += 1
        await FallingEdge(dut.clk)
        return got

    def read_grants(self):
        dut, pw = self.dut, self.pw
        valid = int(dut.grant_valid.value)
        srcs, dsts = int(dut.grant_src.value), int(dut.grant_dst.value)
        msgs, sizes, lasts = int(dut.grant_msg_id.value), int(dut.grant_bytes.value), int(dut.grant_last.value)
        got = []
        self.lasts = {}
        for s in range(self.n):
            if valid >> s & 1:
                assert field(srcs, s, pw) == s, "grant lane s carries source s"
                g = (s, field(dsts, s, pw), field(msgs, s, ID_W), field(sizes, s, SIZE_W))
                got.append(g)
                self.lasts[s] = bool(lasts >> s & 1)
        return got

    def check(self, grants):
        """Invariants that do not rely on the model."""
        assert len({g[0] for g in grants}) == len(grants), f"cycle {self.cycle}: a source granted twice"
        assert len({g[1] for g in grants}) == len(grants), f"cycle {self.cycle}: a destination granted twice"
        # A grant of this cycle comes from the iteration started iter - 1 cycles
        # before, which saw the links as driven the cycle before that.
        links = self.link_hist[self.cycle - self.iter] if self.cycle >= self.iter else (1 << self.n) - 1
        for s, d, _, _ in grants:
            assert links >> s & 1 and links >> d & 1, f"cycle {self.cycle}: {s}->{d} granted, link down"
        for s, d, m, b in grants:
            q = self.pairs.get((s, d))
            assert q, f"cycle {self.cycle}: grant {s}->{d} with nothing notified"
            if self.pair_order:
                head = q[0]
                assert head[0] == m, f"cycle {self.cycle}: pair {s}->{d} granted msg {m}, oldest is {head[0]}"
            else:
                # The pair's best entry with that id, visible when its iteration
                # started (iteration - 1 cycles before this grant's cycle; insert: 2 more).
                seen = [e for e in q if e[0] == m and e[3] <= self.cycle - self.iter - 1]
                assert seen, f"cycle {self.cycle}: pair {s}->{d} granted msg {m}: {list(q)}"
                head = min(seen, key=lambda e: e[1]) if self.srpt else seen[0]
            assert b == min(self.chunk, head[1]), f"cycle {self.cycle}: {b} bytes of {head[1]} remaining"
            head[1] -= b
            assert self.lasts[s] == (head[1] == 0), f"cycle {self.cycle}: grant_last"
            # The chunk's data unit holds both ports for its wire time from the
            # iteration's start; the next grant comes >= an iteration later.
            assert self.cycle >= self.src_free[s] and self.cycle >= self.dst_free[d], \
                f"cycle {self.cycle}: port of {s}->{d} still carries the previous chunk"
            wire = codec.message_blocks(head[2], b) * self.block_ps
            free = self.cycle + max(self.iter, -(-wire // self.cycle_ps))
            self.src_free[s] = self.dst_free[d] = free
            if head[1] == 0:
                q.remove(head)
                del self.live_orders[head[4]]
                self.queued[d] -= 1
            self.grants += 1
            self.granted_bytes += b

    async def idle(self, cycles: int):
        for _ in range(cycles):
            await self.step([])

    async def drain(self, limit: int = 200000):
        for _ in range(limit):
            if not sum(self.queued) and not any(self.stage):
                break
            await self.step([])
        assert not sum(self.queued) and not any(self.stage), "notifications left ungranted"
        assert all(not q for q in self.pairs.values())
        assert self.granted_bytes == self.notified_bytes
        await self.idle(8)
        assert int(self.dut.occupancy.value) == 0


def random_size(rng: random.Random, chunk: int) -> int:
    r = rng.random()
    if r < 0.4:
        return rng.randrange(1, 65)
    if r < 0.7:
        return rng.randrange(1, 3 * chunk)
    if r < 0.9:
        return rng.choice([chunk - 1, chunk, chunk + 1, 2 * chunk, 8, 1])
    return rng.randrange(1, 4000)


def other(rng: random.Random, n: int, src: int) -> int:
    return (src + 1 + rng.randrange(n - 1)) % n


def service_cycles(b: Bench, rng: random.Random) -> float:
    """Mean cycles a port spends on one random_size message (at least one iteration per chunk)."""
    total = 0
    for _ in range(2000):
        left = random_size(rng, b.chunk)
        while left:
            c = min(b.chunk, left)
            wire = codec.message_blocks("WREQ", c) * b.block_ps
            total += max(b.iter, -(-wire // b.cycle_ps))
            left -= c
    return total / 2000


async def random_traffic(b: Bench, rng: random.Random, cycles: int, load: float, hot: list[int] | None = None,
                         any_lane: bool = False, fill: bool = False):
    """`cycles` cycles of random notifications, offered at `load` times what a
    port can carry, only where the queue has room (unless `fill`). Lane i
    carries source i, or (any_lane) any source (REGISTERED_TREE: any pair
    with source i or destination i)."""
    if not hasattr(b, "service"):
        b.service = service_cycles(b, seeded_random(0))
    rate = min(1.0, load / b.service)
    for _ in range(cycles):
        lanes: list = [None] * b.n
        count = [0] * b.n
        pair_count: dict = {}
        for i in range(b.n):
            if rng.random() >= rate:
                continue
            s = rng.randrange(b.n) if any_lane else i
            d = rng.choice(hot) if hot and rng.random() < 0.8 else other(rng, b.n, s)
            if d == s:
                d = other(rng, b.n, s)
            if b.registered and i not in (s, d):    # lane i carries (i, d) or (s, i)
                if rng.random() < 0.5:
                    s, d = i, (d if d != i else other(rng, b.n, i))
                else:
                    s, d = (s if s != i else other(rng, b.n, i)), i
            if not fill and not b.room(d, count[d], s, pair_count.get((s, d), 0)):
                continue
            count[d] += 1
            pair_count[(s, d)] = pair_count.get((s, d), 0) + 1
            lanes[i] = (s, d, rng.randrange(1 << ID_W), random_size(rng, b.chunk), rng.choice(["WREQ", "RRES"]))
        await b.step(lanes)


@cocotb.test()
async def first_grant_latency_and_grid(dut):
    """A lone notification: iteration at its arrival (not visible yet), the next
    one an iteration later takes it (pipelined: the one 2 cycles later, when it is
    visible), the grant is out an iteration after that. An iteration is
    sw_pim_iter_cycles(N, REGISTERED_TREE) cycles: 3, or with the registered
    tree 4 at N = 4, 5 at N = 8 and 16 (a request tree level per cycle, then
    accept compare, accept reduce, grant), the notification inserted a cycle
    after its arrival (SW_NQ_LANE_CYCLES_REGISTERED: from its lane's FIFO)."""
    b = Bench(dut)
    await b.start()
    it = b.iter
    assert it == ({2: 4, 4: 4, 8: 5, 16: 5, 32: 6}[b.n] if b.registered else 3), it
    # The grant of the iteration that took it, on the outputs (counted from the step after the notification's).
    k = (2 + it if b.pipelined else 2 * it) - 2
    if b.registered:
        k += protocol.SW_NQ_LANE_CYCLES_REGISTERED
    await b.step([(0, 1, 7, 64, "WREQ")])
    cycles = [await b.step([]) for _ in range(2 * it + 2)]
    assert cycles[k] == [(0, 1, 7, 64)] and sum(map(len, cycles)) == 1, (k, cycles)
    # Arrival off the old grid: the idle scheduler starts at once.
    await b.idle(it + 1)
    await b.step([None, (1, 2, 9, 300, "RRES")])
    cycles = [await b.step([]) for _ in range(2 * it + 2)]
    assert cycles[k] == [(1, 2, 9, b.chunk if b.chunk < 300 else 300)]
    await b.drain()


@cocotb.test()
async def policy_across_and_within_pairs(dut):
    """While a first message holds the destination, three more arrive (one
    insert per queue per cycle: the lower lane first, the other waits in its
    lane). Next: SRPT serves the shortest, but with pair order never a pair's
    younger message before its older; FCFS serves the oldest (the first again)."""
    b = Bench(dut)
    await b.start()
    big = 40 * b.chunk
    await b.step([(3, 0, 20, big, "WREQ")])
    # The others arrive once the iteration that takes the first has begun
    # (pipelined: 2 cycles after it; else an iteration after it, the idle
    # scheduler having started one at once), so it is granted alone: at
    # once with 3-cycle iterations, later with the registered tree's.
    got = []
    for _ in range(b.iter - 2 if b.registered else 0):
        got += await b.step([])
    got += await b.step([(1, 0, 10, big, "WREQ"), None, (2, 0, 12, 1000, "WREQ")])
    got += await b.step([None, (1, 0, 11, 64, "WREQ")])
    while len([g for g in got if g[1] == 0]) < 2:  # (at 10G a chunk holds a port for ~90 cycles)
        got += await b.step([])
    to0 = [g[2] for g in got if g[1] == 0]
    expect = ((12 if b.pair_order else 11) if b.srpt else 20)
    assert to0[:2] == [20, expect], got
    await b.drain()


@cocotb.test()
async def pair_fills_back_to_back(dut):
    """Five notifications of one pair. Without REGISTERED_TREE four in one
    cycle (lanes 0-3) and one a cycle later (lane 0, so it claims the queue
    before lanes 1-3): inserted a cycle each while the pair has room, X = 3.
    With REGISTERED_TREE its two writers (lanes 0 and 1) two a cycle: each
    sees the pair as it was at the cycle's start, so the pair takes X + 1 = 4
    and the fifth waits in its lane until a grant ends one (the one-writer
    rule there: the fourth refused, occupancy and grants off the model)."""
    b = Bench(dut)
    await b.start()
    size = 4 * b.chunk
    if b.registered:
        # Lanes 0 (the source's) and 1 (the destination's) carry pair 0 -> 1,
        # two a cycle: each cycle's two heads are inserted together while the
        # pair held fewer than X at the cycle's start (0, then 2): X + 1 = 4.
        await b.step([(0, 1, 30, size, "WREQ"), (0, 1, 31, size, "WREQ")])
        await b.step([(0, 1, 32, size, "WREQ"), (0, 1, 33, size, "WREQ")])
        await b.step([(0, 1, 40, size, "WREQ")])
    else:
        await b.step([(0, 1, 30 + i, size, "WREQ") for i in range(min(4, b.n))])
        await b.step([(0, 1, 40, size, "WREQ")])
    for _ in range(6):
        await b.step([])
    assert b.max_pair_len == min(5, b.x + b.registered), b.max_pair_len
    assert b.pair_doubles == (2 if b.registered else 0), b.pair_doubles
    await b.drain()


@cocotb.test()
async def several_lanes_to_one_pair_and_one_queue(dut):
    """Four notifications to queue 1 in one cycle, two of them of pair
    0 -> 1 (lane 0, its source's, and lane 1, its destination's); the next
    cycle two of pair 2 -> 1 (lanes 1 and 2: the destination's lane the
    lower). With REGISTERED_TREE each cycle's heads are inserted in one cycle
    (per pair, in lane order); without, one per queue per cycle, the lowest
    lane first. The grants match the model either way."""
    b = Bench(dut)
    await b.start()
    first = [(0, 1, 50, 300, "WREQ"), (0, 1, 51, 64, "WREQ"), (2, 1, 52, 200, "RRES"), (3, 1, 53, 100, "WREQ")]
    await b.step(first[:b.n])
    await b.step([None, (2, 1, 54, 64, "WREQ"), (2, 1, 55, 32, "WREQ")])
    for _ in range(6):
        await b.step([])
    log = [c for c in b.insert_log if c]
    if b.registered:
        assert log[:2] == [[(s, d, m) for s, d, m, _, _ in first[:b.n]], [(2, 1, 54), (2, 1, 55)]], log
        assert b.pair_doubles == 2 and b.queue_multis == 2, (b.pair_doubles, b.queue_multis)
    else:
        assert all(len({d for _, d, _ in c}) == len(c) for c in log), log
        assert sorted(m for c in log for _, _, m in c) == [50, 51, 52, 53, 54, 55][:b.n + 2], log
        assert log[:2] == [[(0, 1, 50)], [(0, 1, 51)]], log
    await b.drain()


@cocotb.test()
async def random_streams_match_the_model(dut):
    b = Bench(dut)
    rng = seeded_random(100 + b.n + 10 * b.srpt)
    await b.start()
    for _ in range(100):                                        # bursts: several lanes to one queue
        d = max(range(b.n), key=lambda x: (b.depth - b.queued[x], rng.random()))
        while b.depth - b.queued[d] < 3:
            await b.step([])
        lanes = [(s, d, rng.randrange(1 << ID_W), random_size(rng, b.chunk), "WREQ") for s in range(b.n)
                 if s != d and b.pair_len(s, d) < b.x]
        # (REGISTERED_TREE: one place left for lane d's.)
        burst = rng.sample(lanes, len(lanes))[:b.depth - b.queued[d] - b.registered]
        if b.registered:   # lane s carries (s, d), lane d a second notification of one pair
            placed: list = [None] * b.n
            for x in burst:
                placed[x[0]] = x
            if burst and b.room(d, len(burst), burst[0][0], 1):
                placed[d] = (burst[0][0], d, rng.randrange(1 << ID_W), random_size(rng, b.chunk), "WREQ")
            burst = placed
        await b.step(burst)
        await random_traffic(b, rng, rng.randrange(1, 30), 0.1)
    await random_traffic(b, rng, 1500, 0.5)                    # moderate load, lane = source
    await random_traffic(b, rng, 1500, 0.8, any_lane=True)     # several lanes per source and queue
    await random_traffic(b, rng, 800, 0.6, hot=[0, b.n - 1])    # incast to two destinations
    await random_traffic(b, rng, 1000, 3.0)                    # overload: queues fill up
    await random_traffic(b, rng, 600, 0.03)                    # sparse: the grid restarts
    # The largest size (16-bit counters) on fast links; long on slow ones.
    huge = (1 << SIZE_W) - 1 if b.block_ps <= protocol.BLOCK_PS_100G else 100 * b.chunk
    await b.step([(0, 1, 255, huge, "RRES")])
    await random_traffic(b, rng, 300, 0.5)
    await b.drain()
    dut._log.info(f"{b.grants} grants, {b.granted_bytes} bytes over {b.cycle} cycles; "
                  f"{b.multi_per_dst} cycles with several lanes to one queue; inserts: "
                  f"{b.queue_multis} cycles with several into one queue, {b.pair_doubles} with two into one pair")
    assert b.grants > 500 and b.multi_per_dst > 80
    if b.registered:
        assert b.queue_multis > 50 and b.pair_doubles > 5, (b.queue_multis, b.pair_doubles)


@cocotb.test()
async def stamps_wrap_around(dut):
    """Small STAMP_W only (test_pim_scheduler_stamps_wrap_around): the arrival
    stamps wrap several times while the bench keeps every live entry within
    2^(STAMP_W-1) notifications of the newest (room()); the grants match the
    model, which orders by an unbounded counter."""
    b = Bench(dut)
    if b.stamp_w > 8:
        dut._log.info(f"STAMP_W = {b.stamp_w}: no wrap within a test; run with a small STAMP_W")
        return
    rng = random.Random(11 + b.n)
    await b.start()
    # A stamp counts the notifications inserted, or with the registered tree
    # the cycles that inserted one (then the lane).
    def counted() -> int:
        return b.insert_cycles if b.registered else b.order
    for _ in range(40):
        if counted() >= 5 << b.stamp_w:
            break
        await random_traffic(b, rng, 400, 0.9, any_lane=True)
        await random_traffic(b, rng, 200, 0.6, hot=[0])
    await b.drain()
    dut._log.info(f"{b.order} notifications in {b.insert_cycles} cycles: the {b.stamp_w}-bit stamps "
                  f"wrapped {counted() >> b.stamp_w} times")
    assert counted() >= 4 << b.stamp_w, counted()


@cocotb.test()
async def links_down_are_never_granted(dut):
    """Issue 41: a port whose link is down (link_up low) is never granted, as a
    source or a destination; its entries wait and are granted once it is up
    again. A directed case, then random traffic while links go down and come
    back; every cycle's grants against the model (set_link_up) and checked
    against the links their iteration saw (Bench.check)."""
    b = Bench(dut)
    rng = seeded_random(300 + b.n)
    await b.start()
    up = (1 << b.n) - 1
    b.link_up = up & ~(1 << 1)
    got = await b.step([(0, 1, 5, 64, "WREQ"), (1, 0, 6, 64, "WREQ")])
    for _ in range(4 * b.iter):
        got += await b.step([])
    assert got == [], f"port 1 down: {got}"
    b.link_up = up
    for _ in range(3 * b.iter):
        got += await b.step([])
    assert sorted(g[2] for g in got) == [5, 6], f"port 1 up again: {got}"
    waited = 0   # cycles in which an entry of a down port was queued
    for _ in range(10):
        down = rng.sample(range(b.n), rng.randrange(1, max(2, b.n // 2)))
        b.link_up = up & ~sum(1 << p for p in down)
        for _ in range(50):
            await random_traffic(b, rng, 1, 0.7)
            waited += any(q and (s in down or d in down) for (s, d), q in b.pairs.items())
        b.link_up = up
        await random_traffic(b, rng, 20, 0.5)
    await b.drain()
    assert waited > 200, waited


@cocotb.test()
async def full_queues_refuse_and_recover(dut):
    """Offered beyond the queue depth: notifications wait in their lanes'
    FIFOs while the destination's queue is full, notif_ready drops exactly when
    a lane's FIFO is full; refused lanes are lost, the rest match."""
    b = Bench(dut)
    rng = seeded_random(7 + b.n)
    await b.start()
    await random_traffic(b, rng, 600, 50.0, hot=[1], any_lane=True, fill=True)
    await random_traffic(b, rng, 400, 50.0, fill=True)
    await b.drain()
    assert b.refused > 50, b.refused


@cocotb.test()
async def parked_destinations(dut):
    """PARK_DST (the switch's zero-queue rules; no model: run alone by
    test_pim_scheduler_parks_destinations): a granted destination is granted
    again only to the same source until dst_release has named it once per
    circuit; src_pause and dst_pause hold a port back while set. Under the
    other builds (PARK_DST = 0) it checks only that the inputs are ignored."""
    n, pw = int(dut.N.value), max(1, (int(dut.N.value) - 1).bit_length())
    parks = bool(int(dut.PARK_DST.value))
    await clock_and_reset(dut, notif_valid=0, notif_src=0, notif_dst=0, notif_msg_id=0, notif_size=0,
                          notif_rres=0, dst_release=0, src_pause=0, dst_pause=0, link_up=(1 << n) - 1)

    async def cycle(notifs=(), release=0, src_pause=0, dst_pause=0):
        """One cycle: notifications on lanes 0.. (src, dst, id, bytes); the grants (src, dst, id)."""
        valid = src = dst = msg = size = 0
        for i, (s, d, m, b) in enumerate(notifs):
            valid |= 1 << i
            src |= s << (i * pw)
            dst |= d << (i * pw)
            msg |= m << (i * ID_W)
            size |= b << (i * SIZE_W)
        dut.notif_valid.value, dut.notif_src.value, dut.notif_dst.value = valid, src, dst
        dut.notif_msg_id.value, dut.notif_size.value = msg, size
        dut.dst_release.value, dut.src_pause.value, dut.dst_pause.value = release, src_pause, dst_pause
        await RisingEdge(dut.clk)
        await ReadOnly()
        v, ds, ms = int(dut.grant_valid.value), int(dut.grant_dst.value), int(dut.grant_msg_id.value)
        got = [(s, field(ds, s, pw), field(ms, s, ID_W)) for s in range(n) if v >> s & 1]
        await FallingEdge(dut.clk)
        return got

    async def run(cycles, **kw):
        got = []
        for _ in range(cycles):
            got += await cycle(**kw)
        return got

    # Source 0 is granted destination 1; source 2's message to 1 waits while
    # 0 -> 1 is parked, but 0's second message to 1 is granted meanwhile.
    got = await cycle([(0, 1, 5, 64), (2, 1, 6, 64)])
    got += await cycle([(0, 1, 7, 64)])
    got += await run(120)
    if not parks:
        assert sorted(got) == [(0, 1, 5), (0, 1, 7), (2, 1, 6)], got
        dut._log.info("PARK_DST = 0: dst_release, src_pause and dst_pause ignored")
        return
    assert got == [(0, 1, 5), (0, 1, 7)], f"while parked for source 0: {got}"
    got = await cycle(release=1 << 1)   # one of the two circuits 0 -> 1 ends
    got += await run(40)
    assert got == [], f"one of two circuits released, still parked: {got}"
    got = await cycle(release=1 << 1)
    got += await run(10)
    assert got == [(2, 1, 6)], f"released: {got}"
    got = await cycle(release=1 << 1)   # 2 -> 1's circuit ends
    # Paused: source 3 and destination 0 are not granted until unpaused.
    got += await cycle([(3, 2, 8, 64), (1, 0, 9, 64)], src_pause=1 << 3, dst_pause=1)
    got += await run(40, src_pause=1 << 3, dst_pause=1)
    assert got == [], f"paused ports granted: {got}"
    got = await run(10)
    assert sorted(got) == [(1, 0, 9), (3, 2, 8)], got

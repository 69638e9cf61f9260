"""cocotb: edm_mirror, the compute side of the dual switch, with Python
stand-ins for the host and for each plane's compute-node engine.

The host issues requests to a few destinations with tags from a pool of 16
(reused as soon as a completion frees one), and takes completions with a
random ready. Each plane's engine takes requests with a random ready (plane 1
is dead for a stretch: it takes nothing, so requests go without it; for half
of the stretch plane_down says so, for the other half nothing does) and
completes each one it took after a random delay: OK mostly, a failure
(timeout) sometimes on either plane, never (a write on a dead plane) or very
late (after the host has reused the tag) sometimes on plane 1 when plane 0
answers OK.
Checks: every plane that takes a request gets the same id, and ids run per
destination in issue order; a plane is left out only when it is down, when
the request waited WAIT_CYCLES, or when it lags (was left out by the wait
and has not taken a request since) and is not ready, and never all of them; a request is issued as
soon as every plane that is not down has it; the host gets exactly one
completion per request: OK from the first plane whose OK completion was
taken, or the last failure when no plane answered OK; every engine
completion taken is forwarded, held, dropped as a second copy or dropped as
stale exactly as the rule says, and the counters agree.
"""

from __future__ import annotations

from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from tbutil import clock_and_reset, seeded_random

OK, TIMEOUT = protocol.STATUS_OK, protocol.STATUS_TIMEOUT
DSTS = [2, 3, 17, 700]


def field(v, k, w):
    return (v >> (k * w)) & ((1 << w) - 1)


class Request:
    def __init__(self, n, dst, kind):
        self.n, self.dst, self.kind = n, dst, kind
        self.tag = self.id = self.t_offer = self.t_issue = None
        self.planes = {}        # plane -> cycle it took the request
        self.pending = set()    # planes to report
        self.open = True        # not issued yet: another plane may still take it
        self.fates = None       # each plane's answer: (status, delay), or None for never
        self.done = False       # forwarded (expected)
        self.got = None         # the host's completion (status, plane)


@cocotb.test()
async def one_completion_per_request(dut):
    np_ = int(dut.NP.value)
    wait = int(dut.WAIT_CYCLES.value)
    rng = seeded_random(2500 + np_)
    await clock_and_reset(dut, req_valid=0, req_dst=0, req_tag=0, plane_down=0, eng_req_ready=0, eng_cpl_valid=0,
                          eng_cpl_kind=0, eng_cpl_dst=0, eng_cpl_msg_id=0, eng_cpl_tag=0, eng_cpl_status=0,
                          cpl_ready=0)
    todo = deque(Request(n, rng.choice(DSTS), rng.choice([1, 2, 3])) for n in range(1500))
    free_tags = list(range(16))
    occupant = {}                      # tag -> the request holding it
    orphan = {}                        # tag -> its previous request, while planes still owe it a report
    engines = [[] for _ in range(np_)]  # (due cycle, request, status) per plane
    heads = [None] * np_
    forwards = deque()                 # expected host completions, in order
    next_id = {d: 0 for d in DSTS}
    counts = dict(dup=0, stale=0, unmirrored=[0] * np_, late=0, never=0, lag_skips=0, waited=0)
    lag = [False] * np_
    all_reqs = []
    cycle = 0
    while todo or any(engines) or any(h is not None for h in heads) or forwards or \
            any(r.got is None for r in all_reqs):
        assert cycle < 200000, "hang"
        dead = np_ > 1 and 1200 <= cycle < 2700
        down = [p == 1 and dead and cycle < 1950 for p in range(np_)]
        dut.plane_down.value = sum(d << p for p, d in enumerate(down))
        # ---- drive
        head = todo[0] if todo and (free_tags or todo[0].tag is not None) else None
        if head is not None and head.tag is None:
            head.tag = free_tags.pop(rng.randrange(len(free_tags)))
            head.t_offer = cycle
        dut.req_valid.value = head is not None
        dut.req_dst.value = head.dst if head else 0
        dut.req_tag.value = head.tag if head else 0
        ready = [rng.random() < (0.0 if (p == 1 and dead) else 0.6) for p in range(np_)]
        dut.eng_req_ready.value = sum(r << p for p, r in enumerate(ready))
        for p in range(np_):
            if heads[p] is None:
                due = [e for e in engines[p] if e[0] <= cycle]
                if due:
                    heads[p] = min(due, key=lambda e: e[0])
                    engines[p].remove(heads[p])
        valid = kind = dst = mid = tag = status = 0
        for p, h in enumerate(heads):
            if h is None:
                continue
            _, r, st = h
            valid |= 1 << p
            kind |= r.kind << (3 * p)
            dst |= r.dst << (10 * p)
            mid |= r.id << (8 * p)
            tag |= r.tag << (8 * p)
            status |= st << (8 * p)
        dut.eng_cpl_valid.value, dut.eng_cpl_kind.value, dut.eng_cpl_dst.value = valid, kind, dst
        dut.eng_cpl_msg_id.value, dut.eng_cpl_tag.value, dut.eng_cpl_status.value = mid, tag, status
        host_ready = rng.random() < 0.7
        dut.cpl_ready.value = host_ready
        # ---- sample
        await ReadOnly()
        # Engine completions first: the RTL matches them against its table before this cycle's issue.
        ecr = int(dut.eng_cpl_ready.value)
        assert bin(ecr).count("1") <= 1 and ecr & ~valid == 0, f"cycle {cycle}: eng_cpl_ready {ecr:b}"
        for p in range(np_):
            if heads[p] is not None:   # a completion waits until its request is issued
                _, r, st = heads[p]
                waits = occupant.get(r.tag) is r and p in r.pending and r.open
                assert not (waits and ecr >> p & 1), f"cycle {cycle}: plane {p}'s completion taken before the issue"
                counts["waited"] += waits
            if ecr >> p & 1:
                _, r, st = heads[p]
                heads[p] = None
                if occupant.get(r.tag) is not r or p not in r.pending:
                    counts["stale"] += 1
                    # A late report of the tag's previous request (its orphan): the last one frees it.
                    free_now = int(dut.free_valid.value) and int(dut.eng_cpl_ready.value) >> p & 1
                    if orphan.get(r.tag) is r and p in r.pending:
                        last = r.pending == {p}
                        r.pending.discard(p)
                        assert bool(free_now) == last, f"cycle {cycle}: orphan {r.dst}/{r.id} free {free_now}, last {last}"
                        if last:
                            assert (int(dut.free_dst.value), int(dut.free_msg_id.value)) == (r.dst, r.id)
                            counts["orphans_freed"] = counts.get("orphans_freed", 0) + 1
                    else:
                        assert not free_now, f"cycle {cycle}: a stale report freed something"
                    continue
                last = r.pending == {p}
                r.pending.discard(p)
                # free_*: the last report of a request no plane can take any more.
                free_now = int(dut.free_valid.value) and int(dut.eng_cpl_ready.value) >> p & 1
                if last and not r.open:
                    assert free_now and (int(dut.free_dst.value), int(dut.free_msg_id.value)) == (r.dst, r.id), \
                        f"cycle {cycle}: the last report of {r.dst}/{r.id} freed nothing"
                    counts["freed"] = counts.get("freed", 0) + 1
                else:
                    assert not free_now, f"cycle {cycle}: freed {r.dst}/{r.id} with planes {r.pending} to report"
                if r.done:
                    counts["dup"] += 1
                elif st == OK or last:
                    r.done = True
                    forwards.append((r, st, p))
        ev, taken = int(dut.eng_req_valid.value), int(dut.eng_req_valid.value) & int(dut.eng_req_ready.value)
        if head is not None:
            assert ev == sum(1 << p for p in range(np_) if p not in head.planes), f"cycle {cycle}: offered {ev:b}"
            for p in range(np_):
                if taken >> p & 1:
                    assert int(dut.eng_msg_id.value) == next_id[head.dst], f"cycle {cycle}: id"
                    head.planes[p] = cycle
                    lag[p] = False
                    if head.fates is None:   # its first plane: it now holds the tag
                        head.id = next_id[head.dst]
                        if occupant.get(head.tag) is not None:
                            assert occupant[head.tag].got is not None
                            old = occupant[head.tag]
                            # Planes reporting the old one in this very cycle were handled above.
                            orphan[head.tag] = old if old.pending else None
                        occupant[head.tag] = head
                        all_reqs.append(head)
                        # Plane 0 answers OK mostly; plane 1 may fail, stay silent or answer late.
                        head.fates = {q: (rng.choices([OK, TIMEOUT], [85, 15])[0],
                                          rng.choice([rng.randint(1, 4), rng.randint(1, 120)]))
                                      for q in range(np_)}
                        if np_ > 1 and head.fates[0][0] == OK and rng.random() < 0.1:
                            if rng.random() < 0.5:
                                head.fates[1] = None
                                counts["never"] += 1
                            else:   # after the host reused the tag, mostly
                                head.fates[1] = (head.fates[1][0], rng.randint(300, 800))
                                counts["late"] += 1
                    head.pending.add(p)
                    if head.fates[p] is not None:
                        engines[p].append((cycle + head.fates[p][1], head, head.fates[p][0]))
            if int(dut.req_ready.value):
                todo.popleft()
                head.t_issue = cycle
                next_id[head.dst] = (next_id[head.dst] + 1) % 256
                assert head.planes, "issued to no plane"
                waited = cycle - head.t_offer >= wait
                for p in range(np_):
                    if p not in head.planes and not down[p]:
                        assert waited or (lag[p] and not ready[p]), \
                            f"cycle {cycle}: plane {p} left out after {cycle - head.t_offer}"
                        counts["lag_skips"] += not waited
                        lag[p] = lag[p] or waited
                for p in range(np_):
                    if p not in head.planes:
                        counts["unmirrored"][p] += 1
                head.open = False
            else:
                assert any(p not in head.planes and not down[p] and not (lag[p] and not ready[p])
                           for p in range(np_)) or not head.planes, \
                    f"cycle {cycle}: every plane that is up has it, not issued"
        else:
            assert ev == 0
        if int(dut.cpl_valid.value) and host_ready:
            assert forwards, f"cycle {cycle}: a completion nobody expected"
            r, st, p = forwards.popleft()
            got = (int(dut.cpl_tag.value), int(dut.cpl_status.value), int(dut.cpl_plane.value),
                   int(dut.cpl_dst.value), int(dut.cpl_kind.value), int(dut.cpl_msg_id.value))
            assert got == (r.tag, st, p, r.dst, r.kind, r.id), \
                f"cycle {cycle}: completion {got}, want {(r.tag, st, p, r.dst, r.kind, r.id)}"
            assert r.got is None, "completed twice"
            assert r.t_issue is not None and r.t_issue < cycle, f"cycle {cycle}: completed before it was issued"
            r.got = (st, p)
            free_tags.append(r.tag)
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        cycle += 1
    await ReadOnly()
    # Every request completed once; OK exactly when some plane that had it answered OK first.
    assert all(r.got is not None for r in all_reqs)
    for name in ("dup", "stale"):
        assert int(getattr(dut, f"cnt_{name}").value) == counts[name], (name, counts)
    got = [field(int(dut.cnt_unmirrored.value), p, 16) for p in range(np_)]
    assert got == counts["unmirrored"], (got, counts)
    if np_ > 1:
        assert counts["dup"] > 50 and counts["stale"] > 100 and counts["unmirrored"][1] > 10, counts
        assert counts["lag_skips"] > 10 and counts["waited"] > 0, counts
        assert sum(1 for r in all_reqs if r.got[0] == OK and r.got[1] == 1) > 50   # plane 1 answered first
    oks = sum(1 for r in all_reqs if r.got[0] == OK)
    dut._log.info(f"{len(all_reqs)} requests in {cycle} cycles, {oks} OK; {counts}")


@cocotb.test()
async def acknowledgements_merge(dut):
    """The planes' /A/ leave merged, one a cycle: per plane in arrival order,
    none made up or altered, and those not leaving (a full queue) counted;
    with at most one /A/ a cycle in all, none dropped."""
    np_ = int(dut.NP.value)
    rng = seeded_random(2600 + np_)
    await clock_and_reset(dut, req_valid=0, req_dst=0, req_tag=0, plane_down=0, eng_req_ready=0, eng_cpl_valid=0,
                          cpl_ready=1, ack_valid=0, ack_peer=0, ack_base=0, ack_map=0)
    sent = [deque() for _ in range(np_)]
    got = []
    n_sent = 0
    for t in range(3000):
        # Light at first (one /A/ a cycle at most), then every plane at once.
        rate = 0.9 / np_ if t < 1500 else 0.8
        valid = peer = base = amap = 0
        for p in range(np_):
            if (t >= 1500 or sum(valid >> q & 1 for q in range(p)) == 0) and rng.random() < rate:
                a = (rng.randrange(1 << 10), rng.randrange(256), rng.randrange(1, 1 << 16))
                sent[p].append(a)
                n_sent += 1
                valid |= 1 << p
                peer |= a[0] << (p * 10)
                base |= a[1] << (p * 8)
                amap |= a[2] << (p * 16)
        dut.ack_valid.value, dut.ack_peer.value, dut.ack_base.value, dut.ack_map.value = valid, peer, base, amap
        await ReadOnly()
        if int(dut.out_ack_valid.value):
            got.append((int(dut.out_ack_peer.value), int(dut.out_ack_base.value), int(dut.out_ack_map.value)))
        if t == 1499:
            assert int(dut.cnt_ack_dropped.value) == 0, "an /A/ dropped at under one a cycle"
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    dut.ack_valid.value = 0
    for _ in range(40):
        await ReadOnly()
        if int(dut.out_ack_valid.value):
            got.append((int(dut.out_ack_peer.value), int(dut.out_ack_base.value), int(dut.out_ack_map.value)))
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    # Each output is the next of some plane's /A/, skipping only dropped ones.
    skipped = 0
    for a in got:
        for q in sent:
            if a in q:
                while q[0] != a:
                    q.popleft()
                    skipped += 1
                q.popleft()
                break
        else:
            raise AssertionError(f"an /A/ nobody sent: {a}")
    skipped += sum(len(q) for q in sent)
    dropped = int(dut.cnt_ack_dropped.value)
    dut._log.info(f"{n_sent} /A/ on {np_} planes, {len(got)} out, {dropped} dropped")
    assert skipped == dropped and (dropped > 0 if np_ > 1 else dropped == 0) and len(got) > 1000


@cocotb.test()
async def dead_plane_fails_its_copies(dut):
    """A plane whose plane_down holds DEAD_CYCLES reports for its engine: every
    request that engine took and will never finish (a write's grants never
    come) gets a failed report, so a failure held back for it reaches the host
    (its kind, destination and id kept), every request is freed, and one taken
    after the plane died is failed within a sweep (2^TAGS_LOG2 * NP cycles). A
    shorter plane_down stretch does nothing, a live plane's later OK still goes
    to the host, and the dead engine's own late answer is dropped as stale.
    Plane NP-1 dies (with NP = 1 the only one: its requests fail)."""
    np_ = int(dut.NP.value)
    dead_cycles = int(dut.DEAD_CYCLES.value)
    sweep = (1 << int(dut.TAGS_LOG2.value)) * np_
    d = np_ - 1
    live = [p for p in range(np_) if p != d]
    await clock_and_reset(dut, req_valid=0, req_kind=0, req_dst=0, req_tag=0, plane_down=0, eng_req_ready=0,
                          eng_cpl_valid=0, eng_cpl_kind=0, eng_cpl_dst=0, eng_cpl_msg_id=0, eng_cpl_tag=0,
                          eng_cpl_status=0, cpl_ready=1)
    cycle = 0
    host, frees = [], []     # (cycle, kind, dst, tag, status, id) / (cycle, dst, id)

    async def step(n=1, cpl=None, down=None, ready=1):
        """n cycles; `cpl`: {plane: (kind, dst, id, tag, status)} offered until taken (one cycle here)."""
        nonlocal cycle
        for _ in range(n):
            if down is not None:
                dut.plane_down.value = down
            dut.cpl_ready.value = ready
            valid = kind = dst = mid = tag = status = 0
            for p, (k, ds, i, t, st) in (cpl or {}).items():
                valid |= 1 << p
                kind |= k << (3 * p)
                dst |= ds << (10 * p)
                mid |= i << (8 * p)
                tag |= t << (8 * p)
                status |= st << (8 * p)
            dut.eng_cpl_valid.value, dut.eng_cpl_kind.value, dut.eng_cpl_dst.value = valid, kind, dst
            dut.eng_cpl_msg_id.value, dut.eng_cpl_tag.value, dut.eng_cpl_status.value = mid, tag, status
            await ReadOnly()
            taken = int(dut.eng_cpl_ready.value)
            if int(dut.cpl_valid.value) and ready:
                host.append((cycle, int(dut.cpl_kind.value), int(dut.cpl_dst.value), int(dut.cpl_tag.value),
                             int(dut.cpl_status.value), int(dut.cpl_msg_id.value)))
            if int(dut.free_valid.value):
                frees.append((cycle, int(dut.free_dst.value), int(dut.free_msg_id.value)))
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
            cycle += 1
            if cpl:
                cpl = {p: c for p, c in cpl.items() if not taken >> p & 1}
        return cpl

    async def issue(kind, dst, tag):
        dut.req_valid.value, dut.req_kind.value, dut.req_dst.value, dut.req_tag.value = 1, kind, dst, tag
        dut.eng_req_ready.value = (1 << np_) - 1
        await ReadOnly()
        assert int(dut.req_ready.value), "every plane ready: issued at once"
        mid = int(dut.eng_msg_id.value)
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        dut.req_valid.value = dut.eng_req_ready.value = 0
        return mid

    W, R, M = protocol.KIND_WREQ, protocol.KIND_RREQ, protocol.KIND_RMWREQ
    reqs = {0: (W, 2), 1: (R, 3), 2: (M, 17)}   # tag -> (kind, dst)
    ids = {t: await issue(k, ds, t) for t, (k, ds) in reqs.items()}
    # The live planes: tag 0 OK, tag 1 failed (held for the dead plane), tag 2 not yet.
    for p in live:
        for t, st in ((0, OK), (1, TIMEOUT)):
            left = {p: (reqs[t][0], reqs[t][1], ids[t], t, st)}
            while left:
                left = await step(cpl=left)
    await step(4)
    assert [h[3] for h in host] == ([0] if live else []), f"before the plane died: {host}"
    # A stretch down shorter than DEAD_CYCLES, up again, then down for good.
    await step(dead_cycles // 2, down=1 << d)
    await step(10, down=0)
    assert [h[3] for h in host] == ([0] if live else []) and not frees, f"a short stretch down: {host} {frees}"
    t0 = cycle
    await step(dead_cycles - 5, down=1 << d)
    assert len(host) == (1 if live else 0), f"failed before DEAD_CYCLES: {host}"
    await step(20, ready=0)                    # the host holds its output: the sweep waits
    await step(sweep + 10)
    by_tag = {h[3]: h for h in host}
    assert by_tag[1][1:] == (R, 3, 1, TIMEOUT, ids[1]) and by_tag[1][0] >= t0 + dead_cycles, host
    if live:
        assert 2 not in by_tag and sorted(f[1:] for f in frees) == [(2, ids[0]), (3, ids[1])], (host, frees)
        left = {live[0]: (M, 17, ids[2], 2, OK)}
        while left:
            left = await step(cpl=left)
        await step(2)
        assert host[-1][1:] == (M, 17, 2, OK, ids[2]) and frees[-1][1:] == (17, ids[2]), (host, frees)
    else:
        assert by_tag[0][1:] == (W, 2, 0, TIMEOUT, ids[0]) and by_tag[2][1:] == (M, 17, 2, TIMEOUT, ids[2]), host
        assert sorted(f[1:] for f in frees) == sorted([(2, ids[0]), (3, ids[1]), (17, ids[2])]), frees
    # The dead engine's own late answer: taken and dropped.
    stale, n_host, n_free = int(dut.cnt_stale.value), len(host), len(frees)
    left = {d: (R, 3, ids[1], 1, OK)}
    while left:
        left = await step(cpl=left)
    await step(2)
    assert int(dut.cnt_stale.value) == stale + 1 and (len(host), len(frees)) == (n_host, n_free), (host, frees)
    # A request the dead plane's engine takes now is failed within a sweep.
    t1 = cycle
    ids[0] = await issue(W, 2, 0)
    if live:
        left = {live[0]: (W, 2, ids[0], 0, OK)}
        while left:
            left = await step(cpl=left)
    await step(sweep + 4)
    assert host[-1][1:] == (W, 2, 0, OK if live else TIMEOUT, ids[0]), host
    assert frees[-1][1:] == (2, ids[0]) and frees[-1][0] <= t1 + sweep + 8, (frees, t1)
    assert int(dut.cnt_dup.value) == 0
    dut._log.info(f"plane {d} dead: host {host}, frees {frees}")

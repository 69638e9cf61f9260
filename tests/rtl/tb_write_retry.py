"""cocotb: edm_write_retry, a compute node's write retry (docs/protocol.md §4b),
against a model of the rules it states.

The bench is the host (random writes, reads and RMWs to 4 tracked memory
nodes and one untracked port), the engine (takes requests with random
back-pressure, posts each a random while later, completions in random order)
and the memory nodes (a copy of a write is lost with some probability, else
applied and acknowledged a while later, the /A/ lost with some probability,
several ids per /A/). Memory node 3 loses every copy in the first part of
the run: its writes are re-sent until cfg_give_up.

Checked every cycle against the model: a request the host hands over reaches
the engine at once with its destination's next id (ids per destination in
order); every other request the engine takes is a re-send: a kept write,
whole (address, length, local address, tag, same id), no sooner than
cfg_ack_timeout after its last posted completion, never once an /A/ named it
or cfg_give_up after its first; the host gets exactly the engine's
completions of its own requests, none of a re-send. Bound 1: a request to d
with id n leaves only while every write to d that is neither acknowledged nor
past its give-up is fewer than 2^SLOTS_LOG2 ids behind n. Bound 2: an RMW to
d leaves only while fewer than 4 RMWs to d date from its oldest unanswered
one. At the end every write to a live node is acknowledged (after a copy of
it arrived); every write to the dead node was re-sent
and given up; the counters agree. `writes_stay_lost_without_retry` runs the
same with cfg_ack_timeout = 0 and checks that writes are lost: the checks
above can fail.

RMWs (RMW_RETRY): the engine completes an RMW STATUS_TIMEOUT now and then
(always to the dead node), a re-send's sometimes STATUS_ERROR (the memory
node's filter denying a second copy whose result it no longer keeps). Checked:
a TIMEOUT of a tracked RMW is taken here and the RMW re-sent whole (op,
operands, addresses, same id) no sooner than cfg_ack_timeout after it (and,
WAIT_FREE, after its free), until a TIMEOUT comes cfg_give_up or more after
its first: then the host gets that TIMEOUT; a re-send's other failure reaches
the host as STATUS_DENIED (outcome unknown); the host gets exactly one
completion per RMW, with its own tag; bound 2 counts an RMW answered only
then, bound 1 holds for a kept RMW as for a write; the RMW counters agree.
With cfg_ack_timeout = 0 (`writes_stay_lost_without_retry`) every TIMEOUT
reaches the host.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from tbutil import clock_and_reset, seeded_random

ACK_TIMEOUT = 120
GIVE_UP = 1500
TRACKED = [0, 1, 2, 3]
DEAD = 3              # loses every copy until DEAD_UNTIL
DEAD_UNTIL = 6000
UNTRACKED = 9
K_RREQ, K_WREQ, K_RMW = 1, 2, 3   # edm_pkg::KIND_*
ST_OK, ST_TIMEOUT, ST_ERROR, ST_DENIED = 0, 1, 2, 3   # edm_pkg::STATUS_*


async def run(dut, ack_timeout: int, cycles: int, stream: str):
    rng = seeded_random(stream)
    slots = 1 << int(dut.SLOTS_LOG2.value)
    tag_base = int(dut.RESEND_TAG_BASE.value)   # a re-send's tag: its own (0) or base + its entry
    wait_free = int(dut.WAIT_FREE.value)        # a re-send only after free_* named the last send
    rmw_retry = int(dut.RMW_RETRY.value) and ack_timeout != 0   # an RMW timed out is re-sent
    frees_due = []                              # (cycle, dst, id, write or None): free_* to drive
    await clock_and_reset(dut, cfg_ack_timeout=ack_timeout, cfg_give_up=GIVE_UP, in_req_valid=0, in_req_kind=0,
                          in_req_dst=0, in_req_raddr=0, in_req_len=0, in_req_laddr=0, in_req_rmw_op=0,
                          in_req_arg0=0, in_req_arg1=0, in_req_tag=0, out_req_ready=0, eng_cpl_valid=0,
                          eng_cpl_kind=0, eng_cpl_dst=0, eng_cpl_msg_id=0, eng_cpl_tag=0, eng_cpl_status=0,
                          cpl_ready=0, ack_valid=0, ack_peer=0, ack_base=0, ack_map=0, free_valid=0, free_dst=0,
                          free_msg_id=0)
    next_id = {d: 0 for d in TRACKED}   # an untracked port takes the counter of its low bits
    host_q = []          # requests not yet taken: dict(kind, dst, raddr, len, laddr, tag)
    host_cpl = []        # (kind, dst, id, tag) the host must get, in any order
    eng_pending = []     # (due cycle, request as the engine took it, resend?)
    eng_ready = []       # completions to offer: (kind, dst, id, tag, resend?)
    writes = {}          # (dst, id) -> the write's record while it matters
    rmws = {}            # (dst, id) -> a kept RMW's record until the host has its completion
    rmw_stats = dict(resent=0, gave_up=0, unknown=0, done=0, ok_after_resend=0, host_timeouts=0)
    done_writes = []
    acks_due = []        # (cycle, dst, id)
    rmw_log = {d: [] for d in TRACKED}   # per destination: [id, answered] in issue order
    resends = 0
    standing = None      # the request offered and not taken last cycle: it must stand
    tag = 0
    n_requests = 0
    host_got = 0
    for t in range(cycles):
        # ---- the host: a new request now and then (none in the last part: drain)
        if t < cycles - GIVE_UP - 800 and len(host_q) < 2 and rng.random() < 0.5:
            tag = (tag + 1) % 256
            dst = rng.choices(TRACKED + [UNTRACKED], [30, 30, 30, 6 if t < DEAD_UNTIL else 10, 4])[0]
            kind = rng.choices([K_WREQ, K_RREQ, K_RMW], [70, 15, 15])[0]
            length = rng.choice([0, 8, 64, 256]) if kind != K_RMW else 8
            rmw = kind == K_RMW
            host_q.append(dict(kind=kind, dst=dst, raddr=rng.getrandbits(40) << 3, len=length,
                               laddr=rng.getrandbits(40) << 3, tag=tag, op=rng.randint(1, 3) if rmw else 0,
                               arg0=rng.getrandbits(64) if rmw else 0, arg1=rng.getrandbits(64) if rmw else 0))
        head = host_q[0] if host_q else None
        dut.in_req_valid.value = head is not None
        if head is not None:
            dut.in_req_kind.value, dut.in_req_dst.value = head["kind"], head["dst"]
            dut.in_req_raddr.value, dut.in_req_len.value = head["raddr"], head["len"]
            dut.in_req_laddr.value, dut.in_req_tag.value = head["laddr"], head["tag"]
            dut.in_req_rmw_op.value, dut.in_req_arg0.value, dut.in_req_arg1.value = head["op"], head["arg0"], head["arg1"]
        out_ready = rng.random() < 0.7
        dut.out_req_ready.value = int(out_ready)
        # ---- the engine's completions
        for p in [p for p in eng_pending if p[0] <= t]:
            eng_pending.remove(p)
            r, resend = p[1:]
            if r["kind"] == K_RMW:   # its answer lost (TIMEOUT), or a re-send's denied (ERROR), or an error
                x = rng.random()
                if r["dst"] == DEAD and t < DEAD_UNTIL or x < 0.3:
                    r = dict(r, status=ST_TIMEOUT)
                elif x < 0.4:
                    r = dict(r, status=ST_ERROR if resend or x < 0.33 else ST_OK)
            eng_ready.append((r, resend))
        offer = eng_ready[0] if eng_ready else None
        dut.eng_cpl_valid.value = offer is not None
        if offer is not None:
            r, _ = offer
            dut.eng_cpl_kind.value, dut.eng_cpl_dst.value = r["kind"], r["dst"]
            dut.eng_cpl_msg_id.value, dut.eng_cpl_tag.value = r["id"], r["tag"]
            dut.eng_cpl_status.value = r.get("status", ST_OK)
        cpl_ready = rng.random() < 0.8
        dut.cpl_ready.value = int(cpl_ready)
        # ---- the memory nodes' /A/: one a cycle, the ids of one node within 16 of the first
        dut.ack_valid.value = 0
        due = [a for a in acks_due if a[0] <= t]
        acked_now = []
        if due and rng.random() < 0.7:
            _, d, base = due[0]
            take = [a for a in due if a[1] == d and (a[2] - base) % 256 < 16]
            for a in take:
                acks_due.remove(a)
            acked_now = [(d, a[2]) for a in take]
            dut.ack_valid.value, dut.ack_peer.value, dut.ack_base.value = 1, d, base
            dut.ack_map.value = sum(1 << ((a[2] - base) % 256) for a in take)
        # ---- free_*: every engine copy of a send finished (edm_mirror's last plane), a while after
        # its completion, at most one a cycle
        dut.free_valid.value = 0
        due_free = [e for e in frees_due if e[0] <= t]
        if due_free:
            e = due_free[0]
            frees_due.remove(e)
            dut.free_valid.value, dut.free_dst.value, dut.free_msg_id.value = 1, e[1], e[2]
            if e[3] is not None:
                e[3]["free"] = t
        await ReadOnly()
        # ---- what the DUT does this cycle
        q_fire = head is not None and int(dut.in_req_ready.value)
        o_fire = int(dut.out_req_valid.value) and out_ready
        now_offer = None
        if int(dut.out_req_valid.value):
            now_offer = dict(kind=int(dut.out_req_kind.value), dst=int(dut.out_req_dst.value),
                             raddr=int(dut.out_req_raddr.value), len=int(dut.out_req_len.value),
                             laddr=int(dut.out_req_laddr.value), tag=int(dut.out_req_tag.value),
                             id=int(dut.out_req_msg_id.value), op=int(dut.out_req_rmw_op.value),
                             arg0=int(dut.out_req_arg0.value), arg1=int(dut.out_req_arg1.value))
        assert standing is None or now_offer == standing, \
            f"cycle {t}: offered {standing}, then {now_offer} before it was taken"
        standing = now_offer if now_offer is not None and not out_ready else None
        if now_offer is not None and not q_fire:   # a re-send offered: since when
            w = (rmws if now_offer["kind"] == K_RMW else writes).get((now_offer["dst"], now_offer["id"]))
            if w is not None and w.get("offered") is None:
                w["offered"] = t
        if q_fire:
            assert o_fire, f"cycle {t}: host request taken but not passed on"
        if o_fire:
            r = dict(kind=int(dut.out_req_kind.value), dst=int(dut.out_req_dst.value),
                     raddr=int(dut.out_req_raddr.value), len=int(dut.out_req_len.value),
                     laddr=int(dut.out_req_laddr.value), tag=int(dut.out_req_tag.value),
                     id=int(dut.out_req_msg_id.value), op=int(dut.out_req_rmw_op.value),
                     arg0=int(dut.out_req_arg0.value), arg1=int(dut.out_req_arg1.value))
            if q_fire:
                host_q.pop(0)
                n_requests += 1
                d = r["dst"]
                assert {k: r[k] for k in head} == head, f"cycle {t}: request altered: {head} -> {r}"
                c = d % len(TRACKED)
                assert r["id"] == next_id[c], f"cycle {t}: id {r['id']} to {d}, expected {next_id[c]}"
                next_id[c] = (next_id[c] + 1) % 256
                # Bound 1: every unresolved write sharing d's counter is fewer than `slots` ids behind,
                # and every RMW kept (the node's window still holds its id).
                for (wd, wi), w in writes.items():
                    if wd == c and w["acked"] is None and (w["t0"] is None or t - w["t0"] < GIVE_UP):
                        assert (r["id"] - wi) % 256 < slots, \
                            f"cycle {t}: id {r['id']} to {d} leaves with write {wi} unresolved"
                for (wd, wi) in rmws:
                    assert wd != c or (r["id"] - wi) % 256 < slots, \
                        f"cycle {t}: id {r['id']} to {d} leaves with RMW {wi} unanswered"
                if d in TRACKED and r["kind"] == K_RMW:   # bound 2
                    log = rmw_log[d]
                    while log and log[0][1]:
                        log.pop(0)
                    assert len(log) < 4, f"cycle {t}: a fifth RMW to {d} from its oldest unanswered one"
                    log.append([r["id"], False])
                host_cpl.append((r["kind"], d, r["id"], r["tag"]))
                if r["kind"] == K_WREQ and r["len"] and d in TRACKED:
                    writes[(d, r["id"])] = dict(req=r, t0=None, t=None, acked=None, sends=1, engine=True,
                                                   arrived=0, free=None)
                if r["kind"] == K_RMW and d in TRACKED and int(dut.RMW_RETRY.value):
                    rmws[(d, r["id"])] = dict(req=r, t0=None, t=None, sends=1, engine=True, free=None)
                eng_pending.append((t + rng.randint(3, 40), r, False))
            else:
                # A re-send: a kept write or RMW, whole, due and not resolved.
                rmw = r["kind"] == K_RMW
                w = (rmws if rmw else writes).get((r["dst"], r["id"]))
                assert w is not None, f"cycle {t}: a request from nowhere: {r}"
                want = dict(w["req"])
                if tag_base:
                    want["tag"] = tag_base + (r["dst"] * slots + r["id"] % slots)
                assert r == want, f"cycle {t}: re-send {r} differs from the request {want}"
                assert not w["engine"], f"cycle {t}: re-send of a request the engine still has: {r}"
                if rmw:   # after a TIMEOUT (its give-up is judged at its completion)
                    assert rmw_retry, "RMW re-sent with the retry off"
                    assert t - w["t"] >= ack_timeout, f"cycle {t}: RMW re-sent {t - w['t']} cycles after its TIMEOUT"
                    rmw_stats["resent"] += 1
                else:
                    # Its /A/ may come while it is offered (an offer stands), not before.
                    assert w["acked"] is None or w["offered"] <= w["acked"], \
                        f"cycle {t}: re-send of write {r} acknowledged at {w['acked']}, offered from {w['offered']}"
                    assert t - w["t"] >= ack_timeout, f"cycle {t}: re-sent {t - w['t']} cycles after posted"
                    assert t - w["t0"] < GIVE_UP, f"cycle {t}: re-sent after its give-up"
                    assert ack_timeout != 0, "re-sent with the retry off"
                    resends += 1
                w["offered"] = None
                if wait_free:
                    assert w["free"] is not None and w["free"] < t, f"cycle {t}: re-sent before its last send was free"
                w["free"] = None
                w["sends"] += 1
                w["engine"] = True
                eng_pending.append((t + rng.randint(3, 40), r, True))
        if offer is not None and int(dut.eng_cpl_ready.value) and offer[0]["kind"] == K_RMW:
            r, resend = offer
            eng_ready.pop(0)
            host_sees = int(dut.cpl_valid.value) and cpl_ready
            rm = rmws.get((r["dst"], r["id"]))
            status = r.get("status", ST_OK)
            mine = rm if rm is not None and rm["engine"] and rm["req"]["raddr"] == r["raddr"] else None
            again = (rmw_retry and mine is not None and status == ST_TIMEOUT
                     and not (resend and t - mine["t0"] >= GIVE_UP))
            if again:   # taken here, re-sent later
                assert not int(dut.cpl_valid.value), f"cycle {t}: an RMW's TIMEOUT reaches the host: {r}"
                mine["engine"] = False
                mine["t"] = t
                if mine["t0"] is None:
                    mine["t0"] = t
            else:
                assert host_sees, f"cycle {t}: the engine's RMW completion taken, the host's not given: {r}"
                own = mine["req"]["tag"] if mine is not None else r["tag"]
                want = ST_DENIED if resend and status not in (ST_OK, ST_TIMEOUT) else status
                key = (r["kind"], r["dst"], r["id"], own)
                got = (int(dut.cpl_kind.value), int(dut.cpl_dst.value), int(dut.cpl_msg_id.value),
                       int(dut.cpl_tag.value))
                assert got == key and int(dut.cpl_status.value) == want, \
                    f"cycle {t}: host completion {got} status {int(dut.cpl_status.value)}, want {key} status {want}"
                host_cpl.remove(key)
                host_got += 1
                rmw_stats["host_timeouts"] += want == ST_TIMEOUT
                if r["dst"] in TRACKED:   # answered: bound 2's ring lets it go
                    for e in rmw_log[r["dst"]]:
                        if e[0] == r["id"]:
                            e[1] = True
                if mine is not None:
                    del rmws[(r["dst"], r["id"])]
                    rmw_stats["done"] += 1
                    rmw_stats["gave_up"] += status == ST_TIMEOUT
                    rmw_stats["unknown"] += want == ST_DENIED
                    rmw_stats["ok_after_resend"] += resend and status == ST_OK
            if wait_free:
                frees_due.append((t + (rng.randint(0, 50) if rng.random() < 0.8 else rng.randint(100, 400)),
                                  r["dst"], r["id"], mine if again else None))
        elif offer is not None and int(dut.eng_cpl_ready.value):
            r, resend = offer
            eng_ready.pop(0)
            host_sees = int(dut.cpl_valid.value) and cpl_ready
            if resend:
                assert not int(dut.cpl_valid.value), f"cycle {t}: a re-send's completion reaches the host: {r}"
            else:
                assert host_sees, f"cycle {t}: the engine's completion taken, the host's not given: {r}"
                key = (r["kind"], r["dst"], r["id"], r["tag"])
                assert key == (int(dut.cpl_kind.value), int(dut.cpl_dst.value), int(dut.cpl_msg_id.value),
                               int(dut.cpl_tag.value))
                host_cpl.remove(key)
                host_got += 1
            w = writes.get((r["dst"], r["id"])) if r["kind"] == K_WREQ else None
            if wait_free:   # free a while after the completion
                mine = w if w is not None and w["req"]["raddr"] == r["raddr"] else None
                frees_due.append((t + (rng.randint(0, 50) if rng.random() < 0.8 else rng.randint(100, 400)), r["dst"], r["id"], mine))
            if w is not None and w["req"]["raddr"] == r["raddr"] and w["req"]["laddr"] == r["laddr"]:
                w["engine"] = False
                w["t"] = t
                if w["t0"] is None:
                    w["t0"] = t
                # The copy reaches its memory node, or not.
                lost = (r["dst"] == DEAD and t < DEAD_UNTIL) or rng.random() < 0.2
                if not lost:
                    w["arrived"] += 1
                    if rng.random() < 0.85:
                        acks_due.append((t + rng.randint(5, 60), r["dst"], r["id"]))
        else:
            assert not (offer is None and int(dut.cpl_valid.value)), f"cycle {t}: a completion from nowhere"
        for d, i in acked_now:
            w = writes.get((d, i))
            if w is not None and w["acked"] is None:
                w["acked"] = t
        # Writes resolved for good leave the model (their ids come round again).
        for key in [k for k, w in writes.items() if not w["engine"] and (
                w["acked"] is not None or (w["t0"] is not None and t - w["t0"] >= GIVE_UP + 200))]:
            done_writes.append(writes.pop(key))
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    done_writes += writes.values()
    return dict(done=done_writes, resends=resends, host_cpl=host_cpl, host_got=host_got,
                n_requests=n_requests, host_q=host_q, rmws=rmws, rmw=rmw_stats)


def _counters(dut):
    return {n: int(getattr(dut, f"cnt_{n}").value)
            for n in ("resent", "gave_up", "untracked", "rmw_resent", "rmw_gave_up", "rmw_unknown")}


@cocotb.test()
async def writes_are_resent_until_acknowledged(dut):
    out = await run(dut, ACK_TIMEOUT, 20000, "write_retry")
    assert not out["host_q"] and not out["host_cpl"], "requests or completions left over"
    def timed_out(w):   # its next re-send could not come before its give-up (its free came too late)
        free = w["free"] if w["free"] is not None else 1 << 40
        return w["acked"] is None and max(free, w["t"] + ACK_TIMEOUT) >= w["t0"] + GIVE_UP - 40

    dead = [w for w in out["done"] if (w["req"]["dst"] == DEAD and w["t0"] < DEAD_UNTIL) or timed_out(w)]
    live = [w for w in out["done"] if not any(w is x for x in dead)]
    unacked = [w for w in live if w["acked"] is None]
    assert not unacked, f"{len(unacked)} writes to live nodes never acknowledged: {unacked[:3]}"
    assert all(w["arrived"] >= 1 for w in live), "acknowledged without a copy arriving"
    gave_up = [w for w in dead if w["acked"] is None]
    late = [w for w in dead if w["acked"] is not None and w["acked"] - w["t0"] >= GIVE_UP - 60]
    for w in gave_up:   # re-sent all along, a re-send at most every timeout + scan + back-pressure
        assert w["sends"] >= GIVE_UP // (ACK_TIMEOUT + 120), f"write {w['req']} sent only {w['sends']} times"
    c = _counters(dut)
    dut._log.info(f"{out['n_requests']} requests, {len(out['done'])} writes kept: {len(live)} to live nodes "
                  f"all acknowledged, {len(gave_up)} given up (the dead node, or a late free); {out['resends']} re-sends; "
                  f"counters {c}")
    # An /A/ racing the give-up (within its last 60 cycles) may find the entry gone.
    assert c["resent"] == out["resends"] and len(gave_up) <= c["gave_up"] <= len(gave_up) + len(late)
    assert len(gave_up) >= 5 and out["resends"] > 200 and len(live) > 400
    # RMWs: every kept one completed once to the host; the counters agree with the model.
    rm = out["rmw"]
    dut._log.info(f"RMWs: {rm}")
    assert not out["rmws"], f"RMWs never completed: {list(out['rmws'].values())[:3]}"
    assert (c["rmw_resent"], c["rmw_gave_up"], c["rmw_unknown"]) == (rm["resent"], rm["gave_up"], rm["unknown"]), (c, rm)
    assert rm["resent"] > 100 and rm["gave_up"] >= 2 and rm["unknown"] >= 3 and rm["ok_after_resend"] > 20, rm


@cocotb.test()
async def writes_stay_lost_without_retry(dut):
    """The mutant: cfg_ack_timeout = 0 re-sends nothing, so writes whose copy
    or /A/ was lost stay unacknowledged: the check above fails."""
    out = await run(dut, 0, 4000, "write_retry_off")
    unacked = [w for w in out["done"] if w["acked"] is None]
    assert out["resends"] == 0 and _counters(dut)["resent"] == 0
    # ... and no RMW is re-sent: its TIMEOUT reaches the host.
    assert out["rmw"]["resent"] == _counters(dut)["rmw_resent"] == 0 and out["rmw"]["host_timeouts"] >= 2, out["rmw"]
    assert len(unacked) >= 5, f"only {len(unacked)} writes unacknowledged without retry"

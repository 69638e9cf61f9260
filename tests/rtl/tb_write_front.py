"""cocotb: edm_write_front, a compute host's front for acknowledged writes
(edm_write_retry then edm_write_outcome, or a wire without ACKS), against a
model of how the two are wired; their own rules are tb_write_retry's and
tb_write_outcome's.

ACKS = 1 (`each_write_one_outcome`): the bench is the host (random writes,
reads and RMWs to memory nodes 0..3, random tags), the engine (takes requests
with random back-pressure, completes each a random while later, in order,
with the id it was given) and the memory nodes: each write's fate is `ok`
(its first copy acknowledged), `lost` (its first copy lost, its re-send
acknowledged) or `dead` (never acknowledged). Checks: the host gets one
completion per request, in the engine's order, none for a re-send; a `lost`
write reaches the engine again with the same id, an `ok` one never; every
write gets one outcome with its destination, id and tag: acknowledged for
`ok` and `lost` (`lost` no sooner than cfg_ack_timeout after its posted
completion), failed for `dead`; reads and RMWs get none.
ACKS = 0 (`a_wire_without_acks`): random inputs every cycle, the outputs
equal them (message id 0), no outcome.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from tbutil import clock_and_reset, seeded_random

ACK_TIMEOUT = 150
GIVE_UP = 900
K_RREQ, K_WREQ, K_RMW = 1, 2, 3   # edm_pkg::KIND_*
REQ = ("kind", "dst", "raddr", "len", "laddr", "rmw_op", "arg0", "arg1", "tag")
CPL = ("kind", "dst", "msg_id", "tag", "status")
WRITE = ("kind", "dst", "raddr", "len", "laddr", "tag")   # what a re-send repeats (the retry keeps no operands)


def idle(dut):
    return dict(cfg_ack_timeout=ACK_TIMEOUT, cfg_give_up=GIVE_UP, in_req_valid=0, out_req_ready=0,
                eng_cpl_valid=0, cpl_ready=0, free_valid=0, free_dst=0, free_msg_id=0, ack_valid=0, ack_peer=0,
                ack_base=0, ack_map=0, eng_cpl_kind=0, eng_cpl_dst=0, eng_cpl_msg_id=0, eng_cpl_tag=0,
                eng_cpl_status=0, **{f"in_req_{k}": 0 for k in REQ})


@cocotb.test(skip=not int(cocotb.top.ACKS.value))
async def each_write_one_outcome(dut):
    rng = seeded_random("write_front")
    await clock_and_reset(dut, **idle(dut))
    requests = []
    for n in range(240):
        kind = rng.choice([K_WREQ, K_WREQ, K_WREQ, K_RREQ, K_RMW])
        requests.append(dict(kind=kind, dst=rng.randrange(4), raddr=rng.getrandbits(40), len=rng.randint(1, 512),
                             laddr=rng.getrandbits(40), rmw_op=rng.randrange(3), arg0=rng.getrandbits(64),
                             arg1=rng.getrandbits(64), tag=n % 256,
                             fate=rng.choices(["ok", "lost", "dead"], [80, 15, 5])[0] if kind == K_WREQ else None))
    host_q = list(requests)
    eng_q = []          # [due cycle, request, id, resend] the engine will complete, in order
    taken = {}          # (dst, id) -> [request, copies taken]
    acks_due = []       # (cycle, dst, id)
    want_cpl = []       # (request, id) in the engine's completion order, re-sends left out
    posted = {}         # (dst, id) -> cycle of the host's completion
    outcomes = []
    cycle = 0
    while cycle < 40_000 and (host_q or eng_q or acks_due or len(outcomes) < sum(r["kind"] == K_WREQ
                                                                               for r in requests)):
        # the host offers its next request (an offer stands until taken)
        offer = host_q[0] if host_q else None
        dut.in_req_valid.value = int(offer is not None)
        if offer is not None:
            for k in REQ:
                getattr(dut, f"in_req_{k}").value = offer[k]
        dut.out_req_ready.value = int(rng.random() < 0.7)
        dut.cpl_ready.value = int(rng.random() < 0.8)
        head = eng_q[0] if eng_q and eng_q[0][0] <= cycle else None
        dut.eng_cpl_valid.value = int(head is not None)
        if head is not None:
            _, r, i, _ = head
            dut.eng_cpl_kind.value, dut.eng_cpl_dst.value, dut.eng_cpl_msg_id.value = r["kind"], r["dst"], i
            dut.eng_cpl_tag.value, dut.eng_cpl_status.value = r["tag"], 0
        ack = next((a for a in acks_due if a[0] <= cycle), None)
        dut.ack_valid.value = int(ack is not None)
        if ack is not None:
            acks_due.remove(ack)
            dut.ack_peer.value, dut.ack_base.value, dut.ack_map.value = ack[1], ack[2], 1
        await ReadOnly()
        if int(dut.wo_valid.value):
            outcomes.append((cycle, int(dut.wo_dst.value), int(dut.wo_id.value), int(dut.wo_tag.value),
                             int(dut.wo_ok.value), int(dut.wo_age.value)))
        if int(dut.out_req_valid.value) and int(dut.out_req_ready.value):
            got = {k: int(getattr(dut, f"out_req_{k}").value) for k in REQ}
            i = int(dut.out_req_msg_id.value)
            resend = offer is None or not int(dut.in_req_ready.value)   # not the host's request: a re-send
            if resend:
                assert (got["dst"], i) in taken, f"cycle {cycle}: engine took {got} with id {i}"
                entry = taken[(got["dst"], i)]
                r = entry[0]
                assert r["fate"] in ("lost", "dead") and entry[1] >= 1, f"cycle {cycle}: {r} re-sent"
                assert {k: got[k] for k in WRITE} == {k: r[k] for k in WRITE}, f"cycle {cycle}: re-send {got} of {r}"
                assert cycle - posted[(r["dst"], i)] >= ACK_TIMEOUT, f"cycle {cycle}: re-sent early: {r}"
                entry[1] += 1
            else:
                assert got == {k: offer[k] for k in REQ}, f"cycle {cycle}: {got} for {offer}"
                r = host_q.pop(0)
                taken[(r["dst"], i)] = [r, 1]
                want_cpl.append((r, i))
            eng_q.append([cycle + rng.randint(1, 20), r, i, resend])
        elif offer is not None:
            assert not int(dut.in_req_ready.value), f"cycle {cycle}: host request taken, not passed"
        if head is not None and int(dut.eng_cpl_ready.value):
            _, r, i, resend = eng_q.pop(0)
            # the memory node's /A/ some while after the copy's last byte left (its posted completion)
            if r["kind"] == K_WREQ and (r["fate"] == "ok" or (r["fate"] == "lost" and resend)):
                acks_due.append((cycle + rng.randint(5, 60), r["dst"], i))
        if int(dut.cpl_valid.value) and int(dut.cpl_ready.value):
            got = {k: int(getattr(dut, f"cpl_{k}").value) for k in CPL}
            assert want_cpl, f"cycle {cycle}: completion {got} for no request"
            r, i = want_cpl.pop(0)
            assert got == dict(kind=r["kind"], dst=r["dst"], msg_id=i, tag=r["tag"], status=0), (cycle, got, r)
            if r["kind"] == K_WREQ:
                posted[(r["dst"], i)] = cycle
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        cycle += 1
    assert not host_q and not want_cpl, f"{len(host_q)} requests not taken, {len(want_cpl)} not completed"
    writes = {(d, i): e for (d, i), e in taken.items() if e[0]["kind"] == K_WREQ}
    assert len(outcomes) == len(writes), f"{len(outcomes)} outcomes for {len(writes)} writes"
    by_key = {}
    for o in outcomes:
        assert (o[1], o[2]) not in by_key, f"two outcomes for write {o[1:3]}"
        by_key[(o[1], o[2])] = o
    for key, (r, copies) in writes.items():
        o = by_key[key]
        assert o[3] == r["tag"] and o[4] == int(r["fate"] != "dead"), (o, r)
        if r["fate"] == "ok":
            assert copies == 1 and o[5] < ACK_TIMEOUT, (o, r, copies)
        elif r["fate"] == "lost":
            assert copies >= 2 and o[5] >= ACK_TIMEOUT, (o, r, copies)
        else:
            assert copies >= 2 and o[0] - posted[key] >= GIVE_UP, (o, r, copies)
    fates = [r["fate"] for r, _ in writes.values()]
    assert fates.count("lost") > 5 and fates.count("dead") > 1, fates
    assert int(dut.cnt_resent.value) == sum(c - 1 for _, c in writes.values())
    assert int(dut.cnt_wo_failed.value) == fates.count("dead") and int(dut.cnt_wo_stray.value) == 0
    dut._log.info(f"{len(requests)} requests in {cycle} cycles; {len(writes)} writes: {fates.count('lost')} "
                  f"re-sent and acknowledged, {fates.count('dead')} failed; {int(dut.cnt_resent.value)} re-sends")


@cocotb.test(skip=bool(int(cocotb.top.ACKS.value)))
async def a_wire_without_acks(dut):
    rng = seeded_random("write_front_wire")
    await clock_and_reset(dut, **idle(dut))
    widths = {"kind": 3, "dst": len(dut.in_req_dst), "raddr": 64, "len": 16, "laddr": 64, "rmw_op": 4, "arg0": 64, "arg1": 64,
              "tag": 8, "msg_id": 8, "status": 8}
    for _ in range(300):
        ins = {f"in_req_{k}": rng.getrandbits(widths[k]) for k in REQ}
        ins.update({f"eng_cpl_{k}": rng.getrandbits(widths[k]) for k in CPL})
        ins.update({k: rng.getrandbits(1) for k in ("in_req_valid", "out_req_ready", "eng_cpl_valid", "cpl_ready",
                                                    "ack_valid", "free_valid")})
        for k, v in ins.items():
            getattr(dut, k).value = v
        await ReadOnly()
        for k in REQ:
            assert int(getattr(dut, f"out_req_{k}").value) == ins[f"in_req_{k}"], k
        for k in CPL:
            assert int(getattr(dut, f"cpl_{k}").value) == ins[f"eng_cpl_{k}"], k
        assert int(dut.out_req_valid.value) == ins["in_req_valid"] and int(dut.out_req_msg_id.value) == 0
        assert int(dut.in_req_ready.value) == ins["out_req_ready"]
        assert int(dut.cpl_valid.value) == ins["eng_cpl_valid"] and int(dut.eng_cpl_ready.value) == ins["cpl_ready"]
        assert int(dut.wo_valid.value) == 0 and int(dut.cnt_resent.value) == 0
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)

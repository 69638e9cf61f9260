"""cocotb: edm_ack_sender, a memory node's /A/ sender (docs/protocol.md §4b),
against the protocol's rules, with the reference codec as the receiver.

Every /A/ the sender emits goes through a reference receiver (edm.protocol.codec.RxDemux),
so each one is a well-formed /A/ with the link's next control number. Checked:
  * every id applied from a tracked source is acknowledged exactly once (for
    ids applied once), and nothing else is; an id applied again after its /A/
    left (a duplicate) is acknowledged again;
  * at most one /A/ per ACK_GAP_BLOCKS cycles (tick high), and unloaded the
    /A/ is out one cycle after the write (at once);
  * a source's /A/ at least ACK_PAIR_GAP_BLOCKS apart unless the earlier was
    full: a steady source is acknowledged in groups, a source writing more
    than a map per slot is not held (no backlog), a lone write after a quiet
    spell leaves at once;
  * under load the writes of many sources share /A/ (aggregation), and none
    waits longer than the round robin's bound;
  * ids that do not fit their source's open /A/ close it (spill), both sent;
  * untracked sources and a full spill queue are counted (cnt_unacked), never
    sent wrong;
  * with out_ready back-pressure nothing is lost or repeated.
"""

from __future__ import annotations

from collections import Counter

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol as P
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

GAP = P.ACK_GAP_BLOCKS
PAIR_GAP = P.ACK_PAIR_GAP_BLOCKS
FULL = (1 << P.ACK_MAP_W) - 1


class Harness:
    def __init__(self, dut, ready=1.0, seed="ack_sender"):
        self.dut, self.rng, self.ready = dut, seeded_random(seed), ready
        self.rx = codec.RxDemux()
        self.sent = []        # (cycle, peer, base, map, ids) of each /A/ taken
        self.cycle = 0

    async def start(self):
        await clock_and_reset(self.dut, applied_valid=0, applied_src=0, applied_id=0, tick=1, out_ready=1)

    async def watch(self, applied=None):
        dut = self.dut
        dut.applied_valid.value = applied is not None
        if applied is not None:
            dut.applied_src.value, dut.applied_id.value = applied
        ready = self.rng.random() < self.ready
        dut.out_ready.value = int(ready)
        await ReadOnly()
        if int(dut.out_valid.value) and ready:   # taken at this edge
            block = (int(dut.out_block.value) & 3, int(dut.out_block.value) >> 2)
            events = self.rx.push(block)
            assert len(events) == 1 and events[0][0] == "ack", f"cycle {self.cycle}: {block} -> {events}"
            _, peer, base, amap = events[0]
            self.sent.append((self.cycle, peer, base, amap, codec.acked_ids(base, amap)))
        await RisingEdge(dut.clk)
        await ReadOnly()
        await FallingEdge(dut.clk)
        self.cycle += 1

    async def idle(self, n):
        for _ in range(n):
            await self.watch(None)

    def acked(self):
        return sorted((peer, i) for _, peer, _, _, ids in self.sent for i in ids)


def check_clean(h):
    c = h.rx.counters
    assert c["acks_ok"] == len(h.sent) and c["corrupted"] == 0 and c["control_missed"] == 0, c


@cocotb.test()
async def unloaded_acknowledgement_leaves_at_once(dut):
    """One write on a quiet link: its /A/ is open after the next edge, in the
    output register after the one after, and taken then (2 cycles); the next
    one waits GAP blocks. A source whose /A/ carried one write is not held; one
    whose /A/ carried two is, PAIR_GAP blocks, until a quiet spell of its own."""
    h = Harness(dut)
    await h.start()
    await h.watch((1, 200))
    await h.idle(2)
    assert h.sent and h.sent[0][1:4] == (1, 200, 1) and h.sent[0][0] == 2, h.sent
    await h.watch((2, 7))
    # Source 1 again while the node's slot is taken: two writes, one /A/ at
    # the next slot (source 1's last /A/ carried one write: not held).
    await h.watch((1, 201))
    await h.watch((1, 202))
    await h.idle(2 * GAP)
    assert [s[1:4] for s in h.sent] == [(1, 200, 1), (2, 7, 1), (1, 201, 3)], h.sent
    assert [s[0] for s in h.sent] == [2, 2 + GAP, 2 + 2 * GAP], h.sent
    # That /A/ carried two: source 1's next waits its pair slot.
    await h.watch((1, 203))
    await h.idle(PAIR_GAP)
    assert len(h.sent) == 4 and h.sent[3][1:4] == (1, 203, 1) and h.sent[3][0] - h.sent[2][0] == PAIR_GAP, h.sent
    # After a quiet spell of its own, a source's write leaves at once again.
    await h.idle(PAIR_GAP)
    start = h.cycle
    await h.watch((1, 204))
    await h.idle(2)
    assert len(h.sent) == 5 and h.sent[4][0] == start + 2, (start, h.sent)
    check_clean(h)


async def steady_source(h, period, writes):
    """One source (3) applying ids 0, 1, ... one per `period` cycles; returns
    when each id was applied."""
    when = {}
    for k in range(writes * period):
        a = None
        if k % period == 0:
            a = (3, (k // period) % 256)
            when[k // period] = h.cycle
        await h.watch(a)
    await h.idle(PAIR_GAP + 2 * GAP)
    return when


@cocotb.test()
async def steady_source_is_acknowledged_in_groups(dut):
    """A source applying a write every PAIR_GAP/12 cycles (fewer than a map
    per pair slot): every id acknowledged once; the first /A/ at once, the
    second at the node's slot with two ids, from then on PAIR_GAP apart, each
    carrying about 12 ids, none waiting longer than a slot.
    Faster than a map per slot (a write every PAIR_GAP/32 cycles): full maps,
    sent as they fill (spilled), no backlog."""
    h = Harness(dut, seed="ack_sender_steady")
    await h.start()
    period = PAIR_GAP // 12
    when = await steady_source(h, period, 60)
    assert h.acked() == sorted((3, i) for i in when), h.sent
    gaps = [b[0] - a[0] for a, b in zip(h.sent, h.sent[1:])]
    assert period < GAP and len(h.sent[1][4]) == 2 and all(g == PAIR_GAP for g in gaps[1:]), (gaps, h.sent[:2])
    assert all(len(ids) >= PAIR_GAP // period - 1 for *_, ids in h.sent[2:-1]), h.sent
    waits = [cyc - when[i] for cyc, *_, ids in h.sent for i in ids]
    assert max(waits) <= PAIR_GAP + 2, max(waits)
    dut._log.info(f"steady: {len(when)} writes in {len(h.sent)} /A/, wait max {max(waits)} cycles")
    # Faster than a map per slot.
    h2_start = len(h.sent)
    period = PAIR_GAP // 32
    await h.idle(PAIR_GAP)
    when = await steady_source(h, period, 96)
    sent = h.sent[h2_start:]
    assert sorted(i for *_, ids in sent for i in ids) == sorted(when), sent
    full = sum(amap == FULL for _, _, _, amap, _ in sent)
    waits = [cyc - when[i] for cyc, *_, ids in sent[:-1] for i in ids]
    tail = [sent[-1][0] - when[i] for i in sent[-1][4]]
    dut._log.info(f"fast: {len(when)} writes in {len(sent)} /A/ ({full} full), wait max {max(waits)} cycles, "
                  f"the last /A/'s {max(tail)}")
    # A full /A/ does not hold its source: the next leaves at the node's slot
    # with what it has, then holds; so at most one /A/ not full per full one.
    assert full >= 1 and len(sent) - full <= full + 1, sent
    # A map fills in 16 periods and leaves at the node's next slot: no backlog;
    # the last ids, with no write after them, wait at most a pair slot.
    assert max(waits) <= P.ACK_MAP_W * period + GAP + 2 and max(tail) <= PAIR_GAP + 2, (max(waits), max(tail))
    check_clean(h)


@cocotb.test()
async def every_write_acknowledged_once_under_load(dut):
    """4 tracked sources applying writes in id order, some ids skipped (not
    applied here), at a memory node's rate for 64-byte writes (one per 11
    blocks), the output back-pressured: every id is acknowledged exactly
    once, /A/ at least GAP cycles apart, aggregated, and no write waits
    longer than a pair slot and the round robin's bound. (From one write per
    6 blocks, 16 ids per node slot of 96 blocks is the map's whole width:
    /A/ are then dropped, counted, and the requesters' retries recover them.)"""
    h = Harness(dut, ready=0.7, seed="ack_sender_load")
    await h.start()
    nxt = [0, 100, 250, 30]
    applied, when = [], {}
    for _ in range(12000):
        a = None
        if h.rng.random() < 1 / 11:
            s = h.rng.randrange(4)
            nxt[s] = (nxt[s] + (1 if h.rng.random() < 0.9 else h.rng.randrange(2, 5))) % 256
            a = (s, nxt[s])
            applied.append(a)
            when.setdefault(a, []).append(h.cycle)
        await h.watch(a)
    await h.idle(12 * GAP)
    # ids repeat only after 256 per source: compare as multisets
    missing = Counter(applied) - Counter(h.acked())
    extra = Counter(h.acked()) - Counter(applied)
    assert not missing and not extra, f"not acknowledged {dict(missing)}, acknowledged, not applied {dict(extra)}; " \
        f"dropped {int(dut.cnt_unacked.value)}"
    gaps = [b[0] - a[0] for a, b in zip(h.sent, h.sent[1:])]
    assert min(gaps) >= GAP, min(gaps)
    per_ack = len(applied) / len(h.sent)
    waits = []
    for cyc, peer, _, _, ids in h.sent:
        for i in ids:
            waits.append(cyc - when[(peer, i)].pop(0))
    dut._log.info(f"{len(applied)} writes in {len(h.sent)} /A/ ({per_ack:.1f} per /A/), "
                  f"wait max {max(waits)} mean {sum(waits) / len(waits):.0f} cycles; "
                  f"spilled/unacked {int(dut.cnt_unacked.value)}")
    assert per_ack > 2 and int(dut.cnt_unacked.value) == 0
    # A source's slot, then the round robin over 4 sources plus a spilled /A/
    # each, each node slot GAP blocks stretched by back-pressure.
    assert max(waits) < PAIR_GAP + 12 * GAP, max(waits)
    check_clean(h)


@cocotb.test()
async def ids_outside_the_open_map_spill_and_untracked_are_counted(dut):
    """An id 16 or more ahead of its source's open /A/ (or behind it) closes
    that /A/ into the spill queue; both are sent. A write applied again after
    its /A/ left is acknowledged again. Untracked sources (>= 2^SRC_LOG2) are
    counted, never sent; a full spill queue drops the closed /A/, counted."""
    h = Harness(dut, seed="ack_sender_spill")
    await h.start()
    await h.watch((0, 1))            # leaves at once, opens the gap
    await h.watch((0, 2))            # opens an /A/ based at 2
    await h.watch((0, 2 + 16))       # does not fit: spills {2}, opens {18}
    await h.watch((0, 1))            # behind 18: spills {18}, opens {1} (a duplicate: acknowledged again)
    await h.watch((1 << int(dut.SRC_LOG2.value), 5))  # untracked
    await h.idle(PAIR_GAP + 6 * GAP)   # the last open /A/ waits for its pair slot
    assert [s[1:4] for s in h.sent] == [(0, 1, 1), (0, 2, 1), (0, 18, 1), (0, 1, 1)], h.sent
    assert int(dut.cnt_unacked.value) == 1
    # Fill the spill queue (2^SPILL_LOG2) while an /A/ waits for its slot.
    await h.watch((2, 0))            # leaves at once
    spill = 1 << int(dut.SPILL_LOG2.value)
    for k in range(spill + 3):
        await h.watch((2, 20 * (k + 1)))   # each closes the previous one
    await h.idle(PAIR_GAP + (spill + 4) * GAP)
    lost = int(dut.cnt_unacked.value) - 1
    assert lost >= 1, "the spill queue never filled"
    assert len(h.sent) == 5 + spill + 3 - lost, (len(h.sent), lost)
    check_clean(h)

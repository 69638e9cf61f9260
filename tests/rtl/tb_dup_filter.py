"""cocotb: edm_dup_filter, the memory side of the dual switch, against a Python
model of its window rule (rtl/host/edm_dup_filter.sv, docs/faults.md §6).

Each plane carries a copy of every unit (built with the reference codec) as
edm_rx would deliver it: RREQs, RMWREQs and WREQ messages of 1 to 5 chunks
(seq 4 is beyond the 4 chunks tracked) from tracked sources and one source
port beyond them; ids run per source mod 256 from a random start (most
sources wrap). Each copy's
fate on its plane: good, lost (never arrives), ends in error, or cut short
by an abort. The planes are skewed and shuffle neighbouring units (grants
come out of id order). Plane 1 is cut off for a stretch: those copies are
held back and sent 200 messages later (8 W with a window W beyond 16; a
plane that comes back with its backlog), where they are stale (each source's ids have moved on by more than
the window and less than 256 - NEW_MAX, the filter's bound).
Checks, every cycle: the output is the input, and out_dup is set on the /MT/
of exactly the copies the model drops. At the end: no WREQ chunk or RMWREQ
of a tracked source was applied twice; every one with a good copy was
applied once, except those whose only good copies were in the backlog
(predicted without the model); the counters equal the model's.
RMW results: the bench plays the engines: a while after each RMWREQ's first
copy it reports the result (rmw_done, random ok and old value) on that
plane, and every cycle each plane asks for a random recent RMW's key;
out_replay on each second copy and memo_ready/ok/old every cycle equal the
model's ring of R results per source.
Whole messages: out_whole on each good /MT/ equals the model's (a WREQ or
RMWREQ passed or marked a second copy that is its message's last chunk,
with chunks 0 .. its seq of its id all seen); a last chunk whose earlier
chunk was lost on every plane is not whole (the memory node does not
acknowledge it), and the last chunk of a 5-chunk write never is.
"""

from __future__ import annotations


import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tbutil import clock_and_reset, seeded_random

NODE = 40
FILTERED = ("WREQ", "RMWREQ")


def pack(block):
    return block[0] | (block[1] << 2)


class Model:
    """The filter's rule, stated on ids: per source the newest id seen and the
    (id, seq) recorded among the W ids up to it."""

    def __init__(self, src_log2, window, chunks, results, new_max):
        self.sources, self.window, self.chunks, self.new_max = 1 << src_log2, window, chunks, new_max
        self.hi = {}
        self.seen = {}
        self.results = results
        self.ring = {}   # source -> [R entries: None or [id, done, ok, old]], next slot
        self.replay = False
        self.whole = False

    def entry(self, s, x):
        ring, _ = self.ring.get(s, ([None] * self.results, 0))
        return next((e for e in ring if e is not None and e[0] == x), None)

    def done(self, s, x, ok, old):
        e = self.entry(s, x)
        if s < self.sources and e is not None:
            e[1:] = [True, ok, old]

    def memo(self, s, x):
        """(ready, ok, old or None) for an engine's key."""
        e = self.entry(s, x) if s < self.sources else None
        if e is None:
            return True, False, None
        return e[1], e[1] and e[2], e[3] if e[1] else None

    def verdict(self, m: codec.Message) -> str:
        """pass, dup, stale or untracked, and the state updated."""
        filtered = m.kind in FILTERED
        self.whole = False
        if m.src >= self.sources:
            return "untracked" if filtered else "pass"
        s, x = m.src, m.msg_id
        if s not in self.hi or 0 < (x - self.hi[s]) % 256 <= self.new_max:
            self.hi[s] = x
            self.seen[s] = {(y, q) for y, q in self.seen.get(s, set()) if (x - y) % 256 < self.window}
            ring, nxt = self.ring.get(s, ([None] * self.results, 0))
            self.ring[s] = ([e if e is not None and (x - e[0]) % 256 < self.window else None for e in ring], nxt)
        self.replay = False
        if not filtered:
            return "pass"
        if (self.hi[s] - x) % 256 >= self.window:
            return "stale"
        if m.seq >= self.chunks:
            return "untracked"
        if (x, m.seq) in self.seen[s]:
            self.replay = m.kind == "RMWREQ" and self.entry(s, x) is not None
            self.whole = m.last and all((x, q) in self.seen[s] for q in range(m.seq + 1))
            return "dup"
        self.seen[s].add((x, m.seq))
        self.whole = m.last and all((x, q) in self.seen[s] for q in range(m.seq + 1))
        if m.kind == "RMWREQ":   # its result is to come
            ring, nxt = self.ring.get(s, ([None] * self.results, 0))
            ring[nxt] = [x, False, False, None]
            self.ring[s] = (ring, (nxt + 1) % self.results)
        return "pass"


def messages(rng, sources, count):
    """count messages over the sources, each as its list of units (Messages)."""
    next_id = {s: rng.randrange(256) for s in sources}
    out = []
    for _ in range(count):
        s = rng.choice(sources)
        i = next_id[s]
        next_id[s] = (i + 1) % 256
        kind = rng.choice(["RREQ", "WREQ", "WREQ", "RMWREQ"])
        if kind == "RREQ":
            out.append([codec.Message("RREQ", s, NODE, i, rng.randint(1, 512), addr=rng.getrandbits(40))])
        elif kind == "RMWREQ":
            out.append([codec.Message("RMWREQ", s, NODE, i, protocol.RMW_OPERAND_BYTES, addr=8 * rng.getrandbits(30),
                                      op=protocol.RMW_FAA, arg0=rng.getrandbits(64))])
        else:
            n = rng.choice([1, 1, 2, 3, 5])
            out.append([codec.Message("WREQ", s, NODE, i, len(d), addr=rng.getrandbits(40), seq=k, last=k == n - 1,
                                      data=d)
                        for k, d in ((k, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 24))))
                                     for k in range(n))])
    return out


def shuffled(rng, units):
    """Neighbours swapped now and then: grants do not come in id order."""
    units = list(units)
    for k in range(len(units) - 1):
        if rng.random() < 0.3:
            units[k], units[k + 1] = units[k + 1], units[k]
    return units


class Plane:
    """Drives one plane's mem_* inputs: units with fates, random gaps."""

    def __init__(self, rng, units, start):
        self.rng, self.units, self.wait = rng, list(units), start
        self.cur = None   # [blocks, index, fate, message]

    def drive(self):
        """This cycle's inputs (valid, block, first, last, error, abort) and the
        message whose good /MT/ it is (else None)."""
        idle = (0, 0, 0, 0, 0, 0)
        if self.wait > 0:
            self.wait -= 1
            return idle, None
        if self.cur is None:
            if not self.units:
                return idle, None
            m, fate = self.units.pop(0)
            blocks = [pack(b) for b in codec.encode_message(m)]
            if fate == "abort":
                blocks = blocks[:self.rng.randrange(1, len(blocks))]
            self.cur = [blocks, 0, fate, m]
        blocks, k, fate, m = self.cur
        if k == len(blocks):   # an abort, alone
            self.cur = None
            return (0, 0, 0, 0, 0, 1), None
        if k > 0 and self.rng.random() < 0.15:   # an idle filler edm_rx removed
            return idle, None
        self.cur[1] += 1
        last = fate != "abort" and k == len(blocks) - 1
        if last:
            self.cur = None
        error = last and fate == "error"
        return (1, blocks[k], int(k == 0), int(last), int(error), 0), (m if last and not error else None)


@cocotb.test()
async def first_copy_kept_second_and_stale_dropped(dut):
    np_, src_log2 = int(dut.NP.value), int(dut.SRC_LOG2.value)
    window, chunks = 1 << int(dut.WINDOW_LOG2.value), 1 << int(dut.SEQ_LOG2.value)
    rng = seeded_random(25 + np_)
    sources = list(range(1 << src_log2)) + [(1 << src_log2) + 3]
    msgs = messages(rng, sources, 900)
    cut = range(300, 340)   # plane 1's backlog: these copies come after message cut.stop + later
    # later: far enough for the sources' ids to move past the window, not so
    # far that they reach 256 - NEW_MAX (5 sources: about later / 5 ids each).
    later = 200 if window <= 16 else 8 * window
    fates = {}
    per_plane = [[] for _ in range(np_)]
    backlog = []
    for n, units in enumerate(msgs):
        for m in units:
            for p in range(np_):
                fate = rng.choices(["good", "lost", "error", "abort"], [85, 5, 5, 5])[0]
                if p == 0 and n in cut and rng.random() < 0.3:
                    fate = "lost"   # some of the backlog's messages have no other copy
                fates[(m.src, m.msg_id, m.seq, n, p)] = fate
                if fate == "lost":
                    continue
                (backlog if p == 1 and n in cut else per_plane[p]).append((m, fate, n))
    streams = [[(m, fate) for m, fate, _ in shuffled(rng, units)] for units in per_plane]
    if np_ > 1:
        back = next(k for k, (_, _, n) in enumerate(per_plane[1]) if n >= cut.stop + later)
        streams[1][back:back] = [(m, fate) for m, fate, _ in backlog]
    planes = [Plane(rng, units, start=rng.randrange(40)) for units in streams]

    await clock_and_reset(dut, in_valid=0, in_block=0, in_first=0, in_last=0, in_error=0, in_abort=0,
                          rmw_done=0, rmw_ok=0, rmw_old=0, rmw_src=0, rmw_id=0)
    model = Model(src_log2, window, chunks, 1 << int(dut.RESULTS_LOG2.value), int(dut.NEW_MAX.value))
    pb = len(dut.rmw_src) // np_
    results_due = []   # [cycle, plane, src, id]: an engine's answer to a first copy
    recent = []        # RMW keys seen, for the lookups
    replays = answered = 0
    wholes = holes = 0   # last WREQ chunks passed or second copies: whole, and not
    counts = {v: [0] * np_ for v in ("dup", "stale", "untracked")}
    applied = {}
    width = 66
    cycle = 0
    while any(pl.units or pl.cur or pl.wait for pl in planes) or results_due:
        drives, commits = zip(*(pl.drive() for pl in planes))
        for name, k in (("in_valid", 0), ("in_first", 2), ("in_last", 3), ("in_error", 4), ("in_abort", 5)):
            getattr(dut, name).value = sum(d[k] << p for p, d in enumerate(drives))
        dut.in_block.value = sum(d[1] << (width * p) for p, d in enumerate(drives))
        # the engines: results of first copies come due; each asks for a key
        done = [None] * np_
        for r in [r for r in results_due if r[0] <= cycle]:
            if done[r[1]] is None:
                done[r[1]] = (r[2], r[3], rng.random() < 0.9, rng.getrandbits(64))
                results_due.remove(r)
        keys = [rng.choice(recent[-12:]) if recent else (0, 0) for _ in range(np_)]
        keys = [d[:2] if d is not None else k for d, k in zip(done, keys)]   # rmw_done: its own key
        dut.rmw_done.value = sum(int(d is not None) << p for p, d in enumerate(done))
        dut.rmw_ok.value = sum(int(d is not None and d[2]) << p for p, d in enumerate(done))
        dut.rmw_old.value = sum((d[3] if d is not None else 0) << (64 * p) for p, d in enumerate(done))
        dut.rmw_src.value = sum(k[0] << (pb * p) for p, k in enumerate(keys))
        dut.rmw_id.value = sum(k[1] << (8 * p) for p, k in enumerate(keys))
        want_memo = [model.memo(*k) for k in keys]
        for d in done:
            if d is not None:
                model.done(*d)
                answered += 1
        await ReadOnly()
        for p, (ready, ok, old) in enumerate(want_memo):
            got = ((int(dut.memo_ready.value) >> p) & 1, (int(dut.memo_ok.value) >> p) & 1)
            assert got == (int(ready), int(ok)), f"cycle {cycle} plane {p} key {keys[p]}: memo {got}, model {ready, ok}"
            if ok:
                assert (int(dut.memo_old.value) >> (64 * p)) & (2**64 - 1) == old, f"cycle {cycle} plane {p}"
        out_dup = int(dut.out_dup.value)
        out_replay = int(dut.out_replay.value)
        out_whole = int(dut.out_whole.value)
        for p, (_, m) in enumerate(zip(drives, commits)):
            verdict = model.verdict(m) if m is not None else "pass"
            if verdict in counts:
                counts[verdict][p] += 1
            if m is not None and m.kind == "RMWREQ":
                recent.append((m.src, m.msg_id))
                if verdict == "pass" and m.src < model.sources:
                    results_due.append([cycle + rng.randrange(1, 60), p, m.src, m.msg_id])
            assert (out_replay >> p) & 1 == int(verdict == "dup" and model.replay), \
                f"cycle {cycle} plane {p}: out_replay {(out_replay >> p) & 1}, model {model.replay} ({m})"
            replays += verdict == "dup" and model.replay
            want_whole = m is not None and verdict in ("pass", "dup") and model.whole
            assert (out_whole >> p) & 1 == int(want_whole), \
                f"cycle {cycle} plane {p}: out_whole {(out_whole >> p) & 1}, model {want_whole} ({verdict}, {m})"
            if m is not None and m.kind == "WREQ" and m.last and verdict in ("pass", "dup") \
                    and m.src < model.sources and m.seq < chunks:
                wholes += want_whole
                holes += not want_whole
            dropped = verdict in ("dup", "stale")
            if m is not None and m.kind in FILTERED and not dropped:
                key = (m.src, m.msg_id, m.seq, m.addr)
                applied[key] = applied.get(key, 0) + 1
            assert (out_dup >> p) & 1 == int(dropped), \
                f"cycle {cycle} plane {p}: out_dup {(out_dup >> p) & 1}, model {verdict} ({m})"
        assert int(dut.out_valid.value) == int(dut.in_valid.value) and int(dut.out_block.value) == int(dut.in_block.value)
        assert int(dut.out_last.value) == int(dut.in_last.value) and int(dut.out_abort.value) == int(dut.in_abort.value)
        assert int(dut.out_first.value) == int(dut.in_first.value) and int(dut.out_error.value) == int(dut.in_error.value)
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        cycle += 1
    await ReadOnly()

    # Exactly once, predicted from the fates alone (not from the model).
    tracked = set(range(1 << src_log2))
    want_lost = 0
    for n, units in enumerate(msgs):
        for m in units:
            if m.kind not in FILTERED:
                continue
            good = [p for p in range(np_) if fates[(m.src, m.msg_id, m.seq, n, p)] == "good"]
            got = applied.get((m.src, m.msg_id, m.seq, m.addr), 0)
            if m.src not in tracked:
                assert got == len(good), (m, good, got)   # unfiltered: every good copy applies
            elif m.seq >= chunks:   # every good copy applies, but a stale one is still dropped
                assert got == len(good) - (1 in good and n in cut), (m, good, got)
            elif good == [1] and n in cut:
                assert got == 0, f"a backlog copy applied: {m}"
                want_lost += 1
            else:
                assert got == (1 if good else 0), f"applied {got} times with good copies on {good}: {m}"
    for name, want in counts.items():
        got = [int(dut.__getattr__(f"cnt_{name}").value) >> (16 * p) & 0xFFFF for p in range(np_)]
        assert got == want, f"cnt_{name} {got}, model {want}"
    if np_ > 1:   # the bench made second copies, stale ones and copies with no twin
        assert sum(counts["dup"]) > 100 and counts["stale"][1] >= want_lost > 0, counts
        assert replays > 20 and answered > 50, (replays, answered)
    else:
        assert counts["dup"] == counts["stale"] == [0], counts
    assert sum(counts["untracked"]) > 0, counts
    assert wholes > 100 and holes > 3, (wholes, holes)
    dut._log.info(f"{cycle} cycles, {len(msgs)} messages; dropped: second copies {counts['dup']}, stale "
                  f"{counts['stale']} ({want_lost} with no other good copy); unfiltered {counts['untracked']}; "
                  f"RMW second copies answered from a kept result {replays}; last WREQ chunks whole {wholes}, "
                  f"with an earlier chunk missing {holes}")

"""A key-value store in remote memory, and the YCSB client that drives it.

Layout (per memory node, byte addresses from 0): a bucket array of
``slots`` records of ``record_bytes`` (1024 by default, the paper's 1 KB):

    [tag: 8 B, little endian, key + 1; 0 = empty][field 0] ... [field F-1][pad]

A key's home is chosen by YCSB's key hash (FNV-1a 64): the memory node is
hash % nodes, the home slot (hash // nodes) % slots; collisions probe the
next slots (linear probing, no deletes). The client keeps a location cache
(key -> slot) filled at load time and by its own inserts, as one-sided
RDMA key-value clients cache their index; a location is always verified by
the tag that comes back with the record, so a stale or missing entry falls
back to probing.

Operations become memory requests (:class:`MemRequest`, one per fabric message):

  * read (GET): RREQ of the whole record at its slot (1024 B);
  * update (PUT of one field): WREQ of the field's bytes (100 B);
  * read-modify-write (workload F): the read, then the update;
  * insert: CAS (RMWREQ) of the tag word 0 -> key + 1 at the first empty
    slot from home (the atomic claim), then a WREQ of all fields;
  * probe: RREQ of one 8-byte tag word.

Invariants the client keeps and checks:
  * at most one operation per key in flight (later operations on a busy key
    wait, in order), so "the last completed update" of a key is defined;
  * every read returns, field by field, the value of the last completed
    update of its key (the reference is a Python dict); a mismatch raises
    :class:`StoreCheckError` naming the key, field, and both values;
  * every random choice comes from the workload's seeded generator.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Generator

import numpy as np

from edm.ycsb.generators import fnvhash64
from edm.ycsb.workload import WORKLOADS, Operation, Workload

TAG_BYTES = 8
RECORD_BYTES = 1024
LOCAL = -1  # the node index of objects held in the compute node's own DRAM (Figure 7)


class StoreCheckError(AssertionError):
    """A read returned something other than the last completed update."""


@dataclass
class MemRequest:
    """One memory message. kind: "read" (RREQ), "write" (WREQ) or "cas"
    (RMWREQ compare-and-swap on an 8-byte word). ``node`` is the memory node
    index (LOCAL: the compute node's own DRAM)."""

    kind: str
    node: int
    addr: int
    length: int
    data: bytes = b""
    arg0: int = 0
    arg1: int = 0
    op_id: int = -1
    issued_ps: int = 0
    result: bytes = b""


@dataclass
class Layout:
    nodes: int
    slots: int
    record_bytes: int = RECORD_BYTES
    field_count: int = 10
    field_bytes: int = 100
    local_fraction: float = 0.0  # Figure 7: this share of keys lives in local DRAM

    def __post_init__(self):
        if self.nodes < 1:
            raise ValueError(f"memory nodes = {self.nodes} must be at least 1")
        if TAG_BYTES + self.field_count * self.field_bytes > self.record_bytes:
            raise ValueError(f"record_bytes = {self.record_bytes} cannot hold an 8-byte tag and "
                             f"{self.field_count} x {self.field_bytes} B fields")
        if not 0 <= self.local_fraction <= 1:
            raise ValueError(f"local fraction = {self.local_fraction} is not in [0, 1]")

    @property
    def node_bytes(self) -> int:
        return self.slots * self.record_bytes

    def home(self, key: int) -> tuple[int, int]:
        h = fnvhash64(key)
        # The local share is decided by a second hash, so it is independent of the slot.
        if self.local_fraction and (fnvhash64(h) % 1_000_000) < self.local_fraction * 1_000_000:
            return LOCAL, (h // self.nodes) % self.slots
        return h % self.nodes, (h // self.nodes) % self.slots

    def addr(self, slot: int) -> int:
        return slot * self.record_bytes

    def field_addr(self, slot: int, f: int) -> int:
        return slot * self.record_bytes + TAG_BYTES + f * self.field_bytes


class MemoryImage:
    """Byte-addressable memory of each node (and LOCAL), applying requests atomically."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.mem = {n: bytearray(layout.node_bytes) for n in [*range(layout.nodes), LOCAL]}

    def apply(self, r: MemRequest) -> bytes:
        m = self.mem[r.node]
        if r.addr < 0 or r.addr + r.length > len(m):
            raise ValueError(f"request outside node {r.node}'s memory: {r.addr:#x} + {r.length}")
        if r.kind == "read":
            return bytes(m[r.addr:r.addr + r.length])
        if r.kind == "write":
            m[r.addr:r.addr + r.length] = r.data
            return b""
        if r.kind == "cas":
            old = bytes(m[r.addr:r.addr + 8])
            if int.from_bytes(old, "little") == r.arg0:
                m[r.addr:r.addr + 8] = r.arg1.to_bytes(8, "little")
            return old
        raise ValueError(f"unknown request kind {r.kind!r}")


OpCoroutine = Generator[MemRequest, bytes, None]


class Store:
    """The key-value store's client-side logic: op coroutines that yield
    memory requests and receive their results."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.where: dict[int, tuple[int, int]] = {}  # location cache: key -> (node, slot)

    def load(self, image: MemoryImage, workload: Workload) -> dict[int, list[bytes]]:
        """Writes every initial record straight into memory (YCSB's load
        phase, not timed) and returns the reference dict."""
        ref = {}
        for key in range(workload.records):
            node, slot = self.layout.home(key)
            m = image.mem[node]
            for i in range(self.layout.slots):
                s = (slot + i) % self.layout.slots
                a = self.layout.addr(s)
                if not any(m[a:a + TAG_BYTES]):
                    break
            else:
                raise ValueError(f"node {node} is full: {self.layout.slots} slots; raise the slot count")
            value = workload.record(key)
            m[a:a + TAG_BYTES] = (key + 1).to_bytes(TAG_BYTES, "little")
            m[a + TAG_BYTES:a + TAG_BYTES + len(value)] = value
            self.where[key] = (node, s)
            fb = self.layout.field_bytes
            ref[key] = [value[f * fb:(f + 1) * fb] for f in range(self.layout.field_count)]
        return ref

    def _locate(self, key: int, for_insert: bool = False):
        """(node, slot) of key, from the cache or by probing tag words.
        With for_insert, claims the first empty slot by CAS instead."""
        if not for_insert and key in self.where:
            return self.where[key]
        node, home = self.layout.home(key)
        tag = key + 1
        for i in range(self.layout.slots):
            s = (home + i) % self.layout.slots
            if for_insert:
                old = yield MemRequest("cas", node, self.layout.addr(s), 8, arg0=0, arg1=tag)
                if int.from_bytes(old, "little") == 0:
                    self.where[key] = (node, s)
                    return node, s
                continue
            got = yield MemRequest("read", node, self.layout.addr(s), TAG_BYTES)
            t = int.from_bytes(got, "little")
            if t == tag:
                self.where[key] = (node, s)
                return node, s
            if t == 0:
                return None
        if for_insert:
            raise ValueError(f"node {node} is full: no empty slot for key {key}")
        return None

    def read(self, key: int):
        """GET: the record's fields, or None if the key is absent."""
        loc = yield from self._locate(key)
        while loc is not None:
            node, s = loc
            rec = yield MemRequest("read", node, self.layout.addr(s), self.layout.record_bytes)
            if int.from_bytes(rec[:TAG_BYTES], "little") == key + 1:
                fb = self.layout.field_bytes
                return [rec[TAG_BYTES + f * fb:TAG_BYTES + (f + 1) * fb] for f in range(self.layout.field_count)]
            self.where.pop(key, None)  # stale cache entry: probe
            loc = yield from self._locate(key)
        return None

    def update(self, key: int, f: int, value: bytes):
        loc = yield from self._locate(key)
        if loc is None:
            raise StoreCheckError(f"update of key {key}: key not found")
        node, s = loc
        yield MemRequest("write", node, self.layout.field_addr(s, f), len(value), data=value)

    def insert(self, key: int, value: bytes):
        node, s = yield from self._locate(key, for_insert=True)
        yield MemRequest("write", node, self.layout.addr(s) + TAG_BYTES, len(value), data=value)


@dataclass
class OpRecord:
    op: str
    key: int
    start_ps: int
    end_ps: int = -1
    requests: int = 0
    local: bool = False
    reqs: list = field(default_factory=list)  # (kind, node, length, addr) of each request, in order


@dataclass
class Client:
    """Runs ``count`` operations of a workload with at most ``outstanding`` in
    flight, as a state machine a fabric drives: ``start(now)`` and
    ``complete(request, now)`` return the requests to send. Checks every read
    against the reference dict."""

    store: Store
    workload: Workload
    ref: dict[int, list[bytes]]
    count: int
    outstanding: int = 1
    ops: list[OpRecord] = field(default_factory=list)
    requests: int = 0

    def __post_init__(self):
        if self.outstanding < 1:
            raise ValueError(f"outstanding = {self.outstanding} must be at least 1")
        self.generated = 0
        self.active: dict[int, tuple[OpCoroutine, Operation]] = {}
        self.busy_keys: dict[int, deque] = {}  # key -> operations waiting behind the one in flight
        self.ready: deque = deque()             # operations whose key became free

    def done(self) -> bool:
        return len(self.ops) == self.count and not self.active and all(r.end_ps >= 0 for r in self.ops)

    def _coroutine(self, o: Operation) -> OpCoroutine:
        s = self.store
        if o.op == "read":
            got = yield from s.read(o.key)
            self._check(o.key, got)
        elif o.op == "update":
            yield from s.update(o.key, o.field, o.value)
        elif o.op == "rmw":
            got = yield from s.read(o.key)
            self._check(o.key, got)
            yield from s.update(o.key, o.field, o.value)
        elif o.op == "insert":
            yield from s.insert(o.key, o.value)
        else:
            raise ValueError(f"unknown operation {o.op!r}")

    def _check(self, key: int, got) -> None:
        want = self.ref.get(key)
        if got is None or want is None:
            if got != want:
                raise StoreCheckError(f"read of key {key}: got {'nothing' if got is None else 'a record'}, "
                                      f"expected {'nothing' if want is None else 'a record'}")
            return
        for f, (g, w) in enumerate(zip(got, want)):
            if g != w:
                raise StoreCheckError(f"read of key {key} field {f}: got {g[:24]!r}..., the last completed "
                                      f"update wrote {w[:24]!r}...")

    def _finish(self, o: Operation) -> None:
        """The operation completed: the reference moves to its writes."""
        fb = self.store.layout.field_bytes
        if o.op in ("update", "rmw"):
            self.ref[o.key][o.field] = o.value
        elif o.op == "insert":
            self.ref[o.key] = [o.value[f * fb:(f + 1) * fb] for f in range(self.store.layout.field_count)]
            self.workload.acknowledge_insert(o.key)

    def _advance(self, op_id: int, result: bytes | None, now: int) -> list[MemRequest]:
        co, o = self.active[op_id]
        rec = self.ops[op_id]
        try:
            req = next(co) if result is None else co.send(result)
        except StopIteration:
            del self.active[op_id]
            rec.end_ps = now
            self._finish(o)
            waiting = self.busy_keys.get(o.key)
            if waiting:
                self.ready.append(waiting.popleft())
            else:
                self.busy_keys.pop(o.key, None)
            return []
        req.op_id, req.issued_ps = op_id, now
        rec.requests += 1
        rec.reqs.append((req.kind, req.node, req.length, req.addr))
        rec.local = rec.local or req.node == LOCAL
        self.requests += 1
        return [req]

    def _fill(self, now: int) -> list[MemRequest]:
        out: list[MemRequest] = []
        while len(self.active) < self.outstanding:
            if self.ready:
                o = self.ready.popleft()
            elif self.generated < self.count:
                o = self.workload.next(version=self.generated + 1)
                self.generated += 1
                if o.key in self.busy_keys:
                    self.busy_keys[o.key].append(o)   # waits for the key's operation in flight
                    continue
            else:
                break
            self.busy_keys.setdefault(o.key, deque())
            op_id = len(self.ops)
            self.ops.append(OpRecord(o.op, o.key, now))
            self.active[op_id] = (self._coroutine(o), o)
            out += self._advance(op_id, None, now)
        return out

    def start(self, now: int = 0) -> list[MemRequest]:
        return self._fill(now)

    def complete(self, req: MemRequest, now: int) -> list[MemRequest]:
        out = self._advance(req.op_id, req.result, now)
        return out + self._fill(now)


def new_client(workload: str, *, records: int, operations: int, outstanding: int, seed: int,
               nodes: int = 1, slots: int | None = None, distribution: str | None = None,
               local_fraction: float = 0.0, record_bytes: int = RECORD_BYTES) -> tuple[Client, MemoryImage]:
    """A loaded store (memory image and reference) and its client."""
    w = Workload(workload, records, seed, distribution=distribution, operations=operations)
    expected = records + int(operations * WORKLOADS[workload][2] * 2) + 1
    if slots is None:
        # Load factor at most 1/2 per node, so probes stay short.
        slots = 1 << max(4, int(np.ceil(np.log2(2 * expected / nodes + 8))))
    layout = Layout(nodes, slots, record_bytes=record_bytes, local_fraction=local_fraction)
    image = MemoryImage(layout)
    store = Store(layout)
    ref = store.load(image, w)
    return Client(store, w, ref, operations, outstanding), image


def drive(client: Client, image: MemoryImage, complete_at: Callable[[MemRequest, int], int]) -> Client:
    """Runs a client to the end on a fabric given as ``complete_at(request,
    now)``, its completion time; each request is applied to the memory image
    atomically at its completion time, so requests in flight together may
    complete in any order."""
    heap: list = []
    seq = 0

    def send(reqs, now):
        nonlocal seq
        for r in reqs:
            heapq.heappush(heap, (complete_at(r, now), seq, r))
            seq += 1

    send(client.start(0), 0)
    while heap:
        now, _, r = heapq.heappop(heap)
        r.result = image.apply(r)
        send(client.complete(r, now), now)
    if not client.done():
        raise RuntimeError("the client stopped with operations unfinished")
    return client


def run_reference(client: Client, image: MemoryImage, seed: int) -> Client:
    """A fabric without a timing model: each request completes after a random
    delay (0.1-5 us), so concurrent requests complete in random order."""
    rng = np.random.default_rng(seed)
    return drive(client, image, lambda r, now: now + int(rng.integers(100, 5000)) * 1000)

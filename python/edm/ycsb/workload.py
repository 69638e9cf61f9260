"""YCSB's core workloads as operation streams (YCSB's CoreWorkload and
workloads/workload{a,b,c,d,f}, default properties: 10 fields of 100 bytes,
reads fetch every field, updates write one field).

Invariants:
  * a :class:`Workload` draws every choice (operation, key, field, value
    bytes) from one ``numpy.random.Generator`` seeded by ``seed``: the same
    seed gives the same operations;
  * keys are integers 0..records-1 at load time; inserts (workload D) take
    the next integers, and a key is only read once its insert has been
    acknowledged (``acknowledge_insert``), as YCSB's transaction insert key
    sequence does;
  * workload E (scans) is not offered: a scan reads keys in key order, which
    a hash index cannot serve without reading every bucket; it would need an
    ordered index (a remote B-tree), which this store does not have.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edm.ycsb.generators import (ZIPFIAN_CONSTANT, CounterGenerator, ScrambledZipfianGenerator,
                                 SkewedLatestGenerator, UniformGenerator)

FIELD_COUNT = 10
FIELD_BYTES = 100

# name -> (read, update, insert, read-modify-write proportions, default distribution)
WORKLOADS: dict[str, tuple[float, float, float, float, str]] = {
    "a": (0.50, 0.50, 0.0, 0.0, "zipfian"),
    "b": (0.95, 0.05, 0.0, 0.0, "zipfian"),
    "c": (1.00, 0.00, 0.0, 0.0, "zipfian"),
    "d": (0.95, 0.00, 0.05, 0.0, "latest"),
    "f": (0.50, 0.00, 0.0, 0.50, "zipfian"),
}
DISTRIBUTIONS = ("zipfian", "uniform", "latest")
OPS = ("read", "update", "insert", "rmw")


@dataclass
class Operation:
    """One YCSB operation. ``field`` is the updated field (update, rmw);
    ``value`` the bytes written: one field for update/rmw, all fields for insert."""

    op: str
    key: int
    field: int = 0
    value: bytes = b""


class Workload:
    def __init__(self, name: str, records: int, seed: int, *, distribution: str | None = None,
                 theta: float = ZIPFIAN_CONSTANT, operations: int = 0,
                 field_count: int = FIELD_COUNT, field_bytes: int = FIELD_BYTES):
        if name not in WORKLOADS:
            hint = " (E needs range scans, which a hash index cannot serve; see docs/ycsb.md)" if name == "e" else ""
            raise ValueError(f"workload {name!r} is not one of {sorted(WORKLOADS)}{hint}")
        if records < 2:
            raise ValueError(f"records = {records} must be at least 2")
        read, update, insert, rmw, default = WORKLOADS[name]
        self.name = name
        self.distribution = distribution or default
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution {self.distribution!r} is not one of {DISTRIBUTIONS}")
        self.records = records
        self.field_count, self.field_bytes = field_count, field_bytes
        self.rng = np.random.default_rng(seed)
        mix = np.cumsum([read, update, insert, rmw])
        self.cumulative = mix / mix[-1]
        self.inserts = CounterGenerator(records)
        self.inserts.last = records - 1  # the loaded keys are acknowledged
        if self.distribution == "uniform":
            self.chooser = UniformGenerator(self.rng, 0, records - 1)
        elif self.distribution == "latest":
            self.chooser = SkewedLatestGenerator(self.rng, self.inserts, theta)
        else:
            # YCSB sizes the scrambled range for the keys inserts will add
            # (insertcount + 2 x expected inserts) and redraws keys not yet inserted.
            expected_new = int(operations * insert * 2.0)
            self.chooser = ScrambledZipfianGenerator(self.rng, 0, records + expected_new - 1, theta)
        self.field_chooser = UniformGenerator(self.rng, 0, field_count - 1)

    def record(self, key: int) -> bytes:
        """The initial value of every field of a loaded key (deterministic, so
        a load needs no randomness and a check can recompute it)."""
        return b"".join(self.field_value(key, f, 0) for f in range(self.field_count))

    def field_value(self, key: int, field: int, version: int) -> bytes:
        """Value bytes that name the key, field and version (they make a stale
        or misplaced value visible in any check), padded to the field size."""
        tag = f"k{key}f{field}v{version};".encode()
        return (tag * (self.field_bytes // len(tag) + 1))[: self.field_bytes]

    def next_key(self) -> int:
        while True:
            k = self.chooser.next()
            if k <= self.inserts.last:
                return k

    def next(self, version: int) -> Operation:
        """The next operation; ``version`` makes written values unique."""
        u = self.rng.random()
        kind = OPS[min(int(np.searchsorted(self.cumulative, u, side="right")), len(OPS) - 1)]
        if kind == "insert":
            key = self.inserts.next()
            return Operation("insert", key, 0, b"".join(self.field_value(key, f, version)
                                                        for f in range(self.field_count)))
        key = self.next_key()
        if kind == "read":
            return Operation("read", key)
        field = self.field_chooser.next()
        return Operation(kind, key, field, self.field_value(key, field, version))

    def acknowledge_insert(self, key: int) -> None:
        self.inserts.acknowledge(key)

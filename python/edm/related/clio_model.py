"""Reference model of the memory node's translation and protection
(``rtl/host/edm_mem_translate.sv``; Clio, ../shared/papers/002, §4.2).

A request names (address space, virtual address) in its address word
(``edm.protocol.codec.space_address``). The memory node maps (asid, virtual page) to a
physical frame through

* a **hash page table** in its DRAM: bucket ``bucket_of(key)`` of
  ``2**buckets_log2``, each of ``ways`` slots of two 8-byte words
  (word 0 the key ``{asid, vpn}``, word 1 ``{valid, writable, frame}``). A
  mapping whose bucket is full is refused when it is installed (Clio's
  overflow-free table: the allocator picks another virtual range), so a lookup
  reads one bucket, ``2 * ways`` words, and nothing else;
* a **TLB** of ``2**tlb_log2`` entries in front, LRU (an invalid entry first).

An access is **denied** (never served) when its page has no mapping, when it
writes (WREQ, RMWREQ) a read-only page, or when its bytes cross a page boundary.
The model mirrors the RTL's order of events exactly: one lookup per request
unit, a walk on a miss that fills the TLB if the mapping exists, nothing cached
for a miss that finds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edm import protocol

VA_BITS = protocol.ADDR_ASID_LSB
ASID_BITS = protocol.ADDR_ASID_W
PTE_VALID = 1 << 63
PTE_WRITABLE = 1 << 62
SLOT_BYTES = 16


class BucketFull(Exception):
    """The page table has no free slot for this key (choose another address)."""


def page_key(asid: int, vpn: int) -> int:
    """Word 0 of a page-table slot: {asid, vpn zero-extended to 48 bits}."""
    return (asid << VA_BITS) | vpn


def bucket_of(key: int, buckets_log2: int) -> int:
    """XOR of the key's ``buckets_log2``-bit slices (as the RTL's bucket_of)."""
    mask, h = (1 << buckets_log2) - 1, 0
    for shift in range(0, 64, buckets_log2):
        h ^= (key >> shift) & mask
    return h


@dataclass(frozen=True)
class Mapping:
    frame: int
    writable: bool


@dataclass
class PageTable:
    """The hash page table in a memory node's DRAM."""

    buckets_log2: int = 10
    ways: int = 4
    base: int = 0
    page_bits: int = 12
    slots: dict[int, list] = field(default_factory=dict)   # bucket -> [(key, Mapping) | None] * ways

    def _bucket(self, asid: int, vpn: int) -> list:
        b = bucket_of(page_key(asid, vpn), self.buckets_log2)
        return self.slots.setdefault(b, [None] * self.ways)

    def lookup(self, asid: int, vpn: int) -> Mapping | None:
        key = page_key(asid, vpn)
        return next((m for slot in self._bucket(asid, vpn) if slot and slot[0] == key for m in [slot[1]]), None)

    def fits(self, asid: int, vpns) -> bool:
        """Whether every page of ``vpns`` (distinct) can be installed at once."""
        need: dict[int, int] = {}
        for vpn in vpns:
            b = bucket_of(page_key(asid, vpn), self.buckets_log2)
            need[b] = need.get(b, 0) + 1
        return all(sum(s is None for s in self.slots.get(b, [None] * self.ways)) >= n for b, n in need.items())

    def install(self, asid: int, vpn: int, frame: int, writable: bool = True) -> int:
        """Puts the mapping in a free slot; returns the slot's byte address."""
        if not (0 <= asid < 1 << ASID_BITS and 0 <= vpn < 1 << (VA_BITS - self.page_bits)):
            raise ValueError(f"asid {asid} / vpn {vpn:#x} out of range")
        if self.lookup(asid, vpn) is not None:
            raise ValueError(f"asid {asid} page {vpn:#x} is already mapped")
        bucket = self._bucket(asid, vpn)
        for way, slot in enumerate(bucket):
            if slot is None:
                bucket[way] = (page_key(asid, vpn), Mapping(frame, writable))
                return self.slot_address(asid, vpn, way)
        raise BucketFull(f"asid {asid} page {vpn:#x}: bucket full")

    def remove(self, asid: int, vpn: int) -> int:
        """Clears the mapping's slot; returns its byte address."""
        key, bucket = page_key(asid, vpn), self._bucket(asid, vpn)
        for way, slot in enumerate(bucket):
            if slot and slot[0] == key:
                bucket[way] = None
                return self.slot_address(asid, vpn, way)
        raise KeyError(f"asid {asid} page {vpn:#x} is not mapped")

    def slot_address(self, asid: int, vpn: int, way: int) -> int:
        b = bucket_of(page_key(asid, vpn), self.buckets_log2)
        return self.base + (b * self.ways + way) * SLOT_BYTES

    def slot_words(self, address: int) -> tuple[int, int]:
        """The two words stored at a slot's byte address (zeros when free)."""
        b, way = divmod((address - self.base) // SLOT_BYTES, self.ways)
        slot = self.slots.get(b, [None] * self.ways)[way]
        if slot is None:
            return 0, 0
        key, m = slot
        return key, PTE_VALID | (PTE_WRITABLE if m.writable else 0) | m.frame

    @property
    def size_bytes(self) -> int:
        return (1 << self.buckets_log2) * self.ways * SLOT_BYTES


class Tlb:
    """Fully associative, LRU by rank (0 = most recent), an invalid entry
    (lowest index) before the LRU one: the RTL's replacement exactly."""

    def __init__(self, entries: int = 8):
        self.entries = [None] * entries          # (asid, vpn, Mapping) | None
        self.rank = list(range(entries))

    def find(self, asid: int, vpn: int) -> int | None:
        hits = [i for i, e in enumerate(self.entries) if e and e[0] == asid and e[1] == vpn]
        return hits[-1] if hits else None

    def touch(self, i: int) -> None:
        r = self.rank[i]
        self.rank = [x + 1 if x < r else x for x in self.rank]
        self.rank[i] = 0

    def victim(self) -> int:
        free = [i for i, e in enumerate(self.entries) if e is None]
        return free[0] if free else self.rank.index(len(self.entries) - 1)

    def fill(self, asid: int, vpn: int, m: Mapping) -> int:
        i = self.victim()
        self.entries[i] = (asid, vpn, m)
        self.touch(i)
        return i

    def invalidate(self, asid: int, vpn: int | None = None) -> None:
        """Drops (asid, vpn), or every entry of asid when vpn is None."""
        for i, e in enumerate(self.entries):
            if e and e[0] == asid and (vpn is None or e[1] == vpn):
                self.entries[i] = None


@dataclass(frozen=True)
class Translation:
    address: int | None      # physical byte address; None when denied
    denied: bool
    hit: bool                # resolved from the TLB without a walk
    walked: bool             # read the page table


class Translator:
    """One memory node's translation: its page table and TLB."""

    def __init__(self, table: PageTable | None = None, tlb_entries: int = 8):
        self.table = table or PageTable()
        self.tlb = Tlb(tlb_entries)
        self.hits = self.walks = self.denied = 0

    def crosses_page(self, va: int, nbytes: int) -> bool:
        off = va & ((1 << self.table.page_bits) - 1)
        return nbytes > 0 and off + nbytes > 1 << self.table.page_bits

    def translate(self, asid: int, va: int, nbytes: int, write: bool) -> Translation:
        """One request unit: ``nbytes`` at ``va`` of space ``asid``."""
        pb = self.table.page_bits
        vpn, off = va >> pb, va & ((1 << pb) - 1)
        if self.crosses_page(va, nbytes):
            self.denied += 1
            return Translation(None, True, False, False)
        i = self.tlb.find(asid, vpn)
        walked = i is None
        if walked:
            self.walks += 1
            m = self.table.lookup(asid, vpn)
            if m is None:
                self.denied += 1
                return Translation(None, True, False, True)
            i = self.tlb.fill(asid, vpn, m)
        else:
            self.hits += 1
            self.tlb.touch(i)
        m = self.tlb.entries[i][2]
        if write and not m.writable:
            self.denied += 1
            return Translation(None, True, not walked, walked)
        return Translation((m.frame << pb) | off, False, not walked, walked)

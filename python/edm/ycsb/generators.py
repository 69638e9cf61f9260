"""YCSB's request distributions, following YCSB's own generators
(``site.ycsb.generator``: ZipfianGenerator, ScrambledZipfianGenerator,
SkewedLatestGenerator, UniformLongGenerator, CounterGenerator and
``Utils.fnvhash64``), re-implemented from their published algorithm.

Invariants:
  * every generator draws from a ``numpy.random.Generator`` it is given, so a
    seed fixes every value;
  * ``ZipfianGenerator(n)`` returns 0..n-1 with P(i) = 1/((i+1)^theta zeta(n, theta))
    for i = 0 and 1 exactly, and Gray et al.'s approximation beyond (YCSB's
    "Quickly generating billion-record synthetic databases", SIGMOD '94);
  * ``ScrambledZipfianGenerator(lo, hi)`` draws a zipfian rank out of
    10^10 items and scatters it over lo..hi with the FNV-1a 64-bit hash, so
    popular items are not clustered at the low keys (YCSB's default);
  * ``SkewedLatestGenerator`` favours the most recently inserted key.
"""

from __future__ import annotations

import numpy as np

ZIPFIAN_CONSTANT = 0.99
# YCSB's ScrambledZipfianGenerator draws from 10^10 items; with theta = 0.99
# it uses zeta(10^10, 0.99) precomputed (YCSB's ZETAN constant, rather than
# summing 10^10 terms); we compute the same sum with the Euler-Maclaurin
# formula instead of copying the constant (see zeta()).
SCRAMBLED_ITEM_COUNT = 10_000_000_000

FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325
FNV_PRIME_64 = 1099511628211
_M64 = (1 << 64) - 1


def fnvhash64(value: int) -> int:
    """YCSB's ``Utils.fnvhash64``: FNV-1a over the 8 little-endian bytes of a
    64-bit value, then Java's ``Math.abs`` of the signed result."""
    h = FNV_OFFSET_BASIS_64
    v = value & _M64
    for _ in range(8):
        h ^= v & 0xFF
        v >>= 8
        h = (h * FNV_PRIME_64) & _M64
    signed = h - (1 << 64) if h >> 63 else h
    return abs(signed) & _M64


def zeta(n: int, theta: float) -> float:
    """sum_{i=1..n} 1 / i^theta. Exact summation up to 10^7 terms; beyond,
    the first 10^6 terms exactly plus the Euler-Maclaurin tail (error far
    below 1e-9 relative at theta near 1)."""
    if n <= 10_000_000:
        return float(np.sum(np.arange(1, n + 1, dtype=np.float64) ** -theta))
    m = 1_000_000
    head = float(np.sum(np.arange(1, m + 1, dtype=np.float64) ** -theta))
    s = 1.0 - theta

    def f(x: float) -> float:
        return x ** -theta

    # sum_{i=m+1..n} f(i) = int_m^n f + (f(n) - f(m))/2 + (f'(n) - f'(m))/12
    integral = (n ** s - m ** s) / s
    fprime = lambda x: -theta * x ** (-theta - 1)  # noqa: E731
    return head + integral + (f(n) - f(m)) / 2 + (fprime(n) - fprime(m)) / 12


class ZipfianGenerator:
    """Integers min..max, item min most popular (YCSB's ZipfianGenerator)."""

    def __init__(self, rng: np.random.Generator, lo: int, hi: int, theta: float = ZIPFIAN_CONSTANT,
                 zetan: float | None = None):
        if hi < lo:
            raise ValueError(f"zipfian: empty range {lo}..{hi}")
        if not 0 < theta < 1:
            raise ValueError(f"zipfian: theta = {theta} is not in (0, 1)")
        self.rng = rng
        self.base = lo
        self.items = hi - lo + 1
        self.theta = theta
        self.zeta2theta = zeta(2, theta)
        self.alpha = 1.0 / (1.0 - theta)
        self.zetan = zeta(self.items, theta) if zetan is None else zetan
        self.count_for_zeta = self.items
        self.eta = self._eta(self.items)

    def _eta(self, items: int) -> float:
        return (1 - (2.0 / items) ** (1 - self.theta)) / (1 - self.zeta2theta / self.zetan)

    def next(self, items: int | None = None) -> int:
        """One value; ``items`` changes the item count (as YCSB's nextLong(itemcount),
        used by the latest distribution while keys are inserted): zeta is
        extended incrementally, never recomputed from scratch."""
        if items is not None and items != self.count_for_zeta:
            if items < self.count_for_zeta:
                raise ValueError("zipfian: the item count may only grow")
            extra = np.arange(self.count_for_zeta + 1, items + 1, dtype=np.float64)
            self.zetan += float(np.sum(extra ** -self.theta))
            self.count_for_zeta = items
            self.eta = self._eta(items)
        n = self.count_for_zeta
        u = self.rng.random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < 1.0 + 0.5 ** self.theta:
            return self.base + 1
        return self.base + int(n * (self.eta * u - self.eta + 1) ** self.alpha)


class ScrambledZipfianGenerator:
    """Integers lo..hi, zipfian popularity scattered by FNV hashing."""

    def __init__(self, rng: np.random.Generator, lo: int, hi: int, theta: float = ZIPFIAN_CONSTANT):
        self.lo, self.items = lo, hi - lo + 1
        self.gen = ZipfianGenerator(rng, 0, SCRAMBLED_ITEM_COUNT, theta,
                                    zetan=_scrambled_zetan(theta))

    def next(self) -> int:
        return self.lo + fnvhash64(self.gen.next()) % self.items


_ZETAN_CACHE: dict[float, float] = {}


def _scrambled_zetan(theta: float) -> float:
    if theta not in _ZETAN_CACHE:
        _ZETAN_CACHE[theta] = zeta(SCRAMBLED_ITEM_COUNT + 1, theta)
    return _ZETAN_CACHE[theta]


class UniformGenerator:
    """Integers lo..hi, each equally likely."""

    def __init__(self, rng: np.random.Generator, lo: int, hi: int):
        if hi < lo:
            raise ValueError(f"uniform: empty range {lo}..{hi}")
        self.rng, self.lo, self.hi = rng, lo, hi

    def next(self) -> int:
        return int(self.rng.integers(self.lo, self.hi + 1))


class CounterGenerator:
    """The insert key sequence: ``next()`` hands out the next key; ``last``
    is the highest key whose insert has completed (YCSB's
    AcknowledgedCounterGenerator, simplified: keys are acknowledged in any
    order, and ``last`` only moves over a contiguous acknowledged prefix)."""

    def __init__(self, start: int):
        self._next = start
        self.last = start - 1
        self._acked: set[int] = set()

    def next(self) -> int:
        k = self._next
        self._next += 1
        return k

    def acknowledge(self, key: int) -> None:
        self._acked.add(key)
        while self.last + 1 in self._acked:
            self._acked.remove(self.last + 1)
            self.last += 1


class SkewedLatestGenerator:
    """The latest distribution: last - zipfian(last), so the most recently
    inserted key is the most popular (YCSB's SkewedLatestGenerator)."""

    def __init__(self, rng: np.random.Generator, basis: CounterGenerator, theta: float = ZIPFIAN_CONSTANT):
        self.basis = basis
        self.zipf = ZipfianGenerator(rng, 0, basis.last, theta)

    def next(self) -> int:
        top = self.basis.last
        return top - self.zipf.next(top + 1)

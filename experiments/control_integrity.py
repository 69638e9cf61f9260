"""Control-block integrity (docs/protocol.md §5a): how often a corrupted /N/ or
/G/, or a data block holding one, is accepted by the reference receiver.

    .venv/bin/python experiments/control_integrity.py             # 200 000 trials a case
    .venv/bin/python experiments/control_integrity.py --trials 20000 --seed 2

Every trial is a fresh receiver (edm.codec.RxDemux), one block pushed,
accepted or not. Seeded; prints each rate with its trial count and the value
docs/protocol.md §5a derives from first principles.
"""

from __future__ import annotations

import argparse
import math
import random

from edm import codec, protocol

BITS = protocol.BLOCK_BITS


def receiver(rng: random.Random, after_rejection: bool) -> codec.RxDemux:
    """A fresh receiver (it expects number 0; the rates below do not depend on
    the number, which every case draws uniformly or uses as is). With
    after_rejection its previous control block was rejected out of sequence
    (a random number r), so the resynchronisation rule is armed for r + 1."""
    rx = codec.RxDemux()
    if after_rejection:
        r = rng.randrange(1, 255)
        assert rx.push(codec.encode_grant(1, 1, 1, r)) == [("error", "corrupted")]
    return rx


def flip(block: codec.Block, bits: list[int]) -> codec.Block:
    v = block[0] | block[1] << 2
    for b in bits:
        v ^= 1 << b
    return v & 3, v >> 2


def accepted(rx: codec.RxDemux, block: codec.Block) -> bool:
    return any(e[0] in ("grant", "notification") for e in rx.push(block))


def rate(rng, trials, make, after_rejection=False):
    """Trials whose block is accepted."""
    return sum(accepted(receiver(rng, after_rejection), make(0)) for _ in range(trials))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n = args.trials

    def good(s):
        kind = rng.choice([codec.encode_notification, codec.encode_grant])
        return kind(rng.randrange(1024), rng.randrange(256), rng.randrange(65536), s)

    def k_bits(k):
        return lambda s: flip(good(s), rng.sample(range(BITS), k))

    def type_kept(s):  # random payload bits 16..63 (type bytes and sync kept)
        sync, p = good(s)
        return sync, (p & 0xFFFF) | rng.getrandbits(48) << 16

    def image(extra):
        # Data holding a valid /G/ of a number the sender guessed (uniform), its
        # sync header flipped, plus `extra` random payload bits.
        def make(_s):
            sync, p = codec.encode_grant(rng.randrange(1024), rng.randrange(256), 64, rng.randrange(256))
            return flip((protocol.SYNC_CTRL, p), [2 + b for b in rng.sample(range(64), extra)])
        return make

    # First principles (docs/protocol.md §5a). An error is accepted only if it
    # spares the 24 structure bits (sync 2, type and subtype 16, reserved 6),
    # leaving the 42 bits the CRC-8 covers with the fields, and has syndrome 0
    # there: x+1 divides the CRC-8 polynomial, so every undetected error has
    # even weight, and about 2^-7 of the even-weight ones are. Right after a
    # rejection one more number (the resync rule's) is accepted: + 2^-8 of the
    # errors that spare the structure bits, odd or even (averaged over the
    # window's number: an error moves the number within its parity class).
    def spare(k):
        return math.comb(42, k) / math.comb(66, k)

    def k_theory(k):
        return (spare(k) / 128 if k % 2 == 0 else 0.0), spare(k) / 256

    cases = [
        ("control block, 3 random bit errors", k_bits(3), k_theory(3)),
        ("control block, 4 random bit errors", k_bits(4), k_theory(4)),
        ("control block, 5 random bit errors", k_bits(5), k_theory(5)),
        ("control block, 6 random bit errors", k_bits(6), k_theory(6)),
        ("control block, 8 random bit errors", k_bits(8), k_theory(8)),
        ("control block, random 66-bit block", lambda s: (rng.getrandbits(2), rng.getrandbits(64)),
         (2.0**-31, 2.0**-31)),
        ("control block, type bytes and sync kept, rest random", type_kept, (2.0**-14, 2.0**-14)),
        ("data holding a /G/ of a guessed number, sync flipped", image(0), (2.0**-8, 2.0**-8)),
        ("the same plus 1 random payload bit", image(1), (42 / 64 * 2.0**-8, 42 / 64 * 2.0**-8)),
    ]
    print(f"# .venv/bin/python experiments/control_integrity.py --trials {n} --seed {args.seed}")
    print("| case | receiver | accepted / trials | rate | first principles |")
    print("|---|---|---|---|---|")
    for name, make, (in_step, extra) in cases:
        for after in (False, True):
            hits = rate(rng, n, make, after)
            where = "right after a rejection" if after else "in step"
            t = in_step + (extra if after else 0.0)
            print(f"| {name} | {where} | {hits} / {n} | {hits / n:.2e} | {t:.2e} |")


if __name__ == "__main__":
    main()

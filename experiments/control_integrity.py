"""Control-block integrity (docs/protocol.md §5a): how often a corrupted /N/ or
/G/, or a data block holding one, is accepted by the reference receiver.

    .venv/bin/python experiments/control_integrity.py             # 200 000 trials a case
    .venv/bin/python experiments/control_integrity.py --trials 20000 --seed 2

Every trial is a fresh receiver (edm.protocol.codec.RxDemux), one block pushed,
accepted or not. Seeded; prints each rate with its trial count and the value
docs/protocol.md §5a derives from first principles.
"""

from __future__ import annotations

import argparse
import math
import random

from edm import protocol
from edm.protocol import codec

BITS = protocol.BLOCK_BITS


def receiver() -> codec.RxDemux:
    """A fresh receiver: it expects number 0 (the rates below do not depend on
    the number, which every case draws uniformly or uses as is)."""
    return codec.RxDemux()


def flip(block: codec.Block, bits: list[int]) -> codec.Block:
    v = block[0] | block[1] << 2
    for b in bits:
        v ^= 1 << b
    return v & 3, v >> 2


def accepted(rx: codec.RxDemux, block: codec.Block) -> bool:
    return any(e[0] in ("grant", "notification") for e in rx.push(block))


def rate(trials, make, ahead=0):
    """Trials whose block, numbered `ahead` past the expected one (1: the
    previous control block was lost), is accepted."""
    return sum(accepted(receiver(), make(ahead)) for _ in range(trials))


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
    # leaving the 42 bits the CRC-8 covers with the fields, and its syndrome
    # there moves the block's number onto the expected one. In step that is
    # syndrome 0: x+1 divides the CRC-8 polynomial, so only even-weight errors,
    # about 2^-7 of them. After a loss (the sender one number ahead) it is the
    # syndrome of number 1, whose parity is odd: only odd-weight errors, about
    # 2^-7 of them.
    def spare(k):
        return math.comb(42, k) / math.comb(66, k)

    def k_theory(k):
        return (spare(k) / 128 if k % 2 == 0 else 0.0), (spare(k) / 128 if k % 2 == 1 else 0.0)

    random_block = 2.0**-31  # sync 01, type BT_EDM, subtype N or G, reserved 0, CRC: 2^-2-15-6-8
    cases = [
        ("control block, 3 random bit errors", k_bits(3), k_theory(3)),
        ("control block, 4 random bit errors", k_bits(4), k_theory(4)),
        ("control block, 5 random bit errors", k_bits(5), k_theory(5)),
        ("control block, 6 random bit errors", k_bits(6), k_theory(6)),
        ("control block, 8 random bit errors", k_bits(8), k_theory(8)),
        ("control block, random 66-bit block", lambda s: (rng.getrandbits(2), rng.getrandbits(64)),
         (random_block, random_block)),
        ("control block, type bytes and sync kept, rest random", type_kept, (2.0**-14, 2.0**-14)),
        ("data holding a /G/ of a guessed number, sync flipped", image(0), (2.0**-8, 2.0**-8)),
        ("the same plus 1 random payload bit", image(1), (42 / 64 * 2.0**-8, 42 / 64 * 2.0**-8)),
    ]
    print(f"# .venv/bin/python experiments/control_integrity.py --trials {n} --seed {args.seed}")
    print("| case | link | accepted / trials | rate | first principles |")
    print("|---|---|---|---|---|")
    for name, make, theory in cases:
        for ahead in (0, 1):
            hits = rate(n, make, ahead)
            where = "after a loss" if ahead else "in step"
            print(f"| {name} | {where} | {hits} / {n} | {hits / n:.2e} | {theory[ahead]:.2e} |")


if __name__ == "__main__":
    main()

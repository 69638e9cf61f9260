"""``edm demo``: encode, multiplex, corrupt and decode a mix of frames and memory messages."""

from __future__ import annotations

import argparse
import random

from edm.args import integer
from edm import protocol
from edm.protocol import codec
from edm.protocol.codec import Message

SLOTS_SHOWN = 72


def sample_units(rng: random.Random) -> list[tuple[str, list[codec.Block]]]:
    """One memory unit of each sort, labelled."""
    data = rng.randbytes(100)
    messages = [
        Message("RREQ", 1, 7, 1, 64, addr=0x1000),
        Message("WREQ", 1, 7, 2, len(data), addr=0x2000, data=data),
        Message("RMWREQ", 1, 7, 3, protocol.RMW_OPERAND_BYTES, addr=0x3000, op=protocol.RMW_CAS, arg0=0, arg1=1),
        Message("RRES", 7, 1, 1, 37, data=rng.randbytes(37)),
    ]
    units = [(m.kind, codec.encode_message(m)) for m in messages]
    control = codec.ControlTx()  # one link: its control blocks are numbered
    units.append(("/N/", [control.notification(7, 4, 4096)]))
    units.append(("/G/", [control.grant(7, 4, protocol.DEFAULT_CHUNK_BYTES)]))
    return units


def flip(block: codec.Block, bit: int) -> codec.Block:
    """The block with payload bit `bit` (0..63) or sync bit `bit - 64` flipped."""
    sync, payload = block
    if bit < protocol.PAYLOAD_BITS:
        return sync, payload ^ (1 << bit)
    return sync ^ (1 << (bit - protocol.PAYLOAD_BITS)), payload


def describe(event: tuple) -> str:
    if event[0] == "message":
        return event[1].kind
    if event[0] == "frame":
        return f"{len(event[1])} B"
    return " ".join(map(str, event[1:]))


def run(seed: int) -> int:
    rng = random.Random(seed)
    frames = [rng.randbytes(rng.randint(protocol.ETH_MIN_FRAME_BYTES, 400)) for _ in range(3)]
    units = sample_units(rng)
    times = sorted(rng.randint(0, 60) for _ in units)
    line = codec.tx_mux(frames, [blocks for _, blocks in units], "fair", unit_times=times)
    memory = {b for _, blocks in units for b in blocks}
    idle = (protocol.SYNC_CTRL, protocol.BT_C8)
    strip = "".join("M" if b in memory else "." if b == idle else "F" for b in line[:SLOTS_SHOWN])
    print(f"{len(frames)} frames and {len(units)} memory units ({', '.join(n for n, _ in units)}) "
          f"on {len(line)} block slots, fair policy; M = memory, F = frame, . = idle:")
    print(f"  {strip}{'...' if len(line) > SLOTS_SHOWN else ''}")

    victims = rng.sample([i for i, b in enumerate(line) if b in memory], 2)
    for i in victims:
        bit = rng.randrange(protocol.BLOCK_BITS)
        line[i] = flip(line[i], bit)
        print(f"  flipped bit {bit} of memory block in slot {i}")

    rx = codec.RxDemux()
    for block in line:
        for event in rx.push(block):
            print(f"  rx {event[0]:<12} {describe(event)}")
    print("counters:", rx.counters)
    print("wire cost, EDM vs Ethernet (frame + preamble + IFG, 64b/66b):")
    for row in codec.overhead_table():
        print(f"  {row['operation']:<20} EDM {row['edm_bits']:>4} bits ({row['edm_blocks']} blocks)   "
              f"Ethernet {row['ethernet_bits']:>6} bits   x{row['ratio']:.2f}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("demo", help="encode, multiplex, corrupt and decode a mix of frames and memory messages")
    d.add_argument("--seed", type=integer(0, 2**64 - 1), default=1, help="random seed (default 1)")
    d.set_defaults(func=lambda a: run(seed=a.seed))

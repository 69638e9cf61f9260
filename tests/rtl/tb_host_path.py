"""cocotb: real Ethernet frames through a host's transmit path and its
partner's receive path (tests/rtl/tb_host_path_top.sv: pcs_encoder, edm_tx,
scrambler, link, descrambler, edm_rx, pcs_decoder), checked by models we did
not write: cocotbext-eth's XgmiiSource drives the MAC side, its XgmiiSink
receives at the far end and its frame check sequence is the one checked;
the packets are built with scapy (ARP, IPv4/UDP, IPv6/UDP, RoCEv2 (UDP 4791
with a BTH and its ICRC), 802.1Q-tagged IPv4, 64 B to 9000 B). Meanwhile
memory units (reference codec) enter edm_tx's memory port at a high load and
preempt frames between blocks; every unit must leave edm_rx intact, in order.

Tests
  * frames_alone: $EDM_HOST_PATH_FRAMES // 5 frames, no memory traffic: the
    path's frame latency, XGMII in to XGMII out.
  * frames_with_memory: $EDM_HOST_PATH_FRAMES frames (default 300) with memory
    units offered at $EDM_HOST_PATH_LOAD of the link's blocks (default 0.6):
    every frame byte for byte with a good FCS, every unit intact, frames
    preempted, and the frame latency under that load.
  * ordered_sets: with the memory units at the same load, the source sends
    remote fault, then local fault sequence ordered sets (its own coding of
    them) and then idles: cocotbext-eth's sink must read back the same
    ordered set, and the receiving host's pcs_link_fault must go to Remote
    Fault, then Local Fault, within 100 cycles, and back to OK only after
    128 clean columns; the units still arrive intact.
The first two write their figures to $EDM_HOST_PATH_JSON (a JSON object per test name)
when set.
"""

from __future__ import annotations

import logging
import os
import random
import statistics

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
from cocotbext.eth import XgmiiFrame, XgmiiSink, XgmiiSource
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from edm import protocol
from edm.protocol import codec
from tbutil import record_json, seeded_random

FCS = protocol.ETH_FCS_BYTES
MAC_A, MAC_B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"


def packet(rng: random.Random, kind: str, size: int, src: str = MAC_A, dst: str = MAC_B):
    """A scapy packet of `kind` from MAC src to dst whose frame (with FCS) is `size` bytes."""
    eth = Ether(src=src, dst=dst)
    if kind == "arp":
        p = eth / ARP(op=1, hwsrc=src, psrc="10.0.0.1", pdst="10.0.0.2")
    elif kind == "ipv4_udp":
        p = eth / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=rng.randrange(1024, 65536), dport=9000)
    elif kind == "ipv6_udp":
        p = eth / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=rng.randrange(1024, 65536), dport=9000)
    elif kind == "rocev2":
        p = eth / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=rng.randrange(49152, 65536), dport=4791) / \
            BTH(opcode=0x04, dqpn=rng.randrange(1 << 24), psn=rng.randrange(1 << 24))   # RC SEND only
    else:
        p = eth / Dot1Q(vlan=rng.randrange(1, 4095), prio=rng.randrange(8)) / IP(src="10.0.0.1", dst="10.0.0.2") / \
            UDP(sport=rng.randrange(1024, 65536), dport=9000)
    fill = size - FCS - len(p)
    if fill > 0:   # a RoCEv2 packet's payload goes under its BTH, before the ICRC trailer
        p = p / Raw(bytes(rng.getrandbits(8) for _ in range(fill)))
    return Ether(bytes(p))


KINDS = ("arp", "ipv4_udp", "ipv6_udp", "rocev2", "vlan")


def frame_size(rng: random.Random) -> int:
    """Mostly small and mid-sized frames, a tenth MTU-sized (the runs add jumbo ones)."""
    x = rng.random()
    if x < 0.3:
        return 64
    if x < 0.7:
        return rng.randrange(65, 256)
    if x < 0.9:
        return rng.randrange(256, protocol.ETH_MTU_FRAME_BYTES)
    return protocol.ETH_MTU_FRAME_BYTES


def units(rng: random.Random, count: int) -> list[list[tuple[int, int]]]:
    """Memory units of every kind of every size class, reference codec."""
    out = []
    for i in range(count):
        src, dst, mid = rng.randrange(1024), rng.randrange(1024), i % 256
        x = rng.random()
        if x < 0.3:
            m = codec.Message("RREQ", src, dst, mid, rng.choice([8, 64, 256]), addr=rng.getrandbits(64))
        elif x < 0.65:
            n = rng.choice([8, 64, 100, 256])
            m = codec.Message("WREQ", src, dst, mid, n, addr=rng.getrandbits(64),
                              data=bytes(rng.getrandbits(8) for _ in range(n)))
        else:
            n = rng.choice([8, 64, 256])
            m = codec.Message("RRES", src, dst, mid, n, data=bytes(rng.getrandbits(8) for _ in range(n)))
        out.append((m, codec.encode_message(m)))
    return out


class HostPath:
    def __init__(self, dut, seed: int, load: float):
        self.dut, self.rng, self.load = dut, seeded_random(seed), load
        self.source = XgmiiSource(dut.xgmii_txd, dut.xgmii_txc, dut.clk, dut.rst_n, enable=dut.xgmii_tx_en,
                                  reset_active_level=False)
        self.sink = XgmiiSink(dut.xgmii_rxd, dut.xgmii_rxc, dut.clk, dut.rst_n, enable=dut.xgmii_rx_valid,
                              reset_active_level=False)
        for model in (self.source, self.sink):   # not a log line per frame
            model.log.setLevel(logging.WARNING)
        self.cycle = 0
        self.mem_queue: list = []      # blocks (block, last) waiting for edm_tx
        self.mem_sent: list = []       # messages in the order offered
        self.mem_got: list = []
        self.rx_unit: list | None = None
        self.mem_blocks = 0
        self.en_prev = 0
        self.tx_marks = {protocol.XGMII_START: [], protocol.XGMII_TERM: []}
        self.rx_marks = {protocol.XGMII_START: [], protocol.XGMII_TERM: []}
        self.pool = units(self.rng, 4000) if load else []
        self.mean_unit_blocks = statistics.mean(len(b) for _, b in self.pool) if self.pool else 1

    async def start(self):
        d = self.dut
        cocotb.start_soon(Clock(d.clk, protocol.CYCLE_PS, units="ps").start())
        d.rst_n.value = 0
        d.xgmii_tx_en.value = 0
        d.mem_valid.value = 0
        d.mem_block.value = 0
        d.mem_last.value = 0
        for _ in range(4):
            await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        d.rst_n.value = 1

    async def step(self):
        d = self.dut
        await FallingEdge(d.clk)
        en = int(d.mac_room.value)
        d.xgmii_tx_en.value = en
        # Memory units arrive as a Bernoulli stream of `load` link blocks per cycle.
        if self.pool and self.rng.random() < self.load / self.mean_unit_blocks:
            m, blocks = self.pool[len(self.mem_sent) % len(self.pool)]
            self.mem_sent.append(m)
            self.mem_queue += [(b, i == len(blocks) - 1) for i, b in enumerate(blocks)]
        head = self.mem_queue[0] if self.mem_queue else None
        d.mem_valid.value = head is not None
        if head is not None:
            (sync, payload), last = head
            d.mem_block.value = sync | payload << 2
            d.mem_last.value = last
        await ReadOnly()
        # Where each frame's /S/ and /T/ pass the two XGMII ports (cycle + lane / 8):
        # the source's word on the bus now was sent under last cycle's enable.
        if self.en_prev:
            self.mark(self.tx_marks, int(d.xgmii_txd.value), int(d.xgmii_txc.value))
        if d.xgmii_rx_valid.value:
            self.mark(self.rx_marks, int(d.xgmii_rxd.value), int(d.xgmii_rxc.value))
        self.en_prev = en
        if head is not None and d.mem_ready.value:
            self.mem_queue.pop(0)
            self.mem_blocks += 1
        if d.rx_mem_valid.value:
            v = int(d.rx_mem_block.value)
            assert not d.rx_mem_abort.value, f"cycle {self.cycle}: a memory unit was cut short"
            if d.rx_mem_first.value:
                self.rx_unit = []
            self.rx_unit.append((v & 3, v >> 2))
            if d.rx_mem_last.value:
                assert not d.rx_mem_error.value, f"cycle {self.cycle}: a memory unit arrived bad"
                self.mem_got.append(codec.decode_message(self.rx_unit))
                self.rx_unit = None
        await RisingEdge(d.clk)
        self.cycle += 1

    def mark(self, marks: dict, data: int, ctrl: int) -> None:
        for lane in range(8):
            if ctrl >> lane & 1:
                char = data >> (8 * lane) & 0xFF
                if char in (protocol.XGMII_START, protocol.XGMII_TERM):
                    marks[char].append(self.cycle + lane / 8)

    def counters(self) -> dict:
        d = self.dut
        return {n: int(getattr(d, n).value) for n in ("cnt_enc_invalid", "cnt_dec_invalid", "cnt_mac_overflow",
                                                         "cnt_corrupted", "cnt_unknown", "cnt_bad_sync")}


async def drain(h: HostPath) -> None:
    """Offers no more units and steps until every queued one has arrived."""
    h.pool = []
    start = h.cycle
    while h.mem_queue or h.rx_unit is not None or len(h.mem_got) < len(h.mem_sent):
        await h.step()
        assert h.cycle < start + 20000, "memory units stopped arriving"
    for _ in range(20):
        await h.step()


async def run(dut, name: str, frames: int, load: float, seed: int) -> dict:
    h = HostPath(dut, seed, load)
    await h.start()
    rng = seeded_random(seed + 1)
    pkts = [packet(rng, KINDS[i % len(KINDS)], 9000 if i % 100 == 3 else frame_size(rng)) for i in range(frames)]
    for p in pkts:
        h.source.send_nowait(XgmiiFrame.from_payload(bytes(p)))
    got = []
    limit = 20 * sum(len(p) for p in pkts) // 8 + 10000   # cycles: 20 x the frames' own blocks
    while len(got) < len(pkts):
        await h.step()
        while not h.sink.empty():
            got.append(h.sink.recv_nowait())
        assert h.cycle < limit, "frames stopped arriving"
    busy = h.cycle
    await drain(h)
    assert h.sink.empty(), "a frame arrived that was never sent"
    # Byte for byte, good FCS (cocotbext-eth's check), the packet scapy built.
    for i, (p, rx) in enumerate(zip(pkts, got)):
        assert rx.check_fcs(), f"frame {i}: bad FCS"
        payload = bytes(rx.get_payload())
        want = bytes(p).ljust(60, b"\0")
        assert payload == want, f"frame {i} ({p.summary()}): {len(payload)} B differ from {len(want)} B"
        assert Ether(payload).summary() == Ether(want).summary()
    kinds = {k: sum(1 for p in pkts if p.haslayer(layer)) for k, layer in
             (("arp", ARP), ("ipv6", IPv6), ("rocev2_bth", BTH), ("vlan", Dot1Q))}
    assert all(kinds.values()), kinds
    assert h.mem_got == h.mem_sent, "memory units altered, lost or reordered"
    counters = h.counters()
    assert not any(counters.values()), counters
    # Latency, first byte (/S/) in to /S/ out and /T/ in to /T/ out, in cycles.
    # (The models' own frame times assume a steady clock period between the
    # words they handle, which the enables break.)
    start, end = ([r - t for t, r in zip(h.tx_marks[c], h.rx_marks[c], strict=True)]
                  for c in (protocol.XGMII_START, protocol.XGMII_TERM))
    assert len(start) == len(end) == len(pkts)
    # A frame was preempted when it took longer to arrive than to leave.
    preempted = sum(1 for e, s in zip(end, start) if e > s + 1)
    out = dict(frames=len(got), frame_bytes=sum(len(p) + FCS for p in pkts), cycles=busy,
               memory_units=len(h.mem_got), memory_blocks=h.mem_blocks,
               memory_load=round(h.mem_blocks / busy, 3), frames_preempted=preempted,
               start_latency_cycles=dict(min=min(start), mean=round(statistics.mean(start), 2), max=max(start)),
               end_latency_cycles=dict(min=min(end), mean=round(statistics.mean(end), 2), max=max(end)),
               kinds=kinds)
    record_json(dut, "EDM_HOST_PATH_JSON", name, out)
    return out


def frame_count() -> int:
    return int(os.environ.get("EDM_HOST_PATH_FRAMES", "300"))


@cocotb.test()
async def frames_alone(dut):
    out = await run(dut, "frames_alone", max(frame_count() // 5, 10), 0.0, 11)
    assert out["memory_units"] == 0 and out["frames_preempted"] == 0
    assert out["start_latency_cycles"]["min"] == out["start_latency_cycles"]["max"], "latency varies alone"


@cocotb.test()
async def frames_with_memory(dut):
    load = float(os.environ.get("EDM_HOST_PATH_LOAD", "0.6"))
    out = await run(dut, "frames_with_memory", frame_count(), load, 12)
    assert out["memory_load"] >= 0.5 * load and out["frames_preempted"] >= out["frames"] // 5, out


@cocotb.test()
async def ordered_sets(dut):
    h = HostPath(dut, 13, float(os.environ.get("EDM_HOST_PATH_LOAD", "0.6")))
    await h.start()
    for _ in range(300):
        await h.step()
    assert int(dut.rx_link_fault.value) == 0 and dut.rx_link_up.value
    for seq, state in ((protocol.SEQ_REMOTE_FAULT, 2), (protocol.SEQ_LOCAL_FAULT, 1)):
        # cocotbext-eth holds an ordered set's three data lanes as one number, lane 1 first.
        os_value = int.from_bytes(seq.to_bytes(3, "little"), "big")
        h.source.set_seq_os(os_value)
        start = h.cycle
        while int(dut.rx_link_fault.value) != state:
            await h.step()
            assert h.cycle < start + 100, f"no link fault {state} after the fault sequences"
        assert not dut.rx_link_up.value
        assert h.sink.get_os() == (os_value, False), "the sink read another ordered set"
        h.source.set_seq_os(None)
        start = h.cycle
        while int(dut.rx_link_fault.value) != 0:
            await h.step()
            assert h.cycle < start + 2000, "the link fault never cleared"
        # 128 clean columns are 64 words, and the last fault sequences were still on their way.
        assert h.cycle - start >= 64, h.cycle - start
        assert dut.rx_link_up.value
    await drain(h)
    assert h.mem_got == h.mem_sent and len(h.mem_got) > 15, "memory units altered, lost or reordered"
    counters = h.counters()
    assert not any(counters.values()), counters
    assert int(dut.cnt_rx_remote_fault.value) == 1

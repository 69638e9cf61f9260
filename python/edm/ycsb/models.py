"""Wire and latency models of one memory request on three fabrics: EDM, RoCEv2
over a standard Ethernet MAC with one layer-2 switch, and CXL with one switch.
docs/ycsb.md gives the per-request arithmetic these functions compute.

Invariants:
  * every EDM figure comes from the protocol definition: unit sizes from
    ``edm.protocol.codec.message_blocks``, cycle counts and PHY times from
    ``edm.protocol``; the EDM fixed latencies compose to Table 1's totals
    (``PAPER_EDM_READ_TOTAL_PS`` / ``..._WRITE_...``), which a test checks;
  * Ethernet sizes (header, FCS, preamble + SFD, IFG, minimum frame) and the
    RoCEv2 IPv4 + UDP + BTH + ICRC bytes come from ``edm.protocol``; only the
    InfiniBand extended headers (RETH, AETH, AtomicETH, AtomicAckETH), which
    EDM's spec does not define, are defined here, from the InfiniBand
    Architecture Specification (vol. 1, §9.3);
  * a model returns, per request, its unloaded latency in ps and the wire
    time it takes on each of the four link directions of a compute node (c)
    and memory node (m): "c_up", "m_down", "m_up", "c_down";
  * a local request (node LOCAL) takes ``dram_ps`` and no wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from edm import protocol as P
from edm.protocol import codec
from edm.ycsb.store import LOCAL, MemRequest

# InfiniBand Architecture Specification vol. 1 (release 1.2.1), §9.3: extended transport headers.
RETH_BYTES = 16          # RDMA extended header: virtual address 8, R_Key 4, DMA length 4
AETH_BYTES = 4           # ACK extended header: syndrome 1, MSN 3
ATOMIC_ETH_BYTES = 28    # AtomicETH: VA 8, R_Key 4, swap/add 8, compare 8
ATOMIC_ACK_ETH_BYTES = 8  # AtomicAckETH: original remote data 8
ROCE_PMTU_BYTES = 1024   # RoCEv2 path MTU (IBA: 256..4096); 1024 carries a 1 KB read in one packet

FABRICS = ("edm", "roce", "cxl")
DIRECTIONS = ("c_up", "m_down", "m_up", "c_down")


@dataclass
class Cost:
    latency_ps: float
    wire_ps: dict[str, float]


def block_ps(gbps: int) -> int:
    key = f"BLOCK_PS_{gbps}G"
    if key not in P.SPEC:
        raise ValueError(f"link rate {gbps} Gb/s is not one of 10, 25, 100, 400")
    return P.SPEC[key]


def byte_ps(gbps: int) -> float:
    """Time of one MAC byte on the line: a 66-bit block carries 8 bytes."""
    return block_ps(gbps) / P.MD_BYTES


# ------------------------------------------------------------------------ EDM
def edm_hop_ps() -> int:
    """One host-switch hop outside the EDM logic: a PCS pass each side, a
    PMA/PMD/transceiver each side, propagation (Table 1)."""
    return 2 * P.PCS_PASS_CYCLES * P.CYCLE_PS + 2 * P.PMA_PMD_XCVR_PS + P.PROP_PS


def edm_fixed_ps(kind: str) -> int:
    """Table 1's EDM fabric latency (no serialization, no DRAM), composed from
    the per-step cycle counts of docs/protocol.md §7."""
    c, hop = P.CYCLE_PS, edm_hop_ps()
    switch_first = (P.SW_CLASSIFY_CYCLES + P.SW_NQ_INSERT_CYCLES + P.SW_PIM_ITER_CYCLES + P.SW_GEN_GRANT_CYCLES) * c
    if kind in ("read", "cas"):
        memory = (P.HOST_PROC_GRANT_CYCLES + P.HOST_PROC_RREQ_EXTRA_CYCLES + P.HOST_READ_GRANT_CYCLES
                  + P.HOST_GEN_DATA_CYCLES) * c
        return (P.HOST_GEN_REQ_CYCLES * c + hop + switch_first + hop + memory + hop
                + P.SW_FORWARD_CYCLES * c + hop + P.HOST_PROC_DATA_CYCLES * c)
    compute = (P.HOST_PROC_GRANT_CYCLES + P.HOST_READ_GRANT_CYCLES + P.HOST_GEN_DATA_CYCLES) * c
    return (P.HOST_GEN_REQ_CYCLES * c + hop + switch_first + hop + compute + hop
            + P.SW_FORWARD_CYCLES * c + hop + P.HOST_PROC_DATA_CYCLES * c)


def edm_chunks(kind: str, length: int, chunk: int) -> list[int]:
    """Blocks of each unit of a WREQ or RRES of ``length`` bytes (one unit per grant)."""
    sizes = [min(chunk, length - o) for o in range(0, length, chunk)] or [0]
    return [codec.message_blocks(kind, s) for s in sizes]


def edm_cost(r: MemRequest, gbps: int = 25, chunk: int = P.DEFAULT_CHUNK_BYTES, dram_ps: int = 0) -> Cost:
    """Cut-through circuits: each unit is serialized once on the path, its
    first block inside the per-hop latency (a unit of k blocks ends k - 1
    block times after its first, as the simulator's closed form, which is
    checked against the RTL's cycles; a test pins this model to the
    simulator's alone latency of protocol edm-paper); every block (units,
    /N/, /G/) occupies its link direction."""
    b = block_ps(gbps)
    if r.kind in ("read", "cas"):
        req = codec.message_blocks("RREQ" if r.kind == "read" else "RMWREQ", r.length if r.kind == "read" else 8)
        rsp = edm_chunks("RRES", r.length if r.kind == "read" else P.RMW_RESULT_BYTES, chunk)
        grants = len(rsp) - 1  # the RREQ is the first chunk's grant
        lat = edm_fixed_ps(r.kind) + (req - 1 + sum(rsp) - 1) * b + dram_ps * (2 if r.kind == "cas" else 1)
        return Cost(lat, {"c_up": req * b, "m_down": (req + grants) * b, "m_up": sum(rsp) * b, "c_down": sum(rsp) * b})
    units = edm_chunks("WREQ", r.length, chunk)
    n = len(units)  # one /N/ per message, one /G/ per chunk
    lat = edm_fixed_ps("write") + (sum(units) - 1) * b + dram_ps  # /N/ and /G/: one block each, inside the hops
    return Cost(lat, {"c_up": (1 + sum(units)) * b, "m_down": sum(units) * b, "m_up": 0, "c_down": n * b})


# ---------------------------------------------------------------------- RoCEv2
def roce_frame_bytes(ext: int, payload: int) -> int:
    """A RoCEv2 frame (Ethernet header .. FCS), padded to the minimum frame."""
    return max(P.ETH_MIN_FRAME_BYTES, P.ETH_HEADER_BYTES + P.ROCE_HEADER_BYTES + ext + payload + P.ETH_FCS_BYTES)


def roce_wire_bytes(ext: int, payload: int) -> int:
    """A frame on the wire: plus preamble + SFD and the inter-frame gap."""
    return roce_frame_bytes(ext, payload) + P.ETH_PREAMBLE_BYTES + P.ETH_IFG_BYTES


def roce_frames(r: MemRequest, pmtu: int = ROCE_PMTU_BYTES) -> tuple[list[int], list[int]]:
    """Wire bytes of the frames requester -> memory and memory -> requester.
    READ: request with RETH; response packets of at most PMTU, the first and
    last (or only) with AETH. WRITE: packets of at most PMTU, the first with
    RETH; one ACK (AETH) back (reliable connection, one ACK per message).
    CAS: ATOMIC request (AtomicETH), ATOMIC ACK (AETH + AtomicAckETH)."""
    if r.kind == "cas":
        return [roce_wire_bytes(ATOMIC_ETH_BYTES, 0)], [roce_wire_bytes(AETH_BYTES + ATOMIC_ACK_ETH_BYTES, 0)]
    sizes = [min(pmtu, r.length - o) for o in range(0, r.length, pmtu)] or [0]
    if r.kind == "read":
        rsp = [roce_wire_bytes(AETH_BYTES if i in (0, len(sizes) - 1) else 0, s) for i, s in enumerate(sizes)]
        return [roce_wire_bytes(RETH_BYTES, 0)], rsp
    req = [roce_wire_bytes(RETH_BYTES if i == 0 else 0, s) for i, s in enumerate(sizes)]
    return req, [roce_wire_bytes(AETH_BYTES, 0)]


def roce_one_way_ps() -> int:
    """Table 1's RoCEv2 one-way fabric latency: stack, MAC and PCS at both
    hosts; MAC and PCS in and out of the switch plus layer-2 forwarding; four
    PMA/PMD/transceiver passes and two propagation hops."""
    mac_pcs = P.ETH_MAC_PS + P.ETH_PCS_PS
    return 2 * (P.ROCE_STACK_PS + mac_pcs) + 2 * mac_pcs + P.L2_FORWARD_PS + 4 * P.PMA_PMD_XCVR_PS + 2 * P.PROP_PS


def roce_cost(r: MemRequest, gbps: int = 25, pmtu: int = ROCE_PMTU_BYTES, dram_ps: int = 0) -> Cost:
    """Store and forward: each frame is serialized on the uplink and again on
    the switch egress; frames of one message follow back to back, so the
    message's last frame arrives after all its frames' serialization plus one
    more frame (the last one's second serialization)."""
    bp = byte_ps(gbps)
    req, rsp = roce_frames(r, pmtu)
    one = roce_one_way_ps()

    def transfer(frames):
        return one + (sum(frames) + frames[-1]) * bp

    w_req, w_rsp = sum(req) * bp, sum(rsp) * bp
    if r.kind == "write":   # latency: data in remote memory (Table 1); the ACK only takes wire time
        return Cost(transfer(req) + dram_ps, {"c_up": w_req, "m_down": w_req, "m_up": w_rsp, "c_down": w_rsp})
    lat = transfer(req) + transfer(rsp) + dram_ps * (2 if r.kind == "cas" else 1)
    return Cost(lat, {"c_up": w_req, "m_down": w_req, "m_up": w_rsp, "c_down": w_rsp})


# ------------------------------------------------------------------------- CXL
CXL_PORT_PS = P.ETH_MAC_PS + P.ETH_PCS_PS  # per end, as the simulator's CXL model (docs/simulator.md)


def cxl_one_way_ps() -> int:
    """A port at each end, one switch hop (CXL_SWITCH_HOP_PS, 100 ns: the
    paper's §2.2 figure from Pond [41]), four PMA/PMD/transceiver passes and
    two propagation hops, as the simulator's CXL model."""
    return 2 * CXL_PORT_PS + P.CXL_SWITCH_HOP_PS + 4 * P.PMA_PMD_XCVR_PS + 2 * P.PROP_PS


def cxl_flits(nbytes: int) -> int:
    return -(-nbytes // P.CXL_FLIT_PAYLOAD_BYTES)


def cxl_cost(r: MemRequest, gbps: int = 25, dram_ps: int = 0) -> Cost:
    """Messages as the simulator's CXL model carries them (a header, the
    address, the data, in whole 68-byte flits); flits are forwarded one by
    one, so a message arrives one flit time after its last flit left."""
    flit = P.CXL_FLIT_BYTES * byte_ps(gbps)
    hdr = P.HDR_BYTES
    if r.kind == "read":
        req, rsp = cxl_flits(hdr + P.RREQ_EXT_BYTES), cxl_flits(hdr + r.length)
    elif r.kind == "cas":
        req, rsp = cxl_flits(hdr + P.RMW_EXT_BYTES), cxl_flits(hdr + P.RMW_RESULT_BYTES)
    else:
        req, rsp = cxl_flits(hdr + P.RREQ_EXT_BYTES + r.length), 0
    one = cxl_one_way_ps()
    lat = one + (req + 1) * flit + dram_ps * (2 if r.kind == "cas" else 1)
    if rsp:
        lat += one + (rsp + 1) * flit
    return Cost(lat, {"c_up": req * flit, "m_down": req * flit, "m_up": rsp * flit, "c_down": rsp * flit})


def cost(fabric: str, r: MemRequest, *, gbps: int = 25, dram_ps: int = 0, chunk: int = P.DEFAULT_CHUNK_BYTES) -> Cost:
    if r.node == LOCAL:
        return Cost(dram_ps, dict.fromkeys(DIRECTIONS, 0.0))
    if fabric == "edm":
        return edm_cost(r, gbps, chunk, dram_ps)
    if fabric == "roce":
        return roce_cost(r, gbps, dram_ps=dram_ps)
    if fabric == "cxl":
        return cxl_cost(r, gbps, dram_ps)
    raise ValueError(f"fabric {fabric!r} is not one of {FABRICS}")

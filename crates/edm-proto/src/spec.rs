//! The EDM wire protocol's numbers, defined once for Rust (and, through the
//! `edm._core` binding, for Python). The SystemVerilog twin is
//! `rtl/common/edm_pkg.sv`; `tests/test_spec_crosscheck.py` proves the two agree
//! name by name. `docs/protocol.md` explains every field.
//!
//! Conventions: a 66-bit block is `sync` (2 bits, bit 0 sent first) plus a
//! 64-bit `payload` whose bit 0 is sent first; for control blocks, payload
//! bits [7:0] are the block type. Multi-byte message fields are little-endian.

/// Declares each constant once and also lists it in [`SPEC`] by name, so the
/// binding and the cross-check test can enumerate them without a second list.
macro_rules! spec {
    ($( $(#[$doc:meta])* $name:ident : $ty:ty = $val:expr ;)*) => {
        $( $(#[$doc])* pub const $name: $ty = $val; )*
        /// Every constant above as (name, value), in declaration order.
        pub const SPEC: &[(&str, i64)] = &[ $( (stringify!($name), $name as i64), )* ];
    };
}

spec! {
    // ---- 64b/66b block framing (IEEE 802.3 Clause 49) ----
    /// Sync header of a data block (/D/ and EDM's /MD/), as a 2-bit value, bit 0 first on the wire.
    SYNC_DATA: u8 = 0b10;
    /// Sync header of a control block.
    SYNC_CTRL: u8 = 0b01;
    BLOCK_BITS: u32 = 66;
    PAYLOAD_BITS: u32 = 64;

    // ---- Standard Clause 49 block-type codes (figure 49-7) ----
    /// C0..C7: all control (idles /I/, errors /E/).
    BT_C8: u8 = 0x1E;
    /// C0..C3, O4: ordered set in lane 4.
    BT_C4_O4: u8 = 0x2D;
    /// C0..C3, S4: frame starts in lane 4.
    BT_C4_S4: u8 = 0x33;
    /// O0, S4.
    BT_O0_S4: u8 = 0x66;
    /// O0, O4.
    BT_O0_O4: u8 = 0x55;
    /// S0, D1..D7: frame starts in lane 0.
    BT_S0: u8 = 0x78;
    /// O0, C4..C7.
    BT_O0_C4: u8 = 0x4B;
    /// T0: frame ends with 0 data bytes in this block.
    BT_T0: u8 = 0x87;
    BT_T1: u8 = 0x99;
    BT_T2: u8 = 0xAA;
    BT_T3: u8 = 0xB4;
    BT_T4: u8 = 0xCC;
    BT_T5: u8 = 0xD2;
    BT_T6: u8 = 0xE1;
    /// T7: frame ends with 7 data bytes in this block.
    BT_T7: u8 = 0xFF;
    /// 7-bit control character for idle (/I/).
    CTRL_IDLE: u8 = 0x00;
    /// 7-bit control character for error (/E/).
    CTRL_ERROR: u8 = 0x1E;
    /// XGMII control characters.
    XGMII_IDLE: u8 = 0x07;
    XGMII_START: u8 = 0xFB;
    XGMII_TERM: u8 = 0xFD;
    XGMII_ERROR: u8 = 0xFE;
    XGMII_SEQ: u8 = 0x9C;

    // ---- Ordered sets (figure 49-7) and link fault signalling (Clause 46) ----
    /// 4-bit O code of the sequence ordered set (/Q/: XGMII_SEQ in lane 0 or 4)
    /// in a block's O0 (payload bits 35:32) or O4 (39:36) field. The only
    /// ordered set EDM codes (the signal ordered set /Fsig/ is not used).
    O_CODE_SEQ: u8 = 0x0;
    /// The three data lanes after /Q/ (lane 1 in bits 7:0) of a local fault
    /// sequence: 0x00 0x00 0x01 (802.3 table 46-5).
    SEQ_LOCAL_FAULT: u32 = 0x01_0000;
    /// ... of a remote fault sequence: 0x00 0x00 0x02.
    SEQ_REMOTE_FAULT: u32 = 0x02_0000;
    /// 802.3 46.3.4: the reconciliation sublayer takes a fault after this many
    /// fault sequences of one type, each within LINK_FAULT_COLUMNS columns of
    /// the one before, and clears it after LINK_FAULT_COLUMNS columns with none.
    LINK_FAULT_SEQS: u32 = 4;
    /// Four-lane XGMII columns of the fault window (a 64-bit word is two).
    LINK_FAULT_COLUMNS: u32 = 128;

    // ---- EDM control blocks: block type BT_EDM, then a subtype byte ----
    /// The only 8-bit value at Hamming distance >= 4 from all 15 standard types
    /// (together they are the extended Hamming [8,4,4] code). EDM blocks are
    /// told apart by the subtype byte, also drawn from that code, so any two
    /// block codes differ in >= 4 bits.
    BT_EDM: u8 = 0x00;
    /// /MS/: first block of a memory message; carries message bytes 0..5.
    SUB_MS: u8 = 0x2D;
    /// /MT/: last block; carries up to 2 tail bytes and the message CRC-32C.
    SUB_MT: u8 = 0x4B;
    /// /MST/: single-block message. Reserved: no message kind fits (see docs/protocol.md).
    SUB_MST: u8 = 0x55;
    /// /N/: demand notification.
    SUB_N: u8 = 0x66;
    /// /G/: grant.
    SUB_G: u8 = 0x78;
    /// /A/: write acknowledgement, a memory node's report to a requester of
    /// the message ids it applied (docs/protocol.md §4b).
    SUB_A: u8 = 0x33;
    /// Message bytes in /MS/, /MD/, and the most tail bytes in /MT/.
    MS_BYTES: u32 = 6;
    MD_BYTES: u32 = 8;
    MT_TAIL_MAX: u32 = 2;
    /// Byte offset of the tail bytes and of the CRC-32C inside the /MT/ payload.
    MT_TAIL_OFFSET: u32 = 2;
    MT_CRC_OFFSET: u32 = 4;
    /// CRC-32C (Castagnoli), reflected polynomial; init and final xor all ones.
    CRC32C_POLY_REFLECTED: u32 = 0x82F6_3B78;
    /// CRC-8 over payload bytes 0..6 of /N/ and /G/: polynomial x^8+x^2+x+1, init 0, not reflected.
    CRC8_POLY: u8 = 0x07;

    // ---- Memory message header: 64 bits, little-endian, message bytes 0..7 ----
    HDR_BYTES: u32 = 8;
    HDR_KIND_LSB: u32 = 0;
    HDR_KIND_W: u32 = 3;
    HDR_SRC_LSB: u32 = 3;
    HDR_SRC_W: u32 = 10;
    HDR_DST_LSB: u32 = 13;
    HDR_DST_W: u32 = 10;
    HDR_ID_LSB: u32 = 23;
    HDR_ID_W: u32 = 8;
    /// RREQ: bytes to read; WREQ/RRES: payload bytes in this unit; RMWREQ: operand bytes (8).
    HDR_LEN_LSB: u32 = 31;
    HDR_LEN_W: u32 = 16;
    /// Chunk index of this unit within its message.
    HDR_SEQ_LSB: u32 = 47;
    HDR_SEQ_W: u32 = 12;
    /// Set on the unit that completes its message.
    HDR_LAST_LSB: u32 = 59;
    /// RMWREQ: opcode; RRES: status.
    HDR_OP_LSB: u32 = 60;
    HDR_OP_W: u32 = 4;
    PORT_BITS: u32 = 10;
    MAX_PORTS: u32 = 1024;

    KIND_RREQ: u8 = 1;
    KIND_WREQ: u8 = 2;
    KIND_RMWREQ: u8 = 3;
    KIND_RRES: u8 = 4;
    /// Bytes after the header before any payload: the 64-bit remote address
    /// (RREQ, WREQ), address + two 64-bit arguments (RMWREQ), none (RRES).
    RREQ_EXT_BYTES: u32 = 8;
    WREQ_EXT_BYTES: u32 = 8;
    RMW_EXT_BYTES: u32 = 24;
    RRES_EXT_BYTES: u32 = 0;
    RMW_OPERAND_BYTES: u32 = 8;
    /// An RMW's response carries the old 64-bit value.
    RMW_RESULT_BYTES: u32 = 8;
    RMW_CAS: u8 = 1;
    RMW_FAA: u8 = 2;
    RMW_SWAP: u8 = 3;
    STATUS_OK: u8 = 0;
    /// Completion status for a read that got no response in time (§3.3: NULL response).
    STATUS_TIMEOUT: u8 = 1;
    STATUS_ERROR: u8 = 2;
    /// A request outside the requester's mappings at a translating memory node
    /// (docs/protocol.md §3.4): refused, never served.
    STATUS_DENIED: u8 = 3;
    MAX_MESSAGE_BYTES: u32 = 65535;
    /// Address-space id (ASID): bits [63:48] of a request's 64-bit address
    /// word (RREQ, WREQ, RMWREQ); bits [47:0] are the address inside that
    /// space (docs/protocol.md §3.4).
    ADDR_ASID_LSB: u32 = 48;
    ADDR_ASID_W: u32 = 16;

    // ---- /N/ and /G/ payload fields (bit offsets in the 64-bit payload) ----
    NG_DST_LSB: u32 = 16;
    NG_DST_W: u32 = 10;
    NG_ID_LSB: u32 = 26;
    NG_ID_W: u32 = 8;
    /// /N/: message bytes; /G/: chunk bytes granted.
    NG_SIZE_LSB: u32 = 34;
    NG_SIZE_W: u32 = 16;
    /// /G/ only (EDM's zero-queue rules): the source starts the granted chunk
    /// this many link blocks later than it otherwise would. A forwarded
    /// RREQ/RMWREQ carries the same delay for its response in its header's
    /// HDR_SEQ field (unused in a request; the switch patches the CRC-32C).
    /// Not yet implemented by the codec or the RTL, which treat these bits as
    /// reserved (zero); only the simulator's zero-queue rules set them.
    NG_DELAY_LSB: u32 = 50;
    NG_DELAY_W: u32 = 6;
    NG_CRC_LSB: u32 = 56;
    /// /A/ (docs/protocol.md §4b) has /N/'s layout: NG_DST is the peer (the
    /// requester on the memory node's uplink, rewritten by the switch to the
    /// memory node on the requester's downlink), NG_ID the base id, and the
    /// ACK_MAP_W bits at ACK_MAP_LSB (NG_SIZE's place) say which of the ids
    /// base .. base + ACK_MAP_W - 1 were applied; bits [55:50] reserved, zero.
    ACK_MAP_LSB: u32 = 34;
    ACK_MAP_W: u32 = 16;
    /// A memory node starts at most one /A/ per ACK_GAP_BLOCKS blocks of its
    /// uplink (an ack waiting for its slot takes the ids applied meanwhile):
    /// acks take at most 1/96 of the line, 1.04 %.
    ACK_GAP_BLOCKS: u32 = 96;
    /// ... and a pair's (requester, memory node) /A/ starts at least
    /// ACK_PAIR_GAP_BLOCKS after its previous one unless that one was full:
    /// a pair writing steadily is acknowledged in groups; the first /A/ after
    /// a quiet spell leaves at once (docs/protocol.md §4b).
    ACK_PAIR_GAP_BLOCKS: u32 = 512;
    /// Write outcome (docs/protocol.md §4b): per (requester, memory node) at
    /// most RETRY_UNRESOLVED ids are unresolved (a write not yet acknowledged,
    /// a read or RMW not yet answered, none failed yet): the requester's retry
    /// buffer holds them. No message takes an id RETRY_UNRESOLVED or more
    /// after the pair's oldest unresolved one.
    RETRY_UNRESOLVED: u32 = 64;
    /// The memory node's duplicate record per source: the seen bits of the
    /// DUP_WINDOW_IDS ids up to the newest (>= RETRY_UNRESOLVED, so every copy
    /// of an unresolved message falls inside it), and the results of the last
    /// DUP_RMW_RESULTS RMWs; a requester issues an RMW only while fewer than
    /// DUP_RMW_RESULTS RMWs of the pair date from its oldest unanswered one.
    DUP_WINDOW_IDS: u32 = 64;
    DUP_RMW_RESULTS: u32 = 4;
    /// Bits of a link's control sequence number (docs/protocol.md §5a). Each
    /// direction of a link numbers the /N/ and /G/ blocks it sends, from 0 at
    /// link reset, modulo 2^CTL_SEQ_W; the block's CRC-8 starts from its number
    /// instead of 0, so only the block the receiver expects next checks.
    CTL_SEQ_W: u32 = 8;
    /// Zero bits after which a CRC-8 register returns a sequence number that 56
    /// zero bits moved (x has order 127 modulo the CRC-8 polynomial: 56 + 71 =
    /// 127): how a receiver reads the number a block's CRC-8 implies.
    CTL_SEQ_INV_SHIFT: u32 = 71;
    /// A sender emits at least one idle block (BT_C8, all /I/) in every
    /// IDLE_PERIOD_BLOCKS consecutive blocks (docs/faults.md §1): EDM fills
    /// inter-frame gaps with memory blocks, and a receiver whose clock is
    /// slower deletes idles to keep up. 2048 covers offsets up to 488 ppm;
    /// 802.3 allows 200 ppm between link partners.
    IDLE_PERIOD_BLOCKS: u32 = 2048;

    // ---- Ethernet framing (for overhead comparisons) ----
    ETH_MIN_FRAME_BYTES: u32 = 64;
    ETH_PREAMBLE_BYTES: u32 = 8;
    ETH_IFG_BYTES: u32 = 12;
    ETH_MTU_FRAME_BYTES: u32 = 1518;
    ETH_MAX_FRAME_BYTES: u32 = 9216;
    /// MAC header (destination, source, EtherType) and frame check sequence.
    ETH_HEADER_BYTES: u32 = 14;
    ETH_FCS_BYTES: u32 = 4;
    /// Preamble byte and start-frame delimiter, carried in the /S/ block.
    ETH_PREAMBLE_BYTE: u8 = 0x55;
    ETH_SFD_BYTE: u8 = 0xD5;

    // ---- Timing: block times (ps) at each line rate ----
    BLOCK_PS_10G: u64 = 6400;
    BLOCK_PS_25G: u64 = 2560;
    BLOCK_PS_100G: u64 = 640;
    BLOCK_PS_400G: u64 = 160;
    /// The 25G PCS clock (390.625 MHz): one block per cycle.
    CYCLE_PS: u64 = 2560;

    // ---- Timing: Table 1 pipeline latencies (cycles of CYCLE_PS) ----
    /// One standard PCS traversal (Table 1's 5.12 ns entries).
    PCS_PASS_CYCLES: u32 = 2;
    /// Host §3.2.1: generate an /N/ or RREQ block.
    HOST_GEN_REQ_CYCLES: u32 = 2;
    /// Host: read a grant from the grant queue (crosses RX->TX clock domains).
    HOST_READ_GRANT_CYCLES: u32 = 4;
    /// Host: generate an /M*/ data block for RRES/WREQ.
    HOST_GEN_DATA_CYCLES: u32 = 3;
    /// Host: process a received /G/ (also a received RREQ, the implicit grant).
    HOST_PROC_GRANT_CYCLES: u32 = 2;
    /// Host: extra cycle to hand a received RREQ to the memory controller.
    HOST_PROC_RREQ_EXTRA_CYCLES: u32 = 1;
    /// Host: process a received RRES/WREQ block.
    HOST_PROC_DATA_CYCLES: u32 = 3;
    /// Switch §3.2.2: identify a block's type.
    SW_CLASSIFY_CYCLES: u32 = 1;
    /// Switch: notification queue insert (and delete), pipelined.
    SW_NQ_INSERT_CYCLES: u32 = 2;
    /// Switch: with the registered request tree, a notification's cycles in
    /// its lane's FIFO before it can be inserted (only a FIFO's head, a
    /// register, is a candidate), before its SW_NQ_INSERT_CYCLES.
    SW_NQ_LANE_CYCLES_REGISTERED: u32 = 1;
    /// Switch: read the highest-priority queue element.
    SW_NQ_PEEK_CYCLES: u32 = 1;
    /// Switch: one priority-PIM iteration in the paper (§3.1.2; Table 1's
    /// budget), and our scheduler's by default; see [`sw_pim_iter_cycles`].
    SW_PIM_ITER_CYCLES: u32 = 3;
    /// Switch: our scheduler's iteration stages besides its request tree when
    /// the tree is registered (accept compare, accept reduce, grant).
    SW_PIM_STAGE_CYCLES: u32 = 3;
    /// Switch: log2 of the radix of the scheduler's request tree.
    SW_PIM_TREE_RADIX_LOG2: u32 = 2;
    /// Switch: generate a /G/ block.
    SW_GEN_GRANT_CYCLES: u32 = 1;
    /// Switch: forward an /M*/ block along a circuit (RX->TX crossing).
    SW_FORWARD_CYCLES: u32 = 4;

    // ---- Timing: Table 1 physical delays (ps) ----
    /// PMA + PMD + transceiver, per traversal.
    PMA_PMD_XCVR_PS: u64 = 19000;
    /// Propagation per hop.
    PROP_PS: u64 = 10000;
    /// RS-FEC at 100 Gb/s (802.3 Clause 91, RS(528,514)), encode + decode per
    /// link traversal: a 5 280-bit codeword takes 52.8 ns to arrive before it
    /// can be decoded; ~100 ns with the decoder is the usual budget. Off in
    /// the paper's Table 1 (its 25 Gb/s testbed runs without FEC).
    RS_FEC_100G_PS: u64 = 100000;

    // ---- Table 1 baseline stack latencies (ps) ----
    TCP_STACK_PS: u64 = 666200;
    ROCE_STACK_PS: u64 = 230200;
    ETH_MAC_PS: u64 = 7680;
    ETH_PCS_PS: u64 = 7680;
    L2_FORWARD_PS: u64 = 400000;
    /// Per CXL switch hop, paper §2.2.
    CXL_SWITCH_HOP_PS: u64 = 100000;

    // ---- Baseline framing (bytes): headers each baseline adds per packet ----
    /// Ethernet MTU (IP packet bytes).
    ETH_MTU_PAYLOAD_BYTES: u32 = 1500;
    /// TCP/IP: IPv4 20 + TCP 20 (DCTCP, pFabric's DCTCP-like transport).
    TCPIP_HEADER_BYTES: u32 = 40;
    /// RoCEv2: IPv4 20 + UDP 8 + BTH 12 + ICRC 4 (PFC + DCQCN).
    ROCE_HEADER_BYTES: u32 = 44;
    /// Raw Ethernet transports (IRD, Fastpass): flow id + sequence number.
    RAW_TRANSPORT_HEADER_BYTES: u32 = 8;
    /// CXL 68-byte flit: 64 bytes of slots + 2 protocol ID + 2 CRC.
    CXL_FLIT_BYTES: u32 = 68;
    CXL_FLIT_PAYLOAD_BYTES: u32 = 64;

    // ---- The paper's published fabric latencies (ps), for comparison only ----
    PAPER_EDM_READ_STACK_PS: u64 = 107520;
    PAPER_EDM_WRITE_STACK_PS: u64 = 104960;
    PAPER_EDM_READ_TOTAL_PS: u64 = 299520;
    PAPER_EDM_WRITE_TOTAL_PS: u64 = 296960;

    // ---- Scheduler defaults (§4.3) ----
    DEFAULT_CHUNK_BYTES: u32 = 256;
    /// X: most active notifications per source-destination pair.
    DEFAULT_MAX_ACTIVE_NOTIFS: u32 = 3;
}

/// Value of a constant by name (for bindings and tests).
pub fn lookup(name: &str) -> Option<i64> {
    SPEC.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// Levels of the scheduler's request tree over `ports` pairs:
/// ceil(log_radix ports), at least 1 (radix 2^[`SW_PIM_TREE_RADIX_LOG2`]).
pub const fn sw_pim_tree_levels(ports: u32) -> u32 {
    let mut levels = 1;
    let mut reach: u64 = 1 << SW_PIM_TREE_RADIX_LOG2;
    while reach < ports as u64 {
        reach <<= SW_PIM_TREE_RADIX_LOG2;
        levels += 1;
    }
    levels
}

/// Cycles of one iteration of our switch scheduler at `ports` ports (the RTL's
/// `edm_pkg::sw_pim_iter_cycles`, its parameter REGISTERED_TREE): with the
/// request tree `registered`, one per tree level, then accept compare, accept
/// reduce and grant; else [`SW_PIM_ITER_CYCLES`] (request, accept, grant).
pub const fn sw_pim_iter_cycles(ports: u32, registered: bool) -> u32 {
    if registered {
        sw_pim_tree_levels(ports) + SW_PIM_STAGE_CYCLES
    } else {
        SW_PIM_ITER_CYCLES
    }
}

/// All 15 standard Clause 49 block types.
pub const STANDARD_BLOCK_TYPES: [u8; 15] = [
    BT_C8, BT_C4_O4, BT_C4_S4, BT_O0_S4, BT_O0_O4, BT_S0, BT_O0_C4, BT_T0, BT_T1, BT_T2, BT_T3,
    BT_T4, BT_T5, BT_T6, BT_T7,
];
/// The EDM control-block subtypes.
pub const EDM_SUBTYPES: [u8; 6] = [SUB_MS, SUB_MT, SUB_MST, SUB_N, SUB_G, SUB_A];

/// Block time in ps for a line rate in Gbps (10, 25, 100, 400).
pub fn block_ps(gbps: u32) -> Option<u64> {
    match gbps {
        10 => Some(BLOCK_PS_10G),
        25 => Some(BLOCK_PS_25G),
        100 => Some(BLOCK_PS_100G),
        400 => Some(BLOCK_PS_400G),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(a: u8, b: u8) -> u32 {
        (a ^ b).count_ones()
    }

    #[test]
    fn edm_type_is_far_from_every_standard_type() {
        for &s in &STANDARD_BLOCK_TYPES {
            assert!(dist(BT_EDM, s) >= 4, "0x{s:02x}");
        }
    }

    #[test]
    fn standard_types_are_a_distance_4_code() {
        for (i, &a) in STANDARD_BLOCK_TYPES.iter().enumerate() {
            for &b in &STANDARD_BLOCK_TYPES[i + 1..] {
                assert!(dist(a, b) >= 4, "0x{a:02x} 0x{b:02x}");
            }
        }
    }

    #[test]
    fn edm_subtypes_are_a_distance_4_code_and_never_zero() {
        for (i, &a) in EDM_SUBTYPES.iter().enumerate() {
            assert!(
                a.count_ones() >= 4,
                "a stuck-at-zero byte must not decode: 0x{a:02x}"
            );
            for &b in &EDM_SUBTYPES[i + 1..] {
                assert!(dist(a, b) >= 4, "0x{a:02x} 0x{b:02x}");
            }
        }
    }

    #[test]
    fn no_other_8_bit_type_is_far_from_the_standard_ones() {
        // Why EDM needs a subtype byte: A(8,4) = 16 and the standard types use 15.
        let far: Vec<u8> = (0..=255u8)
            .filter(|&x| STANDARD_BLOCK_TYPES.iter().all(|&s| dist(x, s) >= 4))
            .collect();
        assert_eq!(far, vec![BT_EDM]);
    }

    #[test]
    fn header_fields_tile_64_bits() {
        let fields = [
            (HDR_KIND_LSB, HDR_KIND_W),
            (HDR_SRC_LSB, HDR_SRC_W),
            (HDR_DST_LSB, HDR_DST_W),
            (HDR_ID_LSB, HDR_ID_W),
            (HDR_LEN_LSB, HDR_LEN_W),
            (HDR_SEQ_LSB, HDR_SEQ_W),
            (HDR_LAST_LSB, 1),
            (HDR_OP_LSB, HDR_OP_W),
        ];
        let mut next = 0;
        for (lsb, w) in fields {
            assert_eq!(lsb, next);
            next = lsb + w;
        }
        assert_eq!(next, 64);
        // A switch classifies and enqueues an RREQ from its /MS/ alone.
        const { assert!(HDR_LEN_LSB + HDR_LEN_W <= MS_BYTES * 8) };
        assert_eq!(1u32 << PORT_BITS, MAX_PORTS);
    }

    #[test]
    fn iteration_cycles_are_3_or_the_stages_plus_one_per_radix_4_level() {
        for (ports, levels) in [
            (2, 1),
            (4, 1),
            (5, 2),
            (16, 2),
            (17, 3),
            (64, 3),
            (144, 4),
            (512, 5),
        ] {
            assert_eq!(sw_pim_tree_levels(ports), levels, "{ports} ports");
            assert_eq!(sw_pim_iter_cycles(ports, true), levels + 3, "{ports} ports");
            assert_eq!(
                sw_pim_iter_cycles(ports, false),
                SW_PIM_ITER_CYCLES,
                "{ports} ports"
            );
        }
    }

    #[test]
    fn table1_edm_budget_follows_from_the_cycle_counts() {
        // Read: compute (gen RREQ + process RRES), switch (classify+insert+PIM+G, then forward),
        // memory (process RREQ + hand-off + read grant + gen data); 8 PCS passes.
        let c = CYCLE_PS;
        let sw = (SW_CLASSIFY_CYCLES
            + SW_NQ_INSERT_CYCLES
            + SW_PIM_ITER_CYCLES
            + SW_GEN_GRANT_CYCLES
            + SW_FORWARD_CYCLES) as u64;
        let read = (8 * PCS_PASS_CYCLES + HOST_GEN_REQ_CYCLES + HOST_PROC_DATA_CYCLES) as u64
            + sw
            + (HOST_PROC_GRANT_CYCLES
                + HOST_PROC_RREQ_EXTRA_CYCLES
                + HOST_READ_GRANT_CYCLES
                + HOST_GEN_DATA_CYCLES) as u64;
        assert_eq!(read * c, PAPER_EDM_READ_STACK_PS);
        // Write: compute (gen N, process G, read grant, gen data), switch, memory (process data).
        let write = (8 * PCS_PASS_CYCLES
            + HOST_GEN_REQ_CYCLES
            + HOST_PROC_GRANT_CYCLES
            + HOST_READ_GRANT_CYCLES
            + HOST_GEN_DATA_CYCLES
            + HOST_PROC_DATA_CYCLES) as u64
            + sw;
        assert_eq!(write * c, PAPER_EDM_WRITE_STACK_PS);
        assert_eq!(
            PAPER_EDM_READ_STACK_PS + 8 * PMA_PMD_XCVR_PS + 4 * PROP_PS,
            PAPER_EDM_READ_TOTAL_PS
        );
        assert_eq!(
            PAPER_EDM_WRITE_STACK_PS + 8 * PMA_PMD_XCVR_PS + 4 * PROP_PS,
            PAPER_EDM_WRITE_TOTAL_PS
        );
    }

    #[test]
    fn the_write_outcome_bounds_hold() {
        // /A/ reuses /N/'s fields: the map sits where the size does.
        assert_eq!((ACK_MAP_LSB, ACK_MAP_W), (NG_SIZE_LSB, NG_SIZE_W));
        // Every copy of an unresolved message is inside the window.
        const { assert!(RETRY_UNRESOLVED <= DUP_WINDOW_IDS) };
        // Ids behind the window up to 2^NG_ID_W - RETRY_UNRESOLVED are stale;
        // a late copy is misread as new only from there: half the id space
        // is left for the ids issued while a copy is late (docs/protocol.md §4b).
        const { assert!(DUP_WINDOW_IDS + RETRY_UNRESOLVED <= 1 << (NG_ID_W - 1)) };
        // X active RMWs of a pair never wait for a result slot.
        const { assert!(DUP_RMW_RESULTS > DEFAULT_MAX_ACTIVE_NOTIFS) };
        assert!(DUP_WINDOW_IDS.is_power_of_two() && ACK_GAP_BLOCKS > 0);
        // A pair's /A/ are never closer than its node's.
        const { assert!(ACK_PAIR_GAP_BLOCKS >= ACK_GAP_BLOCKS) };
    }

    #[test]
    fn spec_table_has_unique_names() {
        let mut names: Vec<&str> = SPEC.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SPEC.len());
        assert_eq!(lookup("SUB_G"), Some(SUB_G as i64));
    }
}

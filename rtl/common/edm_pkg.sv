// EDM wire protocol constants for the RTL: the SystemVerilog twin of
// crates/edm-proto/src/spec.rs. tests/test_spec_crosscheck.py parses this file
// and fails on any name or value that differs from the Rust definition.
// Use as edm_pkg::NAME (no import inside modules; see docs/hardware.md).
package edm_pkg;
  /* verilator lint_off UNUSEDPARAM */  // a constants package: each user needs a few

  // ---- 64b/66b block framing (IEEE 802.3 Clause 49) ----
  // Sync header of a data block (/D/ and EDM's /MD/), as a 2-bit value, bit 0 first on the wire.
  localparam logic [1:0] SYNC_DATA = 2'b10;
  // Sync header of a control block.
  localparam logic [1:0] SYNC_CTRL = 2'b01;
  localparam int unsigned BLOCK_BITS = 66;
  localparam int unsigned PAYLOAD_BITS = 64;

  // ---- Standard Clause 49 block-type codes (figure 49-7) ----
  // C0..C7: all control (idles /I/, errors /E/).
  localparam logic [7:0] BT_C8 = 8'h1E;
  // C0..C3, O4: ordered set in lane 4.
  localparam logic [7:0] BT_C4_O4 = 8'h2D;
  // C0..C3, S4: frame starts in lane 4.
  localparam logic [7:0] BT_C4_S4 = 8'h33;
  // O0, S4.
  localparam logic [7:0] BT_O0_S4 = 8'h66;
  // O0, O4.
  localparam logic [7:0] BT_O0_O4 = 8'h55;
  // S0, D1..D7: frame starts in lane 0.
  localparam logic [7:0] BT_S0 = 8'h78;
  // O0, C4..C7.
  localparam logic [7:0] BT_O0_C4 = 8'h4B;
  // T0: frame ends with 0 data bytes in this block.
  localparam logic [7:0] BT_T0 = 8'h87;
  localparam logic [7:0] BT_T1 = 8'h99;
  localparam logic [7:0] BT_T2 = 8'hAA;
  localparam logic [7:0] BT_T3 = 8'hB4;
  localparam logic [7:0] BT_T4 = 8'hCC;
  localparam logic [7:0] BT_T5 = 8'hD2;
  localparam logic [7:0] BT_T6 = 8'hE1;
  // T7: frame ends with 7 data bytes in this block.
  localparam logic [7:0] BT_T7 = 8'hFF;
  // 7-bit control character for idle (/I/).
  localparam logic [7:0] CTRL_IDLE = 8'h00;
  // 7-bit control character for error (/E/).
  localparam logic [7:0] CTRL_ERROR = 8'h1E;
  // XGMII control characters.
  localparam logic [7:0] XGMII_IDLE = 8'h07;
  localparam logic [7:0] XGMII_START = 8'hFB;
  localparam logic [7:0] XGMII_TERM = 8'hFD;
  localparam logic [7:0] XGMII_ERROR = 8'hFE;
  localparam logic [7:0] XGMII_SEQ = 8'h9C;

  // ---- Ordered sets (figure 49-7) and link fault signalling (Clause 46) ----
  // 4-bit O code of the sequence ordered set (/Q/ in lane 0 or 4) in a block's
  // O0 (payload bits 35:32) or O4 (39:36) field; the only ordered set EDM codes.
  localparam logic [3:0] O_CODE_SEQ = 4'h0;
  // The three data lanes after /Q/ (lane 1 in bits 7:0): local fault 00 00 01,
  // remote fault 00 00 02 (802.3 table 46-5).
  localparam logic [23:0] SEQ_LOCAL_FAULT = 24'h010000;
  localparam logic [23:0] SEQ_REMOTE_FAULT = 24'h020000;
  // 802.3 46.3.4: a fault is taken after LINK_FAULT_SEQS fault sequences of one
  // type, each within LINK_FAULT_COLUMNS four-lane columns of the one before,
  // and cleared after LINK_FAULT_COLUMNS columns with none.
  localparam int unsigned LINK_FAULT_SEQS = 4;
  localparam int unsigned LINK_FAULT_COLUMNS = 128;

  // ---- EDM control blocks: block type BT_EDM, then a subtype byte ----
  // The only 8-bit value at Hamming distance >= 4 from all 15 standard types
  // (together they are the extended Hamming [8,4,4] code). EDM blocks are
  // told apart by the subtype byte, also drawn from that code, so any two
  // block codes differ in >= 4 bits.
  localparam logic [7:0] BT_EDM = 8'h00;
  // /MS/: first block of a memory message; carries message bytes 0..5.
  localparam logic [7:0] SUB_MS = 8'h2D;
  // /MT/: last block; carries up to 2 tail bytes and the message CRC-32C.
  localparam logic [7:0] SUB_MT = 8'h4B;
  // /MST/: single-block message. Reserved: no message kind fits (see docs/protocol.md).
  localparam logic [7:0] SUB_MST = 8'h55;
  // /N/: demand notification.
  localparam logic [7:0] SUB_N = 8'h66;
  // /G/: grant.
  localparam logic [7:0] SUB_G = 8'h78;
  // /A/: write acknowledgement (docs/protocol.md §4b).
  localparam logic [7:0] SUB_A = 8'h33;
  // Message bytes in /MS/, /MD/, and the most tail bytes in /MT/.
  localparam int unsigned MS_BYTES = 6;
  localparam int unsigned MD_BYTES = 8;
  localparam int unsigned MT_TAIL_MAX = 2;
  // Byte offset of the tail bytes and of the CRC-32C inside the /MT/ payload.
  localparam int unsigned MT_TAIL_OFFSET = 2;
  localparam int unsigned MT_CRC_OFFSET = 4;
  // CRC-32C (Castagnoli), reflected polynomial; init and final xor all ones.
  localparam int unsigned CRC32C_POLY_REFLECTED = 2197175160;
  // CRC-8 over payload bytes 0..6 of /N/ and /G/: polynomial x^8+x^2+x+1, init 0, not reflected.
  localparam logic [7:0] CRC8_POLY = 8'h07;

  // ---- Memory message header: 64 bits, little-endian, message bytes 0..7 ----
  localparam int unsigned HDR_BYTES = 8;
  localparam int unsigned HDR_KIND_LSB = 0;
  localparam int unsigned HDR_KIND_W = 3;
  localparam int unsigned HDR_SRC_LSB = 3;
  localparam int unsigned HDR_SRC_W = 10;
  localparam int unsigned HDR_DST_LSB = 13;
  localparam int unsigned HDR_DST_W = 10;
  localparam int unsigned HDR_ID_LSB = 23;
  localparam int unsigned HDR_ID_W = 8;
  // RREQ: bytes to read; WREQ/RRES: payload bytes in this unit; RMWREQ: operand bytes (8).
  localparam int unsigned HDR_LEN_LSB = 31;
  localparam int unsigned HDR_LEN_W = 16;
  // Chunk index of this unit within its message.
  localparam int unsigned HDR_SEQ_LSB = 47;
  localparam int unsigned HDR_SEQ_W = 12;
  // Set on the unit that completes its message.
  localparam int unsigned HDR_LAST_LSB = 59;
  // RMWREQ: opcode; RRES: status.
  localparam int unsigned HDR_OP_LSB = 60;
  localparam int unsigned HDR_OP_W = 4;
  localparam int unsigned PORT_BITS = 10;
  localparam int unsigned MAX_PORTS = 1024;

  localparam logic [7:0] KIND_RREQ = 8'h01;
  localparam logic [7:0] KIND_WREQ = 8'h02;
  localparam logic [7:0] KIND_RMWREQ = 8'h03;
  localparam logic [7:0] KIND_RRES = 8'h04;
  // Bytes after the header before any payload: the 64-bit remote address
  // (RREQ, WREQ), address + two 64-bit arguments (RMWREQ), none (RRES).
  localparam int unsigned RREQ_EXT_BYTES = 8;
  localparam int unsigned WREQ_EXT_BYTES = 8;
  localparam int unsigned RMW_EXT_BYTES = 24;
  localparam int unsigned RRES_EXT_BYTES = 0;
  localparam int unsigned RMW_OPERAND_BYTES = 8;
  // An RMW's response carries the old 64-bit value.
  localparam int unsigned RMW_RESULT_BYTES = 8;
  localparam logic [7:0] RMW_CAS = 8'h01;
  localparam logic [7:0] RMW_FAA = 8'h02;
  localparam logic [7:0] RMW_SWAP = 8'h03;
  localparam logic [7:0] STATUS_OK = 8'h00;
  // Completion status for a read that got no response in time (§3.3: NULL response).
  localparam logic [7:0] STATUS_TIMEOUT = 8'h01;
  localparam logic [7:0] STATUS_ERROR = 8'h02;
  // A request outside the requester's mappings at a translating memory node
  // (docs/protocol.md §3.4): refused, never served.
  localparam logic [7:0] STATUS_DENIED = 8'h03;
  localparam int unsigned MAX_MESSAGE_BYTES = 65535;
  // Address-space id (ASID): bits [63:48] of a request's 64-bit address word
  // (RREQ, WREQ, RMWREQ); bits [47:0] are the address inside that space.
  localparam int unsigned ADDR_ASID_LSB = 48;
  localparam int unsigned ADDR_ASID_W = 16;

  // ---- /N/ and /G/ payload fields (bit offsets in the 64-bit payload) ----
  localparam int unsigned NG_DST_LSB = 16;
  localparam int unsigned NG_DST_W = 10;
  localparam int unsigned NG_ID_LSB = 26;
  localparam int unsigned NG_ID_W = 8;
  // /N/: message bytes; /G/: chunk bytes granted.
  localparam int unsigned NG_SIZE_LSB = 34;
  localparam int unsigned NG_SIZE_W = 16;
  // /G/ start delay in link blocks (EDM's zero-queue rules; spec.rs). Not yet
  // implemented here: these bits are still checked as reserved (zero).
  localparam int unsigned NG_DELAY_LSB = 50;
  localparam int unsigned NG_DELAY_W = 6;
  localparam int unsigned NG_CRC_LSB = 56;
  // /A/ has /N/'s layout: NG_DST the peer, NG_ID the base id, and a map of
  // the ids base .. base + ACK_MAP_W - 1 applied in NG_SIZE's place.
  localparam int unsigned ACK_MAP_LSB = 34;
  localparam int unsigned ACK_MAP_W = 16;
  // At most one /A/ per ACK_GAP_BLOCKS blocks of a memory node's uplink.
  localparam int unsigned ACK_GAP_BLOCKS = 96;
  // A pair's (requester, memory node) /A/ at least ACK_PAIR_GAP_BLOCKS after
  // its previous one unless that one was full (docs/protocol.md §4b).
  localparam int unsigned ACK_PAIR_GAP_BLOCKS = 512;
  // Write outcome bounds (spec.rs, docs/protocol.md §4b): ids unresolved per
  // pair, the duplicate record's window and RMW results per source.
  localparam int unsigned RETRY_UNRESOLVED = 64;
  localparam int unsigned DUP_WINDOW_IDS = 64;
  localparam int unsigned DUP_RMW_RESULTS = 4;
  // A link's control sequence number (spec.rs, docs/protocol.md §5a): the
  // CRC-8's initial register of the /N/ or /G/ with that number.
  localparam int unsigned CTL_SEQ_W = 8;
  // Zero bits that undo 56 zero bits on a CRC-8 register (x has order 127).
  localparam int unsigned CTL_SEQ_INV_SHIFT = 71;
  // A sender emits an idle block at least once per IDLE_PERIOD_BLOCKS blocks,
  // so a receiver with a slower clock finds idles to delete (docs/faults.md).
  localparam int unsigned IDLE_PERIOD_BLOCKS = 2048;

  // ---- Ethernet framing (for overhead comparisons) ----
  localparam int unsigned ETH_MIN_FRAME_BYTES = 64;
  localparam int unsigned ETH_PREAMBLE_BYTES = 8;
  localparam int unsigned ETH_IFG_BYTES = 12;
  localparam int unsigned ETH_MTU_FRAME_BYTES = 1518;
  localparam int unsigned ETH_MAX_FRAME_BYTES = 9216;
  // MAC header (destination, source, EtherType) and frame check sequence.
  localparam int unsigned ETH_HEADER_BYTES = 14;
  localparam int unsigned ETH_FCS_BYTES = 4;
  // Preamble byte and start-frame delimiter, carried in the /S/ block.
  localparam logic [7:0] ETH_PREAMBLE_BYTE = 8'h55;
  localparam logic [7:0] ETH_SFD_BYTE = 8'hD5;

  // ---- Timing: block times (ps) at each line rate ----
  localparam int unsigned BLOCK_PS_10G = 6400;
  localparam int unsigned BLOCK_PS_25G = 2560;
  localparam int unsigned BLOCK_PS_100G = 640;
  localparam int unsigned BLOCK_PS_400G = 160;
  // The 25G PCS clock (390.625 MHz): one block per cycle.
  localparam int unsigned CYCLE_PS = 2560;

  // ---- Timing: Table 1 pipeline latencies (cycles of CYCLE_PS) ----
  // One standard PCS traversal (Table 1's 5.12 ns entries).
  localparam int unsigned PCS_PASS_CYCLES = 2;
  // Host §3.2.1: generate an /N/ or RREQ block.
  localparam int unsigned HOST_GEN_REQ_CYCLES = 2;
  // Host: read a grant from the grant queue (crosses RX->TX clock domains).
  localparam int unsigned HOST_READ_GRANT_CYCLES = 4;
  // Host: generate an /M*/ data block for RRES/WREQ.
  localparam int unsigned HOST_GEN_DATA_CYCLES = 3;
  // Host: process a received /G/ (also a received RREQ, the implicit grant).
  localparam int unsigned HOST_PROC_GRANT_CYCLES = 2;
  // Host: extra cycle to hand a received RREQ to the memory controller.
  localparam int unsigned HOST_PROC_RREQ_EXTRA_CYCLES = 1;
  // Host: process a received RRES/WREQ block.
  localparam int unsigned HOST_PROC_DATA_CYCLES = 3;
  // Switch §3.2.2: identify a block's type.
  localparam int unsigned SW_CLASSIFY_CYCLES = 1;
  // Switch: notification queue insert (and delete), pipelined.
  localparam int unsigned SW_NQ_INSERT_CYCLES = 2;
  // Switch: with the registered request tree, a notification's cycles in its
  // lane's FIFO before it can be inserted (only a FIFO's head is a candidate).
  localparam int unsigned SW_NQ_LANE_CYCLES_REGISTERED = 1;
  // Switch: read the highest-priority queue element.
  localparam int unsigned SW_NQ_PEEK_CYCLES = 1;
  // Switch: one priority-PIM iteration in the paper (§3.1.2; Table 1's budget),
  // and our scheduler's by default (sw_pim_iter_cycles).
  localparam int unsigned SW_PIM_ITER_CYCLES = 3;
  // Switch: our scheduler's iteration stages besides its request tree when the
  // tree is registered (accept compare, accept reduce, grant); the request
  // then takes one cycle per level of a radix-2^SW_PIM_TREE_RADIX_LOG2 tree
  // over the ports (sw_pim_iter_cycles).
  localparam int unsigned SW_PIM_STAGE_CYCLES = 3;
  localparam int unsigned SW_PIM_TREE_RADIX_LOG2 = 2;
  // Switch: generate a /G/ block.
  localparam int unsigned SW_GEN_GRANT_CYCLES = 1;
  // Switch: forward an /M*/ block along a circuit (RX->TX crossing).
  localparam int unsigned SW_FORWARD_CYCLES = 4;

  // ---- Timing: Table 1 physical delays (ps) ----
  // PMA + PMD + transceiver, per traversal.
  localparam int unsigned PMA_PMD_XCVR_PS = 19000;
  // Propagation per hop.
  localparam int unsigned PROP_PS = 10000;
  // RS-FEC at 100 Gb/s (802.3 Clause 91), encode + decode per link traversal
  // (the simulator's `fec_ps`; no FEC in this RTL).
  localparam int unsigned RS_FEC_100G_PS = 100000;

  // ---- Table 1 baseline stack latencies (ps) ----
  localparam int unsigned TCP_STACK_PS = 666200;
  localparam int unsigned ROCE_STACK_PS = 230200;
  localparam int unsigned ETH_MAC_PS = 7680;
  localparam int unsigned ETH_PCS_PS = 7680;
  localparam int unsigned L2_FORWARD_PS = 400000;
  // Per CXL switch hop, paper §2.2.
  localparam int unsigned CXL_SWITCH_HOP_PS = 100000;

  // ---- Baseline framing (bytes): headers each baseline adds per packet ----
  // Ethernet MTU (IP packet bytes).
  localparam int unsigned ETH_MTU_PAYLOAD_BYTES = 1500;
  // TCP/IP: IPv4 20 + TCP 20 (DCTCP, pFabric's DCTCP-like transport).
  localparam int unsigned TCPIP_HEADER_BYTES = 40;
  // RoCEv2: IPv4 20 + UDP 8 + BTH 12 + ICRC 4 (PFC + DCQCN).
  localparam int unsigned ROCE_HEADER_BYTES = 44;
  // Raw Ethernet transports (IRD, Fastpass): flow id + sequence number.
  localparam int unsigned RAW_TRANSPORT_HEADER_BYTES = 8;
  // CXL 68-byte flit: 64 bytes of slots + 2 protocol ID + 2 CRC.
  localparam int unsigned CXL_FLIT_BYTES = 68;
  localparam int unsigned CXL_FLIT_PAYLOAD_BYTES = 64;

  // ---- The paper's published fabric latencies (ps), for comparison only ----
  localparam int unsigned PAPER_EDM_READ_STACK_PS = 107520;
  localparam int unsigned PAPER_EDM_WRITE_STACK_PS = 104960;
  localparam int unsigned PAPER_EDM_READ_TOTAL_PS = 299520;
  localparam int unsigned PAPER_EDM_WRITE_TOTAL_PS = 296960;

  // ---- Scheduler defaults (§4.3) ----
  localparam int unsigned DEFAULT_CHUNK_BYTES = 256;
  // X: most active notifications per source-destination pair.
  localparam int unsigned DEFAULT_MAX_ACTIVE_NOTIFS = 3;

  // ---- Integrity checks shared by every module that checks or makes a unit ----
  // (Verilog-2005 style: the result is assigned to the function's name.)

  // CRC-32C register (reflected, not complemented) after one more byte.
  function automatic [31:0] crc32c_byte(input [31:0] crc, input [7:0] data);
    crc32c_byte = crc ^ {24'b0, data};
    for (integer b = 0; b < 8; b++)
      crc32c_byte = (crc32c_byte >> 1) ^ (CRC32C_POLY_REFLECTED & {32{crc32c_byte[0]}});
  endfunction

  // ... after eight more bytes, byte 0 first.
  function automatic [31:0] crc32c_word(input [31:0] crc, input [63:0] data);
    crc32c_word = crc;
    for (integer i = 0; i < 8; i++) crc32c_word = crc32c_byte(crc32c_word, data[8*i +: 8]);
  endfunction

  // The word update is linear in {data, crc}: bit 96*j + k of this table says
  // whether input bit k of {data[63:0], crc[31:0]} flips output bit j.
  // Evaluated at elaboration, so each output bit is one flat XOR (the unrolled
  // bit-serial form leaves terms that cancel, which synthesis does not always see).
  function automatic [32*96-1:0] crc32c_word_masks(input integer unused);
    logic [31:0] col;
    crc32c_word_masks = '0;
    for (integer k = 0; k < 96; k++) begin
      col = k < 32 ? crc32c_word(32'd1 << k, 64'd0) : crc32c_word(32'd0, 64'd1 << (k - 32));
      for (integer j = 0; j < 32; j++) crc32c_word_masks[96*j + k] = col[j];
    end
  endfunction

  // ---- The switch scheduler's iteration at a port count ----
  // Levels of the request's tree over `ports` pairs: ceil(log_radix ports), >= 1.
  function automatic int unsigned sw_pim_tree_levels(input int unsigned ports);
    longint unsigned reach;
    sw_pim_tree_levels = 1;
    reach = 64'(1) << SW_PIM_TREE_RADIX_LOG2;
    for (integer i = 0; i < 32; i++)
      if (reach < 64'(ports)) begin
        reach = reach << SW_PIM_TREE_RADIX_LOG2;
        sw_pim_tree_levels = sw_pim_tree_levels + 1;
      end
  endfunction

  // Cycles of one iteration of our scheduler (edm_pim_scheduler) at `ports`
  // ports: with its request tree registered, one per tree level, then accept
  // compare, accept reduce, grant; else SW_PIM_ITER_CYCLES (request, accept,
  // grant).
  function automatic int unsigned sw_pim_iter_cycles(input int unsigned ports, input bit registered);
    sw_pim_iter_cycles = registered ? sw_pim_tree_levels(ports) + SW_PIM_STAGE_CYCLES : SW_PIM_ITER_CYCLES;
  endfunction

  // CRC-8 (x^8+x^2+x+1, init 0, MSB first) of payload bytes 0..6 (/N/, /G/).
  // The CRC-8 of payload bytes 0..6 of the /N/ or /G/ with sequence number seq
  // on its link: the register starts from seq instead of 0.
  function automatic [7:0] crc8_seq(input [7:0] seq, input [55:0] data);
    crc8_seq = seq;
    for (integer i = 0; i < 7; i++) begin
      crc8_seq = crc8_seq ^ data[8*i +: 8];
      for (integer b = 0; b < 8; b++)
        crc8_seq = {crc8_seq[6:0], 1'b0} ^ (CRC8_POLY & {8{crc8_seq[7]}});
    end
  endfunction

  // ... with the register starting from 0.
  function automatic [7:0] crc8_56(input [55:0] data);
    crc8_56 = crc8_seq(8'h00, data);
  endfunction

  // The sequence number a received /N/ or /G/ payload's CRC-8 implies: the one
  // seq for which crc8_seq(seq, p[55:0]) == p[63:56]. crc8_seq is crc8_56 xor
  // seq moved by 56 zero bits; CTL_SEQ_INV_SHIFT more zero bits move it back.
  function automatic [7:0] crc8_implied_seq(input [63:0] p);
    crc8_implied_seq = p[63:56] ^ crc8_56(p[55:0]);
    for (integer b = 0; b < CTL_SEQ_INV_SHIFT; b++)
      crc8_implied_seq = {crc8_implied_seq[6:0], 1'b0} ^ (CRC8_POLY & {8{crc8_implied_seq[7]}});
  endfunction

  // Both CRC-8 functions above are linear: bit 64*j + k of these tables says
  // whether input bit k ({seq, data} for crc8_seq, p for crc8_implied_seq)
  // flips output bit j. Evaluated at elaboration, so each output bit is one
  // flat XOR, 3 LUT4 levels; the bit-serial form above maps to about 13.
  function automatic [8*64-1:0] crc8_seq_masks(input integer unused);
    logic [7:0] col;
    crc8_seq_masks = '0;
    for (integer k = 0; k < 64; k++) begin
      col = k < 56 ? crc8_seq(8'd0, 56'd1 << k) : crc8_seq(8'd1 << (k - 56), 56'd0);
      for (integer j = 0; j < 8; j++) crc8_seq_masks[64*j + k] = col[j];
    end
  endfunction

  function automatic [8*64-1:0] crc8_implied_masks(input integer unused);
    logic [7:0] col;
    crc8_implied_masks = '0;
    for (integer k = 0; k < 64; k++) begin
      col = crc8_implied_seq(64'd1 << k);
      for (integer j = 0; j < 8; j++) crc8_implied_masks[64*j + k] = col[j];
    end
  endfunction

  // |M| of a memory unit whose /MS/ header names kind and len (8 for a kind
  // that is no unit's; an RMWREQ's len is not checked here): it fixes the
  // unit's layout, (|M| - 1) >> 3 /MD/ blocks (docs/protocol.md §3.2).
  function automatic [16:0] unit_bytes(input [7:0] kind, input [15:0] len);
    case (kind)
      KIND_RREQ:   unit_bytes = 17'd16;
      KIND_WREQ:   unit_bytes = 17'd16 + {1'b0, len};
      KIND_RMWREQ: unit_bytes = 17'd32;
      KIND_RRES:   unit_bytes = 17'd8 + {1'b0, len};
      default:     unit_bytes = 17'd8;
    endcase
  endfunction

  // Blocks of that unit on the wire: /MS/ + (|M| - 1) >> 3 /MD/ + /MT/.
  function automatic int unsigned unit_blocks(input [7:0] kind, input [15:0] len);
    unit_blocks = 2 + ((32'(unit_bytes(kind, len)) - 1) >> 3);
  endfunction

  // c + inc, saturating at 0xFFFF: the modules' 16-bit status counters.
  function automatic [15:0] sat_add(input [15:0] c, input [1:0] inc);
    sat_add = ({1'b0, c} + {15'b0, inc}) > 17'hFFFF ? 16'hFFFF : c + {14'b0, inc};
  endfunction

  // A block travels as logic [65:0] {payload[63:0], sync[1:0]}; bit 0 goes first on the wire.
  /* verilator lint_on UNUSEDPARAM */
endpackage

// EDM RX demultiplexer, between the descrambler and the 64b/66b decoder
// (§3.2.3, docs/protocol.md §3.3 and §6): the inverse of edm_tx. One 66-bit
// block per clock in (in_valid may have gaps, e.g. from a gearbox); every
// block is classified, checked and steered in the same cycle, and all outputs
// are registered: LATENCY IS ONE REGISTER STAGE (1 cycle) for every port.
//
// Memory units (/MS/ /MD/.. /MT/) go to the mem_* port, checked on the fly:
//   * /MS/ announces the layout (kind, len); an invalid kind or an RMWREQ
//     whose len is not 8 is counted corrupted at once and nothing is output.
//   * Each block of an accepted unit is output as it arrives (mem_first on the
//     /MS/, mem_last on the /MT/), cut-through. The CRC-32C over the message
//     bytes, the /MD/ count and the zero padding are checked as the blocks
//     pass; the verdict comes with the /MT/: mem_last && !mem_error is the
//     ONLY "unit good" indication. A consumer must hold any side effect until
//     then and drop the unit on mem_error or mem_abort.
//   * mem_abort pulses when an open unit is truncated: a block other than
//     /MD/ (while /MD/s are still due), /MT/, /N/, /G/ or the all-idle filler
//     arrives inside it (a frame block, a second /MS/, an unknown or bad-sync
//     block, or a data block where the /MT/ is due). The unit is counted
//     corrupted and the aborting block is then processed as if no unit were
//     open (so a second /MS/ may raise mem_first in the same cycle as the
//     mem_abort of the unit it cut short). Every mem_first is therefore
//     followed by exactly one mem_last or one mem_abort.
// /N/, /G/ and /A/ (also as fillers inside a unit) are checked (zero reserved
// bits and the CRC-8, which starts from the link's control sequence number:
// docs/protocol.md §5a) and their fields output on notif_* / grant_* / ack_*
// (an /A/: the peer, the base id and the map of ids applied, §4b); bad ones
// are dropped and counted corrupted. The three kinds share the link's
// numbers, expected in order (ctl_expected). A block with a good layout
// implies one number (edm_pkg::crc8_implied_seq): only the expected one is
// accepted; any other is rejected (corrupted, or out of sequence after a
// loss). If the previous control block was rejected with the number just
// before it, the receiver resynchronises: it rejects this one too, expects
// the number after it, and counts the numbers it skipped (cnt_ctl_missed:
// every lost or rejected control block up to there). A data block whose
// payload is the /N/ /G/ /A/ expected next (a control block whose sync header flipped) is
// counted (cnt_ctl_in_data), never acted on, and dropped like a filler: not
// taken as /MD/, not forwarded, so the unit or frame it preempted survives.
//
// Decoder side (out_valid, out_block), design decisions:
//   * Frame blocks and every standard control block outside a memory unit
//     (idles and ordered sets included) are forwarded cut-through, so with no
//     memory traffic out_block is in_block delayed by one cycle. A frame that
//     the TX preempted reaches the decoder with a gap in out_valid where the
//     memory blocks were, but never with a foreign block inside it: an
//     unpreempted frame gains no latency (the paper buffers every frame until
//     its /T/; we do not). pcs_decoder has in_valid, so gaps are fine.
//   * Idle blocks inside a memory unit are fillers and are dropped (they would
//     otherwise land inside a preempted frame); idles outside units are kept.
//   * Blocks with a bad sync header are counted (cnt_bad_sync) and still
//     forwarded, so the decoder turns them into /E/ and the MAC drops a frame
//     they hit. A data block where a unit's /MT/ is due aborts the unit and is
//     forwarded as frame data (docs/protocol.md §3.3).
//   * Never forwarded: every BT_EDM block (/MS/ /MD/ /MT/ /N/ /G/ /A/, unknown
//     subtypes, the reserved /MST/) and control blocks of unknown type; the
//     unknown ones are counted (cnt_unknown), as the spec says (dropped,
//     counted, never delivered).
// Counters: 16-bit, saturating, same meaning as the reference receiver's
// (edm.codec.RxDemux): messages_ok, corrupted, unknown, notifications_ok,
// grants_ok, acks_ok, bad_sync, control_missed, control_in_data. Frames are the
// decoder's and MAC's business.
//
// Signal prefixes: is_ the incoming block's sync and type; c_ its class (/MS/,
// /MT/, /N/, /G/, /A/, idle, standard, unknown); take_ what it does to the open unit.
module edm_rx (
    input  logic        clk,
    input  logic        rst_n,
    // From the descrambler: {payload[63:0], sync[1:0]}.
    input  logic        in_valid,
    input  logic [65:0] in_block,
    // Toward the 64b/66b decoder: frame blocks and standard control blocks.
    output logic        out_valid,
    output logic [65:0] out_block,
    // Memory units, block by block (/MS/ first, /MT/ last, no fillers).
    output logic        mem_valid,
    output logic [65:0] mem_block,
    output logic        mem_first,
    output logic        mem_last,
    output logic        mem_error,   // with mem_last: the unit is bad, drop it
    output logic        mem_abort,   // the open unit was truncated, drop it
    // Good /N/ and /G/ blocks, decoded.
    output logic        notif_valid,
    output logic [edm_pkg::PORT_BITS-1:0] notif_dst,
    output logic [7:0]  notif_msg_id,
    output logic [15:0] notif_size,
    output logic        grant_valid,
    output logic [edm_pkg::PORT_BITS-1:0] grant_dst,
    output logic [7:0]  grant_msg_id,
    output logic [15:0] grant_size,
    // Good /A/ blocks, decoded (docs/protocol.md §4b).
    output logic        ack_valid,
    output logic [edm_pkg::PORT_BITS-1:0] ack_peer,
    output logic [7:0]  ack_base,
    output logic [edm_pkg::ACK_MAP_W-1:0] ack_map,
    // Status counters (16-bit, saturating).
    output logic [15:0] cnt_msg_ok,
    output logic [15:0] cnt_corrupted,
    output logic [15:0] cnt_unknown,
    output logic [15:0] cnt_notif_ok,
    output logic [15:0] cnt_grant_ok,
    output logic [15:0] cnt_ack_ok,
    output logic [15:0] cnt_bad_sync,
    output logic [15:0] cnt_ctl_missed,
    output logic [15:0] cnt_ctl_in_data
);
  // Bytes k..7 of a payload are zero.
  function automatic zero_from(input [63:0] data, input [3:0] k);
    zero_from = 1'b1;
    for (integer i = 0; i < 8; i++)
      zero_from = zero_from && (i < k || data[8*i +: 8] == 8'h00);
  endfunction

  // c + inc, saturating at 0xFFFF (inc: a resynchronisation's skipped numbers,
  // 1..256 with 0 meaning 256).
  function automatic [15:0] ctl_missed_add(input [15:0] c, input [7:0] inc);
    logic [16:0] sum;
    sum = {1'b0, c} + (inc == 8'd0 ? 17'd256 : {9'b0, inc});
    ctl_missed_add = sum > 17'hFFFF ? 16'hFFFF : sum[15:0];
  endfunction

  localparam logic [63:0] IDLE_PAYLOAD = {56'b0, edm_pkg::BT_C8};
  localparam int unsigned NG_FIELDS_END = edm_pkg::NG_SIZE_LSB + edm_pkg::NG_SIZE_W;

  // ---- Classification of the incoming block (no context) ----
  logic [1:0]  sync;
  logic [63:0] p;
  logic        is_data, is_ctrl, is_bad_sync, is_edm;
  logic        c_ms, c_mt, c_n, c_g, c_a, c_ctl, c_idle, c_std, c_unknown;

  assign sync        = in_block[1:0];
  assign p           = in_block[65:2];
  assign is_data     = sync == edm_pkg::SYNC_DATA;
  assign is_ctrl     = sync == edm_pkg::SYNC_CTRL;
  assign is_bad_sync = !is_data && !is_ctrl;
  assign is_edm      = is_ctrl && p[7:0] == edm_pkg::BT_EDM;
  assign c_ms        = is_edm && p[15:8] == edm_pkg::SUB_MS;
  assign c_mt        = is_edm && p[15:8] == edm_pkg::SUB_MT;
  assign c_n         = is_edm && p[15:8] == edm_pkg::SUB_N;
  assign c_g         = is_edm && p[15:8] == edm_pkg::SUB_G;
  assign c_a         = is_edm && p[15:8] == edm_pkg::SUB_A;
  assign c_ctl       = c_n || c_g || c_a;  // the control blocks the link numbers
  assign c_idle      = is_ctrl && p == IDLE_PAYLOAD;
  always_comb begin
    case (p[7:0])
      edm_pkg::BT_C8, edm_pkg::BT_C4_O4, edm_pkg::BT_C4_S4, edm_pkg::BT_O0_S4,
      edm_pkg::BT_O0_O4, edm_pkg::BT_S0, edm_pkg::BT_O0_C4,
      edm_pkg::BT_T0, edm_pkg::BT_T1, edm_pkg::BT_T2, edm_pkg::BT_T3,
      edm_pkg::BT_T4, edm_pkg::BT_T5, edm_pkg::BT_T6, edm_pkg::BT_T7: c_std = is_ctrl;
      default: c_std = 1'b0;
    endcase
  end
  assign c_unknown = is_ctrl && !c_std && !c_ms && !c_mt && !c_ctl;

  // ---- /N/ /G/ /A/ layout and the link's control sequence (docs/protocol.md §5a) ----
  // ng_layout: the payload, read as a control block, is an /N/ /G/ /A/ with zero
  // reserved bits; ng_seq: the number its CRC-8 implies.
  logic [7:0] ctl_expected;   // the number expected next
  logic [7:0] ctl_rejected;   // the number the previous /N/ /G/ /A/ implied, if
  logic       ctl_rej_valid;  // it was rejected out of sequence
  logic       ng_layout, ng_resync, ng_accept, c_cid;
  logic [7:0] ng_skipped;     // numbers a resynchronisation skips, itself included
  logic [7:0] ng_seq;
  assign ng_layout = p[7:0] == edm_pkg::BT_EDM
                  && (p[15:8] == edm_pkg::SUB_N || p[15:8] == edm_pkg::SUB_G || p[15:8] == edm_pkg::SUB_A)
                  && p[edm_pkg::NG_CRC_LSB - 1 : NG_FIELDS_END] == '0;
  assign ng_seq    = edm_pkg::crc8_implied_seq(p);
  assign ng_accept = c_ctl && ng_layout && ng_seq == ctl_expected;
  assign ng_resync = c_ctl && ng_layout && !ng_accept && ctl_rej_valid && ng_seq == ctl_rejected + 8'd1;
  assign ng_skipped = ng_seq - ctl_expected + 8'd1;
  // A data block that is the control block expected next: a flipped sync header.
  assign c_cid     = is_data && ng_layout && ng_seq == ctl_expected;

  // ---- /MS/: the layout its header announces ----
  // Message bytes 0..5 are payload bytes 2..7, so header bits [47:0] = p[63:16].
  logic [7:0]  hdr_kind;
  logic [15:0] hdr_len;
  logic        ms_ok;
  logic [16:0] m_len;     // |M| = 8 + ext + payload, at most 65551
  logic [16:0] m_len_m1;  // |M| - 1 = 8 * n_md + b, b in 0..7

  assign hdr_kind = {5'b0, p[16 + edm_pkg::HDR_KIND_LSB +: edm_pkg::HDR_KIND_W]};
  assign hdr_len  = p[16 + edm_pkg::HDR_LEN_LSB +: edm_pkg::HDR_LEN_W];
  assign m_len = edm_pkg::unit_bytes(hdr_kind, hdr_len);
  assign ms_ok = hdr_kind == edm_pkg::KIND_RREQ || hdr_kind == edm_pkg::KIND_WREQ || hdr_kind == edm_pkg::KIND_RRES
                 || (hdr_kind == edm_pkg::KIND_RMWREQ && hdr_len == 16'(edm_pkg::RMW_OPERAND_BYTES));
  // n_md = ceil((|M| - 8) / 8) = (|M| - 1) >> 3; with b = (|M| - 1) mod 8 the
  // last /MD/ carries b + 3 bytes if b < 6, else 8 bytes and the /MT/ b - 5.
  assign m_len_m1 = m_len - 17'd1;

  // ---- Unit state ----
  logic        in_unit;
  logic [13:0] md_left;   // /MD/ blocks still due
  logic [2:0]  lay_b;     // b of the open unit
  logic [2:0]  shift;     // s of the open unit (see the CRC below)
  logic [63:0] residue;   // bytes 0..s-1: the bytes of Z that do not fill a word yet
  logic [31:0] crc;       // CRC register (init 0) over the words of Z so far
  logic        pad_ok;    // the last /MD/'s padding was zero

  logic [3:0]  last_md_bytes, tail_bytes;
  assign last_md_bytes = lay_b >= 3'd6 ? 4'd8 : {1'b0, lay_b} + 4'd3;
  assign tail_bytes    = lay_b >= 3'd6 ? {2'b0, lay_b[1:0]} - 4'd1 : 4'd0;  // 6 -> 1, 7 -> 2

  // An /MD/ of the open unit; an /MT/ closing it.
  logic        take_md, md_is_last, take_mt, mt_good, take_filler, abort;
  assign take_md    = in_unit && is_data && !c_cid && md_left != 14'd0;
  assign md_is_last = md_left == 14'd1;
  assign take_mt    = in_unit && c_mt;

  // ---- CRC-32C at a fixed 8 bytes per block (edm_crc32c_unit) ----
  logic [31:0] crc_next;
  logic [63:0] rot;
  logic [2:0]  shift_in;
  edm_crc32c_unit crc32c (
      .is_ms(c_ms), .is_mt(c_mt), .payload(p), .len_mod8(m_len[2:0]),
      .crc, .residue, .shift,
      .crc_next, .residue_next(rot), .shift_next(shift_in));
  assign mt_good  = md_left == 14'd0 && pad_ok
                 && zero_from({48'b0, p[31:16]}, tail_bytes)
                 && ~(tail_bytes != 4'd0 ? crc_next : crc) == p[63:32];
  // Fillers inside a unit: idles (and flipped control blocks) are dropped, /N/
  // /G/ /A/ handled as usual.
  assign take_filler = in_unit && (c_idle || c_ctl || c_cid);
  assign abort       = in_unit && !take_md && !take_mt && !take_filler;

  // ---- What the block does once no unit is open (or it aborted the open one) ----
  logic free, start_unit, forward, n_good, g_good, a_good, ng_fields_ok;
  logic [1:0] corrupted_inc;

  assign free         = !in_unit || abort;
  assign start_unit   = free && c_ms && ms_ok;
  assign forward      = free && ((is_data && !c_cid) || is_bad_sync || c_std);
  assign ng_fields_ok = ng_accept;
  assign n_good       = c_n && ng_accept;
  assign g_good       = c_g && ng_accept;
  assign a_good       = c_a && ng_accept;
  // Per block: an abort (+1), then an invalid /MS/, a stray /MT/ or a bad /N/ /G/ /A/ (+1).
  assign corrupted_inc = {1'b0, abort || (take_mt && !mt_good)}
                       + {1'b0, free && ((c_ms && !ms_ok) || c_mt)}
                       + {1'b0, c_ctl && !ng_fields_ok};

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      in_unit <= 1'b0;
      md_left <= '0;
      lay_b <= '0;
      shift <= '0;
      residue <= '0;
      crc <= '0;
      pad_ok <= 1'b0;
      out_valid <= 1'b0;
      out_block <= '0;
      mem_valid <= 1'b0;
      mem_block <= '0;
      mem_first <= 1'b0;
      mem_last <= 1'b0;
      mem_error <= 1'b0;
      mem_abort <= 1'b0;
      notif_valid <= 1'b0;
      notif_dst <= '0;
      notif_msg_id <= '0;
      notif_size <= '0;
      grant_valid <= 1'b0;
      grant_dst <= '0;
      grant_msg_id <= '0;
      grant_size <= '0;
      ack_valid <= 1'b0;
      ack_peer <= '0;
      ack_base <= '0;
      ack_map <= '0;
      cnt_msg_ok <= '0;
      cnt_corrupted <= '0;
      cnt_unknown <= '0;
      cnt_notif_ok <= '0;
      cnt_grant_ok <= '0;
      cnt_ack_ok <= '0;
      cnt_bad_sync <= '0;
      cnt_ctl_missed <= '0;
      cnt_ctl_in_data <= '0;
      ctl_expected <= '0;
      ctl_rejected <= '0;
      ctl_rej_valid <= 1'b0;
    end else begin
      out_valid <= in_valid && forward;
      out_block <= in_block;
      mem_valid <= in_valid && (take_md || take_mt || start_unit);
      mem_block <= in_block;
      mem_first <= start_unit;
      mem_last <= take_mt;
      mem_error <= take_mt && !mt_good;
      mem_abort <= in_valid && abort;
      notif_valid <= in_valid && n_good;
      grant_valid <= in_valid && g_good;
      ack_valid <= in_valid && a_good;
      notif_dst <= p[edm_pkg::NG_DST_LSB +: edm_pkg::NG_DST_W];
      notif_msg_id <= p[edm_pkg::NG_ID_LSB +: edm_pkg::NG_ID_W];
      notif_size <= p[edm_pkg::NG_SIZE_LSB +: edm_pkg::NG_SIZE_W];
      grant_dst <= p[edm_pkg::NG_DST_LSB +: edm_pkg::NG_DST_W];
      grant_msg_id <= p[edm_pkg::NG_ID_LSB +: edm_pkg::NG_ID_W];
      grant_size <= p[edm_pkg::NG_SIZE_LSB +: edm_pkg::NG_SIZE_W];
      ack_peer <= p[edm_pkg::NG_DST_LSB +: edm_pkg::NG_DST_W];
      ack_base <= p[edm_pkg::NG_ID_LSB +: edm_pkg::NG_ID_W];
      ack_map <= p[edm_pkg::ACK_MAP_LSB +: edm_pkg::ACK_MAP_W];
      if (in_valid) begin
        if (take_md) begin
          md_left <= md_left - 14'd1;
          crc <= crc_next;
          residue <= rot;
          if (md_is_last) pad_ok <= zero_from(p, last_md_bytes);
        end
        if (take_mt || abort) in_unit <= 1'b0;
        if (start_unit) begin
          in_unit <= 1'b1;
          md_left <= m_len_m1[16:3];
          lay_b <= m_len_m1[2:0];
          shift <= shift_in;
          residue <= rot;
          crc <= crc_next;
          pad_ok <= 1'b1;  // no /MD/ (RRES of 0 bytes): nothing padded
        end
        cnt_msg_ok <= edm_pkg::sat_add(cnt_msg_ok, {1'b0, take_mt && mt_good});
        cnt_corrupted <= edm_pkg::sat_add(cnt_corrupted, corrupted_inc);
        cnt_unknown <= edm_pkg::sat_add(cnt_unknown, {1'b0, free && c_unknown});
        cnt_notif_ok <= edm_pkg::sat_add(cnt_notif_ok, {1'b0, n_good});
        cnt_grant_ok <= edm_pkg::sat_add(cnt_grant_ok, {1'b0, g_good});
        cnt_ack_ok <= edm_pkg::sat_add(cnt_ack_ok, {1'b0, a_good});
        cnt_bad_sync <= edm_pkg::sat_add(cnt_bad_sync, {1'b0, free && is_bad_sync});
        cnt_ctl_in_data <= edm_pkg::sat_add(cnt_ctl_in_data, {1'b0, c_cid});
        if (c_ctl) begin
          ctl_rej_valid <= !ng_accept && !ng_resync && ng_layout;
          ctl_rejected <= ng_seq;
          if (ng_accept || ng_resync) ctl_expected <= ng_seq + 8'd1;
          if (ng_resync) cnt_ctl_missed <= ctl_missed_add(cnt_ctl_missed, ng_skipped);
        end
      end
    end
  end
endmodule

// Link disable on a high bit-error rate (paper §3.3, docs/faults.md §2): the
// receiver's pcs_ber_monitor and a gate that, while the link is down, turns
// every received block into an idle, so nothing from a noisy link reaches the
// EDM receiver (a switch port then gets no notification, request or data from
// it). The link is down while this end's hi_ber is up or the partner reports
// its own (remote_down: 802.3's remote fault, here a wire synchronised into
// this clock); link_down tells the local sender to stop. Nothing is registered
// on the data path, so a working link's latency is unchanged. The fabric has
// no block lock of its own (aligned by construction): the monitor runs locked.
// A unit cut short: the receiver behind (edm_rx, a switch ingress) follows a
// memory unit from /MS/ to /MT/, so one the link cut off mid-way would stay
// open there (a switch egress waiting for its end). When the link goes down
// with a unit open on out_block, the guard ends it with blocks no receiver
// takes as a good end: an /MT/ while /MD/ blocks are still due (edm_rx's
// layout check fails: mem_error), or, if the /MT/ is due, a data block
// (edm_rx aborts the unit on it) and then an /MT/ (which closes the unit at a
// switch ingress, which does not check layouts; edm_rx counts it corrupted,
// an /MT/ with no unit open). Counted in cnt_cut_units.
module pcs_link_guard #(
    parameter int unsigned WINDOW_CYCLES = 48828,
    parameter int unsigned THRESHOLD = 16
) (
    input  logic        clk,
    input  logic        rst_n,
    // Received blocks (descrambled; the sync header as on the line).
    input  logic        in_valid,
    input  logic [65:0] in_block,
    output logic        out_valid,
    output logic [65:0] out_block,
    // Link state.
    input  logic        remote_down,  // the partner's hi_ber, from any clock
    output logic        hi_ber,       // this receiver's
    output logic        link_down,
    // Status counters (16-bit, saturating).
    output logic [15:0] cnt_bad_sync,
    output logic [15:0] cnt_hi_ber,    // times this receiver's hi_ber rose
    output logic [15:0] cnt_discarded, // non-idle blocks turned into idles while down
    output logic [15:0] cnt_cut_units  // units open when the link went down, ended as bad
);
  localparam logic [65:0] IDLE_BLOCK = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  // The ends of a cut unit: an /MT/ with zero tail and CRC, a data block of ones
  // (its first byte is not BT_EDM, so no receiver reads it as a control block).
  localparam logic [65:0] CUT_MT = {48'b0, edm_pkg::SUB_MT, edm_pkg::BT_EDM, edm_pkg::SYNC_CTRL};
  localparam logic [65:0] CUT_DATA = {64'hFFFF_FFFF_FFFF_FFFF, edm_pkg::SYNC_DATA};

  pcs_ber_monitor #(.WINDOW_CYCLES(WINDOW_CYCLES), .THRESHOLD(THRESHOLD)) monitor (
      .clk, .rst_n, .block_lock(1'b1), .in_valid, .in_sync(in_block[1:0]),
      .hi_ber, .cnt_bad_sync, .cnt_hi_ber
  );

  logic [1:0] remote_sync;  // two flops: remote_down comes from the partner's clock
  always_ff @(posedge clk)
    if (!rst_n) remote_sync <= '0;
    else remote_sync <= {remote_sync[0], remote_down};

  assign link_down = hi_ber || remote_sync[1];
  assign out_valid = in_valid;

  // The unit open on out_block: /MD/ blocks still due; an /MT/ owed after a CUT_DATA.
  logic        u_open, mt_owed;
  logic [13:0] md_left;
  logic        is_ms, is_mt, cut_end;
  logic [16:0] m_len;
  assign is_ms = out_block[1:0] == edm_pkg::SYNC_CTRL && out_block[9:2] == edm_pkg::BT_EDM
                 && out_block[17:10] == edm_pkg::SUB_MS;
  assign is_mt = out_block[1:0] == edm_pkg::SYNC_CTRL && out_block[9:2] == edm_pkg::BT_EDM
                 && out_block[17:10] == edm_pkg::SUB_MT;
  // Header bytes 0..5 are the /MS/ payload's bytes 2..7.
  assign m_len = edm_pkg::unit_bytes({5'b0, out_block[18 + edm_pkg::HDR_KIND_LSB +: edm_pkg::HDR_KIND_W]},
                                     out_block[18 + edm_pkg::HDR_LEN_LSB +: edm_pkg::HDR_LEN_W]);
  always_comb begin
    out_block = in_block;
    if (link_down) begin
      out_block = IDLE_BLOCK;
      if (mt_owed || (u_open && md_left != 14'd0)) out_block = CUT_MT;
      else if (u_open) out_block = CUT_DATA;
    end
  end
  assign cut_end = in_valid && link_down && (mt_owed || u_open) && out_block == CUT_MT;

  always_ff @(posedge clk)
    if (!rst_n) begin
      u_open <= 1'b0;
      mt_owed <= 1'b0;
      md_left <= '0;
    end else if (in_valid) begin
      mt_owed <= link_down && u_open && out_block == CUT_DATA;
      if (link_down) u_open <= 1'b0;
      else if (is_ms) begin
        u_open <= 1'b1;
        md_left <= 14'((m_len - 17'd1) >> 3);
      end else if (is_mt) u_open <= 1'b0;
      else if (u_open && out_block[1:0] == edm_pkg::SYNC_DATA && md_left != 14'd0) md_left <= md_left - 14'd1;
    end

  always_ff @(posedge clk)
    if (!rst_n) begin
      cnt_discarded <= '0;
      cnt_cut_units <= '0;
    end else begin
      cnt_discarded <= edm_pkg::sat_add(cnt_discarded, {1'b0, in_valid && link_down && in_block != IDLE_BLOCK});
      cnt_cut_units <= edm_pkg::sat_add(cnt_cut_units, {1'b0, cut_end});
    end
endmodule

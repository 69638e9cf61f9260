// A memory node's write acknowledgements (docs/protocol.md §4b): collects the
// writes it has applied in full, per source, and sends them as /A/ blocks,
// one block per unit, toward edm_tx's memory input.
//
// Input: applied_valid with the write's source port and message id (also a
// duplicate of a write applied before, which is acknowledged again: a lost
// /A/ costs one retry). Per tracked source (ports 0 .. 2^SRC_LOG2-1) one
// open /A/: a base id (the first id it took) and a map of the ids base ..
// base + ACK_MAP_W - 1 applied. An id that does not fit the open /A/ of its
// source (16 or more ids ahead of its base, or behind it) closes that /A/
// into the spill queue (2^SPILL_LOG2 entries) and opens a new one. An id of
// an untracked source, or a closed /A/ that finds the spill queue full, is
// not sent and is counted (cnt_unacked): the requester re-sends those writes
// after its retry timeout and the duplicates are acknowledged then.
//
// Pacing: at most one /A/ per ACK_GAP_BLOCKS blocks of the uplink (tick: the
// link took a block; one per clock at a memory node), so /A/ take at most
// 1/ACK_GAP_BLOCKS of it; and a source's open /A/ leaves at least
// ACK_PAIR_GAP_BLOCKS ticks after its previous open /A/ if that one carried
// two ids or more and was not full (all ACK_MAP_W ids): a source writing
// steadily is acknowledged in groups. The first /A/ after a quiet spell (of
// the node and of the source) leaves at once. A waiting open /A/ gathers the
// writes applied meanwhile. A spilled /A/ waits only for the node's slot. Order: the spill queue first
// (its /A/ are the older), then the open /A/ not held, round robin from the
// source after the last one sent, so none starves.
//
// Numbering: the /A/ carries the link's next control number in its CRC-8
// (docs/protocol.md §5a). A memory node's uplink sends no /N/ or /G/, so this
// sender owns the link's numbers (ctl_seq).
//
// Latency: an /A/ opened by applied_valid is in the output register after the
// second edge (the open /A/, then the output register): 2 cycles unloaded.
//
// Signal prefixes: e_ the open /A/ per source, sp_ the spill queue, o_ the
// output register, g_ the node's pacing, h_ the per-source hold.
module edm_ack_sender #(
    parameter int unsigned SRC_LOG2 = 2,     // sources tracked: ports 0 .. 2^SRC_LOG2-1
    parameter int unsigned SPILL_LOG2 = 2,   // closed /A/ waiting for their slot
    parameter int unsigned GAP_BLOCKS = edm_pkg::ACK_GAP_BLOCKS,
    parameter int unsigned PAIR_GAP_BLOCKS = edm_pkg::ACK_PAIR_GAP_BLOCKS
) (
    input  logic        clk,
    input  logic        rst_n,
    // A write applied (or a duplicate of one applied before).
    input  logic        applied_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] applied_src,
    input  logic [7:0]  applied_id,
    // The uplink took a block (tie high: one block per clock).
    input  logic        tick,
    // Toward edm_tx's memory input: one-block units.
    output logic        out_valid,
    input  logic        out_ready,
    output logic [65:0] out_block,
    // Status (16-bit, saturating).
    output logic [15:0] cnt_acks,       // /A/ sent
    output logic [15:0] cnt_unacked     // acknowledgements dropped for lack of room
);
  localparam int unsigned S = 1 << SRC_LOG2;
  localparam int unsigned MW = edm_pkg::ACK_MAP_W;
  localparam int unsigned PB = edm_pkg::PORT_BITS;
  localparam int unsigned GW = $clog2(GAP_BLOCKS + 1);
  localparam int unsigned HW = $clog2(PAIR_GAP_BLOCKS + 1);
  // A spilled /A/: {source, base, map}.
  localparam int unsigned SPW = SRC_LOG2 + 8 + MW;
  if (GAP_BLOCKS < 2) begin : g_gap_too_small
    $error("edm_ack_sender: GAP_BLOCKS must be at least 2");
  end
  if (PAIR_GAP_BLOCKS < GAP_BLOCKS) begin : g_pair_gap_too_small
    $error("edm_ack_sender: PAIR_GAP_BLOCKS must be at least GAP_BLOCKS");
  end

  // ---- the open /A/ per source
  logic [S-1:0]         e_valid;
  logic [S-1:0][7:0]    e_base;
  logic [S-1:0][MW-1:0] e_map;

  // ---- the applied id against its source's open /A/
  logic              a_tracked, a_fits, a_spill;
  logic [SRC_LOG2-1:0] a_src;
  logic [7:0]        a_d;
  assign a_tracked = applied_valid && 32'(applied_src) < S;
  assign a_src = applied_src[SRC_LOG2-1:0];
  assign a_d = applied_id - e_base[a_src];
  assign a_fits = e_valid[a_src] && 32'(a_d) < MW;
  // The open /A/ is closed into the spill queue (unless it leaves now anyway).
  logic              take_open;   // the open /A/ of t_src goes to the output now
  logic [SRC_LOG2-1:0] t_src;
  assign a_spill = a_tracked && e_valid[a_src] && !a_fits && !(take_open && t_src == a_src);

  // ---- the spill queue
  logic           sp_valid, sp_ready, sp_pop;
  logic [SPW-1:0] sp_head;
  /* verilator lint_off PINCONNECTEMPTY */
  edm_fifo #(.WIDTH(SPW), .DEPTH_LOG2(SPILL_LOG2)) spill (
      .clk, .rst_n,
      .wr_valid(a_spill), .wr_ready(sp_ready), .wr_data({a_src, e_base[a_src], e_map[a_src]}),
      .rd_valid(sp_valid), .rd_ready(sp_pop), .rd_data(sp_head), .count());
  /* verilator lint_on PINCONNECTEMPTY */

  // ---- pacing and the choice of the next /A/
  // g_wait starts when an /A/ leaves (is taken), so /A/ leave at least
  // GAP_BLOCKS ticks apart whatever the back-pressure; the next is loaded
  // once the output register is empty and the wait is over.
  logic [GW-1:0]       g_wait;   // ticks before the next /A/ may be loaded
  logic [SRC_LOG2-1:0] g_rr;     // the source after the last open /A/ sent
  logic                load;
  // h_wait[s]: ticks before source s's open /A/ may be loaded.
  logic [S-1:0][HW-1:0] h_wait;
  logic [S-1:0]         h_ready;  // open and not held
  always_comb
    for (integer k = 0; k < S; k++) h_ready[k] = e_valid[k] && h_wait[k] == '0;
  assign load = !out_valid && g_wait == '0 && (sp_valid || h_ready != '0);
  assign sp_pop = load && sp_valid;
  always_comb begin
    t_src = g_rr;
    for (integer k = S - 1; k >= 0; k--)
      if (h_ready[SRC_LOG2'(32'(g_rr) + k)]) t_src = SRC_LOG2'(32'(g_rr) + k);
  end
  assign take_open = load && !sp_valid;

  // The /A/ block: /N/'s layout, the map in NG_SIZE's place, the link's number.
  logic [7:0]          o_seq;
  logic [SRC_LOG2-1:0] o_src;    // the output's source
  logic                o_hold;   // the output is an open /A/ not full: holds its source
  logic [SRC_LOG2-1:0] n_src;
  logic [7:0]          n_base;
  logic [MW-1:0]       n_map;
  logic [55:0]         n_fields;
  assign n_src = sp_valid ? sp_head[SPW-1 -: SRC_LOG2] : t_src;
  assign n_base = sp_valid ? sp_head[MW +: 8] : e_base[t_src];
  assign n_map = sp_valid ? sp_head[MW-1:0] : e_map[t_src];
  assign n_fields = {6'b0, n_map, n_base, PB'(n_src), edm_pkg::SUB_A, edm_pkg::BT_EDM};

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      e_valid <= '0;
      e_base <= '0;
      e_map <= '0;
      g_wait <= '0;
      g_rr <= '0;
      h_wait <= '0;
      o_src <= '0;
      o_hold <= 1'b0;
      o_seq <= '0;
      out_valid <= 1'b0;
      out_block <= '0;
      cnt_acks <= '0;
      cnt_unacked <= '0;
    end else begin
      if (out_valid && out_ready) out_valid <= 1'b0;
      if (load) begin
        out_valid <= 1'b1;
        out_block <= {edm_pkg::crc8_seq(o_seq, n_fields), n_fields, edm_pkg::SYNC_CTRL};
        o_seq <= o_seq + 8'd1;
        cnt_acks <= edm_pkg::sat_add(cnt_acks, 2'd1);
      end
      // Taken at edge t: the wait ends at t + GAP_BLOCKS - 1, the next /A/
      // is loaded then and taken at t + GAP_BLOCKS at the earliest.
      if (out_valid && out_ready) g_wait <= GW'(GAP_BLOCKS - 2);
      else if (tick && g_wait != '0) g_wait <= g_wait - 1'b1;
      // As g_wait: an open /A/ not full taken at edge t holds its source
      // until t + PAIR_GAP_BLOCKS - 1 (taken at t + PAIR_GAP_BLOCKS at the
      // earliest).
      for (integer k = 0; k < S; k++)
        if (out_valid && out_ready && o_hold && o_src == SRC_LOG2'(k))
          h_wait[k] <= HW'(PAIR_GAP_BLOCKS - 2);
        else if (tick && h_wait[k] != '0) h_wait[k] <= h_wait[k] - 1'b1;
      if (load) begin
        o_src <= n_src;
        // Held after an /A/ of two ids or more (the source is streaming),
        // not after a full one.
        o_hold <= take_open && e_map[t_src] != '1 && (e_map[t_src] & (e_map[t_src] - 1'b1)) != '0;
      end
      if (take_open) begin
        e_valid[t_src] <= 1'b0;
        g_rr <= t_src + 1'b1;
      end
      // The applied id: into its source's open /A/, or a new one.
      if (a_tracked) begin
        if (a_fits && !(take_open && t_src == a_src)) begin
          e_map[a_src] <= e_map[a_src] | MW'(1) << a_d[$clog2(MW)-1:0];
        end else begin
          e_valid[a_src] <= 1'b1;
          e_base[a_src] <= applied_id;
          e_map[a_src] <= MW'(1);
        end
      end
      cnt_unacked <= edm_pkg::sat_add(cnt_unacked,
                                      {1'b0, (applied_valid && !a_tracked) || (a_spill && !sp_ready)});
    end
  end
endmodule

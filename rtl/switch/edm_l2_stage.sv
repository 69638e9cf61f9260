// The switch's L2 stage (§3.2: "the switch hands frames to its L2 pipeline"):
// standard Ethernet frames, as 64b/66b blocks, from every ingress to the
// egresses their destination MAC names. Store and forward, one block per port
// per clock in and out.
//
// Ingress (per port, blocks the ingress classifier found to be frame blocks,
// no back-pressure: a link cannot be held):
//   * A frame is a start block (/S/ in lane 0 or 4; an ordered set before a
//     lane-4 /S/ becomes idles), its data blocks and a terminate block. It is
//     written into the port's store (2^IB_LOG2 blocks) as it comes and
//     committed with its /T/ (its length in blocks and its two MAC addresses
//     into a descriptor FIFO of 2^FD_LOG2 frames); only committed frames are
//     ever read.
//   * Dropped whole, the store's write pointer moved back to the frame's
//     start: a frame that does not fit in the store, or whose /T/ finds the
//     descriptor FIFO full (cnt_rx_dropped); a frame cut by another start, an
//     idle, error or ordered-set block, or shorter than its two addresses
//     (cnt_rx_bad, as are data and terminate blocks outside a frame).
//   * Ordered-set blocks (link signalling, not frames) are counted
//     (cnt_ordered_sets) and go no further.
// Forwarding (one frame decided per clock, over every ingress):
//   * MAC table: TABLE_SIZE entries {address, port}, fully associative.
//     Lookup of the frame's destination: a group address (I/G bit) or a miss
//     floods to every port but the ingress; a hit on the ingress itself is
//     filtered (cnt_filtered); else the one port. Learning of the source (if
//     an individual address) as the frame is decided: a known address moving
//     ports is updated in place; a new one takes a free entry, else replaces
//     the oldest learned one (FIFO order; no ageing).
//   * An ingress whose head frame's egresses are all free of other writers
//     is eligible; among eligible ingresses a rotating priority picks one
//     (the one after the last picked first). Its frame goes to every wanted
//     egress whose queue has room for all of it; the others drop it
//     (cnt_tx_dropped, per egress). The frame is then copied, one block per
//     clock, into every such queue at once; an egress takes one writer at a
//     time, so frames never interleave in a queue.
// Egress: one queue per port of 2^EQ_LOG2 blocks (8 bytes of frame each),
// frames whole, in the order decided; after a frame's /T/ one or two idle
// blocks, so the gap is at least 12 bytes (docs/protocol.md §6; the
// frame's own gap is not kept). out_valid/out_ready toward the egress mux.
// Counters: 16-bit, saturating, per port.
// Invariants: a queue never overflows (room is checked for the whole frame);
// every frame that enters a port is either copied whole to every egress it
// wants or counted, once per egress or ingress where it is dropped.
//
// Signal prefixes: i_ ingress stores, f_ forwarding decision, t_ MAC table,
// c_ copy engines (per ingress), q_ egress queues, o_ egress output.
module edm_l2_stage #(
    parameter int unsigned N = 4,
    parameter int unsigned TABLE_SIZE = 16,
    parameter int unsigned IB_LOG2 = 11,   // ingress store: 2048 blocks (16 KB; a 9000 B frame is 1130)
    parameter int unsigned FD_LOG2 = 5,    // committed frames per ingress store
    parameter int unsigned EQ_LOG2 = 12    // egress queue: 4096 blocks (32 KB)
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [N-1:0]     in_valid,
    input  logic [N*66-1:0]  in_block,
    output logic [N-1:0]     out_valid,
    input  logic [N-1:0]     out_ready,
    output logic [N*66-1:0]  out_block,
    // The forwarding decision of this cycle (for benches and debugging).
    output logic             fwd_valid,
    output logic [$clog2(N)-1:0] fwd_port,
    output logic [N-1:0]     fwd_want,    // egresses the frame is for
    output logic [N-1:0]     fwd_mask,    // those with room for it
    output logic [N*16-1:0]  cnt_rx_frames,
    output logic [N*16-1:0]  cnt_rx_dropped,
    output logic [N*16-1:0]  cnt_rx_bad,
    output logic [N*16-1:0]  cnt_ordered_sets,
    output logic [N*16-1:0]  cnt_filtered,
    output logic [N*16-1:0]  cnt_tx_frames,
    output logic [N*16-1:0]  cnt_tx_dropped
);
  localparam int unsigned PW = $clog2(N);
  localparam int unsigned LW = IB_LOG2 + 1;   // a frame's length in blocks
  localparam int unsigned TW = $clog2(TABLE_SIZE);
  localparam logic [65:0] IDLE = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  if (EQ_LOG2 < IB_LOG2) begin : g_queue_too_small
    $error("edm_l2_stage: an egress queue must hold the longest frame an ingress store takes");
  end

  function automatic [15:0] sat_inc(input [15:0] c, input inc);
    sat_inc = (inc && c != 16'hFFFF) ? c + 16'd1 : c;
  endfunction

  // ---------------------------------------------------------------- ingress stores
  logic [N-1:0]          d_push, d_valid, d_pop, d_wready;
  logic [N-1:0][LW-1:0]  d_len_in, d_len;
  logic [N-1:0][47:0]    d_dst_in, d_src_in, d_dst, d_src;
  logic [N-1:0][65:0]    i_head;          // the block at the store's read pointer
  logic [N-1:0]          c_read;          // the copy engine reads one block
  logic [N-1:0]          c_skip;          // the head frame is discarded at once
  logic [N-1:0][LW-1:0]  c_skip_len;
  logic [N-1:0]          ev_rx_ok, ev_rx_drop, ev_rx_bad, ev_os;

  /* verilator lint_off PINCONNECTEMPTY */
  for (genvar i = 0; i < N; i++) begin : g_in
    logic [65:0]        store [1 << IB_LOG2];
    logic [IB_LOG2:0]   wp, rp, fstart;   // one extra bit tells full from empty
    logic               in_frame, ovf, lane4;
    logic [1:0]         hidx;             // data blocks of the frame seen (up to 2)
    logic [47:0]        dst, src;
    logic [65:0]        b;
    logic [63:0]        p;
    logic [7:0]         ty;
    logic               ctrl, is_start, is_term, is_data, is_os, room;
    always_comb begin
      b = in_block[i*66 +: 66];
      p = b[65:2];
      ty = p[7:0];
      ctrl = b[1:0] == edm_pkg::SYNC_CTRL;
      is_data = b[1:0] == edm_pkg::SYNC_DATA;
      is_start = ctrl && (ty == edm_pkg::BT_S0 || ty == edm_pkg::BT_C4_S4 || ty == edm_pkg::BT_O0_S4);
      is_term = ctrl && (ty == edm_pkg::BT_T0 || ty == edm_pkg::BT_T1 || ty == edm_pkg::BT_T2
                         || ty == edm_pkg::BT_T3 || ty == edm_pkg::BT_T4 || ty == edm_pkg::BT_T5
                         || ty == edm_pkg::BT_T6 || ty == edm_pkg::BT_T7);
      is_os = ctrl && (ty == edm_pkg::BT_O0_O4 || ty == edm_pkg::BT_C4_O4 || ty == edm_pkg::BT_O0_C4
                       || ty == edm_pkg::BT_O0_S4);
      room = (wp - rp) != (IB_LOG2+1)'(1 << IB_LOG2);
    end
    assign i_head[i] = store[rp[IB_LOG2-1:0]];
    always_ff @(posedge clk) begin
      ev_rx_ok[i] <= 1'b0;
      ev_rx_drop[i] <= 1'b0;
      ev_rx_bad[i] <= 1'b0;
      ev_os[i] <= 1'b0;
      if (!rst_n) begin
        wp <= '0;
        rp <= '0;
        fstart <= '0;
        in_frame <= 1'b0;
        ovf <= 1'b0;
        lane4 <= 1'b0;
        hidx <= '0;
      end else begin
        if (c_read[i]) rp <= rp + 1'b1;
        else if (c_skip[i]) rp <= rp + (IB_LOG2+1)'(c_skip_len[i]);
        if (in_valid[i]) begin
          ev_os[i] <= is_os;
          if (is_start) begin
            // A start inside a frame cuts it: that frame is dropped (bad).
            logic [IB_LOG2:0] base;
            base = in_frame ? fstart : wp;
            ev_rx_bad[i] <= in_frame;
            fstart <= base;
            in_frame <= 1'b1;
            lane4 <= ty != edm_pkg::BT_S0;
            hidx <= '0;
            // An ordered set before a lane-4 /S/ is link signalling: idles in its place.
            if ((base - rp) != (IB_LOG2+1)'(1 << IB_LOG2)) begin
              store[base[IB_LOG2-1:0]] <= ty == edm_pkg::BT_O0_S4 ? {p[63:40], 32'b0, edm_pkg::BT_C4_S4, b[1:0]} : b;
              wp <= base + 1'b1;
              ovf <= 1'b0;
            end else begin
              wp <= base;
              ovf <= 1'b1;
            end
          end else if (in_frame && (is_data || is_term)) begin
            if (room && !ovf) begin
              store[wp[IB_LOG2-1:0]] <= b;
              wp <= wp + 1'b1;
            end else ovf <= 1'b1;
            if (is_data && hidx != 2'd2) begin
              hidx <= hidx + 1'b1;
              for (integer k = 0; k < 8; k++) begin
                if (hidx == 2'd0) begin
                  if (!lane4 && k < 6) dst[8*k +: 8] <= p[8*k +: 8];
                  if (!lane4 && k >= 6) src[8*(k-6) +: 8] <= p[8*k +: 8];
                  if (lane4 && k >= 4) dst[8*(k-4) +: 8] <= p[8*k +: 8];
                end else begin
                  if (!lane4 && k < 4) src[8*(k+2) +: 8] <= p[8*k +: 8];
                  if (lane4 && k < 2) dst[8*(k+4) +: 8] <= p[8*k +: 8];
                  if (lane4 && k >= 2) src[8*(k-2) +: 8] <= p[8*k +: 8];
                end
              end
            end
            if (is_term) begin
              in_frame <= 1'b0;
              if (hidx != 2'd2) begin   // a runt: not even its addresses
                wp <= fstart;
                ev_rx_bad[i] <= 1'b1;
              end else if (ovf || !room || !d_wready[i]) begin
                wp <= fstart;
                ev_rx_drop[i] <= 1'b1;
              end else ev_rx_ok[i] <= 1'b1;
            end
          end else if (in_frame) begin
            // An idle, error or ordered set inside a frame: the frame is cut.
            in_frame <= 1'b0;
            wp <= fstart;
            ev_rx_bad[i] <= 1'b1;
          end else if (is_data || is_term) ev_rx_bad[i] <= 1'b1;   // no frame open
          else if (ctrl && ty == edm_pkg::BT_C8 && p != {56'b0, edm_pkg::BT_C8}) ev_rx_bad[i] <= 1'b1;  // /E/
        end
      end
    end
    // The frame is committed with its /T/ (pushed as the last block is written).
    assign d_push[i] = rst_n && in_valid[i] && in_frame && is_term && hidx == 2'd2 && room && !ovf;
    assign d_len_in[i] = LW'(wp + 1'b1 - fstart);
    assign d_dst_in[i] = dst;
    assign d_src_in[i] = src;
    edm_fifo #(.WIDTH(LW + 96), .DEPTH_LOG2(FD_LOG2)) u_desc (
        .clk, .rst_n, .wr_valid(d_push[i]), .wr_ready(d_wready[i]), .wr_data({d_len_in[i], d_dst_in[i], d_src_in[i]}),
        .rd_valid(d_valid[i]), .rd_ready(d_pop[i]), .rd_data({d_len[i], d_dst[i], d_src[i]}), .count());
  end

  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- MAC table
  logic [TABLE_SIZE-1:0]             t_valid;
  logic [TABLE_SIZE-1:0][47:0]       t_mac;
  logic [TABLE_SIZE-1:0][PW-1:0]     t_port;
  logic [TW-1:0]                     t_oldest;   // replaced next once the table is full
  logic [N-1:0][N-1:0]               f_want;     // per ingress: egresses its head frame is for
  always_comb
    for (integer i = 0; i < N; i++) begin
      logic hit;
      logic [PW-1:0] port;
      hit = 1'b0;
      port = '0;
      for (integer t = 0; t < TABLE_SIZE; t++)
        if (t_valid[t] && t_mac[t] == d_dst[i]) begin
          hit = 1'b1;
          port = port | t_port[t];
        end
      if (d_dst[i][0] || !hit) f_want[i] = ~(N'(1) << i);   // group address or unknown: flood
      else f_want[i] = (N'(1) << port) & ~(N'(1) << i);      // known (filtered if on the ingress)
    end

  // ---------------------------------------------------------------- decision
  logic [N-1:0]         c_busy;                 // copying
  logic [N-1:0][LW-1:0] c_left;                 // blocks still to copy
  logic [N-1:0][N-1:0]  c_mask;                 // egresses it copies into
  logic [N-1:0]         q_owned;                // an egress has a writer
  logic [N-1:0][PW-1:0] q_owner;
  logic [N-1:0][EQ_LOG2:0] q_count;
  logic [PW-1:0]        f_next;                 // first in the rotating priority
  logic [N-1:0]         f_elig, f_room;
  always_comb begin
    fwd_valid = 1'b0;
    fwd_port = '0;
    for (integer i = 0; i < N; i++)
      f_elig[i] = d_valid[i] && !c_busy[i] && (f_want[i] & q_owned) == '0;
    for (integer k = 0; k < N; k++) begin
      logic [PW-1:0] i;
      i = PW'((32'(f_next) + k) % N);
      if (!fwd_valid && f_elig[i]) begin
        fwd_valid = 1'b1;
        fwd_port = i;
      end
    end
    fwd_want = f_want[fwd_port];
    for (integer e = 0; e < N; e++)
      f_room[e] = 32'(q_count[e]) + 32'(d_len[fwd_port]) <= (1 << EQ_LOG2);
    fwd_mask = fwd_want & f_room;
    d_pop = '0;
    c_skip = '0;
    for (integer i = 0; i < N; i++) c_skip_len[i] = d_len[i];
    if (fwd_valid) begin
      d_pop[fwd_port] = 1'b1;
      c_skip[fwd_port] = fwd_mask == '0;
    end
  end

  // Learning: the decided frame's source, if an individual address.
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      t_valid <= '0;
      t_oldest <= '0;
      f_next <= '0;
    end else if (fwd_valid) begin
      logic hit, free;
      logic [TW-1:0] at, first_free;
      logic [47:0] s;
      s = d_src[fwd_port];
      hit = 1'b0;
      free = 1'b0;
      at = '0;
      first_free = '0;
      for (integer t = TABLE_SIZE - 1; t >= 0; t--) begin
        if (t_valid[t] && t_mac[t] == s) begin
          hit = 1'b1;
          at = TW'(t);
        end
        if (!t_valid[t]) begin
          free = 1'b1;
          first_free = TW'(t);
        end
      end
      f_next <= PW'((32'(fwd_port) + 1) % N);
      if (!s[0]) begin
        if (hit) t_port[at] <= fwd_port;
        else begin
          logic [TW-1:0] w;
          w = free ? first_free : t_oldest;
          t_valid[w] <= 1'b1;
          t_mac[w] <= s;
          t_port[w] <= fwd_port;
          if (!free) t_oldest <= TW'((32'(t_oldest) + 1) % TABLE_SIZE);
        end
      end
    end
  end

  // ---------------------------------------------------------------- copy engines
  always_comb
    for (integer i = 0; i < N; i++) c_read[i] = c_busy[i];
  // An egress is released as its writer copies the frame's last block.
  logic [N-1:0] q_released;
  always_comb begin
    q_released = '0;
    for (integer i = 0; i < N; i++)
      if (c_busy[i] && c_left[i] == LW'(1)) q_released = q_released | c_mask[i];
  end
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      c_busy <= '0;
      q_owned <= '0;
    end else begin
      for (integer i = 0; i < N; i++)
        if (c_busy[i]) begin
          c_left[i] <= c_left[i] - 1'b1;
          if (c_left[i] == LW'(1)) c_busy[i] <= 1'b0;
        end
      // (A decided frame's egresses were free: none of them is released now.)
      q_owned <= (q_owned & ~q_released) | (fwd_valid ? fwd_mask : '0);
      if (fwd_valid && fwd_mask != '0) begin
        c_busy[fwd_port] <= 1'b1;
        c_left[fwd_port] <= d_len[fwd_port];
        c_mask[fwd_port] <= fwd_mask;
        for (integer e = 0; e < N; e++)
          if (fwd_mask[e]) q_owner[e] <= fwd_port;
      end
    end
  end

  // ---------------------------------------------------------------- egress queues
  logic [N-1:0]       q_wr, q_valid, q_pop;
  logic [N-1:0][1:0]  o_gap;   // idle blocks owed after a /T/
  logic [N-1:0][65:0] q_in, q_head;
  /* verilator lint_off PINCONNECTEMPTY */
  for (genvar e = 0; e < N; e++) begin : g_out
    assign q_wr[e] = q_owned[e] && c_busy[q_owner[e]];
    assign q_in[e] = i_head[q_owner[e]];
    edm_fifo #(.WIDTH(66), .DEPTH_LOG2(EQ_LOG2)) u_q (
        .clk, .rst_n, .wr_valid(q_wr[e]), .wr_ready(), .wr_data(q_in[e]),
        .rd_valid(q_valid[e]), .rd_ready(q_pop[e]), .rd_data(q_head[e]), .count(q_count[e]));
    // The gap after a frame (docs/protocol.md §6): whole idle blocks that,
    // with the /T/ block's own idles (7 - k after a /T/ in lane k), make at
    // least 12 bytes: one after T0..T3, two after T4..T7.
    logic [1:0] head_gap;
    always_comb begin
      logic [7:0] ty;
      ty = q_head[e][9:2];
      head_gap = 2'd0;
      if (q_head[e][1:0] == edm_pkg::SYNC_CTRL) begin
        if (ty == edm_pkg::BT_T0 || ty == edm_pkg::BT_T1 || ty == edm_pkg::BT_T2 || ty == edm_pkg::BT_T3)
          head_gap = 2'd1;
        if (ty == edm_pkg::BT_T4 || ty == edm_pkg::BT_T5 || ty == edm_pkg::BT_T6 || ty == edm_pkg::BT_T7)
          head_gap = 2'd2;
      end
    end
    assign out_valid[e] = o_gap[e] != '0 || q_valid[e];
    assign out_block[e*66 +: 66] = o_gap[e] != '0 ? IDLE : q_head[e];
    assign q_pop[e] = out_ready[e] && o_gap[e] == '0 && q_valid[e];
    always_ff @(posedge clk)
      if (!rst_n) o_gap[e] <= '0;
      else if (q_pop[e]) o_gap[e] <= head_gap;
      else if (out_ready[e] && o_gap[e] != '0) o_gap[e] <= o_gap[e] - 1'b1;
  end

  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- counters
  logic [N-1:0] ev_filtered, ev_tx, ev_tx_drop;
  always_ff @(posedge clk) begin
    for (integer i = 0; i < N; i++) begin
      ev_filtered[i] <= rst_n && fwd_valid && fwd_port == PW'(i) && fwd_want == '0;
      ev_tx[i] <= rst_n && fwd_valid && fwd_mask[i];
      ev_tx_drop[i] <= rst_n && fwd_valid && fwd_want[i] && !fwd_mask[i];
    end
    if (!rst_n) begin
      cnt_rx_frames <= '0;
      cnt_rx_dropped <= '0;
      cnt_rx_bad <= '0;
      cnt_ordered_sets <= '0;
      cnt_filtered <= '0;
      cnt_tx_frames <= '0;
      cnt_tx_dropped <= '0;
    end else
      for (integer i = 0; i < N; i++) begin
        cnt_rx_frames[i*16 +: 16] <= sat_inc(cnt_rx_frames[i*16 +: 16], ev_rx_ok[i]);
        cnt_rx_dropped[i*16 +: 16] <= sat_inc(cnt_rx_dropped[i*16 +: 16], ev_rx_drop[i]);
        cnt_rx_bad[i*16 +: 16] <= sat_inc(cnt_rx_bad[i*16 +: 16], ev_rx_bad[i]);
        cnt_ordered_sets[i*16 +: 16] <= sat_inc(cnt_ordered_sets[i*16 +: 16], ev_os[i]);
        cnt_filtered[i*16 +: 16] <= sat_inc(cnt_filtered[i*16 +: 16], ev_filtered[i]);
        cnt_tx_frames[i*16 +: 16] <= sat_inc(cnt_tx_frames[i*16 +: 16], ev_tx[i]);
        cnt_tx_dropped[i*16 +: 16] <= sat_inc(cnt_tx_dropped[i*16 +: 16], ev_tx_drop[i]);
      end
  end
endmodule

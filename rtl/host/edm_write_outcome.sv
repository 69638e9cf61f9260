// A compute node's write outcomes (docs/protocol.md §4b): beside the engine,
// turns each write's posted completion (its last byte sent) and the /A/ its
// memory node sends into the write's second completion: acknowledged, or
// failed when no /A/ names it cfg_give_up cycles after it was posted.
//
// Inputs: posted_* (a write's posted completion: destination, message id,
// tag; no back-pressure) and ack_* (edm_rx's good /A/: the memory node in
// ack_peer, a base id and the map of ids applied). Per tracked destination
// (ports 0 .. 2^DST_LOG2-1) the writes are kept in 2^SLOTS_LOG2 slots by id
// (slot = id mod 2^SLOTS_LOG2; RETRY_UNRESOLVED = 64 unresolved ids per pair
// fit 64 slots). A slot is FREE, POSTED (waiting for its /A/, with the cycle
// it was posted), EARLY (an /A/ named the id before its posted completion
// came: the engine's completion queue was held up) or DONE (to report).
// /A/ wait in a queue (2^AQ_LOG2) and are taken one applied id per cycle
// (the lowest bit left in the map). An id an /A/ names that is neither
// POSTED nor FREE in its slot, or of an untracked peer, is counted
// (cnt_stray): a duplicate's re-acknowledgement of a resolved write (one
// that finds its slot FREE waits as EARLY until a write of another id takes
// the slot or cfg_give_up passes). An id newer (serial order over the 8-bit
// ids) than the EARLY id holding its slot takes the slot: ids of a
// destination rise, so the older one is a resolved write's re-ack, and the
// newer one may be the early /A/ of a write about to be posted. A write posted to an untracked destination
// or into a slot that holds another id POSTED or DONE is not tracked
// (cnt_untracked) and gets no outcome.
//
// Output: one outcome per cycle (out_*, valid/ready; 2^OQ_LOG2 queued):
// out_ok = 1 acknowledged (the lowest DONE slot first), 0 failed (the
// timer: a round-robin scan, one slot per cycle, so a failure is reported
// within cfg_give_up + the slots' count cycles). out_age: the cycles from the
// posted completion to the outcome's decision (0 for an EARLY one).
// What this module does not do (issue 40): re-send a write (the engine's
// retry buffer); a failure here means the write may or may not have been
// applied (its /A/ may be what was lost).
//
// Signal prefixes: s_ the slots, a_ the /A/ being taken, t_ the timer scan,
// o_ the outcome queue.
module edm_write_outcome #(
    parameter int unsigned DST_LOG2 = 2,     // destinations tracked: ports 0 .. 2^DST_LOG2-1
    parameter int unsigned SLOTS_LOG2 = $clog2(edm_pkg::RETRY_UNRESOLVED),  // per destination
    parameter int unsigned TIMER_W = 20,
    parameter int unsigned AQ_LOG2 = 2,
    parameter int unsigned OQ_LOG2 = 3
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [TIMER_W-1:0] cfg_give_up,   // cycles from posted to failed
    // A write's posted completion.
    input  logic        posted_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] posted_dst,
    input  logic [7:0]  posted_id,
    input  logic [7:0]  posted_tag,
    // edm_rx's good /A/.
    input  logic        ack_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] ack_peer,
    input  logic [7:0]  ack_base,
    input  logic [edm_pkg::ACK_MAP_W-1:0] ack_map,
    // The outcomes.
    output logic        out_valid,
    input  logic        out_ready,
    output logic [edm_pkg::PORT_BITS-1:0] out_dst,
    output logic [7:0]  out_id,
    output logic [7:0]  out_tag,
    output logic        out_ok,
    output logic [TIMER_W-1:0] out_age,
    // Status (16-bit, saturating).
    output logic [15:0] cnt_acked,
    output logic [15:0] cnt_failed,
    output logic [15:0] cnt_stray,
    output logic [15:0] cnt_untracked,
    output logic [15:0] cnt_ack_overflow   // /A/ lost to a full queue
);
  localparam int unsigned PB = edm_pkg::PORT_BITS;
  localparam int unsigned MW = edm_pkg::ACK_MAP_W;
  localparam int unsigned SW = SLOTS_LOG2;
  localparam int unsigned NS = 1 << (DST_LOG2 + SLOTS_LOG2);   // all slots, index {dst, id mod 2^SW}
  localparam int unsigned XW = DST_LOG2 + SLOTS_LOG2;
  localparam logic [1:0] FREE = 2'd0, POSTED = 2'd1, EARLY = 2'd2, DONE = 2'd3;
  localparam int unsigned OW = PB + 8 + 8 + 1 + TIMER_W;   // {dst, id, tag, ok, age}

  logic [TIMER_W-1:0] now;   // free-running cycle count (wraps; ages are differences)

  // ---- slots
  logic [NS-1:0][1:0]         s_state;
  logic [NS-1:0][7:0]         s_id, s_tag;
  logic [NS-1:0][TIMER_W-1:0] s_time;

  // ---- the /A/ queue and the one being taken
  logic          aq_valid, aq_pop, aq_ready;
  logic [PB+8+MW-1:0] aq_head;
  /* verilator lint_off PINCONNECTEMPTY */
  edm_fifo #(.WIDTH(PB + 8 + MW), .DEPTH_LOG2(AQ_LOG2)) ack_q (
      .clk, .rst_n, .wr_valid(ack_valid), .wr_ready(aq_ready), .wr_data({ack_peer, ack_base, ack_map}),
      .rd_valid(aq_valid), .rd_ready(aq_pop), .rd_data(aq_head), .count());
  /* verilator lint_on PINCONNECTEMPTY */
  logic [PB-1:0] a_peer;       // the /A/ being taken: its peer, base and the ids left
  logic [7:0]    a_base;
  logic [MW-1:0] a_left;
  logic [$clog2(MW)-1:0] a_k;  // the lowest bit left
  logic [7:0]    a_id;
  logic          a_tracked, a_step;
  logic [XW-1:0] a_x;
  always_comb begin
    a_k = '0;
    for (integer k = MW - 1; k >= 0; k--)
      if (a_left[k]) a_k = k[$clog2(MW)-1:0];
  end
  assign a_id = a_base + 8'(a_k);
  assign a_tracked = 32'(a_peer) < (1 << DST_LOG2);
  assign a_x = {a_peer[DST_LOG2-1:0], a_id[SW-1:0]};
  assign a_step = a_left != '0;   // takes id a_id this cycle
  assign aq_pop = aq_valid && (a_left == '0 || (a_left & (a_left - 1'b1)) == '0);

  // a_id is newer than the EARLY id holding its slot (serial order, mod 256).
  logic a_newer;
  assign a_newer = ((s_id[a_x] - a_id) & 8'h80) != 8'h00;

  // ---- the posted completion
  logic          p_tracked;
  logic [XW-1:0] p_x;
  assign p_tracked = 32'(posted_dst) < (1 << DST_LOG2);
  assign p_x = {posted_dst[DST_LOG2-1:0], posted_id[SW-1:0]};

  // ---- the outcome queue: a DONE slot (lowest first), else a timed-out one
  logic          o_ready, o_push;
  logic [OW-1:0] o_in;
  logic          d_any, t_fail, t_pick, t_expire;
  logic [XW-1:0] d_x, t_x;
  always_comb begin
    d_any = 1'b0;
    d_x = '0;
    for (integer x = NS - 1; x >= 0; x--)
      if (s_state[x] == DONE) begin
        d_any = 1'b1;
        d_x = XW'(x);
      end
  end
  assign t_fail = s_state[t_x] == POSTED && now - s_time[t_x] >= cfg_give_up;
  assign t_pick = !d_any && t_fail;
  // An EARLY slot whose write never came (a re-acknowledgement) is freed.
  assign t_expire = s_state[t_x] == EARLY && now - s_time[t_x] >= cfg_give_up;
  assign o_push = o_ready && (d_any || t_fail);
  always_comb begin
    if (d_any)
      o_in = {PB'(d_x[XW-1:SW]), s_id[d_x], s_tag[d_x], 1'b1, s_time[d_x]};
    else
      o_in = {PB'(t_x[XW-1:SW]), s_id[t_x], s_tag[t_x], 1'b0, now - s_time[t_x]};
  end
  /* verilator lint_off PINCONNECTEMPTY */
  edm_fifo #(.WIDTH(OW), .DEPTH_LOG2(OQ_LOG2)) out_q (
      .clk, .rst_n, .wr_valid(o_push), .wr_ready(o_ready), .wr_data(o_in),
      .rd_valid(out_valid), .rd_ready(out_ready), .rd_data({out_dst, out_id, out_tag, out_ok, out_age}),
      .count());
  /* verilator lint_on PINCONNECTEMPTY */

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      now <= '0;
      s_state <= '0;
      a_left <= '0;
      t_x <= '0;
      cnt_acked <= '0;
      cnt_failed <= '0;
      cnt_stray <= '0;
      cnt_untracked <= '0;
      cnt_ack_overflow <= '0;
    end else begin
      now <= now + 1'b1;
      // The timer scan moves on unless its slot waits for the queue.
      if (!(t_fail && !(o_push && t_pick))) t_x <= t_x + 1'b1;
      // Reported: the slot is free again. A DONE slot's s_time holds its age.
      if (o_push && d_any) s_state[d_x] <= FREE;
      if ((o_push && t_pick) || t_expire) s_state[t_x] <= FREE;
      cnt_acked <= edm_pkg::sat_add(cnt_acked, {1'b0, o_push && d_any});
      cnt_failed <= edm_pkg::sat_add(cnt_failed, {1'b0, o_push && t_pick});
      // The /A/: one applied id per cycle.
      if (aq_pop) begin
        a_peer <= aq_head[MW+8 +: PB];
        a_base <= aq_head[MW +: 8];
        a_left <= aq_head[MW-1:0];
      end else if (a_step) a_left <= a_left & ~(MW'(1) << a_k);
      if (a_step) begin
        if (!a_tracked) begin
          cnt_stray <= edm_pkg::sat_add(cnt_stray, 2'd1);
        end else if (s_state[a_x] == POSTED && s_id[a_x] == a_id && !(o_push && t_pick && t_x == a_x)) begin
          s_state[a_x] <= DONE;
          s_time[a_x] <= now - s_time[a_x];
        end else if (s_state[a_x] == FREE || (s_state[a_x] == EARLY && a_newer)) begin
          s_state[a_x] <= EARLY;
          s_id[a_x] <= a_id;
          s_time[a_x] <= now;
        end else begin
          cnt_stray <= edm_pkg::sat_add(cnt_stray, 2'd1);
        end
      end
      // The posted completion (after the /A/'s update of the same slot).
      if (posted_valid) begin
        if (!p_tracked) begin
          cnt_untracked <= edm_pkg::sat_add(cnt_untracked, 2'd1);
        end else if (a_step && a_tracked && a_x == p_x && a_id == posted_id
                     && (s_state[p_x] == FREE || (s_state[p_x] == EARLY && a_newer))) begin
          s_state[p_x] <= DONE;   // its /A/ in the same cycle
          s_id[p_x] <= posted_id;
          s_tag[p_x] <= posted_tag;
          s_time[p_x] <= '0;
        end else if (s_state[p_x] == EARLY && s_id[p_x] == posted_id) begin
          s_state[p_x] <= DONE;
          s_tag[p_x] <= posted_tag;
          s_time[p_x] <= '0;
        end else if (s_state[p_x] == FREE || s_state[p_x] == EARLY) begin
          // (An EARLY slot of another id held a stray re-acknowledgement.)
          s_state[p_x] <= POSTED;
          s_id[p_x] <= posted_id;
          s_tag[p_x] <= posted_tag;
          s_time[p_x] <= now;
        end else begin
          cnt_untracked <= edm_pkg::sat_add(cnt_untracked, 2'd1);
        end
      end
      cnt_ack_overflow <= edm_pkg::sat_add(cnt_ack_overflow, {1'b0, ack_valid && !aq_ready});
    end
  end
endmodule

// A compute node's write retry (docs/protocol.md §4b): in front of its
// edm_compute_node (built with EXT_ID), it numbers the host's requests per
// destination, keeps every write until an /A/ names it, and sends a write
// again, whole and with the SAME message id, when no /A/ came ack_timeout
// cycles after its posted completion (the engine's completion: its last
// byte sent) or after its last re-send's.
//
// An RMW (RMW_RETRY) is kept the same way from its request to the host's
// completion, and given to the engine again, whole and with the same id, when
// its completion is STATUS_TIMEOUT (no plane brought its answer: the engine's
// timer, or edm_mirror's dead plane): its only outcome is its answer, and the
// memory node's edm_dup_filter answers a second copy with the first copy's
// kept result (out_replay) without applying it again, or applies it if no
// copy had arrived. Such a failed completion is taken here; the host gets one
// completion per RMW, with its own tag: the first that is not a TIMEOUT
// (the answer, or an error the node sent), a re-send's answer that is not OK
// nor a TIMEOUT as STATUS_DENIED (the node kept no result any more: outcome
// unknown, cnt_rmw_unknown), or a TIMEOUT that comes cfg_give_up or more after
// the first (cnt_rmw_gave_up; it may have been applied). Rule 2 keeps the
// result while the RMW waits (it is answered only at the host's completion),
// rule 1 (its slot) keeps its id inside the node's window. Why here, not in
// a module beside: the job is one, a request re-sent with its id until its
// outcome is known, and an RMW needs every part a write has (the ids, the
// slots of rule 1, the rings of rule 2, the scan, the standing offer, the
// mirror's free); a second module would have to share them all.
//
// Why beside the engine, not in it: the engine already sends a request with
// a given id (EXT_ID, as for the dual switch's edm_mirror) and completes it
// with its posted completion; a re-send is such a request again, so the
// engine needs no change and its posted latency none either.
//
// Requests (in_req_*): passed to the engine (out_req_*) in order, with the
// destination's next id (a counter per tracked destination, ports
// 0 .. 2^DST_LOG2-1; others take the counter of their low bits and are not
// kept: cnt_untracked). Re-sends go first. Completions: the engine's
// (eng_cpl_*) pass to the host (cpl_*) unchanged, except a write re-send's
// and an RMW's TIMEOUT, taken here: the host sees one completion per
// request, a write's posted one, an RMW's answer (below).
//
// The retry buffer: per tracked destination 2^SLOTS_LOG2 entries, slot = id
// mod 2^SLOTS_LOG2, holding the write's id, remote and local address (the
// data stay in the host's memory, DMA style: the host must not change them
// before the write's outcome, as edm_write_outcome reports it), length and
// tag, and two times: its first posted completion (t0) and the last posted
// completion (t). An entry is ISSUED (given to the engine), POSTED (waiting
// for its /A/) or RESENT (given to the engine again); `acked` remembers an
// /A/ that came while the engine had it. An /A/ frees every entry it names
// (its map matched against all entries at once); a POSTED entry whose
// cfg_give_up (from t0, 0 = never) has passed is freed (edm_write_outcome
// reports it failed at the same count). Zero-length writes send nothing and
// get no /A/: not kept. An RMW entry (s_rmw, also its op and operands) is
// ISSUED or RESENT while the engine has it, POSTED from a TIMEOUT to its
// re-send (t0: its first TIMEOUT, t: its last); no /A/ names it, and its
// give-up is judged at its completion, never by the scan.
//
// Activation rules (docs/protocol.md §4b bounds 1 and 2), holding the request
// at the head (and every request behind it):
//   1. a request to destination d with next id n waits while slot n mod
//      2^SLOTS_LOG2 holds a write: so every kept write is fewer than
//      2^SLOTS_LOG2 <= RETRY_UNRESOLVED ids behind the newest id sent to d,
//      and every copy of it is inside the memory node's duplicate window.
//   2. an RMW to d waits while DUP_RMW_RESULTS RMWs to d date from its oldest
//      unanswered one (a ring of their ids per destination; the head leaves
//      once answered): a node keeping the last DUP_RMW_RESULTS RMW results
//      of a source still holds every unanswered one's.
//
// An offer stands: a request offered and not taken stays the one offered
// (edm_mirror gives it to its planes over several cycles): a re-send does not
// cut in front of a host request already offered (q_mid), and a re-send
// offered stays offered (r_mid) even if its /A/ comes meanwhile (it is then
// sent and its completion taken here, the entry freed).
// Re-send timing: a round-robin scan looks at one entry per cycle and stops
// at a POSTED one due (now - t >= cfg_ack_timeout, 0 = never: no write nor
// RMW is re-sent) until the
// engine takes it; so a write is re-sent within cfg_ack_timeout + the
// entries' count cycles (plus the engine's back-pressure) of its posted
// completion.
//
// Signal prefixes: s_ the entries, q_ the host's request at the head, a_ the
// /A/, c_ the engine's completion, r_ the re-send scan, m_ the RMW rings.
module edm_write_retry #(
    parameter int unsigned DST_LOG2 = 2,       // destinations tracked: ports 0 .. 2^DST_LOG2-1
    parameter int unsigned SLOTS_LOG2 = 3,     // retry buffer entries per destination
    parameter int unsigned TIMER_W = 20,
    parameter int unsigned RMW_RING = edm_pkg::DUP_RMW_RESULTS,
    // A re-send's tag: the write's own (0), or RESEND_TAG_BASE + its entry's
    // index (edm_mirror tracks requests by tag: a host may have reused the
    // write's tag by then; the base must leave the host's tags below it).
    parameter int unsigned RESEND_TAG_BASE = 0,
    // 1: a write may be re-sent only once free_* said every engine copy of its
    // last send is finished (edm_mirror: the planes that took it all
    // reported), not at its completion: a plane still holding the write would
    // otherwise get a second message with the same id.
    parameter bit          WAIT_FREE = 1'b0,
    // 1: an RMW whose completion is STATUS_TIMEOUT is re-sent (above); 0: its
    // failure goes to the host (nothing kept for RMWs beyond rule 2).
    parameter bit          RMW_RETRY = 1'b1
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [TIMER_W-1:0] cfg_ack_timeout,  // re-send after this long without /A/, 0 = never
    input  logic [TIMER_W-1:0] cfg_give_up,      // stop after this long from the posted completion, 0 = never
    // The host's requests (edm_compute_node's req_* without an id).
    input  logic        in_req_valid,
    output logic        in_req_ready,
    input  logic [2:0]  in_req_kind,
    input  logic [edm_pkg::PORT_BITS-1:0] in_req_dst,
    input  logic [63:0] in_req_raddr,
    input  logic [15:0] in_req_len,
    input  logic [63:0] in_req_laddr,
    input  logic [3:0]  in_req_rmw_op,
    input  logic [63:0] in_req_arg0,
    input  logic [63:0] in_req_arg1,
    input  logic [7:0]  in_req_tag,
    // Toward the engine (EXT_ID = 1).
    output logic        out_req_valid,
    input  logic        out_req_ready,
    output logic [2:0]  out_req_kind,
    output logic [edm_pkg::PORT_BITS-1:0] out_req_dst,
    output logic [63:0] out_req_raddr,
    output logic [15:0] out_req_len,
    output logic [63:0] out_req_laddr,
    output logic [3:0]  out_req_rmw_op,
    output logic [63:0] out_req_arg0,
    output logic [63:0] out_req_arg1,
    output logic [7:0]  out_req_tag,
    output logic [7:0]  out_req_msg_id,
    // The engine's completions.
    input  logic        eng_cpl_valid,
    output logic        eng_cpl_ready,
    input  logic [2:0]  eng_cpl_kind,
    input  logic [edm_pkg::PORT_BITS-1:0] eng_cpl_dst,
    input  logic [7:0]  eng_cpl_msg_id,
    input  logic [7:0]  eng_cpl_tag,
    input  logic [7:0]  eng_cpl_status,
    // The host's completions (a re-send's taken out).
    output logic        cpl_valid,
    input  logic        cpl_ready,
    output logic [2:0]  cpl_kind,
    output logic [edm_pkg::PORT_BITS-1:0] cpl_dst,
    output logic [7:0]  cpl_msg_id,
    output logic [7:0]  cpl_tag,
    output logic [7:0]  cpl_status,
    // WAIT_FREE: every engine copy of the send of (free_dst, free_msg_id) is finished.
    input  logic        free_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] free_dst,
    input  logic [7:0]  free_msg_id,
    // edm_rx's good /A/.
    input  logic        ack_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] ack_peer,
    input  logic [7:0]  ack_base,
    input  logic [edm_pkg::ACK_MAP_W-1:0] ack_map,
    // Status.
    output logic [15:0] cnt_resent,     // writes given to the engine again
    output logic [15:0] cnt_gave_up,    // writes dropped from the buffer unacknowledged
    output logic [15:0] cnt_untracked,  // writes to untracked destinations (not kept)
    output logic [15:0] cnt_rmw_resent,   // RMWs given to the engine again
    output logic [15:0] cnt_rmw_gave_up,  // RMWs completed TIMEOUT past their give-up (outcome unknown)
    output logic [15:0] cnt_rmw_unknown   // RMW re-sends the node no longer had a result for (DENIED)
);
  localparam int unsigned PB = edm_pkg::PORT_BITS;
  localparam int unsigned MW = edm_pkg::ACK_MAP_W;
  localparam int unsigned SW = SLOTS_LOG2;
  localparam int unsigned ND = 1 << DST_LOG2;
  localparam int unsigned NS = 1 << (DST_LOG2 + SLOTS_LOG2);   // index {dst, id mod 2^SW}
  localparam int unsigned XW = DST_LOG2 + SLOTS_LOG2;
  localparam int unsigned RW = $clog2(RMW_RING);
  localparam logic [1:0] FREE = 2'd0, ISSUED = 2'd1, POSTED = 2'd2, RESENT = 2'd3;
  localparam logic [2:0] K_WREQ = 3'(edm_pkg::KIND_WREQ);
  localparam logic [2:0] K_RMW = 3'(edm_pkg::KIND_RMWREQ);
  if ((1 << SLOTS_LOG2) > edm_pkg::RETRY_UNRESOLVED || RMW_RING < 2 || (1 << RW) != RMW_RING
      || RMW_RING > edm_pkg::DUP_RMW_RESULTS) begin : g_bounds
    $error("edm_write_retry: need 2^SLOTS_LOG2 <= RETRY_UNRESOLVED, RMW_RING a power of two in 2 .. DUP_RMW_RESULTS");
  end
  if (RESEND_TAG_BASE != 0 && RESEND_TAG_BASE + NS > 256) begin : g_tags
    $error("edm_write_retry: RESEND_TAG_BASE + the entries exceed 8-bit tags");
  end

  logic [TIMER_W-1:0] now;

  logic [NS-1:0][1:0]         s_state;
  logic [NS-1:0]              s_acked;
  logic [NS-1:0]              s_busy;    // WAIT_FREE: its last send not yet free
  logic [NS-1:0]              s_rmw_q;   // an RMW, not a write (as stored)
  logic [NS-1:0]              s_rmw;     // ... read through RMW_RETRY, so 0 drops its state
  logic [NS-1:0][7:0]         s_id, s_tag;
  logic [NS-1:0][TIMER_W-1:0] s_t, s_t0;
  assign s_rmw = RMW_RETRY ? s_rmw_q : '0;
  logic [ND-1:0][7:0]         next_id;

  // ---- the /A/: every entry it names, at once
  logic [NS-1:0] a_hit;
  always_comb
    for (integer x = 0; x < NS; x++) begin
      logic [7:0] d;
      d = s_id[x] - ack_base;
      a_hit[x] = ack_valid && 32'(ack_peer) < ND && ack_peer[DST_LOG2-1:0] == DST_LOG2'(x >> SW)
               && s_state[x] != FREE && !s_rmw[x] && d < 8'(MW) && ack_map[d[$clog2(MW)-1:0]];
    end

  // ---- the engine's completion: a kept write's, or a kept RMW's?
  logic          c_tracked, c_mine, c_kept, c_resent, c_take, c_rmw, c_again, c_late, c_unknown;
  logic [XW-1:0] c_x;
  assign c_tracked = 32'(eng_cpl_dst) < ND;
  assign c_x = {eng_cpl_dst[DST_LOG2-1:0], eng_cpl_msg_id[SW-1:0]};
  assign c_mine = eng_cpl_valid && c_tracked && s_id[c_x] == eng_cpl_msg_id
                  && (s_state[c_x] == ISSUED || s_state[c_x] == RESENT);
  assign c_kept = c_mine && eng_cpl_kind == K_WREQ && !s_rmw[c_x];
  assign c_resent = c_kept && s_state[c_x] == RESENT;
  // An RMW's TIMEOUT: re-sent (taken here) unless its give-up has passed (or re-sends are off).
  assign c_rmw = c_mine && eng_cpl_kind == K_RMW && s_rmw[c_x];
  assign c_late = s_state[c_x] == RESENT && cfg_give_up != '0 && now - s_t0[c_x] >= cfg_give_up;
  assign c_again = c_rmw && eng_cpl_status == edm_pkg::STATUS_TIMEOUT && !c_late && cfg_ack_timeout != '0;
  assign c_unknown = c_rmw && s_state[c_x] == RESENT && eng_cpl_status != edm_pkg::STATUS_OK
                     && eng_cpl_status != edm_pkg::STATUS_TIMEOUT;
  assign cpl_valid = eng_cpl_valid && !c_resent && !c_again;
  assign eng_cpl_ready = c_resent || c_again || cpl_ready;
  assign c_take = eng_cpl_valid && eng_cpl_ready;
  assign {cpl_kind, cpl_dst, cpl_msg_id} = {eng_cpl_kind, eng_cpl_dst, eng_cpl_msg_id};
  assign cpl_tag = c_rmw ? s_tag[c_x] : eng_cpl_tag;   // a re-send's tag is the retry's
  assign cpl_status = c_unknown ? edm_pkg::STATUS_DENIED : eng_cpl_status;

  // ---- the re-send scan
  logic [XW-1:0] r_x;
  logic          r_due, r_fire, r_give_up, r_cand, r_mid, q_mid;
  logic          f_hit;
  logic [XW-1:0] f_x;
  assign f_x = {free_dst[DST_LOG2-1:0], free_msg_id[SW-1:0]};
  assign f_hit = WAIT_FREE && free_valid && 32'(free_dst) < ND && s_id[f_x] == free_msg_id && s_state[f_x] != FREE;
  assign r_cand = s_state[r_x] == POSTED && !s_busy[r_x] && !a_hit[r_x] && cfg_ack_timeout != '0
                  && now - s_t[r_x] >= cfg_ack_timeout
                  && (s_rmw[r_x] || !(cfg_give_up != '0 && now - s_t0[r_x] >= cfg_give_up));
  assign r_due = r_mid || (!q_mid && r_cand);
  assign r_give_up = !r_mid && s_state[r_x] == POSTED && !s_rmw[r_x] && !a_hit[r_x] && cfg_give_up != '0
                     && now - s_t0[r_x] >= cfg_give_up;
  assign r_fire = r_due && out_req_ready;

  // ---- RMW rings (bound 2): per destination the ids of the RMWs from its
  // oldest unanswered one on, answered bits; the head leaves once answered.
  logic [ND-1:0][RMW_RING-1:0][7:0] m_id;
  logic [ND-1:0][RMW_RING-1:0]      m_answered;
  logic [ND-1:0][RW-1:0]            m_head;
  logic [ND-1:0][RW:0]              m_count;

  // ---- the host's request at the head
  logic [DST_LOG2-1:0] q_d;
  logic          q_tracked, q_write, q_rmw, q_hold, q_fire;
  logic [XW-1:0] q_x;
  logic [7:0]    q_id;
  assign q_d = in_req_dst[DST_LOG2-1:0];
  assign q_tracked = 32'(in_req_dst) < ND;
  assign q_id = next_id[q_d];
  assign q_x = {q_d, q_id[SW-1:0]};
  assign q_write = in_req_kind == K_WREQ && in_req_len != '0;
  assign q_rmw = RMW_RETRY && in_req_kind == K_RMW;
  // (An untracked port shares the counter of its low bits, so the slot rule too.)
  assign q_hold = s_state[q_x] != FREE
                  || (q_tracked && in_req_kind == K_RMW && m_count[q_d] == (RW + 1)'(RMW_RING));
  assign in_req_ready = out_req_ready && !r_due && !q_hold;
  assign q_fire = in_req_valid && in_req_ready;

  // The fields only a re-send reads (at the scan's r_x): remote and local
  // address and length, and with RMW_RETRY an RMW's op and operands. One
  // write (a new request's slot) and one read a cycle: a RAM (LUT RAM on an
  // FPGA), not NS multiplexed registers. Low bits first, so that without
  // RMW_RETRY the width cast keeps the write's fields.
  localparam int unsigned FIELDS_W = 64 + 64 + 16;            // raddr, laddr, len
  localparam int unsigned PAYLOAD_W = FIELDS_W + (RMW_RETRY ? 4 + 64 + 64 : 0);   // + op, arg0, arg1
  logic [PAYLOAD_W-1:0] s_payload [NS];
  logic [PAYLOAD_W-1:0] q_payload, r_payload;
  logic [3:0]           r_op;
  logic [63:0]          r_arg0, r_arg1;
  assign q_payload = PAYLOAD_W'({in_req_arg1, in_req_arg0, in_req_rmw_op, in_req_len, in_req_laddr, in_req_raddr});
  assign r_payload = s_payload[r_x];
  if (RMW_RETRY) begin : g_rmw_fields
    assign r_op = r_payload[FIELDS_W+3:FIELDS_W];
    assign r_arg0 = r_payload[FIELDS_W+67:FIELDS_W+4];
    assign r_arg1 = r_payload[FIELDS_W+131:FIELDS_W+68];
  end else begin : g_no_rmw_fields
    assign r_op = '0;
    assign r_arg0 = '0;
    assign r_arg1 = '0;
  end

  assign out_req_valid = r_due || (in_req_valid && !q_hold);
  always_comb begin
    if (r_due) begin
      out_req_kind = s_rmw[r_x] ? K_RMW : K_WREQ;
      out_req_dst = PB'(r_x[XW-1:SW]);
      out_req_raddr = r_payload[63:0];
      out_req_laddr = r_payload[127:64];
      out_req_len = r_payload[143:128];
      out_req_rmw_op = s_rmw[r_x] ? r_op : '0;
      out_req_arg0 = s_rmw[r_x] ? r_arg0 : '0;
      out_req_arg1 = s_rmw[r_x] ? r_arg1 : '0;
      out_req_tag = RESEND_TAG_BASE == 0 ? s_tag[r_x] : 8'(RESEND_TAG_BASE) + 8'(r_x);
      out_req_msg_id = s_id[r_x];
    end else begin
      out_req_kind = in_req_kind;
      out_req_dst = in_req_dst;
      out_req_raddr = in_req_raddr;
      out_req_len = in_req_len;
      out_req_laddr = in_req_laddr;
      out_req_rmw_op = in_req_rmw_op;
      out_req_arg0 = in_req_arg0;
      out_req_arg1 = in_req_arg1;
      out_req_tag = in_req_tag;
      out_req_msg_id = q_id;
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      now <= '0;
      s_state <= '0;
      s_acked <= '0;
      s_busy <= '0;
      r_mid <= 1'b0;
      q_mid <= 1'b0;
      next_id <= '0;
      r_x <= '0;
      m_answered <= '0;
      m_head <= '0;
      m_count <= '0;
      cnt_resent <= '0;
      cnt_gave_up <= '0;
      cnt_untracked <= '0;
      cnt_rmw_resent <= '0;
      cnt_rmw_gave_up <= '0;
      cnt_rmw_unknown <= '0;
    end else begin
      now <= now + 1'b1;
      // The scan stays on an entry due until the engine takes it.
      if (!(r_due && !r_fire)) r_x <= r_x + 1'b1;
      r_mid <= r_due && !out_req_ready;
      q_mid <= !r_due && out_req_valid && !out_req_ready;
      for (integer x = 0; x < NS; x++) begin
        // An /A/ frees a waiting entry, or is remembered while the engine has it.
        if (a_hit[x]) begin
          if (s_state[x] == POSTED && !(r_due && r_x == XW'(x))) s_state[x] <= FREE;
          else s_acked[x] <= 1'b1;   // the engine has it, or it is being offered to it
        end
      end
      // The engine's completion of a kept write: posted now.
      if (c_take && c_kept) begin
        if (s_acked[c_x] || a_hit[c_x]) s_state[c_x] <= FREE;
        else s_state[c_x] <= POSTED;
        if (eng_cpl_status != edm_pkg::STATUS_OK) s_state[c_x] <= FREE;   // not sent: nothing to wait for
        s_t[c_x] <= now;
        if (s_state[c_x] == ISSUED) s_t0[c_x] <= now;
      end
      // The engine's completion of a kept RMW: a TIMEOUT waits for its re-send; else it is done.
      if (c_take && c_rmw) begin
        s_state[c_x] <= c_again ? POSTED : FREE;
        s_t[c_x] <= now;
        if (s_state[c_x] == ISSUED) s_t0[c_x] <= now;
      end
      if (f_hit) s_busy[f_x] <= 1'b0;
      if (r_fire) begin
        s_state[r_x] <= RESENT;
        s_acked[r_x] <= s_acked[r_x] || a_hit[r_x];
        s_busy[r_x] <= WAIT_FREE;
      end
      if (r_give_up) s_state[r_x] <= FREE;
      // A new request: a write or RMW is kept; every request takes its destination's next id.
      if (q_fire) begin
        next_id[q_d] <= next_id[q_d] + 8'd1;
        if (q_tracked && (q_write || q_rmw)) begin
          s_state[q_x] <= ISSUED;
          s_rmw_q[q_x] <= q_rmw;
          s_acked[q_x] <= 1'b0;
          s_busy[q_x] <= WAIT_FREE;
          s_id[q_x] <= q_id;
          s_tag[q_x] <= in_req_tag;
        end
      end
      // RMW rings.
      for (integer d = 0; d < ND; d++) begin
        logic pop, push;
        logic [RW-1:0] tail;
        tail = m_head[d] + m_count[d][RW-1:0];
        push = q_fire && q_tracked && in_req_kind == K_RMW && q_d == DST_LOG2'(d);
        pop = m_count[d] != '0 && m_answered[d][m_head[d]];
        for (integer k = 0; k < RMW_RING; k++)
          if (c_take && !c_again && c_tracked && eng_cpl_kind == K_RMW && eng_cpl_dst[DST_LOG2-1:0] == DST_LOG2'(d)
              && m_id[d][k] == eng_cpl_msg_id && {1'b0, RW'(k) - m_head[d]} < m_count[d])
            m_answered[d][k] <= 1'b1;
        if (push) begin
          m_id[d][tail] <= q_id;
          m_answered[d][tail] <= 1'b0;
        end
        if (pop) m_head[d] <= m_head[d] + 1'b1;
        m_count[d] <= m_count[d] + (RW + 1)'(push) - (RW + 1)'(pop);
      end
      cnt_resent <= edm_pkg::sat_add(cnt_resent, {1'b0, r_fire && !s_rmw[r_x]});
      cnt_gave_up <= edm_pkg::sat_add(cnt_gave_up, {1'b0, r_give_up});
      cnt_untracked <= edm_pkg::sat_add(cnt_untracked, {1'b0, q_fire && !q_tracked && q_write});
      cnt_rmw_resent <= edm_pkg::sat_add(cnt_rmw_resent, {1'b0, r_fire && s_rmw[r_x]});
      cnt_rmw_gave_up <= edm_pkg::sat_add(cnt_rmw_gave_up,
                                          {1'b0, c_take && c_rmw && eng_cpl_status == edm_pkg::STATUS_TIMEOUT && c_late});
      cnt_rmw_unknown <= edm_pkg::sat_add(cnt_rmw_unknown, {1'b0, c_take && c_unknown});
    end
  end

  // No reset: an entry's fields are read only while its state is not FREE.
  always_ff @(posedge clk)
    if (rst_n && q_fire && q_tracked && (q_write || q_rmw)) s_payload[q_x] <= q_payload;
endmodule

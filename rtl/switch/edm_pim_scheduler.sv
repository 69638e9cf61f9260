// EDM switch scheduler (§3.1.2): one notification queue per destination port
// and priority-PIM, one iteration every SW_PIM_ITER_CYCLES (3) cycles. It is the
// cycle-exact twin of the reference model crates/edm-sim/src/scheduler.rs as
// stepped by edm.sim.Scheduler (docs/simulator.md, "Scheduler semantics");
// tests/rtl/tb_pim_scheduler.py checks every cycle's grants against it.
//
// Notifications: up to N per cycle, one per lane (lane i's fields are bits
// [i*W +: W] of the flat vectors). A lane is stored when notif_valid and
// notif_ready are both high; notif_ready is combinational (it depends on the
// free slots of the lane's destination queue and on the lower lanes that target
// the same queue this cycle). Lanes that arrive in the same cycle are ordered by
// lane index (lower = older). A notification stored in cycle c joins the
// iterations that start from cycle c + SW_NQ_INSERT_CYCLES on.
//
// Iterations: an iteration may start in any cycle at least 3 cycles after the
// previous start, and starts if a notification is queued or arrives that cycle
// (as edm.sim.Scheduler.step does). An iteration starting in cycle t decides
// with the state of cycle t, in three pipeline stages:
//   t    request: every destination whose port is free picks its best eligible
//        entry: visible, source port free, oldest of its source-destination
//        pair; best = SRPT (remaining bytes, then age) or FCFS (age).
//   t+1  accept: every source keeps its best request (a comparator tree over
//        the destinations; keys are unique, so there are no ties).
//   t+2  grant: min(CHUNK_BYTES, remaining) bytes; the entry is updated or
//        removed, both ports are held for the chunk's wire time.
// The grants appear on the outputs in cycle t+3 (registered; one cycle of
// grant_valid), in lane s for source s.
//
// Ports: a grant of b bytes holds its source and destination ports until
// t*CYCLE_PS + wire(b), where wire = the data unit's blocks * BLOCK_PS
// (edm_proto message_blocks: /MS/ + /MD/s + /MT/, WREQ or RRES); an iteration
// starting in cycle t' can use them when t'*CYCLE_PS >= that. Each port keeps
// the rest of its hold time in a counter of gcd(BLOCK_PS, CYCLE_PS) units.
//
// Age: the model orders entries by a global arrival counter (u64). Here each
// entry holds its rank among all queued entries (0 = oldest): new entries take
// the next ranks and every removal closes its gap. Comparisons are therefore
// the model's exactly, with log2(N*DEPTH) bits per entry.
//
// Signal prefixes: s_ the notification slots (queue entries); lane_/ins_ storing
// arriving notifications; rq_ stage 1, request, with t_ its comparator tree over
// a destination's entries and req_ its registers; ac_ stage 2, accept, with a_
// its tree over a source's requests and acc_ its registers; g_ stage 3, grant.
module edm_pim_scheduler #(
    parameter int unsigned N = 4,            // ports (>= 2)
    parameter int unsigned DEPTH = 8,        // notification slots per destination queue
    parameter bit          SRPT = 1'b1,      // 1: SRPT, 0: FCFS
    parameter int unsigned CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,
    parameter int unsigned BLOCK_PS = edm_pkg::BLOCK_PS_100G,  // line rate
    parameter int unsigned CYCLE_PS = edm_pkg::CYCLE_PS        // scheduler clock
) (
    input  logic                             clk,
    input  logic                             rst_n,
    // Notifications, N lanes.
    input  logic [N-1:0]                     notif_valid,
    output logic [N-1:0]                     notif_ready,
    input  logic [N*$clog2(N)-1:0]           notif_src,
    input  logic [N*$clog2(N)-1:0]           notif_dst,
    input  logic [N*edm_pkg::NG_ID_W-1:0]    notif_msg_id,
    input  logic [N*edm_pkg::NG_SIZE_W-1:0]  notif_size,
    input  logic [N-1:0]                     notif_rres,   // 1: RRES data units, 0: WREQ
    // Grants, lane s = source s.
    output logic [N-1:0]                     grant_valid,
    output logic [N*$clog2(N)-1:0]           grant_src,
    output logic [N*$clog2(N)-1:0]           grant_dst,
    output logic [N*edm_pkg::NG_ID_W-1:0]    grant_msg_id,
    output logic [N*edm_pkg::NG_SIZE_W-1:0]  grant_bytes,
    output logic [N-1:0]                     grant_last,   // the chunk that completes its message
    output logic [$clog2(N*DEPTH+1)-1:0]     occupancy     // notifications queued
);
  // Greatest common divisor, for the port hold counters' time unit.
  function automatic integer gcd(input integer a, input integer b);
    integer x, y, t;
    x = a;
    y = b;
    for (integer i = 0; i < 64; i++) begin
      if (y != 0) begin
        t = x % y;
        x = y;
        y = t;
      end
    end
    gcd = x;
  endfunction

  localparam int unsigned PW = $clog2(N);
  localparam int unsigned IW = edm_pkg::NG_ID_W;
  localparam int unsigned SW = edm_pkg::NG_SIZE_W;
  localparam int unsigned M = N * DEPTH;           // slots in all
  localparam int unsigned RW = $clog2(M);          // rank
  localparam int unsigned LW = $clog2(M + 1);      // a count of slots
  localparam int unsigned JW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  localparam int unsigned DW = $clog2(DEPTH + 1);  // a count of one queue's slots
  localparam int unsigned NW = $clog2(N + 1);      // a count of lanes
  localparam int unsigned ITER = edm_pkg::SW_PIM_ITER_CYCLES;  // >= 3 (the pipeline's stages)
  localparam int unsigned IWW = $clog2(ITER);
  // Visible once age == VIS_AGE: age 0 is the cycle after the insert.
  localparam int unsigned VIS_AGE = edm_pkg::SW_NQ_INSERT_CYCLES - 1;
  localparam int unsigned AW = (VIS_AGE > 1) ? $clog2(VIS_AGE + 1) : 1;
  // Hold time unit: gcd of block and cycle time.
  localparam int unsigned TU = gcd(BLOCK_PS, CYCLE_PS);
  localparam int unsigned BU = BLOCK_PS / TU;      // units per block
  localparam int unsigned CU = CYCLE_PS / TU;      // units per cycle
  // Blocks of a data unit carrying b payload bytes:
  //   2 + ceil((HDR + ext + b - MS_BYTES - MT_TAIL_MAX) / MD_BYTES)
  localparam int unsigned MD_LOG2 = $clog2(edm_pkg::MD_BYTES);
  localparam int unsigned AFTER_MS = edm_pkg::MS_BYTES + edm_pkg::MT_TAIL_MAX;
  localparam int unsigned WREQ_OVER = edm_pkg::HDR_BYTES + edm_pkg::WREQ_EXT_BYTES - AFTER_MS;
  localparam int unsigned RRES_OVER = edm_pkg::HDR_BYTES + edm_pkg::RRES_EXT_BYTES - AFTER_MS;
  localparam int unsigned MAX_OVER = (WREQ_OVER > RRES_OVER) ? WREQ_OVER : RRES_OVER;
  localparam int unsigned MAX_BLOCKS = 2 + ((CHUNK_BYTES + MAX_OVER + edm_pkg::MD_BYTES - 1) >> MD_LOG2);
  localparam int unsigned CW = $clog2(MAX_BLOCKS * BU + 1);  // port hold counter
  localparam int unsigned XW = SW + 2;                        // wire-time arithmetic
  localparam int unsigned HW = XW + $clog2(BU + 1);

  localparam logic [SW-1:0]  CHUNK = CHUNK_BYTES[SW-1:0];
  localparam logic [XW-1:0]  WREQ_ROUND = XW'(WREQ_OVER + edm_pkg::MD_BYTES - 1);
  localparam logic [XW-1:0]  RRES_ROUND = XW'(RRES_OVER + edm_pkg::MD_BYTES - 1);
  localparam logic [HW-1:0]  BU_H = HW'(BU);
  localparam logic [HW-1:0]  HOLD_H = HW'(ITER * CU);  // units between decision and grant edge
  localparam logic [CW-1:0]  CU_C = CW'(CU);
  localparam logic [AW-1:0]  VIS = AW'(VIS_AGE);

  // Hold counter value at the grant edge (cycle t+3) for a chunk of `bytes`:
  // max(0, wire - 3 cycles), in time units.
  function automatic [CW-1:0] hold_after_grant(input [SW-1:0] bytes, input rres);
    logic [XW-1:0] md;
    logic [HW-1:0] wire_u;
    md = ({2'b00, bytes} + (rres ? RRES_ROUND : WREQ_ROUND)) >> MD_LOG2;
    wire_u = (HW'(md) + HW'(2)) * BU_H;
    hold_after_grant = (wire_u > HOLD_H) ? CW'(wire_u - HOLD_H) : '0;
  endfunction

  // Whether entry a outranks entry b (keys are unique: ranks are).
  function automatic better(input [SW-1:0] a_rem, input [RW-1:0] a_rank,
                            input [SW-1:0] b_rem, input [RW-1:0] b_rank);
    if (SRPT) better = (a_rem < b_rem) || (a_rem == b_rem && a_rank < b_rank);
    else better = a_rank < b_rank;
  endfunction

  // ---------------------------------------------------------------- state
  // Slot q = d*DEPTH + j is slot j of destination d's queue.
  logic [M-1:0]          s_valid;
  logic [M-1:0][AW-1:0]  s_age;
  logic [M-1:0][PW-1:0]  s_src;
  logic [M-1:0][IW-1:0]  s_msg;
  logic [M-1:0][SW-1:0]  s_rem;
  logic [M-1:0]          s_rres;
  logic [M-1:0][RW-1:0]  s_rank;
  logic [LW-1:0]         live;                 // valid slots
  logic [N-1:0][CW-1:0]  src_hold, dst_hold;   // 0: port free
  logic [IWW-1:0]        iter_wait;            // cycles before the next iteration may start

  // Request stage registers (loaded when an iteration starts; valid for one cycle).
  logic [N-1:0]          req_v;
  logic [N-1:0][JW-1:0]  req_j;
  logic [N-1:0][PW-1:0]  req_src;
  logic [N-1:0][IW-1:0]  req_msg;
  logic [N-1:0][SW-1:0]  req_rem;
  logic [N-1:0]          req_rres;
  logic [N-1:0][RW-1:0]  req_rank;
  // Accept stage registers (valid for one cycle).
  logic [N-1:0]          acc_v;     // by source
  logic [N-1:0][PW-1:0]  acc_d;     // by source: the accepted destination
  logic [N-1:0]          acc_by_d;  // by destination: its request was accepted

  // ---------------------------------------------------------------- notification insert
  logic [N-1:0][PW-1:0]  lane_dst;
  logic [N-1:0][DW-1:0]  lane_pos;    // earlier valid lanes with the same destination
  logic [N-1:0]          lane_take;   // stored this cycle
  logic [N-1:0][RW-1:0]  lane_rank;
  logic [N-1:0][DW-1:0]  free_cnt;    // by destination
  logic [M-1:0][DW-1:0]  free_before; // free slots below this one in its queue
  logic [M-1:0]          ins_hit;
  logic [M-1:0][PW-1:0]  ins_lane;
  logic [N-1:0]          removed;     // by destination: the granted entry is exhausted
  logic [LW-1:0]         live_kept;   // live minus removed
  logic [NW-1:0]         taken;
  logic                  start;

  always_comb begin
    for (integer i = 0; i < N; i++) lane_dst[i] = notif_dst[i*PW +: PW];
    for (integer d = 0; d < N; d++) begin
      free_cnt[d] = '0;
      for (integer j = 0; j < DEPTH; j++) begin
        free_before[d*DEPTH + j] = free_cnt[d];
        if (!s_valid[d*DEPTH + j]) free_cnt[d] = free_cnt[d] + 1'b1;
      end
    end
    live_kept = live;
    for (integer d = 0; d < N; d++) if (removed[d]) live_kept = live_kept - 1'b1;
    taken = '0;
    for (integer i = 0; i < N; i++) begin
      lane_pos[i] = '0;
      for (integer k = 0; k < i; k++)
        if (notif_valid[k] && lane_dst[k] == lane_dst[i]) lane_pos[i] = lane_pos[i] + 1'b1;
      notif_ready[i] = lane_pos[i] < free_cnt[lane_dst[i]];
      lane_take[i] = notif_valid[i] && notif_ready[i];
      lane_rank[i] = RW'(live_kept) + RW'(taken);
      if (lane_take[i]) taken = taken + 1'b1;
    end
    for (integer d = 0; d < N; d++)
      for (integer j = 0; j < DEPTH; j++) begin
        ins_hit[d*DEPTH + j] = 1'b0;
        ins_lane[d*DEPTH + j] = '0;
        for (integer i = 0; i < N; i++)
          if (lane_take[i] && lane_dst[i] == PW'(d) && lane_pos[i] == free_before[d*DEPTH + j]
              && !s_valid[d*DEPTH + j]) begin
            ins_hit[d*DEPTH + j] = 1'b1;
            ins_lane[d*DEPTH + j] = PW'(i);
          end
      end
  end

  assign start = iter_wait == '0 && (s_valid != '0 || lane_take != '0);

  // ---------------------------------------------------------------- stage 1: request
  logic [M-1:0]          eligible;
  logic [N-1:0]          rq_v;
  logic [N-1:0][JW-1:0]  rq_j;
  logic [N-1:0][SW-1:0]  rq_rem;
  logic [N-1:0][RW-1:0]  rq_rank;
  logic [N-1:0][PW-1:0]  rq_src;
  logic [N-1:0][IW-1:0]  rq_msg;
  logic [N-1:0]          rq_rres;

  // Per queue, a binary tree over the slots (padded to DP leaves) keeps the
  // better of each pair of children: log2(DEPTH) comparator levels.
  localparam int unsigned DP = 1 << JW;
  logic [2*DP-1:1]          t_v;
  logic [2*DP-1:1][JW-1:0]  t_j;
  logic [2*DP-1:1][SW-1:0]  t_rem;
  logic [2*DP-1:1][RW-1:0]  t_rank;
  logic                     pick_right;

  always_comb begin
    for (integer d = 0; d < N; d++) begin
      for (integer j = 0; j < DEPTH; j++)
        eligible[d*DEPTH + j] = s_valid[d*DEPTH + j] && s_age[d*DEPTH + j] == VIS
                                && src_hold[s_src[d*DEPTH + j]] == '0 && dst_hold[d] == '0;
      // Oldest of its pair: no older entry of the same source in this queue.
      // Each pair of slots is compared once (valid ranks are distinct).
      for (integer j = 1; j < DEPTH; j++)
        for (integer k = 0; k < j; k++)
          if (s_valid[d*DEPTH + j] && s_valid[d*DEPTH + k] && s_src[d*DEPTH + k] == s_src[d*DEPTH + j]) begin
            if (s_rank[d*DEPTH + k] < s_rank[d*DEPTH + j]) eligible[d*DEPTH + j] = 1'b0;
            else eligible[d*DEPTH + k] = 1'b0;
          end
    end
    for (integer d = 0; d < N; d++) begin
      for (integer n = DP; n < 2*DP; n++) begin
        t_v[n] = (n - DP < DEPTH) ? eligible[d*DEPTH + (n - DP) % DEPTH] : 1'b0;
        t_j[n] = JW'(n - DP);
        t_rem[n] = s_rem[d*DEPTH + (n - DP) % DEPTH];
        t_rank[n] = s_rank[d*DEPTH + (n - DP) % DEPTH];
      end
      for (integer n = DP - 1; n >= 1; n--) begin
        // Ties (impossible: ranks are unique) would keep the lower slot.
        pick_right = t_v[2*n + 1] && (!t_v[2*n] || better(t_rem[2*n + 1], t_rank[2*n + 1],
                                                         t_rem[2*n], t_rank[2*n]));
        t_v[n] = t_v[2*n] || t_v[2*n + 1];
        t_j[n] = pick_right ? t_j[2*n + 1] : t_j[2*n];
        t_rem[n] = pick_right ? t_rem[2*n + 1] : t_rem[2*n];
        t_rank[n] = pick_right ? t_rank[2*n + 1] : t_rank[2*n];
      end
      rq_v[d] = t_v[1];
      rq_j[d] = t_j[1];
      rq_rem[d] = t_rem[1];
      rq_rank[d] = t_rank[1];
      rq_src[d] = '0;
      rq_msg[d] = '0;
      rq_rres[d] = 1'b0;
      for (integer j = 0; j < DEPTH; j++)
        if (t_j[1] == JW'(j)) begin
          rq_src[d] = s_src[d*DEPTH + j];
          rq_msg[d] = s_msg[d*DEPTH + j];
          rq_rres[d] = s_rres[d*DEPTH + j];
        end
    end
  end

  // ---------------------------------------------------------------- stage 2: accept
  logic [N-1:0]          ac_v;
  logic [N-1:0][PW-1:0]  ac_d;
  logic [N-1:0]          ac_by_d;

  // Per source, a binary tree over the destinations' requests (padded to NP
  // leaves) keeps the better one: log2(N) comparator levels.
  localparam int unsigned NP = 1 << PW;
  logic [2*NP-1:1]          a_v;
  logic [2*NP-1:1][PW-1:0]  a_d;
  logic [2*NP-1:1][SW-1:0]  a_rem;
  logic [2*NP-1:1][RW-1:0]  a_rank;
  logic                     a_right;

  always_comb begin
    for (integer s = 0; s < N; s++) begin
      for (integer n = NP; n < 2*NP; n++) begin
        a_v[n] = (n - NP < N) ? req_v[(n - NP) % N] && req_src[(n - NP) % N] == PW'(s) : 1'b0;
        a_d[n] = PW'(n - NP);
        a_rem[n] = req_rem[(n - NP) % N];
        a_rank[n] = req_rank[(n - NP) % N];
      end
      for (integer n = NP - 1; n >= 1; n--) begin
        // Ties (impossible: ranks are unique) would keep the lower destination.
        a_right = a_v[2*n + 1] && (!a_v[2*n] || better(a_rem[2*n + 1], a_rank[2*n + 1],
                                                      a_rem[2*n], a_rank[2*n]));
        a_v[n] = a_v[2*n] || a_v[2*n + 1];
        a_d[n] = a_right ? a_d[2*n + 1] : a_d[2*n];
        a_rem[n] = a_right ? a_rem[2*n + 1] : a_rem[2*n];
        a_rank[n] = a_right ? a_rank[2*n + 1] : a_rank[2*n];
      end
      ac_v[s] = a_v[1];
      ac_d[s] = a_d[1];
    end
    for (integer d = 0; d < N; d++)
      ac_by_d[d] = req_v[d] && ac_v[req_src[d]] && ac_d[req_src[d]] == PW'(d);
  end

  // ---------------------------------------------------------------- stage 3: grant
  logic [N-1:0][SW-1:0]  g_bytes;   // by destination
  logic [N-1:0]          g_last;
  logic [N-1:0][CW-1:0]  g_hold;
  logic [M-1:0][RW-1:0]  rank_drop;

  always_comb begin
    for (integer d = 0; d < N; d++) begin
      g_bytes[d] = (req_rem[d] < CHUNK) ? req_rem[d] : CHUNK;
      g_last[d] = req_rem[d] <= CHUNK;
      g_hold[d] = hold_after_grant(g_bytes[d], req_rres[d]);
      removed[d] = acc_by_d[d] && g_last[d];
    end
    // Rank compaction: each entry moves down by the removed entries older than it.
    for (integer q = 0; q < M; q++) begin
      rank_drop[q] = '0;
      for (integer d = 0; d < N; d++)
        if (removed[d] && req_rank[d] < s_rank[q]) rank_drop[q] = rank_drop[q] + 1'b1;
    end
  end

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      s_valid <= '0;
      live <= '0;
      src_hold <= '0;
      dst_hold <= '0;
      iter_wait <= '0;
      req_v <= '0;
      acc_v <= '0;
      acc_by_d <= '0;
      grant_valid <= '0;
    end else begin
      // Slots: insert, grant update, removal, rank compaction, visibility.
      for (integer q = 0; q < M; q++) begin
        if (ins_hit[q]) begin
          s_valid[q] <= 1'b1;
          s_age[q] <= '0;
          s_src[q] <= notif_src[ins_lane[q]*PW +: PW];
          s_msg[q] <= notif_msg_id[ins_lane[q]*IW +: IW];
          s_rem[q] <= notif_size[ins_lane[q]*SW +: SW];
          s_rres[q] <= notif_rres[ins_lane[q]];
          s_rank[q] <= lane_rank[ins_lane[q]];
        end else if (s_valid[q]) begin
          if (s_age[q] != VIS) s_age[q] <= s_age[q] + 1'b1;
          s_rank[q] <= s_rank[q] - rank_drop[q];
          if (acc_by_d[q / DEPTH] && req_j[q / DEPTH] == JW'(q % DEPTH)) begin
            if (g_last[q / DEPTH]) s_valid[q] <= 1'b0;
            else s_rem[q] <= req_rem[q / DEPTH] - g_bytes[q / DEPTH];
          end
        end
      end
      live <= live_kept + LW'(taken);

      // Iteration grid and pipeline.
      iter_wait <= start ? IWW'(ITER - 1) : (iter_wait != '0 ? iter_wait - 1'b1 : '0);
      req_v <= start ? rq_v : '0;
      acc_v <= ac_v;
      acc_by_d <= ac_by_d;
      grant_valid <= acc_v;

      // Ports: hold for the chunk's wire time, count down a cycle at a time.
      for (integer s = 0; s < N; s++)
        src_hold[s] <= acc_v[s] ? g_hold[acc_d[s]] : (src_hold[s] > CU_C ? src_hold[s] - CU_C : '0);
      for (integer d = 0; d < N; d++)
        dst_hold[d] <= acc_by_d[d] ? g_hold[d] : (dst_hold[d] > CU_C ? dst_hold[d] - CU_C : '0);
    end

    // Data registers (no reset needed: qualified by the valid bits above).
    if (start) begin
      for (integer d = 0; d < N; d++) begin
        req_j[d] <= rq_j[d];
        req_src[d] <= rq_src[d];
        req_msg[d] <= rq_msg[d];
        req_rem[d] <= rq_rem[d];
        req_rres[d] <= rq_rres[d];
        req_rank[d] <= rq_rank[d];
      end
    end
    acc_d <= ac_d;
    for (integer s = 0; s < N; s++) begin
      grant_dst[s*PW +: PW] <= acc_d[s];
      grant_msg_id[s*IW +: IW] <= req_msg[acc_d[s]];
      grant_bytes[s*SW +: SW] <= g_bytes[acc_d[s]];
      grant_last[s] <= g_last[acc_d[s]];
    end
  end

  always_comb
    for (integer s = 0; s < N; s++) grant_src[s*PW +: PW] = PW'(s);
  assign occupancy = live;
endmodule

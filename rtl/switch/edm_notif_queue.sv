// One destination's notification queue (§3.1.2) for edm_pim_scheduler: DEPTH
// slots whose priority order is kept as precedence matrices, so the best
// eligible entry is read in constant logic depth whatever DEPTH is.
//
// The paper keeps each queue as a hardware ordered list (shift-register
// insertion with parallel compare). We keep the same order as bits instead:
// prio[j][k] = "slot j ranks before slot k", written when a key changes (the
// changed key compared with every slot's in parallel: 2*DEPTH + 1 comparators
// between registers, selected by which slot changed) and read by the request
// stage as one AND over DEPTH terms per slot (an age matrix, as in CPU issue
// queues). Nothing moves when an entry enters or leaves, so an insert and a
// grant update take one cycle each (one of each per cycle, as the paper's
// pipelined list), and the request stage has no comparator on its path: the
// comparisons happen the cycle a key changes.
//
// Order: older[j][k] = "j arrived before k". SRPT ranks by (remaining bytes, arrival); FCFS by arrival, so
// prio = older and no comparator is built. Pair order: same[j][k] = "same
// source"; an entry is its pair's head when no valid older entry has its source.
// Across queues the scheduler keeps the arrival order itself, from wr_slot
// (where each insert is written) and rq_win (the request's slot, one-hot).
//
// Request (combinational from registers): the best entry that is valid,
// visible (SW_NQ_INSERT_CYCLES after its insert), its pair's head (PAIR_ORDER),
// and whose source and destination ports are free; beside it the best visible
// pair head whatever the ports, for the priority hold. The ports come a cycle
// early (src_free_next, dst_free_next): each slot registers whether it is
// eligible, so the request stage reads no port and multiplexes no source.
// Room, the lowest free slot and "not empty" are registered the same way,
// computed from the next state, so the lane arbitration in front and the
// scheduler's iteration start read registers only.
//
// Only the j < k half of each matrix is stored (the rest is implied: prio and
// older are antisymmetric, same symmetric).
module edm_notif_queue #(
    parameter int unsigned N = 4,            // notification lanes = ports
    parameter int unsigned DEPTH = 8,        // slots
    parameter bit          SRPT = 1'b1,      // 1: SRPT, 0: FCFS
    parameter bit          PAIR_ORDER = 1'b1   // only a pair's oldest entry may be granted
) (
    input  logic                              clk,
    input  logic                              rst_n,
    // Insert: stored in the lowest free slot when ins_v (the caller inserts
    // only while room is high), visible SW_NQ_INSERT_CYCLES later.
    output logic                              room,
    input  logic                              ins_v,
    input  logic [$clog2(N)-1:0]              ins_src,
    input  logic [edm_pkg::NG_ID_W-1:0]       ins_msg,
    input  logic [edm_pkg::NG_SIZE_W-1:0]     ins_size,
    input  logic                              ins_rres,
    // The slot an insert is written into this cycle (one-hot; the insert of
    // the cycle before): the scheduler orders entries across queues by it.
    output logic [DEPTH-1:0]                  wr_slot,
    // Request: the best eligible entry, the ports being free as given in
    // the cycle before (src_free_next, dst_free_next: free next cycle).
    input  logic [N-1:0]                      src_free_next,
    input  logic                              dst_free_next,
    output logic                              nonempty,    // an entry or a pending insert
    output logic                              rq_v,
    output logic [((DEPTH > 1) ? $clog2(DEPTH) : 1)-1:0] rq_j,
    output logic [$clog2(N)-1:0]              rq_src,
    output logic [edm_pkg::NG_ID_W-1:0]       rq_msg,
    output logic [edm_pkg::NG_SIZE_W-1:0]     rq_rem,
    output logic                              rq_rres,
    output logic [DEPTH-1:0]                  rq_win,      // the request's slot, one-hot
    // The best visible pair head whatever the ports (priority hold compares
    // the request with it): its remaining bytes, and whether it is not the
    // request's entry.
    output logic [edm_pkg::NG_SIZE_W-1:0]     rq_best_rem,
    output logic                              rq_not_best,
    // Grant update of slot g_j: removed if g_last, else g_rem_next bytes remain.
    input  logic                              g_hit,
    input  logic [((DEPTH > 1) ? $clog2(DEPTH) : 1)-1:0] g_j,
    input  logic                              g_last,
    input  logic [edm_pkg::NG_SIZE_W-1:0]     g_rem_next,
    // The sources with an entry in the queue (stored, not yet removed by its
    // last grant; bit s = source s), for the switch's parked-port age rule.
    output logic [N-1:0]                      src_waiting
);
  localparam int unsigned PW = $clog2(N);
  localparam int unsigned IW = edm_pkg::NG_ID_W;
  localparam int unsigned SW = edm_pkg::NG_SIZE_W;
  localparam int unsigned JW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  // An insert is registered (p_), written into its slot the next cycle, and
  // visible once age == VIS_AGE, age 0 being the cycle after that write: the
  // insert latency is SW_NQ_INSERT_CYCLES (>= 2) from ins_v.
  localparam int unsigned VIS_AGE = edm_pkg::SW_NQ_INSERT_CYCLES - 2;
  localparam int unsigned AW = (VIS_AGE > 1) ? $clog2(VIS_AGE + 1) : 1;
  localparam logic [AW-1:0] VIS = AW'(VIS_AGE);

  // ---------------------------------------------------------------- state
  logic [DEPTH-1:0]                  s_valid;
  logic [DEPTH-1:0][AW-1:0]          s_age;
  logic [DEPTH-1:0][PW-1:0]          s_src;
  logic [DEPTH-1:0][IW-1:0]          s_msg;
  logic [DEPTH-1:0][SW-1:0]          s_rem;
  logic [DEPTH-1:0]                  s_rres;
  logic [DEPTH-1:0][DEPTH-1:0]       older_q, prio_q, same_q;  // j < k bits are registers
  logic [DEPTH-1:0][DEPTH-1:0]       older, prio;        // whole matrices

  always_comb
    for (integer j = 0; j < DEPTH; j++)
      for (integer k = 0; k < DEPTH; k++) begin
        older[j][k] = (j < k) ? older_q[j][k] : (j > k) ? !older_q[k][j] : 1'b0;
        prio[j][k] = SRPT ? ((j < k) ? prio_q[j][k] : (j > k) ? !prio_q[k][j] : 1'b0) : older[j][k];
      end

  // ---------------------------------------------------------------- insert
  // The insert is registered first (p_): the lane arbitration in front of the
  // queues ends at a register, and the slot write and the new entry's
  // comparisons start from one. room leaves the pending insert its slot.
  logic             p_v;
  logic [PW-1:0]    p_src;
  logic [IW-1:0]    p_msg;
  logic [SW-1:0]    p_size;
  logic             p_rres;
  logic [DEPTH-1:0] ins_hit;   // the lowest free slot, when writing the pending insert
  // Registered from the next state: the lowest free slot (one-hot), whether
  // one and whether two slots are free.
  logic [DEPTH-1:0] low_free, low_free_n;
  logic             one_free, two_free, one_free_n, two_free_n;

  assign ins_hit = p_v ? low_free : '0;
  assign wr_slot = ins_hit;
  assign room = p_v ? two_free : one_free;

  // ---------------------------------------------------------------- next keys and order
  logic [DEPTH-1:0]            g_slot;   // this slot is the one granted
  logic [DEPTH-1:0][PW-1:0]    n_src;
  logic [DEPTH-1:0][SW-1:0]    n_rem;
  logic [DEPTH-1:0][DEPTH-1:0] n_older, n_prio, n_same;
  // SRPT: the comparisons a key change needs, all between registers (the
  // pending insert's bytes, the granted entry's next bytes, the slots'), so
  // that which slot changes (g_hit, g_j) only selects among them.
  logic [DEPTH-1:0]            ins_lt;    // the insert is shorter than slot k
  logic [DEPTH-1:0]            g_lt, g_eq;  // the granted entry's next bytes <, = slot k's
  logic                        ins_lt_g;  // the insert is shorter than the granted entry

  always_comb begin
    for (integer j = 0; j < DEPTH; j++) begin
      g_slot[j] = g_hit && g_j == JW'(j);
      n_rem[j] = ins_hit[j] ? p_size : (g_slot[j] ? g_rem_next : s_rem[j]);
      n_src[j] = ins_hit[j] ? p_src : s_src[j];
      ins_lt[j] = p_size < s_rem[j];
      g_lt[j] = g_rem_next < s_rem[j];
      g_eq[j] = g_rem_next == s_rem[j];
    end
    ins_lt_g = p_size < g_rem_next;
    for (integer j = 0; j < DEPTH; j++)
      for (integer k = 0; k < DEPTH; k++) begin
        // A new entry is younger than every stored one.
        if (ins_hit[j]) n_older[j][k] = 1'b0;
        else if (ins_hit[k]) n_older[j][k] = 1'b1;
        else n_older[j][k] = older_q[j][k];
        n_same[j][k] = (ins_hit[j] || ins_hit[k]) ? n_src[j] == n_src[k] : same_q[j][k];
        // Only a changed key needs its comparisons redone; SRPT ties go to
        // the older entry, as the reference model's (remaining, arrival) key
        // (an insert is the youngest: it goes first only when shorter).
        if (ins_hit[j]) n_prio[j][k] = g_slot[k] ? ins_lt_g : ins_lt[k];
        else if (ins_hit[k]) n_prio[j][k] = !(g_slot[j] ? ins_lt_g : ins_lt[j]);
        else if (g_slot[j]) n_prio[j][k] = g_lt[k] || (g_eq[k] && older[j][k]);
        else if (g_slot[k]) n_prio[j][k] = !(g_lt[j] || (g_eq[j] && older[k][j]));
        else n_prio[j][k] = prio_q[j][k];
      end
  end

  // ---------------------------------------------------------------- candidates
  // cand[j]: valid, visible and its pair's head (no valid older entry of its
  // source, with pair order). Registered, computed from the next state, so the
  // request stage starts from it.
  logic [DEPTH-1:0] cand, cand_n, n_valid;
  logic [DEPTH-1:0] elig, elig_n;   // cand with both ports free

  always_comb begin
    for (integer j = 0; j < DEPTH; j++)
      n_valid[j] = ins_hit[j] || (s_valid[j] && !(g_slot[j] && g_last));
    one_free_n = 1'b0;
    two_free_n = 1'b0;
    for (integer j = 0; j < DEPTH; j++) begin
      low_free_n[j] = !n_valid[j] && !one_free_n;
      if (!n_valid[j]) begin
        if (one_free_n) two_free_n = 1'b1;
        one_free_n = 1'b1;
      end
    end
    for (integer j = 0; j < DEPTH; j++) begin
      cand_n[j] = n_valid[j] && (ins_hit[j] ? (VIS == '0) : (s_age[j] == VIS || s_age[j] + 1'b1 == VIS));
      if (PAIR_ORDER)
        for (integer k = 0; k < DEPTH; k++)
          if (k != j && n_valid[k]
              && ((j < k) ? n_same[j][k] : n_same[k][j]) && ((k < j) ? n_older[k][j] : !n_older[j][k]))
            cand_n[j] = 1'b0;
      elig_n[j] = cand_n[j] && src_free_next[n_src[j]] && dst_free_next;
    end
  end

  // ---------------------------------------------------------------- request
  logic [DEPTH-1:0] win, best;

  always_comb begin
    for (integer j = 0; j < DEPTH; j++) begin
      win[j] = elig[j];
      best[j] = cand[j];
      for (integer k = 0; k < DEPTH; k++) begin
        if (k != j && elig[k] && !prio[j][k]) win[j] = 1'b0;
        if (k != j && cand[k] && !prio[j][k]) best[j] = 1'b0;
      end
    end
    rq_not_best = |(best & ~win);
    rq_best_rem = '0;
    for (integer j = 0; j < DEPTH; j++)
      if (best[j]) rq_best_rem = rq_best_rem | s_rem[j];
    // win is one-hot (or zero): OR the winner's fields together.
    rq_v = |elig;
    rq_j = '0;
    rq_src = '0;
    rq_msg = '0;
    rq_rem = '0;
    rq_rres = 1'b0;
    rq_win = win;
    for (integer j = 0; j < DEPTH; j++)
      if (win[j]) begin
        rq_j = rq_j | JW'(j);
        rq_src = rq_src | s_src[j];
        rq_msg = rq_msg | s_msg[j];
        rq_rem = rq_rem | s_rem[j];
        rq_rres = rq_rres | s_rres[j];
      end
  end

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      s_valid <= '0;
      cand <= '0;
      elig <= '0;
      p_v <= 1'b0;
      low_free <= DEPTH'(1);
      one_free <= 1'b1;
      two_free <= (DEPTH > 1) ? 1'b1 : 1'b0;
      nonempty <= 1'b0;
    end else begin
      p_v <= ins_v;
      cand <= cand_n;
      elig <= elig_n;
      s_valid <= n_valid;
      low_free <= low_free_n;
      one_free <= one_free_n;
      two_free <= two_free_n;
      nonempty <= ins_v || n_valid != '0;
    end
    if (ins_v) begin
      p_src <= ins_src;
      p_msg <= ins_msg;
      p_size <= ins_size;
      p_rres <= ins_rres;
    end
    for (integer j = 0; j < DEPTH; j++) begin
      s_src[j] <= n_src[j];
      s_rem[j] <= n_rem[j];
      if (ins_hit[j]) begin
        s_age[j] <= '0;
        s_msg[j] <= p_msg;
        s_rres[j] <= p_rres;
      end else if (s_age[j] != VIS) begin
        s_age[j] <= s_age[j] + 1'b1;
      end
      for (integer k = 0; k < DEPTH; k++)
        if (j < k) begin
          older_q[j][k] <= n_older[j][k];
          prio_q[j][k] <= SRPT ? n_prio[j][k] : 1'b0;
          same_q[j][k] <= PAIR_ORDER ? n_same[j][k] : 1'b0;
        end else begin
          older_q[j][k] <= 1'b0;
          prio_q[j][k] <= 1'b0;
          same_q[j][k] <= 1'b0;
        end
    end
  end

  // ---------------------------------------------------------------- waiting sources
  always_comb
    for (integer s = 0; s < N; s++) begin
      src_waiting[s] = 1'b0;
      for (integer j = 0; j < DEPTH; j++)
        if (s_valid[j] && s_src[j] == PW'(s)) src_waiting[s] = 1'b1;
    end
endmodule

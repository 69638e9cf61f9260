// One destination's notification queue (§3.1.2) for edm_pim_scheduler, kept
// per source: N source-destination pairs of X slots each (the hosts keep at
// most X notifications active per destination), and the queue's request read
// through a tree of comparators over the pairs.
//
// Order: every entry carries its arrival stamp, a STAMP_W-bit wrapping count
// of the notifications inserted before it (the scheduler gives it: the
// reference model's arrival order). Two stamps compare by serial-number
// arithmetic (a arrived before b when a - b, mod 2^STAMP_W, has its top bit
// set): exact while every entry in the scheduler arrived within 2^(STAMP_W-1)
// notifications of the newest. Within a pair the order of its X slots is also
// kept as bits (older, and with SRPT and no pair order prio: written when a
// key changes, from registers), so a pair's candidate costs no comparator.
//
// Request, in two steps (REGISTERED_TREE = 0: combinational from registers;
// 1: pipelined, one tree level per cycle):
//   pair: its candidate (registered, one-hot over its slots, computed the
//         cycle before from the next state) is its best entry that is valid, visible
//         (SW_NQ_INSERT_CYCLES after its insert) and, with PAIR_ORDER, the
//         pair's oldest; constant logic over X slots (REGISTERED_TREE: its
//         fields registered too, so the tree starts from flip-flops). It is eligible when the
//         pair's source port and the destination port are free (registered
//         the cycle before from src_free_next, dst_free_next): eligibility is
//         the same for every slot of a pair.
//   tree: the best eligible pair candidate by key (SRPT: remaining bytes, then
//         arrival; FCFS: arrival), a radix-4 tree of LV = ceil(log4 N) levels (per
//         node its four children compared pairwise at once, then a 4:1 mux);
//         with REGISTERED_TREE every level but the root's is registered: the
//         request of the state of cycle t is on rq_* in cycle t + LV - 1
//         (else in cycle t). With HOLD, a second tree finds the best candidate
//         whatever the ports (the priority hold compares the request with it).
//
// Insert (REGISTERED_TREE = 0): at most one per cycle, registered (p_),
// written the next cycle into the lowest free slot of its pair with the stamp
// given then (wr_stamp). room / pair_room leave the pending insert its slot;
// the queue also holds at most DEPTH entries (room). Grant update (g_hit): the
// slot g_j of pair g_src is removed (g_last) or keeps g_rem_next bytes.
//
// Insert (REGISTERED_TREE = 1): per pair. The scheduler's lane i carries only
// pairs with source i or destination i, so pair s of this queue (destination
// q_lane) has two writers: lane s (sins_v[s]) and lane q_lane (ins_v with
// ins_src = s). Every pair may take both in one cycle, registered (pa_v, p_)
// and written the next cycle into its two lowest free slots, the lower lane
// first (older); an insert's stamp is {wr_stamp's top TW - PW bits (the
// inserting cycles before it); its lane}, unique. Room per pair, from
// flip-flops only (no register's next value depends on this cycle's insert,
// and no lane's insert on another lane's): pair_room[s] while its stored
// entries plus its pending inserts (those registered the cycle before) are
// fewer than X. A writer of this cycle does not see the other writer of the
// same cycle, so a pair holds at most X - 1 + 2 = X + 1 entries: XS = X + 1
// slots. The queue holds at most N·(X + 1): DEPTH is not used (room is 1).
module edm_notif_queue #(
    parameter int unsigned N = 4,            // notification lanes = ports = pairs
    parameter int unsigned X = 3,            // slots per source-destination pair
    parameter int unsigned DEPTH = 12,       // entries in the queue at most
    parameter bit          SRPT = 1'b1,      // 1: SRPT, 0: FCFS
    parameter bit          PAIR_ORDER = 1'b1,  // only a pair's oldest entry may be granted
    parameter bit          HOLD_TREE = 1'b1,   // build the best-candidate tree (priority hold)
    parameter bit          REGISTERED_TREE = 1'b0,  // 1: a register per tree level (see "Request")
    // 1: src_free_next is already the registered src_ok (the scheduler keeps one
    // copy per source for all its queues, not one per queue behind an N fan-out).
    parameter bit          SRC_OK_REGISTERED = 1'b0,
    parameter int unsigned STAMP_W = 16      // arrival stamp bits
) (
    input  logic                              clk,
    input  logic                              rst_n,
    // Insert (only while room and pair_room[ins_src]): written the next cycle.
    output logic                              room,
    output logic [N-1:0]                      pair_room,
    input  logic                              ins_v,
    input  logic [$clog2(N)-1:0]              ins_src,
    input  logic [edm_pkg::NG_ID_W-1:0]       ins_msg,
    input  logic [edm_pkg::NG_SIZE_W-1:0]     ins_size,
    input  logic                              ins_rres,
    // The arrival stamp of the insert written this cycle (the insert of the
    // cycle before; REGISTERED_TREE: its top STAMP_W - log2 N bits, the lane below).
    input  logic [STAMP_W-1:0]                wr_stamp,
    // REGISTERED_TREE (tie to 0 otherwise): pair s takes lane s's candidate
    // this cycle; every lane's candidate's fields of the cycle before (the
    // scheduler's registers), read when the insert is written; this queue's
    // own lane (its destination port), whose candidates come through ins_*.
    input  logic [N-1:0]                      sins_v,
    input  logic [N*edm_pkg::NG_ID_W-1:0]     lw_msg,
    input  logic [N*edm_pkg::NG_SIZE_W-1:0]   lw_size,
    input  logic [N-1:0]                      lw_rres,
    input  logic [$clog2(N)-1:0]              q_lane,
    // Request: the best eligible entry, the ports being free as given in
    // the cycle before (src_free_next, dst_free_next: free next cycle;
    // SRC_OK_REGISTERED: src_free_next registered outside, free this cycle).
    input  logic [N-1:0]                      src_free_next,
    input  logic                              dst_free_next,
    output logic                              nonempty,    // an entry or a pending insert
    output logic                              rq_v,
    output logic [((X + (REGISTERED_TREE ? 1 : 0) > 1) ? $clog2(X + (REGISTERED_TREE ? 1 : 0)) : 1)-1:0] rq_j,  // the slot in its pair
    output logic [$clog2(N)-1:0]              rq_src,
    output logic [edm_pkg::NG_ID_W-1:0]       rq_msg,
    output logic [edm_pkg::NG_SIZE_W-1:0]     rq_rem,
    output logic                              rq_rres,
    output logic [STAMP_W-1:0]                rq_stamp,
    // The best visible candidate whatever the ports (HOLD_TREE): its bytes,
    // and whether it is not the request's entry.
    output logic [edm_pkg::NG_SIZE_W-1:0]     rq_best_rem,
    output logic                              rq_not_best,
    // Grant update of slot g_j of pair g_src: removed if g_last, else g_rem_next bytes remain.
    input  logic                              g_hit,
    input  logic [$clog2(N)-1:0]              g_src,
    input  logic [((X + (REGISTERED_TREE ? 1 : 0) > 1) ? $clog2(X + (REGISTERED_TREE ? 1 : 0)) : 1)-1:0] g_j,
    input  logic                              g_last,
    input  logic [edm_pkg::NG_SIZE_W-1:0]     g_rem_next,
    // The sources with an entry in the queue (bit s = source s).
    output logic [N-1:0]                      src_waiting
);
  localparam int unsigned PW = $clog2(N);
  localparam int unsigned IW = edm_pkg::NG_ID_W;
  localparam int unsigned SW = edm_pkg::NG_SIZE_W;
  localparam int unsigned TW = STAMP_W;
  localparam int unsigned XS = X + (REGISTERED_TREE ? 1 : 0);  // slots per pair (see "Insert")
  localparam int unsigned JW = (XS > 1) ? $clog2(XS) : 1;
  localparam int unsigned DS = REGISTERED_TREE ? N * XS : DEPTH;  // entries at most (see "Insert")
  localparam int unsigned S = N * XS;                  // slots, slot s*XS + j = pair s, j
  localparam int unsigned CW = $clog2(DS + 1);         // a count of entries
  // An insert is registered (p_), written into its slot the next cycle, and
  // visible once age == VIS_AGE, age 0 being the cycle after that write.
  localparam int unsigned VIS_AGE = edm_pkg::SW_NQ_INSERT_CYCLES - 2;
  localparam int unsigned AW = (VIS_AGE > 1) ? $clog2(VIS_AGE + 1) : 1;
  localparam logic [AW-1:0] VIS = AW'(VIS_AGE);
  localparam bit          KEEP_PRIO = SRPT && !PAIR_ORDER;   // within-pair key order bits

  // a arrived before b (serial-number order).
  function automatic older_stamp(input [TW-1:0] a, input [TW-1:0] b);
    logic [TW-1:0] diff;
    diff = a - b;
    older_stamp = diff[TW-1];
  endfunction

  // Entry a ranks before entry b.
  function automatic ranks_before(input [SW-1:0] a_rem, input [TW-1:0] a_stamp,
                            input [SW-1:0] b_rem, input [TW-1:0] b_stamp);
    if (SRPT) ranks_before = (a_rem < b_rem) || (a_rem == b_rem && older_stamp(a_stamp, b_stamp));
    else ranks_before = older_stamp(a_stamp, b_stamp);
  endfunction

  // ---------------------------------------------------------------- state
  logic [S-1:0]             s_valid, n_valid;
  logic [S-1:0][AW-1:0]     s_age;
  logic [S-1:0][IW-1:0]     s_msg;
  logic [S-1:0][SW-1:0]     s_rem;
  logic [S-1:0]             s_rres;
  logic [S-1:0][TW-1:0]     s_stamp;
  // Per pair, over its slots (index j*XS + k; only j < k stored): j arrived
  // before k; j ranks before k (KEEP_PRIO).
  logic [N-1:0][XS*XS-1:0]    older_q, prio_q, n_older, n_prio;
  logic [N-1:0]             src_ok;             // registered ports (here or, SRC_OK_REGISTERED, outside)
  /* verilator lint_off UNUSEDSIGNAL */  // (without SRC_OK_REGISTERED only)
  logic [N-1:0]             src_ok_q;
  /* verilator lint_on UNUSEDSIGNAL */
  assign src_ok = SRC_OK_REGISTERED ? src_free_next : src_ok_q;
  logic                     dst_ok;
  /* verilator lint_off UNUSEDSIGNAL */  // (read without REGISTERED_TREE only)
  logic [N-1:0]             one_free, two_free;  // per pair
  logic                     q_one, q_two;       // count <= DEPTH - 1, DEPTH - 2
  /* verilator lint_on UNUSEDSIGNAL */
  logic [N-1:0]             one_free_n, two_free_n;
  logic [CW-1:0]            count, n_count;     // entries stored
  /* verilator lint_off UNUSEDSIGNAL */  // (one of them, by REGISTERED_TREE)
  logic                     nonempty_q;         // an entry or an insert (next state)
  logic                     stored_any;         // an entry stored
  /* verilator lint_on UNUSEDSIGNAL */

  // The pending insert(s): p_ (ins_*), and with REGISTERED_TREE per pair s
  // lane s's (pa_v; its fields on lw_* this cycle).
  logic [N-1:0]     pa_v;
  logic             p_v;
  logic [PW-1:0]    p_src;
  logic [IW-1:0]    p_msg;
  logic [SW-1:0]    p_size;
  logic             p_rres;

  // Room for an insert this cycle: the pending insert's slot left to it.
  // REGISTERED_TREE (see "Insert"): per pair, its stored entries and pending
  // inserts fewer than X, a register: its next value counts the next state's
  // entries and this cycle's inserts (they are the pending ones next cycle),
  // so a lane's pop starts from it. This cycle's inserts arrive late (a
  // lane's take): they select at the end among the next state's room for 0,
  // 1 or 2 inserts (computed beside them). The queue's room is not used.
  localparam int unsigned UW = $clog2(XS + 1);        // a pair's entries
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE)
  logic [N-1:0][UW-1:0] used_n;                       // per pair: entries in the next state
  logic [N-1:0]         room_n0, room_n1, room_n2;    // used_n < X, X - 1, X - 2
  logic [N-1:0]         ins_a, ins_b;                 // this cycle's inserts: lane s's, ins_*'s
  logic [N-1:0]         pb_hit;                       // registered: ins_v && ins_src == s
  logic [N-1:0]         a_first;                      // registered: s < q_lane (lane s's insert is the older)
  /* verilator lint_on UNUSEDSIGNAL */
  if (REGISTERED_TREE) begin : g_room_reg
    always_comb
      for (integer s = 0; s < N; s++) begin
        used_n[s] = '0;
        for (integer j = 0; j < XS; j++) used_n[s] = used_n[s] + UW'(n_valid[s*XS + j]);
        room_n0[s] = 32'(used_n[s]) < X;
        room_n1[s] = 32'(used_n[s]) + 1 < X;
        room_n2[s] = 32'(used_n[s]) + 2 < X;
        ins_a[s] = sins_v[s];
        ins_b[s] = ins_v && ins_src == PW'(s);
      end
    always_ff @(posedge clk)
      if (!rst_n) begin
        pair_room <= (X > 0) ? '1 : '0;
        pb_hit <= '0;
      end else
        for (integer s = 0; s < N; s++) begin
          pair_room[s] <= (ins_a[s] && ins_b[s]) ? room_n2[s] : (ins_a[s] || ins_b[s]) ? room_n1[s] : room_n0[s];
          pb_hit[s] <= ins_v && ins_src == PW'(s);
        end
    always_ff @(posedge clk)   // (q_lane is a constant: through reset too)
      for (integer s = 0; s < N; s++) a_first[s] <= PW'(s) < q_lane;
    assign room = 1'b1;
  end else begin : g_room_comb
    assign used_n = '0;
    assign room_n0 = '0;
    assign room_n1 = '0;
    assign room_n2 = '0;
    assign ins_a = '0;
    assign ins_b = '0;
    assign pb_hit = '0;
    assign a_first = '0;
    always_comb
      for (integer s = 0; s < N; s++)
        pair_room[s] = (p_v && p_src == PW'(s)) ? two_free[s] : one_free[s];
    assign room = p_v ? q_two : q_one;
  end

  // ---------------------------------------------------------------- slot updates
  // Per pair the writes of this cycle: w1 (the older, or the only one) into
  // its lowest free slot, w2 (REGISTERED_TREE: the younger of two) into the
  // next; per slot the write's fields (i_*).
  logic [S-1:0]     ins_hit, ins_hit1, ins_hit2, g_slot, low_free, low_free2;
  logic [S-1:0]     free_below1, free_below2;   // a free slot below it in its pair; two
  logic [S-1:0][SW-1:0] n_rem;
  logic [N-1:0]     wa, wb, w1_v, w2_v, w1_a;   // lane s's / ins_*'s write; w1 is lane s's
  logic [N-1:0][IW-1:0] w1_msg, w2_msg;
  logic [N-1:0][SW-1:0] w1_size, w2_size;
  logic [N-1:0]     w1_rres, w2_rres;
  logic [N-1:0][TW-1:0] w1_stamp, w2_stamp;
  logic [S-1:0][IW-1:0] i_msg;
  logic [S-1:0]     i_rres;
  logic [S-1:0][TW-1:0] i_stamp;
  /* verilator lint_off UNUSEDSIGNAL */  // (the unused mode's comparisons)
  logic [XS-1:0]     ins_lt, g_lt, g_eq;   // the insert's / the granted entry's bytes vs its pair's slot k
  logic             ins_lt_g;             // the insert is shorter than the granted entry
  logic [N-1:0][XS-1:0] w1_lt, w2_lt;     // per pair: w1's / w2's bytes below slot k's
  logic [N-1:0]     w1_lt_g, w2_lt_g, w12_le;  // ... below the granted entry's; w1's <= w2's
  /* verilator lint_on UNUSEDSIGNAL */
  logic [XS-1:0][SW-1:0] p_pair_rem, g_pair_rem;

  always_comb begin
    // The two lowest free slots of each pair.
    for (integer s = 0; s < N; s++)
      for (integer j = 0; j < XS; j++) begin
        free_below1[s*XS + j] = 1'b0;
        free_below2[s*XS + j] = 1'b0;
        for (integer k = 0; k < j; k++)
          if (!s_valid[s*XS + k]) begin
            if (free_below1[s*XS + j]) free_below2[s*XS + j] = 1'b1;
            free_below1[s*XS + j] = 1'b1;
          end
        low_free[s*XS + j] = !s_valid[s*XS + j] && !free_below1[s*XS + j];
        low_free2[s*XS + j] = !s_valid[s*XS + j] && free_below1[s*XS + j] && !free_below2[s*XS + j];
      end
    for (integer s = 0; s < N; s++) begin
      wa[s] = REGISTERED_TREE && pa_v[s];
      wb[s] = REGISTERED_TREE ? pb_hit[s] : p_v && p_src == PW'(s);
      w1_v[s] = wa[s] || wb[s];
      w2_v[s] = wa[s] && wb[s];
      // Both: the lower lane's first (lane s, or the queue's own lane).
      w1_a[s] = wa[s] && (!wb[s] || a_first[s]);
      w1_msg[s] = w1_a[s] ? lw_msg[s*IW +: IW] : p_msg;
      w2_msg[s] = w1_a[s] ? p_msg : lw_msg[s*IW +: IW];
      w1_size[s] = w1_a[s] ? lw_size[s*SW +: SW] : p_size;
      w2_size[s] = w1_a[s] ? p_size : lw_size[s*SW +: SW];
      w1_rres[s] = w1_a[s] ? lw_rres[s] : p_rres;
      w2_rres[s] = w1_a[s] ? p_rres : lw_rres[s];
      w1_stamp[s] = REGISTERED_TREE ? {wr_stamp[TW-1:PW], w1_a[s] ? PW'(s) : q_lane} : wr_stamp;
      w2_stamp[s] = {wr_stamp[TW-1:PW], w1_a[s] ? q_lane : PW'(s)};
    end
    for (integer i = 0; i < S; i++) begin
      ins_hit1[i] = w1_v[i / XS] && low_free[i];
      ins_hit2[i] = w2_v[i / XS] && low_free2[i];
      ins_hit[i] = ins_hit1[i] || ins_hit2[i];
      i_msg[i] = ins_hit2[i] ? w2_msg[i / XS] : w1_msg[i / XS];
      i_rres[i] = ins_hit2[i] ? w2_rres[i / XS] : w1_rres[i / XS];
      i_stamp[i] = ins_hit2[i] ? w2_stamp[i / XS] : w1_stamp[i / XS];
      g_slot[i] = g_hit && g_src == PW'(i / XS) && g_j == JW'(i % XS);
      n_valid[i] = ins_hit[i] || (s_valid[i] && !(g_slot[i] && g_last));
      n_rem[i] = ins_hit1[i] ? w1_size[i / XS] : ins_hit2[i] ? w2_size[i / XS]
               : (g_slot[i] ? g_rem_next : s_rem[i]);
    end
    // SRPT without pair order: the changed keys against their pair's others,
    // the pair's bytes selected by the (registered) source first (the one
    // insert); REGISTERED_TREE: every pair's writes against its own slots.
    for (integer k = 0; k < XS; k++) begin
      p_pair_rem[k] = s_rem[32'(p_src) * XS + k];
      g_pair_rem[k] = s_rem[32'(g_src) * XS + k];
      ins_lt[k] = p_size < p_pair_rem[k];
      g_lt[k] = g_rem_next < g_pair_rem[k];
      g_eq[k] = g_rem_next == g_pair_rem[k];
    end
    ins_lt_g = p_size < g_rem_next;
    for (integer s = 0; s < N; s++) begin
      for (integer k = 0; k < XS; k++) begin
        w1_lt[s][k] = REGISTERED_TREE ? w1_size[s] < s_rem[s*XS + k] : ins_lt[k];
        w2_lt[s][k] = REGISTERED_TREE && w2_size[s] < s_rem[s*XS + k];
      end
      w1_lt_g[s] = REGISTERED_TREE ? w1_size[s] < g_rem_next : ins_lt_g;
      w2_lt_g[s] = REGISTERED_TREE && w2_size[s] < g_rem_next;
      w12_le[s] = REGISTERED_TREE && w1_size[s] <= w2_size[s];
    end
  end

  always_comb
    for (integer s = 0; s < N; s++)
      for (integer j = 0; j < XS; j++)
        for (integer k = 0; k < XS; k++) begin
          // A new entry is younger than every stored one (of two new ones, w1 is the older).
          if (j >= k) n_older[s][j*XS + k] = 1'b0;
          else if (ins_hit[s*XS + j] && ins_hit[s*XS + k]) n_older[s][j*XS + k] = ins_hit1[s*XS + j];
          else if (ins_hit[s*XS + j]) n_older[s][j*XS + k] = 1'b0;
          else if (ins_hit[s*XS + k]) n_older[s][j*XS + k] = 1'b1;
          else n_older[s][j*XS + k] = older_q[s][j*XS + k];
          // Only a changed key needs its comparisons redone; ties go to the
          // older entry (an insert is the youngest: first only when shorter).
          if (j >= k || !KEEP_PRIO) n_prio[s][j*XS + k] = 1'b0;
          else if (ins_hit[s*XS + j] && ins_hit[s*XS + k])
            n_prio[s][j*XS + k] = ins_hit1[s*XS + j] ? w12_le[s] : !w12_le[s];
          else if (ins_hit[s*XS + j])
            n_prio[s][j*XS + k] = ins_hit1[s*XS + j] ? (g_slot[s*XS + k] ? w1_lt_g[s] : w1_lt[s][k])
                                                     : (g_slot[s*XS + k] ? w2_lt_g[s] : w2_lt[s][k]);
          else if (ins_hit[s*XS + k])
            n_prio[s][j*XS + k] = !(ins_hit1[s*XS + k] ? (g_slot[s*XS + j] ? w1_lt_g[s] : w1_lt[s][j])
                                                       : (g_slot[s*XS + j] ? w2_lt_g[s] : w2_lt[s][j]));
          else if (g_slot[s*XS + j]) n_prio[s][j*XS + k] = g_lt[k] || (g_eq[k] && older_q[s][j*XS + k]);
          else if (g_slot[s*XS + k]) n_prio[s][j*XS + k] = !(g_lt[j] || (g_eq[j] && !older_q[s][j*XS + k]));
          else n_prio[s][j*XS + k] = prio_q[s][j*XS + k];
        end

  // Room from the next state (registered; the pending insert is subtracted as it is read).
  always_comb begin
    for (integer s = 0; s < N; s++) begin
      one_free_n[s] = 1'b0;
      two_free_n[s] = 1'b0;
      for (integer j = 0; j < XS; j++)
        if (!n_valid[s*XS + j]) begin
          if (one_free_n[s]) two_free_n[s] = 1'b1;
          one_free_n[s] = 1'b1;
        end
    end
    n_count = count + CW'(p_v) - CW'(g_hit && g_last);
  end

  // ---------------------------------------------------------------- request: per pair
  // j ranks before k within pair s (whole matrices from the stored halves).
  function automatic slot_before(input [XS*XS-1:0] order, input integer j, input integer k);
    slot_before = (j < k) ? order[j*XS + k] : !order[k*XS + j];
  endfunction

  // Each pair's best candidate slot is registered (pick, one-hot), computed
  // from the next state, so the request stage starts from it. REGISTERED_TREE:
  // the candidate's fields themselves are registered (pc_*, read from the
  // next state by pick_n), so the tree's first level starts from flip-flops
  // as the others do, not from the pick's fan-out and AND-OR over the slots.
  logic [S-1:0]          cand_n, pick_n, pick;
  logic [N-1:0]          pc_v, pc_elig;   // per pair: a candidate; eligible
  logic [N-1:0][JW-1:0]  pc_j;
  logic [N-1:0][IW-1:0]  pc_msg;
  logic [N-1:0][SW-1:0]  pc_rem;
  logic [N-1:0]          pc_rres;
  logic [N-1:0][TW-1:0]  pc_stamp;
  // The pick the fields are read by and the slots' fields it reads: pick and
  // the registers, or (REGISTERED_TREE) pick_n and the next state; the
  // candidate's fields so read (pc_*_f), registered with REGISTERED_TREE.
  logic [S-1:0]          f_pick;
  logic [S-1:0][IW-1:0]  f_msg;
  logic [S-1:0][SW-1:0]  f_rem;
  logic [S-1:0]          f_rres;
  logic [S-1:0][TW-1:0]  f_stamp;
  logic [N-1:0]          pc_v_f;
  logic [N-1:0][JW-1:0]  pc_j_f;
  logic [N-1:0][IW-1:0]  pc_msg_f;
  logic [N-1:0][SW-1:0]  pc_rem_f;
  logic [N-1:0]          pc_rres_f;
  logic [N-1:0][TW-1:0]  pc_stamp_f;

  always_comb
    for (integer s = 0; s < N; s++) begin
      // Next cycle's candidates: valid, visible, and (pair order) no older valid slot.
      for (integer j = 0; j < XS; j++) begin
        cand_n[s*XS + j] = n_valid[s*XS + j] && (ins_hit[s*XS + j] ? (VIS == '0)
                          : (s_age[s*XS + j] == VIS || s_age[s*XS + j] + 1'b1 == VIS));
        if (PAIR_ORDER)
          for (integer k = 0; k < XS; k++)
            if (k != j && n_valid[s*XS + k] && slot_before(n_older[s], k, j)) cand_n[s*XS + j] = 1'b0;
      end
      for (integer j = 0; j < XS; j++) begin
        pick_n[s*XS + j] = cand_n[s*XS + j];
        if (!PAIR_ORDER)
          for (integer k = 0; k < XS; k++)
            if (k != j && cand_n[s*XS + k]
                && !slot_before(KEEP_PRIO ? n_prio[s] : n_older[s], j, k)) pick_n[s*XS + j] = 1'b0;
      end
    end

  always_comb
    for (integer i = 0; i < S; i++) begin
      f_pick[i] = REGISTERED_TREE ? pick_n[i] : pick[i];
      f_msg[i] = (REGISTERED_TREE && ins_hit[i]) ? i_msg[i] : s_msg[i];
      f_rem[i] = REGISTERED_TREE ? n_rem[i] : s_rem[i];
      f_rres[i] = (REGISTERED_TREE && ins_hit[i]) ? i_rres[i] : s_rres[i];
      f_stamp[i] = (REGISTERED_TREE && ins_hit[i]) ? i_stamp[i] : s_stamp[i];
    end

  always_comb
    for (integer s = 0; s < N; s++) begin
      // The pick is one-hot (or zero): OR the picked slot's fields together.
      pc_v_f[s] = 1'b0;
      pc_j_f[s] = '0;
      pc_msg_f[s] = '0;
      pc_rem_f[s] = '0;
      pc_rres_f[s] = 1'b0;
      pc_stamp_f[s] = '0;
      for (integer j = 0; j < XS; j++)
        if (f_pick[s*XS + j]) begin
          pc_v_f[s] = 1'b1;
          pc_j_f[s] = pc_j_f[s] | JW'(j);
          pc_msg_f[s] = pc_msg_f[s] | f_msg[s*XS + j];
          pc_rem_f[s] = pc_rem_f[s] | f_rem[s*XS + j];
          pc_rres_f[s] = pc_rres_f[s] | f_rres[s*XS + j];
          pc_stamp_f[s] = pc_stamp_f[s] | f_stamp[s*XS + j];
        end
    end

  if (REGISTERED_TREE) begin : g_leaf_regs
    always_ff @(posedge clk) begin
      if (!rst_n) pc_v <= '0;
      else pc_v <= pc_v_f;
      pc_j <= pc_j_f;
      pc_msg <= pc_msg_f;
      pc_rem <= pc_rem_f;
      pc_rres <= pc_rres_f;
      pc_stamp <= pc_stamp_f;
    end
  end else begin : g_leaf_comb
    assign pc_v = pc_v_f;
    assign pc_j = pc_j_f;
    assign pc_msg = pc_msg_f;
    assign pc_rem = pc_rem_f;
    assign pc_rres = pc_rres_f;
    assign pc_stamp = pc_stamp_f;
  end

  always_comb
    for (integer s = 0; s < N; s++) pc_elig[s] = pc_v[s] && src_ok[s] && dst_ok;

  // ---------------------------------------------------------------- request: tree over the pairs
  // A tree of radix 4 over the pairs' candidates, in heap order: node i's
  // children are 4i+1 .. 4i+4, the leaves NI .. NI+P-1 (pair k at NI + k,
  // invalid beyond N), the root node 0. Each node compares its four children
  // pairwise at once (6 comparators) and keeps the one no other valid child
  // beats: one comparator and a 4:1 multiplexer per level, ⌈log4 N⌉ levels.
  localparam int unsigned LV = (PW + 1) / 2;          // levels
  localparam int unsigned P = 1 << (2 * LV);          // leaves (4^LV >= N)
  localparam int unsigned NI = (P - 1) / 3;           // inner nodes
  localparam int unsigned NODE_W = 1 + PW + JW + IW + SW + 1 + TW;
  localparam int unsigned BEST_W = 1 + PW + SW + TW;

  // The one of four (valid, bytes, stamp) that no other valid one beats
  // (keys are unique; on a tie, which cannot happen, the lower index).
  function automatic [1:0] best_of_four(input [3:0] v, input [4*SW-1:0] rem, input [4*TW-1:0] stamp);
    logic [3:1] wins;   // (child 0 wins when no other does)
    for (integer i = 1; i < 4; i++) begin
      wins[i] = v[i];
      for (integer j = 0; j < 4; j++)
        if (j < i && v[j] && !ranks_before(rem[i*SW +: SW], stamp[i*TW +: TW], rem[j*SW +: SW], stamp[j*TW +: TW]))
          wins[i] = 1'b0;
        else if (j > i && v[j] && ranks_before(rem[j*SW +: SW], stamp[j*TW +: TW], rem[i*SW +: SW], stamp[i*TW +: TW]))
          wins[i] = 1'b0;
    end
    best_of_four = {wins[2] || wins[3], wins[1] || wins[3]};   // wins is one-hot or zero
  endfunction

  // REGISTERED_TREE: every inner node but the root is registered (t_reg,
  // b_reg): a level per cycle, so the request of the state of cycle t leaves
  // the root in cycle t + LV - 1 (the scheduler registers it) and the path
  // per cycle is one node: a comparator and a 4:1 multiplexer, whatever N is.
  // t_in / b_in: a node's children as it reads them (leaves combinational
  // from the pair picks, inner nodes from their registers; without
  // REGISTERED_TREE the whole tree is combinational).
  logic [NI+P-1:0][NODE_W-1:0] t_node, t_in;
  /* verilator lint_off UNUSEDSIGNAL */  // (without HOLD_TREE or REGISTERED_TREE; node 0's register)
  logic [NI+P-1:0][BEST_W-1:0] b_node, b_in;   // the hold's tree: valid, pair, bytes, stamp
  logic [NI-1:0][BEST_W-1:0] b_reg;
  logic [NI-1:0][1:0] b_pick;
  logic [NI-1:0][NODE_W-1:0] t_reg;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [NI-1:0][1:0] t_pick;

  always_comb begin
    for (integer k = 0; k < P; k++)
      t_node[NI + k] = (k < N) ? {pc_elig[k % N], PW'(k), pc_j[k % N], pc_msg[k % N], pc_rem[k % N],
                                  pc_rres[k % N], pc_stamp[k % N]} : '0;
    for (integer c = 0; c < NI + P; c++) t_in[c] = (c >= NI || !REGISTERED_TREE) ? t_node[c] : t_reg[c % NI];
    for (integer i = NI - 1; i >= 0; i--) begin
      t_pick[i] = best_of_four({t_in[4*i + 4][NODE_W-1], t_in[4*i + 3][NODE_W-1],
                                t_in[4*i + 2][NODE_W-1], t_in[4*i + 1][NODE_W-1]},
                               {t_in[4*i + 4][TW+1 +: SW], t_in[4*i + 3][TW+1 +: SW],
                                t_in[4*i + 2][TW+1 +: SW], t_in[4*i + 1][TW+1 +: SW]},
                               {t_in[4*i + 4][TW-1:0], t_in[4*i + 3][TW-1:0],
                                t_in[4*i + 2][TW-1:0], t_in[4*i + 1][TW-1:0]});
      // (constant indices: a variable one would read the whole array, a false loop)
      case (t_pick[i])
        2'd0: t_node[i] = t_in[4*i + 1];
        2'd1: t_node[i] = t_in[4*i + 2];
        2'd2: t_node[i] = t_in[4*i + 3];
        default: t_node[i] = t_in[4*i + 4];
      endcase
    end
  end
  if (REGISTERED_TREE) begin : g_tree_regs
    always_ff @(posedge clk) t_reg <= t_node[NI-1:0];
  end else begin : g_tree_comb
    assign t_reg = '0;
  end

  if (HOLD_TREE) begin : g_hold_tree
    always_comb begin
      for (integer k = 0; k < P; k++)
        b_node[NI + k] = (k < N) ? {pc_v[k % N], PW'(k), pc_rem[k % N], pc_stamp[k % N]} : '0;
      for (integer c = 0; c < NI + P; c++) b_in[c] = (c >= NI || !REGISTERED_TREE) ? b_node[c] : b_reg[c % NI];
      for (integer i = NI - 1; i >= 0; i--) begin
        b_pick[i] = best_of_four({b_in[4*i + 4][BEST_W-1], b_in[4*i + 3][BEST_W-1],
                                  b_in[4*i + 2][BEST_W-1], b_in[4*i + 1][BEST_W-1]},
                                 {b_in[4*i + 4][TW +: SW], b_in[4*i + 3][TW +: SW],
                                  b_in[4*i + 2][TW +: SW], b_in[4*i + 1][TW +: SW]},
                                 {b_in[4*i + 4][TW-1:0], b_in[4*i + 3][TW-1:0],
                                  b_in[4*i + 2][TW-1:0], b_in[4*i + 1][TW-1:0]});
        case (b_pick[i])
          2'd0: b_node[i] = b_in[4*i + 1];
          2'd1: b_node[i] = b_in[4*i + 2];
          2'd2: b_node[i] = b_in[4*i + 3];
          default: b_node[i] = b_in[4*i + 4];
        endcase
      end
    end
    if (REGISTERED_TREE) begin : g_best_regs
      always_ff @(posedge clk) b_reg <= b_node[NI-1:0];
    end else begin : g_best_comb
      assign b_reg = '0;
    end
    assign rq_best_rem = b_node[0][TW +: SW];
    assign rq_not_best = b_node[0][BEST_W-1] && !(t_node[0][NODE_W-1] && t_node[0][NODE_W-2 -: PW] == b_node[0][SW+TW +: PW]);
  end else begin : g_no_hold_tree
    assign b_node = '0;
    assign b_in = '0;
    assign b_reg = '0;
    assign b_pick = '0;
    assign rq_best_rem = '0;
    assign rq_not_best = 1'b0;
  end

  assign {rq_v, rq_src, rq_j, rq_msg, rq_rem, rq_rres, rq_stamp} = t_node[0];

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      s_valid <= '0;
      pick <= '0;
      p_v <= 1'b0;
      pa_v <= '0;
      one_free <= '1;
      two_free <= (XS > 1) ? '1 : '0;
      count <= '0;
      q_one <= 1'b1;
      q_two <= DEPTH > 1;
      nonempty_q <= 1'b0;
      stored_any <= 1'b0;
      src_ok_q <= '0;
      dst_ok <= 1'b0;
    end else begin
      p_v <= ins_v;
      pa_v <= REGISTERED_TREE ? sins_v : '0;
      s_valid <= n_valid;
      pick <= pick_n;
      one_free <= one_free_n;
      two_free <= two_free_n;
      count <= n_count;
      q_one <= 32'(n_count) + 1 <= DEPTH;
      q_two <= 32'(n_count) + 2 <= DEPTH;
      nonempty_q <= ins_v || n_valid != '0;
      stored_any <= n_valid != '0;
      src_ok_q <= src_free_next;
      dst_ok <= dst_free_next;
    end
    // REGISTERED_TREE: loaded every cycle, p_v alone qualifying them, so
    // ins_v drives no load enable (it was the insert path's end).
    if (ins_v || REGISTERED_TREE) begin
      p_src <= ins_src;
      p_msg <= ins_msg;
      p_size <= ins_size;
      p_rres <= ins_rres;
    end
    older_q <= n_older;
    prio_q <= n_prio;
    for (integer i = 0; i < S; i++) begin
      s_rem[i] <= n_rem[i];
      if (ins_hit[i]) begin
        s_age[i] <= '0;
        s_msg[i] <= i_msg[i];
        s_rres[i] <= i_rres[i];
        s_stamp[i] <= i_stamp[i];
      end else if (s_age[i] != VIS) begin
        s_age[i] <= s_age[i] + 1'b1;
      end
    end
  end

  // nonempty: REGISTERED_TREE: the stored entries' register OR the pending
  // insert, so this cycle's insert (ins_v) reaches only p_v.
  if (REGISTERED_TREE) begin : g_nonempty_reg
    assign nonempty = stored_any || p_v || pa_v != '0;
  end else begin : g_nonempty_comb
    assign nonempty = nonempty_q;
  end

  // ---------------------------------------------------------------- waiting sources
  always_comb
    for (integer s = 0; s < N; s++) begin
      src_waiting[s] = 1'b0;
      for (integer j = 0; j < XS; j++)
        if (s_valid[s*XS + j]) src_waiting[s] = 1'b1;
    end
endmodule

// EDM switch scheduler (§3.1.2): one notification queue per destination port
// (edm_notif_queue: N source-destination pairs of X slots, read through a
// tree of comparators) and priority-PIM, one iteration taking
// ITER = edm_pkg::sw_pim_iter_cycles(N, REGISTERED_TREE) cycles: 3 with the
// request tree combinational (the default, the paper's budget), ceil(log4 N)
// + 3 with it registered a level per cycle and the accept split in two
// (REGISTERED_TREE = 1: logic per cycle one tree node or one comparator,
// whatever N). State O(X·N²) (docs/scheduler.md, "The scheduler's structure"). It is the cycle-exact twin of the reference model
// crates/edm-sim/src/edm/scheduler/ as stepped by edm.sim.Scheduler
// (docs/simulator.md, "Scheduler semantics"); tests/rtl/tb_pim_scheduler.py
// checks every cycle's grants against it.
//
// Notifications: up to N per cycle, one per lane (lane i's fields are bits
// [i*W +: W] of the flat vectors), taken when notif_valid and notif_ready
// (= the lane's FIFO has room; a registered condition). Without
// REGISTERED_TREE each queue inserts one notification per cycle, as the
// paper's ordered lists: the lowest lane whose candidate (its FIFO's head, or
// the arriving notification when the FIFO is empty) targets it claims it, and
// the candidate is inserted if its pair has a free slot (X) and the queue
// holds fewer than DEPTH; the others wait in their lanes' FIFOs (in order).
// With REGISTERED_TREE the insert is per pair, with no claim across lanes.
// Precondition: lane i carries only pairs with source i or destination i
// (edm_switch's lanes do: a /N/ (i, d), an RREQ's notification (m, i));
// a candidate that breaks it is dropped and sets lane_foreign. Only a FIFO's
// head is a candidate (an arrival waits a cycle, SW_NQ_LANE_CYCLES_REGISTERED);
// it is inserted when its pair's stored and pending entries are fewer than X
// (flip-flops of its queue, selected by its own head), so pair (s, d) may take
// lane s's and lane d's in one cycle (X + 1 slots per pair; a queue holds at
// most N·(X + 1), DEPTH is not used). Insertion is the arrival as the
// reference model sees it (inserts of one cycle ordered by lane); an entry
// inserted in cycle c joins the iterations that start from cycle c +
// SW_NQ_INSERT_CYCLES on.
//
// Iterations: an iteration may start in any cycle at least ITER cycles after
// the previous start (PIPELINED: every cycle), and starts if a notification is
// queued or arrives that cycle (as edm.sim.Scheduler.step does). An iteration
// starting in cycle t decides with the state of cycle t. With REGISTERED_TREE
// it takes LV + 3 pipeline stages (LV = ceil(log4 N)), each with at most one
// comparator or one tree node on its path:
//   t .. t+LV-1  request: every destination whose port is free takes its best
//        eligible entry (visible, source port free, oldest of its
//        source-destination pair with PAIR_ORDER): each pair's registered
//        best slot, then a radix-4 tree of comparators over the N pairs, one
//        level per cycle (the queue registers each level).
//   t+LV    accept compare: the N requests compared pairwise in parallel
//        (N(N-1)/2 comparators of bytes and arrival stamps), registered as
//        "b stands, has a's source and beats a" bits.
//   t+LV+1  accept reduce: a request wins if no bit of its row is set (an
//        N-input AND): the paper's per-source ordered array read by a
//        priority encoder, computed afresh.
//   t+LV+2  grant: min(CHUNK_BYTES, remaining) bytes; the entry is updated or
//        removed (its pair's order bits rewritten the same cycle), both ports
//        are held for the chunk's wire time.
// Without REGISTERED_TREE (the default) the same work takes three stages: the
// request (t, the whole tree in one cycle), the accept (t+1, compare and
// reduce in one cycle) and the grant (t+2); none has a comparator on its path
// that grows with N or DEPTH, but the tree's levels and the N-input reduce
// add up within a cycle. The grants appear on the outputs in cycle t+ITER
// (registered; one cycle of grant_valid), in lane s for source s.
//
// Ports: a grant of b bytes holds its source and destination ports until
// t*CYCLE_PS + wire(b), where wire = the data unit's blocks * BLOCK_PS
// (edm_proto message_blocks: /MS/ + /MD/s + /MT/, WREQ or RRES); an iteration
// starting in cycle t' can use them when t'*CYCLE_PS >= that. Each port keeps
// the rest of its hold time in a counter of gcd(BLOCK_PS, CYCLE_PS) units.
// With PARK_DST (the switch's zero-queue rules) a granted destination is also
// parked for its source: until dst_release has named it once per circuit
// granted into it (the switch has sent that circuit's last block), only the
// same source may be granted to it (its data follow on the same uplink, in
// order). The switch may also pause a source or a destination (src_pause,
// dst_pause: not granted while set). With PARK_DST = 0 (the reference model's
// rules) these inputs are ignored. Whatever the rules, a port whose link_up is
// low is never granted, as a source or a destination (its entries wait):
// link_up in cycle c counts for the iterations that start from cycle c + 1 on,
// as the ports' hold (edm.sim.Scheduler.set_link_up after the cycle's step).
//
// Order: the model orders entries by a global arrival counter (the inserts of
// a cycle in lane order). Each entry carries a stamp of the same order,
// compared by serial-number arithmetic. Without REGISTERED_TREE it is that
// counter modulo 2^STAMP_W (numbered the cycle after its insert by a prefix
// count over the lanes): exact while every entry in the scheduler arrived
// within 2^(STAMP_W-1) notifications of the newest. With REGISTERED_TREE it
// has no count across the lanes: {the cycles that inserted a notification
// before its own, modulo 2^STAMP_W; its lane}, exact while every entry
// arrived within 2^(STAMP_W-1) inserting cycles (at most as many
// notifications) of the newest. (32768 with the default STAMP_W = 16.)
//
// Signal prefixes: lane_ storing arriving notifications; q_ the queues'
// request outputs (the tree's root) and req_ their registers; cmp_ the accept
// compare's registers; ac_ the accept reduce, and acc_ its registers; g_ the
// grant stage.
module edm_pim_scheduler #(
    parameter int unsigned N = 4,            // ports (>= 2)
    parameter int unsigned DEPTH = 8,        // notifications per destination queue at most
    parameter int unsigned X = (DEPTH + N - 1) / N,  // slots per source-destination pair
    parameter int unsigned STAMP_W = 16,     // arrival stamp bits (see "Order" above)
    parameter bit          SRPT = 1'b1,      // 1: SRPT, 0: FCFS
    parameter int unsigned CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,
    parameter int unsigned BLOCK_PS = edm_pkg::BLOCK_PS_100G,  // line rate
    parameter int unsigned CYCLE_PS = edm_pkg::CYCLE_PS,       // scheduler clock
    parameter int unsigned STAGE_LOG2 = 2,   // notifications waiting per lane: 2^STAGE_LOG2
    // 1: the request tree registered a level per cycle, the accept in two
    // stages (see "Iterations" above); 0: three stages (the simulator's
    // default, scheduler_registered_tree).
    parameter bit          REGISTERED_TREE = 1'b0,
    // EDM's rules (docs/simulator.md) beside the paper's (the defaults):
    parameter bit          PAIR_ORDER = 1'b1,  // 0: any entry of a pair may be granted (memory-order rule at the hosts)
    parameter bit          PIPELINED = 1'b0,   // 1: an iteration starts every cycle
    parameter int unsigned HOLD = 0,           // priority hold factor k (SRPT; 0: off)
    // The switch's zero-queue rules (edm_switch ZERO_QUEUE): 1: a granted
    // destination is parked for its source (see "Ports" above).
    parameter bit          PARK_DST = 1'b0,
    parameter int unsigned PARK_W = 4          // PARK_DST: circuits into a destination at once < 2^PARK_W
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
    // PARK_DST (unused otherwise): one circuit granted into destination d has
    // ended; do not grant source s / destination d for now.
    input  logic [N-1:0]                     dst_release,
    input  logic [N-1:0]                     src_pause,
    input  logic [N-1:0]                     dst_pause,
    // Per port: its link is up (0: never granted; see "Ports" above).
    input  logic [N-1:0]                     link_up,
    // Grants, lane s = source s.
    output logic [N-1:0]                     grant_valid,
    output logic [N*$clog2(N)-1:0]           grant_src,
    output logic [N*$clog2(N)-1:0]           grant_dst,
    output logic [N*edm_pkg::NG_ID_W-1:0]    grant_msg_id,
    output logic [N*edm_pkg::NG_SIZE_W-1:0]  grant_bytes,
    output logic [N-1:0]                     grant_last,   // the chunk that completes its message
    output logic [$clog2(N*(REGISTERED_TREE ? N*(X + 1) : DEPTH)+1)-1:0] occupancy,  // notifications queued (REGISTERED_TREE: ITER - 2 cycles ago)
    // PARK_DST, for the switch's age rule on parked ports (edm_switch): per
    // destination d, the circuits granted into it and not released
    // (park_cnt), the source it is parked to (park_src), and a grant into it
    // accepted this cycle (on grant_valid next cycle) from another source.
    output logic [N*PARK_W-1:0]              dst_park_cnt,
    output logic [N*$clog2(N)-1:0]           dst_park_src,
    output logic [N-1:0]                     dst_park_new_src,
    // Per destination d, the sources with an entry in its queue (bit d*N + s;
    // not the notifications still in the lanes' FIFOs).
    output logic [N*N-1:0]                   dst_src_waiting,
    // REGISTERED_TREE: a lane's candidate had neither its source nor its
    // destination equal to the lane (a broken precondition, see "Notifications"
    // above): it was dropped. Sticky until reset; 0 without REGISTERED_TREE.
    output logic                             lane_foreign
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
  // REGISTERED_TREE: X + 1 slots per pair (two writers a cycle, see
  // edm_notif_queue's "Insert"), up to N·(X + 1) entries per queue.
  localparam int unsigned XS = X + (REGISTERED_TREE ? 1 : 0);
  localparam int unsigned M = N * (REGISTERED_TREE ? N * XS : DEPTH);  // entries in all
  localparam int unsigned LW = $clog2(M + 1);        // a count of slots
  localparam int unsigned JW = (XS > 1) ? $clog2(XS) : 1;
  // A stamp: {insert cycles before, lane} (REGISTERED_TREE), or the inserts before.
  localparam int unsigned TW = REGISTERED_TREE ? STAMP_W + PW : STAMP_W;
  localparam int unsigned NW = $clog2(N + 1);        // a count of lanes
  // REGISTERED_TREE: the request tree's levels (one cycle each), then accept
  // compare, accept reduce, grant: ITER = LV + 3 cycles from an iteration's
  // start to its grants. Else request, accept, grant: 3. RL: the request's
  // cycles (LV or 1).
  localparam int unsigned LV = edm_pkg::sw_pim_tree_levels(N);
  localparam int unsigned RL = REGISTERED_TREE ? LV : 1;
  localparam int unsigned ITER = edm_pkg::sw_pim_iter_cycles(N, REGISTERED_TREE);
  localparam int unsigned IWW = $clog2(ITER);
  if (LV != (PW + 1) / 2 || ITER != RL + (REGISTERED_TREE ? 3 : 2)) begin : g_bad_iteration
    $error("edm_pim_scheduler: edm_pkg's iteration does not match the queues' radix-4 tree");
  end
  if (REGISTERED_TREE && edm_pkg::SW_NQ_LANE_CYCLES_REGISTERED != 1) begin : g_bad_lane_cycles
    $error("edm_pim_scheduler: a lane FIFO's head is a candidate one cycle after the arrival");
  end
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
  localparam int unsigned WREQ_BLOCKS = edm_pkg::unit_blocks(edm_pkg::KIND_WREQ, 16'(CHUNK_BYTES));
  localparam int unsigned RRES_BLOCKS = edm_pkg::unit_blocks(edm_pkg::KIND_RRES, 16'(CHUNK_BYTES));
  localparam int unsigned MAX_BLOCKS = (WREQ_BLOCKS > RRES_BLOCKS) ? WREQ_BLOCKS : RRES_BLOCKS;
  localparam int unsigned CW = $clog2(MAX_BLOCKS * BU + 1);  // port hold counter
  localparam int unsigned XW = SW + 2;                        // byte arithmetic
  // A chunk's bytes fit CBW bits: its wire time needs only that width.
  localparam int unsigned CBW = $clog2(CHUNK_BYTES + 1);
  localparam int unsigned KW = CBW + 2;                       // chunk wire-time arithmetic
  localparam int unsigned HW = KW + $clog2(BU + 1);

  localparam logic [SW-1:0]  CHUNK = CHUNK_BYTES[SW-1:0];
  localparam logic [KW-1:0]  WREQ_ROUND = KW'(WREQ_OVER + edm_pkg::MD_BYTES - 1);
  localparam logic [KW-1:0]  RRES_ROUND = KW'(RRES_OVER + edm_pkg::MD_BYTES - 1);
  localparam logic [HW-1:0]  BU_H = HW'(BU);
  localparam logic [CW-1:0]  CU_C = CW'(CU);
  // A chunk is short (holds no port past its grant edge) when (md + 2) * BU <=
  // ITER * CU, i.e. md <= SHORT_MD, i.e. bytes <= (SHORT_MD + 1) * MD_BYTES - 1 -
  // round: a constant comparison, not the hold's arithmetic, on the accept path.
  localparam int             SHORT_MD = int'((ITER * CU) / BU) - 2;
  localparam int             SHORT_WREQ = (SHORT_MD + 1) * int'(edm_pkg::MD_BYTES) - 1
                                          - int'(WREQ_OVER + edm_pkg::MD_BYTES - 1);
  localparam int             SHORT_RRES = (SHORT_MD + 1) * int'(edm_pkg::MD_BYTES) - 1
                                          - int'(RRES_OVER + edm_pkg::MD_BYTES - 1);

  // A chunk's hold, computed in the accept stage beside the comparisons (it
  // depends only on the request): its data unit's /MD/ blocks, then the hold
  // counter value at the grant edge (cycle t+ITER), max(0, wire - ITER cycles) in
  // time units.
  function automatic [KW-1:0] md_blocks(input [CBW-1:0] bytes, input rres);
    md_blocks = ({2'b00, bytes} + (rres ? RRES_ROUND : WREQ_ROUND)) >> MD_LOG2;
  endfunction

  // Whether a chunk of min(rem, CHUNK) bytes is at most `limit` bytes.
  function automatic chunk_at_most(input [SW-1:0] rem, input int limit);
    if (SHORT_MD < 0 || limit < 0) chunk_at_most = 1'b0;
    else if (limit >= int'(CHUNK_BYTES)) chunk_at_most = 1'b1;
    else chunk_at_most = rem <= SW'(limit);
  endfunction

  // max(0, (md + 2) * BU - ITER * CU): the comparison is with a constant
  // (md > SHORT_MD), beside one constant multiply-add, not after it.
  localparam int             HOLD_OFFSET = 2 * int'(BU) - int'(ITER * CU);
  function automatic [CW-1:0] hold_after_grant(input [KW-1:0] md);
    hold_after_grant = (SHORT_MD < 0 || int'(md) > SHORT_MD) ? CW'(HW'(md) * BU_H + HW'(HOLD_OFFSET)) : '0;
  endfunction

  // The hold of a chunk of min(rem, CHUNK) bytes: the full chunk's is a
  // constant, selected after the arithmetic rather than before it.
  function automatic [CW-1:0] chunk_hold(input [SW-1:0] rem, input rres);
    if (rem < CHUNK) chunk_hold = hold_after_grant(md_blocks(CBW'(rem), rres));
    else chunk_hold = hold_after_grant(md_blocks(CBW'(CHUNK), rres));
  endfunction

  // The ones among 4 bits, in logic.
  function automatic [2:0] count4(input [3:0] g);
    count4[0] = ^g;
    count4[2] = &g;
    count4[1] = !(&g) && ((g[0] && (g[1] || g[2] || g[3])) || (g[1] && (g[2] || g[3])) || (g[2] && g[3]));
  endfunction

  // Group k of 4 bits of v (zeros past N).
  function automatic [3:0] quad(input [N-1:0] v, input integer k);
    for (integer b = 0; b < 4; b++) quad[b] = (4 * k + b < N) ? v[(4 * k + b) % N] : 1'b0;
  endfunction

  // The ones in v (without REGISTERED_TREE): per 4 bits in logic, then the
  // groups' counts added group after group (an increment per bit would chain
  // N carry chains: N = 8's critical path once).
  function automatic [NW-1:0] count_ones(input [N-1:0] v);
    count_ones = '0;
    for (integer i = 0; i < (N + 3) / 4; i++) count_ones = count_ones + NW'(count4(quad(v, i)));
  endfunction

  // Whether request a outranks request b (keys are unique: arrivals are).
  // Arrival by serial-number order of the stamps (exact within 2^(TW-1)).
  function automatic better(input [SW-1:0] a_rem, input [TW-1:0] a_stamp,
                            input [SW-1:0] b_rem, input [TW-1:0] b_stamp);
    logic [TW-1:0] diff;
    diff = a_stamp - b_stamp;
    if (SRPT) better = (a_rem < b_rem) || (a_rem == b_rem && diff[TW-1]);
    else better = diff[TW-1];
  endfunction

  // ---------------------------------------------------------------- state
  // The occupancy count (see "Occupancy" below). Without REGISTERED_TREE:
  // queued notifications = rest + the inserts of the cycle before
  // (lane_take_q), so that no count sits behind the lane arbitration.
  logic [LW-1:0]         rest;
  logic [N-1:0]          lane_take_q;
  logic [N-1:0][CW-1:0]  src_hold, dst_hold;   // 0: port free
  // A port is free next cycle when its hold is within a cycle of its end, or
  // it is being granted a chunk shorter than the pipeline (registered beside
  // the hold and the accept, so the queues' per-slot eligibility reads a LUT).
  logic [N-1:0]          src_ends, dst_ends;   // hold <= one cycle
  // PARK_DST: circuits granted into each destination and not released, and their source.
  logic [N-1:0][PARK_W-1:0] park_cnt, park_cnt_n;
  logic [N-1:0][PW-1:0]  park_src, park_src_n;
  logic [N-1:0][N-1:0]   q_src_ok;             // [d][s]: source s's port is free for queue d next cycle (REGISTERED_TREE: this cycle)
  logic [IWW-1:0]        iter_wait;            // cycles before the next iteration may start
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE only)
  logic [N-1:0][PW-1:0]  wr_lane;              // by queue: the lane of the insert written this cycle
  /* verilator lint_on UNUSEDSIGNAL */
  // Inserts before last cycle's (without REGISTERED_TREE; with it the per-queue
  // copies in g_stamp_lane count the cycles with an insert instead).
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE only)
  logic [STAMP_W-1:0]    stamp_base;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [N-1:0][TW-1:0]  q_wr_stamp;           // by queue: the stamp of last cycle's insert
  /* verilator lint_off UNUSEDSIGNAL */  // (its last bit; all of it at RL = 1)
  logic [RL-1:0]         start_q;              // start, delayed: [k] = k + 1 cycles ago
  /* verilator lint_on UNUSEDSIGNAL */

  // Request stage registers (loaded when an iteration starts; valid for one cycle).
  logic [N-1:0]          req_v;
  logic [N-1:0][JW-1:0]  req_j;
  logic [N-1:0][PW-1:0]  req_src;
  logic [N-1:0][IW-1:0]  req_msg;
  logic [N-1:0][SW-1:0]  req_rem;
  logic [N-1:0]          req_rres;
  logic [N-1:0][TW-1:0]  req_stamp;
  logic [N-1:0][SW-1:0]  req_best_rem;
  logic [N-1:0]          req_not_best;
  // Accept compare stage registers (the requests carried on, valid for one
  // cycle); without REGISTERED_TREE the same signals, combinational from req_.
  logic [N-1:0]          cmp_v;     // the request stands, but for the iteration just before
  logic [N-1:0][N-1:0]   cmp_beat;  // [a][b]: request b stands, has a's source and beats a
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE)
  logic [N-1:0][N-1:0]   cmp_conf;  // [a][b]: the iteration before's request b had a's source
  /* verilator lint_on UNUSEDSIGNAL */
  // (cmp_j, _src, _msg, _rem, _last, _hold, _short, _rem_next: beside their
  // acc_ registers below.)
  // Accept stage registers (valid for one cycle).
  logic [N-1:0]          acc_by_d;  // by destination: its request was accepted
  // The accepted requests' entries, by destination (the request registers
  // already hold the next iteration's when pipelined).
  logic [N-1:0][JW-1:0]  acc_j, cmp_j;
  logic [N-1:0][PW-1:0]  acc_src, cmp_src;
  logic [N-1:0][IW-1:0]  acc_msg, cmp_msg;
  logic [N-1:0][SW-1:0]  acc_rem, cmp_rem;
  logic [N-1:0]          acc_last, cmp_last;   // the chunk ends its message (bytes <= CHUNK)
  logic [N-1:0][CW-1:0]  acc_hold, cmp_hold;   // the chunk's port hold (computed beside the accept)
  logic [N-1:0]          acc_short, cmp_short;  // by destination: the chunk holds no port past its grant
  logic [N-1:0][SW-1:0]  acc_rem_next, cmp_rem_next;  // the accepted entry's bytes after a chunk
  // Pipelined: the ports matched by the iterations in flight. With
  // REGISTERED_TREE, at an iteration's accept compare the one two before is
  // in its grant stage (acc_) and the LV = ITER - 3 before that in fl_
  // (fl_[k]: k + 3 before); the one just before is caught at the reduce
  // (cmp_conf, acc_by_d). Without, at its accept the one just before is in
  // its grant stage (acc_), the one before that in fl_[0].
  logic [RL-1:0][N-1:0]  fl_src, fl_dst;

  // ---------------------------------------------------------------- notification lanes
  // Each lane has a small FIFO (STAGE_LOG2); its candidate is the FIFO's head,
  // or the arriving notification when the FIFO is empty (no added cycle). Each
  // queue inserts one candidate per cycle, the lowest lane's, if it has room
  // (REGISTERED_TREE: per pair, see below); a candidate not inserted waits in
  // its lane's FIFO.
  localparam int unsigned NOTIF_W = 2 * PW + IW + SW + 1;
  logic [N-1:0][NOTIF_W-1:0] lane_in, st_head;
  logic [N-1:0]          st_valid, st_ready, st_push, st_pop;
  logic [N-1:0][STAGE_LOG2:0] st_count;
  logic                  st_any;        // registered: a lane FIFO holds a notification (= |st_valid)
  logic [N-1:0]          c_v;           // a candidate
  logic [N-1:0][PW-1:0]  c_src, c_dst;
  logic [N-1:0][IW-1:0]  c_msg;
  logic [N-1:0][SW-1:0]  c_size;
  logic [N-1:0]          c_rres;
  logic [N-1:0]          lane_take;     // inserted this cycle
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE only)
  logic [NW-1:0]         taken_q;       // inserted last cycle (lane_take_q), counted
  /* verilator lint_on UNUSEDSIGNAL */
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE only)
  logic [N-1:0]          q_room;        // by destination
  /* verilator lint_on UNUSEDSIGNAL */
  logic [N-1:0][N-1:0]   q_pair_room;   // [d][s]: pair s -> d has a free slot
  logic [N-1:0]          ins_ok;        // by destination: its selected candidate is inserted
  logic [N-1:0]          q_nonempty;    // by destination
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE only)
  logic [N-1:0]          removed;       // by destination: the granted entry is exhausted
  /* verilator lint_on UNUSEDSIGNAL */
  logic [N-1:0][N-1:0]   want, sel;     // [d][i]: lane i's candidate targets d; and is the lowest
  logic                  start;

  for (genvar i = 0; i < N; i++) begin : g_stage
    assign lane_in[i] = {notif_src[i*PW +: PW], notif_dst[i*PW +: PW], notif_msg_id[i*IW +: IW],
                         notif_size[i*SW +: SW], notif_rres[i]};
    // The head in a register: the lane arbitration starts from flip-flops,
    // not from the distributed RAM's read (N = 4's path: a lane's head RAM
    // -> its destination -> another lane's FIFO write, 11.3 ns).
    edm_fifo #(.WIDTH(NOTIF_W), .DEPTH_LOG2(STAGE_LOG2), .REG_HEAD(1'b1)) u_stage (
        .clk, .rst_n, .wr_valid(st_push[i]), .wr_ready(st_ready[i]), .wr_data(lane_in[i]),
        .rd_valid(st_valid[i]), .rd_ready(st_pop[i]), .rd_data(st_head[i]), .count(st_count[i]));
  end

  // With REGISTERED_TREE only the FIFO's head (a register) is a candidate:
  // the insert starts from flip-flops, and whether a lane's candidate is taken
  // does not decide whether its FIFO stores the arriving one (every arrival
  // is written), at the price of a cycle from arrival to insert
  // (edm_pkg::SW_NQ_LANE_CYCLES_REGISTERED).
  always_comb
    for (integer i = 0; i < N; i++) begin
      c_v[i] = st_valid[i] || (!REGISTERED_TREE && notif_valid[i]);
      {c_src[i], c_dst[i], c_msg[i], c_size[i], c_rres[i]} =
          (REGISTERED_TREE || st_valid[i]) ? st_head[i] : lane_in[i];
    end

  // Without REGISTERED_TREE, per queue the lowest lane whose candidate
  // targets it (sel, one-hot, [d][i]; want[d][i]: lane i's candidate targets
  // d): each lane's want against the OR of the lanes' below it (a mask), and
  // a lane is taken when its queue inserts (ins_ok: room read through the
  // selected source). Not a loop over the lower lanes' wants, which Yosys's
  // frontend unrolls into N³ statements.
  // With REGISTERED_TREE an insert per pair, no claim: lane i carries only
  // pairs (i, d) or (s, i) (the precondition), so pair (s, d) has two
  // writers, lanes s and d, and takes both in a cycle (edm_notif_queue,
  // "Insert"). Lane i's candidate is taken when its pair has room (fits: its
  // pair's room bit, a function of the queue's flip-flops, selected by the
  // candidate's destination (source lane) or source (destination lane)):
  // its own head and registers, never another lane's head. A candidate with
  // neither is dropped and flagged (lane_foreign).
  // Throughout, processes are kept small (a few per queue or per lane) and
  // generate scopes few: Yosys's frontend takes time growing faster than
  // linearly with a process's statements and with the number of generate
  // scopes.
  always_comb
    for (integer d = 0; d < N; d++)
      for (integer i = 0; i < N; i++)
        want[d][i] = c_v[i] && c_dst[i] == PW'(d);
  // (Declared here, not in the generate blocks: Yosys's frontend does not
  // find the width of a packed array declared in one.)
  /* verilator lint_off UNUSEDSIGNAL */  // (one set or the other)
  logic [N-1:0]          is_src, is_dst, foreign, fits;   // lane i's candidate: (i, d), (s, i), neither
  logic [N-1:0][N-1:0]   sel_by_lane;   // [i][d] = sel[d][i]
  /* verilator lint_on UNUSEDSIGNAL */
  if (REGISTERED_TREE) begin : g_insert_per_pair
    for (genvar i = 0; i < N; i++) begin : g_lane
      always_comb begin
        is_src[i] = c_src[i] == PW'(i);
        is_dst[i] = c_dst[i] == PW'(i) && !is_src[i];
        foreign[i] = c_v[i] && !is_src[i] && !is_dst[i];
        fits[i] = 1'b0;
        for (integer k = 0; k < N; k++)
          if ((is_src[i] && c_dst[i] == PW'(k) && q_pair_room[k][i])
              || (is_dst[i] && c_src[i] == PW'(k) && q_pair_room[i][k])) fits[i] = 1'b1;
      end
    end
    assign sel = '0;
    always_comb
      for (integer i = 0; i < N; i++) lane_take[i] = c_v[i] && fits[i];
  end else begin : g_claim_mask
    assign is_src = '0;
    assign is_dst = '0;
    assign foreign = '0;
    assign fits = '0;
    for (genvar d = 0; d < N; d++) begin : g_arb
      always_comb
        for (integer i = 0; i < N; i++)
          sel[d][i] = want[d][i] && (want[d] & ((N'(1) << i) - N'(1))) == '0;
    end
    always_comb
      for (integer i = 0; i < N; i++)
        for (integer d = 0; d < N; d++)
          sel_by_lane[i][d] = sel[d][i];
    always_comb
      for (integer i = 0; i < N; i++) lane_take[i] = |(sel_by_lane[i] & ins_ok);
  end

  always_comb begin
    for (integer i = 0; i < N; i++) begin
      st_pop[i] = st_valid[i] && (lane_take[i] || foreign[i]);
      // The arriving notification waits unless it was inserted at once
      // (never, with REGISTERED_TREE).
      notif_ready[i] = st_ready[i];
      st_push[i] = notif_valid[i] && (REGISTERED_TREE || st_valid[i] || !lane_take[i]);
    end
    taken_q = count_ones(lane_take_q);
  end

  // ---------------------------------------------------------------- stage 1: request (the queues)
  logic [N-1:0]          src_free_next, dst_free_next;  // hold == 0 in the next cycle
  logic [N-1:0][CW-1:0]  src_hold_n, dst_hold_n;
  logic [N-1:0]          q_v;
  logic [N-1:0][JW-1:0]  q_j;
  logic [N-1:0][PW-1:0]  q_src;
  logic [N-1:0][IW-1:0]  q_msg;
  logic [N-1:0][SW-1:0]  q_rem;
  logic [N-1:0]          q_rres;
  logic [N-1:0][TW-1:0]  q_stamp;
  logic [N-1:0][SW-1:0]  q_best_rem;
  logic [N-1:0]          q_not_best;
  logic [N-1:0][SW-1:0]  g_rem_next;   // by destination
  logic [N-1:0]          g_last;


  // REGISTERED_TREE: every lane's candidate's fields, registered each cycle
  // (the queues write a pair's insert from lane s the cycle after it is taken).
  logic [N*IW-1:0]       lw_msg;
  logic [N*SW-1:0]       lw_size;
  logic [N-1:0]          lw_rres;
  if (REGISTERED_TREE) begin : g_lane_fields
    always_ff @(posedge clk)
      for (integer i = 0; i < N; i++) begin
        lw_msg[i*IW +: IW] <= c_msg[i];
        lw_size[i*SW +: SW] <= c_size[i];
        lw_rres[i] <= c_rres[i];
      end
  end else begin : g_no_lane_fields
    assign lw_msg = '0;
    assign lw_size = '0;
    assign lw_rres = '0;
  end

  for (genvar d = 0; d < N; d++) begin : g_queue
    // Without REGISTERED_TREE the inserted candidate is the one lane (if
    // any) that won this queue, its fields ORed through the one-hot
    // selection; inserted when its pair and the queue have room (else it
    // waits in its lane, and the queue takes no other lane's this cycle).
    // With REGISTERED_TREE: lane d's candidate, of pair (its source, d), if
    // taken; and pair s takes lane s's (sins_v) if taken and of pair (s, d).
    logic             ins_v;
    logic [PW-1:0]    ins_lane, ins_src;
    logic [IW-1:0]    ins_msg;
    logic [SW-1:0]    ins_size;
    logic             ins_rres;
    logic [N-1:0]     sins_v;
    always_comb begin
      ins_lane = '0;
      ins_src = '0;
      ins_msg = '0;
      ins_size = '0;
      ins_rres = 1'b0;
      for (integer i = 0; i < N; i++)
        if (sel[d][i]) begin
          ins_lane = ins_lane | PW'(i);
          ins_src = ins_src | c_src[i];
          ins_msg = ins_msg | c_msg[i];
          ins_size = ins_size | c_size[i];
          ins_rres = ins_rres | c_rres[i];
        end
      for (integer s = 0; s < N; s++)
        sins_v[s] = REGISTERED_TREE && lane_take[s] && is_src[s] && c_dst[s] == PW'(d);
      if (REGISTERED_TREE) begin
        ins_src = c_src[d];
        ins_msg = c_msg[d];
        ins_size = c_size[d];
        ins_rres = c_rres[d];
      end
      ins_ok[d] = REGISTERED_TREE ? lane_take[d] && is_dst[d]
                                  : q_room[d] && want[d] != '0 && q_pair_room[d][ins_src];
      ins_v = ins_ok[d];
    end
    edm_notif_queue #(.N(N), .X(X), .DEPTH(DEPTH), .SRPT(SRPT), .PAIR_ORDER(PAIR_ORDER),
                      .HOLD_TREE(SRPT && HOLD > 0), .REGISTERED_TREE(REGISTERED_TREE),
                      .SRC_OK_REGISTERED(REGISTERED_TREE), .STAMP_W(TW)) u_q (
        .clk, .rst_n,
        .room(q_room[d]), .pair_room(q_pair_room[d]), .ins_v, .ins_src, .ins_msg,
        .ins_size, .ins_rres, .wr_stamp(q_wr_stamp[d]),
        .sins_v, .lw_msg, .lw_size, .lw_rres, .q_lane(PW'(d)),
        .src_free_next(q_src_ok[d]), .dst_free_next(dst_free_next[d]), .nonempty(q_nonempty[d]),
        .rq_v(q_v[d]), .rq_j(q_j[d]), .rq_src(q_src[d]), .rq_msg(q_msg[d]), .rq_rem(q_rem[d]),
        .rq_rres(q_rres[d]), .rq_stamp(q_stamp[d]), .rq_best_rem(q_best_rem[d]),
        .rq_not_best(q_not_best[d]),
        .src_waiting(dst_src_waiting[d*N +: N]),
        .g_hit(acc_by_d[d]), .g_src(acc_src[d]), .g_j(acc_j[d]), .g_last(g_last[d]),
        .g_rem_next(g_rem_next[d]));
    // The insert is written into its slot the next cycle, with its stamp.
    always_ff @(posedge clk) wr_lane[d] <= ins_lane;
  end

  // Arrival stamps, the model's arrival order (a global count, the inserts of
  // a cycle in lane order). REGISTERED_TREE: the cycles with an insert before
  // its own, then its lane (no count across the lanes). Else the inserts of a
  // cycle are numbered in lane order after every earlier one, the cycle after
  // (from lane_take_q): lane i's is stamp_base + the inserts of the lanes
  // below it, a prefix count in log2(N) steps of adders.
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE only)
  logic [N-1:0][NW-1:0]  lanes_below;
  logic [N-1:0][TW-1:0]  lane_stamp;
  /* verilator lint_on UNUSEDSIGNAL */
  /* verilator lint_off UNUSEDSIGNAL */  // (with REGISTERED_TREE only)
  logic [N-1:0][STAMP_W-1:0] base_copy, base_next;
  /* verilator lint_on UNUSEDSIGNAL */
  if (REGISTERED_TREE) begin : g_stamp_lane
    // The cycles with an insert before last cycle's, a copy per queue, each with its
    // successor kept beside it: one register would drive every queue's slots
    // (N²·2(X + 1) loads; at N = 32 its fan-out and the increment behind it
    // were the longest path), and the increment runs register to register,
    // the cycle's insert bit only selecting.
    always_ff @(posedge clk)
      if (!rst_n) begin
        base_copy <= '0;
        for (integer d = 0; d < N; d++) base_next[d] <= STAMP_W'(1);
      end else if (lane_take_q != '0)
        for (integer d = 0; d < N; d++) begin
          base_copy[d] <= base_next[d];
          base_next[d] <= base_next[d] + STAMP_W'(1);
        end
    always_comb
      for (integer d = 0; d < N; d++) q_wr_stamp[d] = {base_copy[d], PW'(0)};   // (the lane: the queue's)
  end else begin : g_stamp_count
    always_comb begin
      for (integer i = 0; i < N; i++) lanes_below[i] = (i > 0) ? NW'(lane_take_q[(i + N - 1) % N]) : '0;
      for (integer k = 1; k < N; k = k * 2)
        for (integer i = N - 1; i >= k; i--) lanes_below[i] = lanes_below[i] + lanes_below[i - k];
      for (integer i = 0; i < N; i++) lane_stamp[i] = stamp_base + TW'(lanes_below[i]);
      for (integer d = 0; d < N; d++) q_wr_stamp[d] = lane_stamp[wr_lane[d]];
    end
  end

  // The accept (compare) stage's comparisons, per pair of requests a < b: by
  // key, the arrival order from the requests' stamps, with the standing of
  // the one that beats (cmp_beat: registered with REGISTERED_TREE, so the
  // reduce stage is an AND).
  logic [N-1:0][N-1:0]   beat_n;   // [a][b]: request b stands, has a's source and beats a
  logic [N-1:0]          stands;   // the request stands (but for the iteration just before)
  for (genvar a = 0; a < N; a++) begin : g_cmp_a
    for (genvar b = a + 1; b < N; b++) begin : g_pair
      logic beats;   // request a outranks request b
      assign beats = better(req_rem[a], req_stamp[a], req_rem[b], req_stamp[b]);
      assign beat_n[a][b] = stands[b] && req_src[b] == req_src[a] && !beats;
      assign beat_n[b][a] = stands[a] && req_src[a] == req_src[b] && beats;
    end
    assign beat_n[a][a] = 1'b0;
  end

  // "A notification is queued or inserted": when none is queued every queue
  // has room, so a candidate is inserted exactly when there is one.
  // (c_v != 0 is notif_valid != 0, not a candidate with REGISTERED_TREE, or a
  // lane FIFO's head, st_any: a register.)
  assign start = (PIPELINED || iter_wait == '0)
                 && (q_nonempty != '0 || (!REGISTERED_TREE && notif_valid != '0) || st_any);

  // ---------------------------------------------------------------- stage 2: accept compare and reduce
  // A request stands unless (pipelined) its source or destination was matched
  // by an iteration still in flight (it was chosen from ports and a queue
  // those have not updated yet), or (priority hold) a visible entry of its
  // queue is at least HOLD times shorter: the destination waits for it.
  // Every pair of requests is compared once; a standing request is accepted
  // when no other one to its source beats it. With REGISTERED_TREE:
  // Compare (req_ -> cmp_): every pair of requests compared once, the hold
  // rule, the iterations in flight but the one just before (fl_, and acc_:
  // the one two before); by destination d, cmp_conf[d][b]: the iteration
  // just before (in its reduce stage) had request b from d's source.
  // Reduce (cmp_ -> acc_): a standing request is accepted when no other one
  // to its source beats it and the iteration just before matched neither
  // its destination nor (through the request b it accepted) its source.
  // Without, cmp_ is req_'s compare itself and the iterations in flight are
  // the one in its grant stage (acc_) and the one before (fl_[0]).
  logic [N-1:0]          ac_by_d;
  logic [N-1:0]          old_dst, old_src;   // matched by an iteration in flight (compare stage)
  logic [N-1:0]          fl_src_any, fl_dst_any;
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE)
  logic [N-1:0][N-1:0]   conf_n;
  /* verilator lint_on UNUSEDSIGNAL */
  // The grant stage's view by source (from the accept registers, so the
  // accept stage ends at its per-destination decision).
  logic [N-1:0]          g_v;          // source s was granted
  logic [N-1:0][PW-1:0]  g_d;          // its destination
  logic [N-1:0]          g_short_s;    // its chunk is short

  always_comb begin
    fl_src_any = '0;
    fl_dst_any = '0;
    for (integer k = 0; k < RL; k++) begin
      fl_src_any = fl_src_any | fl_src[k];
      fl_dst_any = fl_dst_any | fl_dst[k];
    end
  end
  for (genvar d = 0; d < N; d++) begin : g_stands
    always_comb begin
      old_dst[d] = acc_by_d[d] || fl_dst_any[d];
      old_src[d] = fl_src_any[req_src[d]] || (!REGISTERED_TREE && g_v[req_src[d]]);
      for (integer b = 0; b < N; b++) begin
        if (REGISTERED_TREE && acc_by_d[b] && acc_src[b] == req_src[d]) old_src[d] = 1'b1;
        conf_n[d][b] = cmp_src[b] == req_src[d];
      end
      stands[d] = req_v[d];
      if (PIPELINED && (old_dst[d] || old_src[d])) stands[d] = 1'b0;
      if (SRPT && HOLD > 0 && req_not_best[d]
          && (XW'(req_best_rem[d]) * XW'(HOLD)) <= XW'(req_rem[d]))
        stands[d] = 1'b0;
    end
  end

  for (genvar d = 0; d < N; d++) begin : g_reduce
    always_comb begin
      ac_by_d[d] = cmp_v[d] && !(REGISTERED_TREE && PIPELINED && acc_by_d[d]);
      for (integer b = 0; b < N; b++)
        if ((REGISTERED_TREE && acc_by_d[b]) ? (PIPELINED && cmp_conf[d][b]) : cmp_beat[d][b]) ac_by_d[d] = 1'b0;
    end
  end

  // ---------------------------------------------------------------- stage 3: grant
  // REGISTERED_TREE: the accepted sources also one-hot (acc_src_1h[d][s],
  // decoded from cmp_src before the register), so that a source's match is
  // an AND and its grant an OR-tree: the binary acc_src decoded after its
  // register was the longest path at N = 16 and 32 (into the grant's message
  // id and into every queue's src_ok). The binary copy stays for the queues'
  // grant (g_src), the parking and the iterations in flight. Without
  // REGISTERED_TREE the decode of acc_src (as before: no flip-flop more).
  logic [N-1:0][N-1:0]   acc_src_1h;   // [d][s]: destination d's accepted request is from source s
  logic [N-1:0][N-1:0]   g_match;      // [s][d]: destination d's accepted request is source s's
  if (REGISTERED_TREE) begin : g_acc_src_1h
    always_ff @(posedge clk)
      for (integer d = 0; d < N; d++)
        for (integer s = 0; s < N; s++) acc_src_1h[d][s] <= cmp_src[d] == PW'(s);
  end else begin : g_acc_src_dec
    always_comb
      for (integer d = 0; d < N; d++)
        for (integer s = 0; s < N; s++) acc_src_1h[d][s] = acc_src[d] == PW'(s);
  end
  always_comb
    for (integer s = 0; s < N; s++)
      for (integer d = 0; d < N; d++)
        g_match[s][d] = acc_by_d[d] && acc_src_1h[d][s];
  for (genvar s = 0; s < N; s++) begin : g_by_src
    always_comb begin
      g_v[s] = g_match[s] != '0;
      g_d[s] = '0;
      for (integer d = 0; d < N; d++)
        if (g_match[s][d]) g_d[s] = g_d[s] | PW'(d);
      g_short_s[s] = |(g_match[s] & acc_short);
    end
  end

  logic [N-1:0][SW-1:0]  g_bytes;   // by destination
  logic [N-1:0][CW-1:0]  g_hold;

  always_comb
    for (integer d = 0; d < N; d++) begin
      g_bytes[d] = acc_last[d] ? acc_rem[d] : CHUNK;
      g_last[d] = acc_last[d];
      g_rem_next[d] = acc_rem_next[d];
      g_hold[d] = acc_hold[d];
      removed[d] = acc_by_d[d] && g_last[d];
    end

  // The granted chunk's fields by source. REGISTERED_TREE: one-hot AND-OR
  // multiplexers on g_match (a source has one destination at most; zeros
  // when not granted, where nothing reads them); else indexed by g_d.
  logic [N-1:0][IW-1:0]  gs_msg;
  logic [N-1:0][SW-1:0]  gs_bytes;
  logic [N-1:0]          gs_last;
  logic [N-1:0][CW-1:0]  gs_hold;
  always_comb
    for (integer s = 0; s < N; s++)
      if (REGISTERED_TREE) begin
        gs_msg[s] = '0;
        gs_bytes[s] = '0;
        gs_last[s] = 1'b0;
        gs_hold[s] = '0;
        for (integer d = 0; d < N; d++)
          if (g_match[s][d]) begin
            gs_msg[s] = gs_msg[s] | acc_msg[d];
            gs_bytes[s] = gs_bytes[s] | g_bytes[d];
            gs_last[s] = gs_last[s] | g_last[d];
            gs_hold[s] = gs_hold[s] | g_hold[d];
          end
      end else begin
        gs_msg[s] = acc_msg[g_d[s]];
        gs_bytes[s] = g_bytes[g_d[s]];
        gs_last[s] = g_last[g_d[s]];
        gs_hold[s] = g_hold[g_d[s]];
      end

  // Ports: hold for the chunk's wire time, count down a cycle at a time.
  always_comb begin
    for (integer s = 0; s < N; s++)
      src_hold_n[s] = g_v[s] ? gs_hold[s] : (src_hold[s] > CU_C ? src_hold[s] - CU_C : '0);
    for (integer d = 0; d < N; d++)
      dst_hold_n[d] = acc_by_d[d] ? g_hold[d] : (dst_hold[d] > CU_C ? dst_hold[d] - CU_C : '0);
    // = (hold_n == 0), without waiting for hold_n.
    for (integer p = 0; p < N; p++) begin
      src_free_next[p] = g_v[p] ? g_short_s[p] : src_ends[p];
      dst_free_next[p] = (acc_by_d[p] ? acc_short[p] : dst_ends[p]) && !(PARK_DST && dst_pause[p]) && link_up[p];
    end
    for (integer d = 0; d < N; d++) begin
      park_cnt_n[d] = park_cnt[d] + PARK_W'(acc_by_d[d]) - PARK_W'(dst_release[d]);
      park_src_n[d] = acc_by_d[d] ? acc_src[d] : park_src[d];
    end
  end

  // The parked source, one-hot beside park_src under REGISTERED_TREE (from
  // acc_src_1h, no compare on the way into the N² src_ok bits); else decoded.
  /* verilator lint_off UNUSEDSIGNAL */  // (with PARK_DST only)
  logic [N-1:0][N-1:0]   park_src_1h, park_src_1h_n;   // [d][s]
  /* verilator lint_on UNUSEDSIGNAL */
  always_comb
    for (integer d = 0; d < N; d++)
      for (integer s = 0; s < N; s++)
        park_src_1h_n[d][s] = REGISTERED_TREE ? (acc_by_d[d] ? acc_src_1h[d][s] : park_src_1h[d][s])
                                              : park_src_n[d] == PW'(s);
  if (REGISTERED_TREE && PARK_DST) begin : g_park_src_1h
    always_ff @(posedge clk) park_src_1h <= park_src_1h_n;
  end else begin : g_no_park_src_1h
    assign park_src_1h = '0;
  end

  // The sources free for each queue's next request. REGISTERED_TREE: registered
  // here, once per source (src_free_q) and, with PARK_DST, per queue its parking
  // term (park_ok_q), so that the grant's OR-trees end at one flip-flop per
  // source, not at the N queues' copies (N² loads, the longest path at N = 32);
  // the N-fold fan-out of a source's bit then starts from its flip-flop. Else
  // each queue registers its row.
  // (Declared here, not in the generate block: Yosys cannot size a
  // two-dimensional signal declared in one.)
  /* verilator lint_off UNUSEDSIGNAL */  // (src_free_q: with REGISTERED_TREE; park_ok_q: and PARK_DST)
  logic [N-1:0]          src_free_q;   // source s's port is free this cycle (and its link up)
  logic [N-1:0][N-1:0]   park_ok_q;    // [d][s]: destination d's parking admits source s
  /* verilator lint_on UNUSEDSIGNAL */
  if (REGISTERED_TREE) begin : g_src_ok_reg
    always_ff @(posedge clk)
      if (!rst_n) begin
        src_free_q <= '0;
        park_ok_q <= '0;
      end else
        for (integer s = 0; s < N; s++) begin
          src_free_q[s] <= src_free_next[s] && link_up[s];
          for (integer d = 0; d < N; d++)
            park_ok_q[d][s] <= PARK_DST && !src_pause[s] && (park_cnt_n[d] == '0 || park_src_1h_n[d][s]);
        end
    always_comb
      for (integer d = 0; d < N; d++)
        for (integer s = 0; s < N; s++) q_src_ok[d][s] = src_free_q[s] && (!PARK_DST || park_ok_q[d][s]);
  end else begin : g_src_ok
    assign src_free_q = '0;
    assign park_ok_q = '0;
    always_comb
      for (integer d = 0; d < N; d++)
        for (integer s = 0; s < N; s++)
          q_src_ok[d][s] = src_free_next[s] && link_up[s]
              && (!PARK_DST || (!src_pause[s] && (park_cnt_n[d] == '0 || park_src_1h_n[d][s])));
  end

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      lane_take_q <= '0;
      lane_foreign <= 1'b0;
      stamp_base <= '0;
      st_any <= 1'b0;
      src_hold <= '0;
      dst_hold <= '0;
      src_ends <= '1;
      dst_ends <= '1;
      park_cnt <= '0;
      iter_wait <= '0;
      start_q <= '0;
      req_v <= '0;
      acc_by_d <= '0;
      fl_src <= '0;
      fl_dst <= '0;
      grant_valid <= '0;
    end else begin
      lane_take_q <= lane_take;
      lane_foreign <= lane_foreign || foreign != '0;
      stamp_base <= stamp_base + STAMP_W'(taken_q);
      st_any <= 1'b0;
      for (integer i = 0; i < N; i++)
        if (st_push[i] || st_count[i] > (STAGE_LOG2 + 1)'(1) || (st_count[i] == (STAGE_LOG2 + 1)'(1) && !st_pop[i]))
          st_any <= 1'b1;

      // Iteration grid and pipeline.
      iter_wait <= start ? IWW'(ITER - 1) : (iter_wait != '0 ? iter_wait - 1'b1 : '0);
      // The queues' requests of the state of cycle t leave their trees in
      // cycle t + RL - 1.
      start_q[0] <= start;
      fl_src[0] <= g_v;
      fl_dst[0] <= acc_by_d;
      for (integer k = 1; k < RL; k++) begin
        start_q[k] <= start_q[k - 1];
        fl_src[k] <= fl_src[k - 1];
        fl_dst[k] <= fl_dst[k - 1];
      end
      req_v <= ((RL > 1) ? start_q[(RL + RL - 2) % RL] : start) ? q_v : '0;
      acc_by_d <= ac_by_d;
      grant_valid <= g_v;

      src_hold <= src_hold_n;
      dst_hold <= dst_hold_n;
      park_cnt <= park_cnt_n;
      for (integer p = 0; p < N; p++) begin
        src_ends[p] <= src_hold_n[p] <= CU_C;
        dst_ends[p] <= dst_hold_n[p] <= CU_C;
      end
    end

    // Data registers (no reset needed: qualified by the valid bits above; the
    // request registers load every cycle: read only while req_v, which start
    // qualifies, so start drives N flip-flops, not the whole stage).
    req_j <= q_j;
    req_src <= q_src;
    req_msg <= q_msg;
    req_rem <= q_rem;
    req_rres <= q_rres;
    req_stamp <= q_stamp;
    req_best_rem <= q_best_rem;
    req_not_best <= q_not_best;
    acc_j <= cmp_j;
    acc_src <= cmp_src;
    park_src <= park_src_n;
    acc_msg <= cmp_msg;
    acc_rem <= cmp_rem;
    acc_last <= cmp_last;
    acc_hold <= cmp_hold;
    acc_short <= cmp_short;
    acc_rem_next <= cmp_rem_next;
    for (integer s = 0; s < N; s++) begin
      grant_dst[s*PW +: PW] <= g_d[s];
      grant_msg_id[s*IW +: IW] <= gs_msg[s];
      grant_bytes[s*SW +: SW] <= gs_bytes[s];
      grant_last[s] <= gs_last[s];
    end
  end

  // The accept compare's results: registered (REGISTERED_TREE) or straight on.
  logic [N-1:0]          cmp_last_n, cmp_short_n;
  logic [N-1:0][CW-1:0]  cmp_hold_n;
  logic [N-1:0][SW-1:0]  cmp_rem_next_n;
  always_comb
    for (integer d = 0; d < N; d++) begin
      cmp_last_n[d] = req_rem[d] <= CHUNK;
      cmp_hold_n[d] = chunk_hold(req_rem[d], req_rres[d]);
      cmp_short_n[d] = chunk_at_most(req_rem[d], req_rres[d] ? SHORT_RRES : SHORT_WREQ);
      cmp_rem_next_n[d] = req_rem[d] - CHUNK;
    end
  if (REGISTERED_TREE) begin : g_accept_split
    always_ff @(posedge clk) begin
      if (!rst_n) cmp_v <= '0;
      else cmp_v <= stands;
      cmp_beat <= beat_n;
      cmp_conf <= conf_n;
      cmp_j <= req_j;
      cmp_src <= req_src;
      cmp_msg <= req_msg;
      cmp_rem <= req_rem;
      cmp_last <= cmp_last_n;
      cmp_hold <= cmp_hold_n;
      cmp_short <= cmp_short_n;
      cmp_rem_next <= cmp_rem_next_n;
    end
  end else begin : g_accept_one
    assign cmp_v = stands;
    assign cmp_beat = beat_n;
    assign cmp_conf = '0;
    assign cmp_j = req_j;
    assign cmp_src = req_src;
    assign cmp_msg = req_msg;
    assign cmp_rem = req_rem;
    assign cmp_last = cmp_last_n;
    assign cmp_hold = cmp_hold_n;
    assign cmp_short = cmp_short_n;
    assign cmp_rem_next = cmp_rem_next_n;
  end

  always_comb
    for (integer s = 0; s < N; s++) grant_src[s*PW +: PW] = PW'(s);

  // ---------------------------------------------------------------- occupancy
  // Without REGISTERED_TREE: the notifications queued now (the inserts of last
  // cycle, lane_take_q, counted and added to rest in this cycle's logic: a
  // count of N bits and two adders, log N deep). With REGISTERED_TREE the
  // same count OCC_LAG = LV + 1 cycles late, so that no cycle holds more than
  // one adder: per cycle the net change (last cycle's inserts, lane_take_q,
  // minus the removals of the cycle before, counted from the grant registers)
  // is counted per 4 lanes (registered), the groups' counts added in a
  // radix-4 tree one level per cycle (LV - 1 levels), and the total added to
  // rest. Nothing in the scheduler reads it (the switch leaves it open).
  // (Declared here, not in the generate block: see sel_by_lane.)
  localparam int unsigned OG = (N + 3) / 4;            // level-0 groups of 4 lanes
  localparam int unsigned DW = NW + 1;                 // a change, -N .. N, two's complement
  /* verilator lint_off UNUSEDSIGNAL */  // (without REGISTERED_TREE)
  logic [N-1:0]                    occ_removed;        // removed the cycle before, by source
  logic [LV-1:0][OG-1:0][DW-1:0]   occ_part, occ_part_n;  // [k][g]: level k's partial changes
  logic [LV-1:0][4*OG-1:0][DW-1:0] occ_child;          // [k][c]: level k's node c, zeros past OG
  /* verilator lint_on UNUSEDSIGNAL */
  if (REGISTERED_TREE) begin : g_occ_tree
    assign occ_removed = grant_valid & grant_last;
    always_comb begin
      occ_part_n = '0;
      for (integer g = 0; g < OG; g++)
        occ_part_n[0][g] = DW'(count4(quad(lane_take_q, g))) - DW'(count4(quad(occ_removed, g)));
      // A node: its 4 children added in pairs, then the pairs (two adders deep).
      occ_child = '0;
      for (integer k = 0; k < LV; k++)
        for (integer g = 0; g < OG; g++) occ_child[k][g] = occ_part[k][g];
      for (integer k = 1; k < LV; k++)
        for (integer g = 0; g < OG; g++)
          occ_part_n[k][g] = (occ_child[k - 1][4 * g] + occ_child[k - 1][4 * g + 1])
                             + (occ_child[k - 1][4 * g + 2] + occ_child[k - 1][4 * g + 3]);
    end
    always_ff @(posedge clk) begin
      if (!rst_n) begin
        occ_part <= '0;
        rest <= '0;
      end else begin
        occ_part <= occ_part_n;
        rest <= rest + LW'($signed(occ_part[LV - 1][0]));
      end
    end
    assign occupancy = rest;
  end else begin : g_occ_count
    logic [LW-1:0] n_removed;
    assign n_removed = LW'(count_ones(removed));
    always_ff @(posedge clk)
      if (!rst_n) rest <= '0;
      else rest <= rest + LW'(taken_q) - n_removed;
    assign occupancy = rest + LW'(taken_q);
  end

  // ---------------------------------------------------------------- parking, for the switch's age rule
  assign dst_park_cnt = park_cnt;
  assign dst_park_src = park_src;
  for (genvar d = 0; d < N; d++) begin : g_park_out
    assign dst_park_new_src[d] = acc_by_d[d] && acc_src[d] != park_src[d];
  end
  // dst_src_waiting: straight from each queue's src_waiting (g_queue).
endmodule

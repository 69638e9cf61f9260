// EDM switch datapath (§3.1, §3.2.2) around edm_pim_scheduler. N ports, one
// 66-bit block {payload, sync} per port per clock, one clock domain; a host's
// node id is its port number.
//
// Ingress (per port; 1 register stage = SW_CLASSIFY_CYCLES; the classifier
// and the /N/ sequences are edm_ingress_classify):
//   * /N/ with zero reserved bits and a CRC-8 that checks for the number the
//     uplink's control sequence expects next (docs/protocol.md §5a; after a
//     loss, two rejected /N/ with consecutive numbers resynchronise it, as in
//     edm_rx) -> notification lane i of the scheduler (src = i, dst, id, size,
//     rres = 0). Any other /N/ -> cnt_bad_notif. A data block that is the /N/
//     expected next (its sync header flipped) is not data: dropped, counted
//     in cnt_bad_notif too.
//   * /MS/ of an RREQ/RMWREQ -> implicit notification (src = the memory node
//     named in the header, dst = i, size = len or RMW_RESULT_BYTES, rres = 1);
//     the unit's blocks are stored in the FIFO of pair (i, memory) until the
//     read's first grant, when the switch forwards them to the memory node
//     (the forwarded RREQ is the first grant; no /G/ is sent for it).
//   * /MS/../MT/ of a WREQ/RRES unit: stored in the ingress data FIFO and sent
//     along the ingress's oldest open circuit (set up by a grant); the unit
//     is found by /MS/ and /MT/ only.
//   * /A/ (a memory node's write acknowledgement, docs/protocol.md §4b),
//     numbered with the uplink's /N/ and checked like them (a bad one ->
//     cnt_bad_notif): a good one naming another port (NG_DST, the requester)
//     waits in the ingress's ack queue (2^AQ_LOG2 entries, lost to a full
//     queue in cnt_overflow) and leaves on that port's egress with NG_DST
//     rewritten to the ingress (the memory node) and the egress's next
//     control number: no circuit, no grant. One naming no other port ->
//     cnt_dropped.
//   * Unknown blocks (bad sync, unknown type or subtype, /MST/, a /G/ from a
//     host) -> cnt_unknown; standard Ethernet blocks other than idle -> cnt_non_edm
//     and out on fr_valid/fr_block (stage 1) to the L2 stage (edm_eth_switch
//     puts edm_l2_stage there; frame blocks never enter a unit); units that
//     cannot be taken (bad kind, no circuit, queue/FIFO full, invalid port)
//     -> cnt_dropped. Nothing counted is ever forwarded. Counters: 16-bit, saturating,
//     one cycle behind their events.
//   * Units cut short (a bit error on the uplink): an unknown block, a frame
//     block or a second /MS/ inside an open stored RREQ or data unit (a unit
//     whose /MT/ was hit becomes one of these, or, turned data, runs on to
//     the next /MS/), or a data block in a stored unit that already has an
//     RMWREQ's blocks (CTL_UNIT_MAX; so a stored unit takes at most
//     RQ_UNIT_MAX = CTL_UNIT_MAX + 1 blocks, the room RQ_ROOM keeps for one,
//     whatever the errors). The 802.3 error block /E/ takes that block's place in
//     the unit's FIFO, flagged as its end, and the rest of the unit is
//     dropped: one write, as for any block of the unit. The egress ends the
//     unit (and its circuit) with the /E/; edm_rx aborts it (mem_abort), as
//     the unit's CRC-32C would have failed anyway. A /MS/ that cuts a unit
//     cannot be stored in the same cycle: its unit is dropped too (its
//     notification not made), an intact unit lost to the error, recovered as
//     any lost unit (the host's timeouts, the other plane). cnt_dropped
//     counts both. A cut forwarded RREQ leaves the circuit of its answer,
//     which never comes: a later unit of the memory node to another host
//     skips it (lost grants, below), else CIRCUIT_TIMEOUT_CYCLES gives it up
//     (with the timeout 0, a memory node answering only that host would
//     leave the host's port a circuit open for good: no control unit again).
// Grants (lane s, data sender s -> d): a /G/ on egress s the next cycle
// (SW_GEN_GRANT_CYCLES = 1), or, for the first chunk of a read, the stored
// RREQ forwarded to egress s. Either way a circuit s -> d is queued.
// Egress mux (per port, registered). Control operations for an egress (a /G/
// or a forward) are kept in grant order (a small FIFO), so a host receives its
// grants and forwarded requests in the order of the circuits queued for it.
// Each egress numbers its /G/ and /A/ blocks from reset (e_gseq: the CRC-8's
// start). Priority each cycle:
//   1. a /G/ at the head of that order (or arriving with nothing queued), unless
//      a forwarded RREQ is open: with ZERO_QUEUE = 0 inserted even inside a data
//      unit, as a filler (docs/protocol.md §3.3 rule 1; edm_rx drops it from the
//      unit and decodes it); with the zero-queue rules only in gaps (rule b);
//   2. the next block of the unit already open on this egress (forwarded RREQ or
//      circuit data; an idle filler if its next block is not there yet);
//   3. between units: a forward at the head of the order, else an /A/ (the
//      lowest ingress whose ack queue's head names this egress; with the
//      zero-queue rules only in gaps, as a /G/, and a waiting /A/ pauses the
//      port as a destination as a waiting /G/ does), else circuit data
//      (lowest ingress whose oldest circuit targets this egress, its unit not
//      skipping older circuits: sk_hold), else idle.
// With no contention a data block takes 3 cycles ingress -> egress. A data
// block that finds its egress busy waits in its ingress's data FIFO (2^DQ_LOG2
// blocks; cnt_overflow counts lost blocks); cnt_conflict counts the cycles in
// which any data block waits so. Under the paper's rules (ZERO_QUEUE = 0) it
// does: a /G/ filler takes a slot inside a data unit, a forward delays data
// that arrives meanwhile, and two circuits can receive toward one egress at
// once, because the scheduler's matching rules that out only if every first
// grant has the same latency; a /G/ does (1 cycle), a forwarded RREQ does not
// (3 or 5 blocks, it waits for a data unit in progress on the memory node's
// link, and the memory node answers when its engine reaches the read), so an
// RRES overlaps the next circuit to its compute node. Sustained, control blocks
// oversubscribe a link the scheduler keeps 100% busy with data and the FIFOs
// overflow (counted, units corrupted).
// Zero-queue rules (ZERO_QUEUE = 1, the default; docs/hardware.md "Zero
// queueing in the switch datapath"): data never waits, whatever the hosts'
// answer times. The scheduler's pauses (dst_pause, src_pause) act only under
// them (PARK_DST), so the age bound and rule c need ZERO_QUEUE = 1.
//   a. One source into a port at a time: from a grant into a port until its
//      egress has sent the /MT/ of every circuit granted into it (z_release,
//      one a cycle later per circuit), the scheduler (PARK_DST) grants that
//      port only to the same source, whose data follow each other on its uplink.
//      While a control unit waits at a port's egress (rule b) the port is not
//      granted as a destination (z_pause_dst), so the circuits into it drain
//      and the control unit's wait is bounded; a source whose circuit queue is
//      nearly full (2^CQ_LOG2 - 4: the grants still in the scheduler's
//      pipeline fit) is not granted (z_pause_src), since its control units
//      may wait for a gap while the scheduler's chunk holds have ended.
//      Age bound (PARK_AGE_CYCLES, 0 = off): a source that gets each circuit
//      into a port before its previous one ends (a compute node reading one
//      memory node, or writing one, back to back) keeps the port parked, and
//      every other source out, for as long as it does. The switch follows
//      the scheduler's parking (its park_cnt, park_src: sc_park_*) and ages
//      it (z_age: cycles since the port was last released; unparked for
//      less than PARK_LAPSE = 2 iterations + 1 cycles (7), too short for an iteration to have
//      seen it, is no release). Once the age passes PARK_AGE_CYCLES while
//      another source has an entry in the port's notification queue (the
//      scheduler's dst_src_waiting: inserted, its last chunk not yet
//      granted; seen 2 cycles after its insert, the queue's register and
//      slot write), the port is paused
//      (dst_pause, z_pause_age) until released: the circuits committed into
//      it drain and the next grant into it is the scheduler's choice among
//      every source with demand, by priority, not the parking's. The pause
//      lasts at least SCHED_GRANT_LAG + 1 cycles, so no grant of an
//      iteration begun before it can follow the release. A lone source
//      keeps its port at no cost. A notification still in its lane's FIFO
//      (the queue full, or another lane's inserted first) does not count:
//      the scheduler grants only from the queue, so a pause could not help
//      it; how soon it enters is the lane arbitration's bound, not the
//      parking's. Bounded: the parking's own starvation; a
//      source waiting in the queue is ranked against the parked one within
//      2 + PARK_AGE_CYCLES + the drain of the circuits committed into the port
//      (at most 2^CQ_LOG2 + 2, see c.) + a decision. Under FCFS it is then
//      served after at most the port's older messages (DEPTH): bounded.
//      Under SRPT it is served once nothing with fewer bytes left competes:
//      a message in progress, or a stream of shorter ones, still outranks
//      it at every release, as in the reference model without parking: SRPT's
//      own starvation of long messages, which this rule does not change.
//   b. Control units only in gaps: an egress starts a /G/ or a forward only
//      while no circuit into its port has its control unit sent and its /MT/
//      not (z_open), so never inside a data unit; data toward it then needs a
//      control unit sent from this cycle on, so it arrives after this control
//      unit (at most 5 blocks) has ended, as long as a host answers a grant no
//      sooner than 2 cycles after it (any PHY takes far longer). Every circuit
//      whose control unit went out completes without waiting for another, so
//      the egresses cannot wait on each other in a cycle.
//   c. An idle in every IDLE_PERIOD_BLOCKS blocks on each egress
//      (EGRESS_IDLE_RULE; docs/faults.md §1): a host's edm_idle_pacer holds its
//      units back, but an egress cannot hold data back. It counts the non-idle
//      blocks it has sent in a row (e_run) and, from IDLE_AFTER on
//      (e_idle_due), pauses its port as a destination (dst_pause) and starts
//      no control unit (/G/ or forward): the circuits committed into the port
//      drain, and its first cycle without a data block (a gap, or a block of
//      the open unit not there yet) sends an idle. IDLE_AFTER =
//      IDLE_PERIOD_BLOCKS - 1 - IDLE_DRAIN, where IDLE_DRAIN bounds the non-idle
//      blocks the egress can still send from the cycle e_idle_due is set:
//        (2^CQ_LOG2 + GRANTS_IN_FLIGHT) x DATA_UNIT_MAX + CTL_UNIT_MAX.
//      Every circuit into the port is one source's (rule a): queued in that
//      source's circuit queue (at most 2^CQ_LOG2) or granted by an iteration
//      that started before the pause reached the scheduler (GRANTS_IN_FLIGHT
//      = 2: those of its last 4 cycles, iterations 3 apart); each carries at
//      most the longest data unit of a chunk (DATA_UNIT_MAX: a WREQ's, 11
//      blocks at CHUNK_BYTES = 64); a forward already open ends (CTL_UNIT_MAX:
//      an RMWREQ's 5 blocks); no other control unit starts. CHUNK_BYTES = 64,
//      CQ_LOG2 = 4: IDLE_DRAIN = 203, IDLE_AFTER = 1844; 256 B: 635, 1412;
//      beyond 880 B (CQ_LOG2 = 4) no threshold is left and elaboration fails.
//      Loose: a port rarely has more than a few circuits committed (tb_switch's
//      solid egress sent 10 non-idle blocks after the pause where the bound
//      allowed 167), so the rule pauses up to IDLE_DRAIN blocks earlier than
//      needed (one idle in about IDLE_AFTER blocks instead of 2047). It
//      assumes no host sends a unit longer than its grant (edm_tx never does).
//   No deadlock among the pauses (rule b's z_pause_dst, the age pause, the
//   idle pause): each only withholds new grants into a port (and the idle
//   rule delays the port's control units) and ends on events that need no new
//   grant. The idle pause ends at the egress's first cycle without a data
//   block, within IDLE_DRAIN blocks. Rule b's ends when the circuits into the
//   port whose control units have left end (their hosts answer, data never
//   waits) and the idle pause, if any, has ended. The age pause ends when
//   every circuit into the port has ended: those whose control units have not
//   left wait at their sources' egresses only for the two conditions just
//   named. No pause waits for another port's pause to end.
// Circuits and control operations wait in queues of 2^CQ_LOG2 per port: a
// sender that answers its grants slowly (a memory node whose in-order engine is
// busy with long reads) lets them pile up; one that finds its queue full is lost
// and counted in cnt_overflow (the fabric then misroutes: size CQ_LOG2 for the
// reads a memory node can have waiting, X x compute nodes x chunks per read).
// Lost grants (docs/faults.md §5): hosts answer grants in order (or discard
// a stray one), so a WREQ/RRES unit whose header names another destination
// than its ingress's oldest circuit but that of a later one proves the older
// circuits unused: the unit waits in the data FIFO (sk_pend; not a conflict)
// until every earlier unit of the ingress has left its egress, the older
// circuits are given up one a cycle like a timed-out one (both copies, the
// port's parking released; cnt_lost_grants), and it leaves along the first
// circuit toward its destination (matched by destination: a circuit keeps
// no id, and a surplus circuit of a re-sent /N/ has the same id anyway). A
// unit arriving while an earlier one of its ingress still skips waits behind
// it and then skips in turn (one such unit; a second is dropped). A unit with
// no queued circuit toward its destination is dropped (cnt_dropped), never
// misrouted. A circuit whose unit never comes and that no later unit skips
// is given up after CIRCUIT_TIMEOUT_CYCLES (edm_circuit_timeout; default 1024,
// 0 = never). Its count: the cycles the ingress is quiet (no data unit open
// at stage 1, its data FIFO empty, no control unit sent toward its host the
// cycle before) while its oldest circuit's control unit has left; so from the
// later of that host's last data unit and the last control unit sent to it.
// Lower bound, for a healthy host (answers in order, data never waits here):
// its link's round trip outside the switch (egress register -> the host's
// engine -> stage 1) plus the longest its engine takes, once it has the
// control unit whole, to start the answer while sending no other data unit
// (a memory node: the reads and RMWs ahead of it in its engine, memory order
// behind overlapping writes, its memory's read latency; a compute node: its
// local memory's). Parking, the age and idle pauses and queueing in the
// scheduler delay only grants and control units before they leave, which
// the count does not see; of the switch's own parameters only a forward's
// length (CTL_UNIT_MAX blocks, the first counted as sent) enters it, checked
// at elaboration (CIRCUIT_TIMEOUT_MIN). Measured in the RTL fabric
// (docs/faults.md §5): answers within 117 cycles at a compute engine and 106 at
// a memory engine (wall time, busy cycles included), plus the round trip
// (2 x 19 cycles of wire and the PHY paths, under 80): the default is over 5x
// that. A target with slower hosts (DRAM refresh, host memory) must measure
// its own bound. Too short a timeout never misroutes: a unit whose circuit
// was given up is dropped and counted.
// Limitation: the first grant of a pair (m -> c) is taken as the read's forward
// whenever an RREQ of c to m is stored; a pair carrying both RRES and WREQ
// (memory node m writing to c) would need a per-pair kind queue.
//
// Signal prefixes (per port, in the order a block flows):
//   r_  the incoming block classified, registered (stage 1, edm_ingress_classify)
//   u_  an ingress's open unit (u_mode, u_mem; u_<name>: FIFO and scheduler instances)
//   i_  what the ingress counts                  n_  notification lanes to the scheduler
//   g_  grant lanes from the scheduler           e_  the egress mux and its open unit
//   dq_ ingress data FIFOs, rq_ stored RREQs per pair, rxc_/txc_ circuits per ingress/egress,
//   fq_ control operations per egress, aq_ /A/ to forward per ingress,
//   z_ the zero-queue rules' state per port.
module edm_switch #(
    parameter int unsigned N = 4,
    parameter int unsigned DEPTH = edm_pkg::DEFAULT_MAX_ACTIVE_NOTIFS * N,
    parameter bit          SRPT = 1'b1,
    parameter int unsigned CHUNK_BYTES = 64,
    parameter int unsigned BLOCK_PS = edm_pkg::CYCLE_PS,  // one block per port per clock
    parameter int unsigned DQ_LOG2 = 6,   // ingress data FIFO
    parameter int unsigned RQ_LOG2 = 4,   // stored RREQ blocks per (requester, memory) pair
    parameter int unsigned CQ_LOG2 = 4,   // queued circuits per ingress, forwards per egress
    parameter int unsigned AQ_LOG2 = 2,   // /A/ waiting per ingress (a memory node sends one per 64 blocks)
    parameter int unsigned CIRCUIT_TIMEOUT_CYCLES = 1024,  // give up a circuit quiet this long (0: never; header)
    parameter bit          ZERO_QUEUE = 1'b1, // the zero-queue rules (above); 0: the paper's
    // With the zero-queue rules (ignored otherwise): each egress keeps an idle
    // in every IDLE_PERIOD_BLOCKS blocks (c.), and a port parked to one source
    // this long is paused until released (a.; 0: never).
    parameter bit          EGRESS_IDLE_RULE = 1'b1,
    parameter int unsigned PARK_AGE_CYCLES = 256,
    // The scheduler's request tree registered a level per cycle (edm_pim_scheduler).
    parameter bit          SCHED_REGISTERED_TREE = 1'b0
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [N*66-1:0]  in_block,    // port i: bits [i*66 +: 66]
    // Each port's link state (its reconciliation sublayer's link_up: no
    // block lock, hi_ber or a fault sequence makes it 0). A down port is never
    // granted, as source or destination (edm_pim_scheduler's link_up).
    input  logic [N-1:0]     port_link_up,
    output logic [N*66-1:0]  out_block,
    output logic [N*16-1:0]  cnt_bad_notif,
    output logic [N*16-1:0]  cnt_unknown,
    output logic [N*16-1:0]  cnt_non_edm,
    output logic [N*16-1:0]  cnt_dropped,
    output logic [15:0]      cnt_conflict,   // cycles in which a data block waits for its egress
    output logic [15:0]      cnt_overflow,   // cycles losing a block (ingress data FIFO full), a
                                             // circuit or a control operation (their queues full)
    output logic [N*16-1:0]  cnt_lost_grants, // circuits given up (edm_circuit_timeout)
    // Standard Ethernet blocks (frames, ordered sets), as counted in
    // cnt_non_edm, toward the L2 stage: port i at bits [i*66 +: 66].
    output logic [N-1:0]     fr_valid,
    output logic [N*66-1:0]  fr_block
);
  localparam int unsigned PW = $clog2(N);
  localparam int unsigned IW = edm_pkg::NG_ID_W;
  localparam int unsigned SW = edm_pkg::NG_SIZE_W;
  localparam logic [65:0] IDLE = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  // The 802.3 error block (/E/ x 8): what ends a unit cut short at the ingress.
  localparam logic [65:0] ERROR_BLOCK = {{8{edm_pkg::CTRL_ERROR[6:0]}}, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  // A stored request is at most an RMWREQ (CTL_UNIT_MAX blocks) and an /E/
  // after it: its /MT/ turned data, the next /MS/ cuts it (or a data block
  // past CTL_UNIT_MAX does, below). A pair's store takes a new unit only with
  // room for that many blocks.
  localparam int unsigned CTL_UNIT_MAX = edm_pkg::unit_blocks(edm_pkg::KIND_RMWREQ, 16'd0);
  localparam int unsigned RQ_UNIT_MAX = CTL_UNIT_MAX + 1;
  localparam int unsigned RQ_ROOM = (1 << RQ_LOG2) - RQ_UNIT_MAX;
  if ((1 << RQ_LOG2) < RQ_UNIT_MAX) begin : g_rq_too_small
    $error("edm_switch: a pair's RREQ store (2^RQ_LOG2 blocks) cannot hold one RMWREQ cut short");
  end

  function automatic [15:0] sat_inc(input [15:0] c, input inc);
    sat_inc = (inc && c != 16'hFFFF) ? c + 16'd1 : c;
  endfunction

  // Whether a FIFO's count after an edge that writes `inc` and reads `dec`
  // (0 or 1 each) is at most `limit`: the count is compared with constants
  // beside inc and dec rather than after the sum (for registered flags).
  function automatic next_at_most(input [7:0] count, input inc, input dec, input int limit);
    if (inc && !dec) next_at_most = int'(count) <= limit - 1;
    else if (dec && !inc) next_at_most = int'(count) <= limit + 1;
    else next_at_most = int'(count) <= limit;
  endfunction

  // The control blocks' CRC-8 as flat XORs (edm_pkg::crc8_seq_masks): the
  // bit-serial functions map to chains about 13 LUT levels deep.
  localparam logic [8*64-1:0] CRC8_SEQ_MASKS = edm_pkg::crc8_seq_masks(0);

  // A /G/ or /A/ (sub), number seq of its egress.
  function automatic [65:0] ctl_block(input [7:0] sub, input [edm_pkg::PORT_BITS-1:0] dst, input [7:0] id,
                                      input [15:0] size, input [7:0] seq);
    logic [55:0] low;
    logic [7:0]  crc;
    low = {6'b0, size, id, dst, sub, edm_pkg::BT_EDM};
    for (integer j = 0; j < 8; j++) crc[j] = ^({seq, low} & CRC8_SEQ_MASKS[64*j +: 64]);
    ctl_block = {crc, low, edm_pkg::SYNC_CTRL};
  endfunction

  // The next /G/ /A/ number on each egress (docs/protocol.md §5a); e_is_g,
  // e_is_a: the egress sends a /G/, an /A/.
  logic [N-1:0][7:0] e_gseq;
  logic [N-1:0]      e_is_g, e_is_a;

  // ---------------------------------------------------------------- stages 0 and 1: classify
  // edm_ingress_classify (one register stage): each block's class, the
  // notification it makes, the uplinks' /N/ sequences.
  logic [N-1:0][65:0] b1;
  logic [N-1:0] r_data, r_nbad, r_ngood, r_a_valid, r_ms, r_mt, r_std, r_unk, r_rd, r_wr, r_n_valid;
  logic [N-1:0][N-1:0] r_hdst_oh, r_rd_room;
  logic [N-1:0][PW-1:0] r_n_src, r_n_dst;
  logic [N-1:0][IW-1:0] r_n_id;
  logic [N-1:0][SW-1:0] r_n_size;
  logic [N-1:0][N-1:0] rq_room_n; // room for one more unit after this edge (rq_count <= RQ_ROOM)
  edm_ingress_classify #(.N(N)) u_classify (
      .clk, .rst_n, .in_block, .rq_room_n, .b1, .r_data, .r_nbad, .r_ngood, .r_a_valid, .r_ms, .r_mt, .r_std,
      .r_unk,
      .r_rd, .r_wr, .r_hdst_oh, .r_n_valid, .r_rd_room, .r_n_src, .r_n_dst, .r_n_id, .r_n_size);

  // ---------------------------------------------------------------- FIFOs
  // Ingress data FIFO (WREQ/RRES units), per ingress.
  logic [N-1:0]       dq_wr, dq_wready, dq_valid, dq_pop;
  logic [N-1:0][65:0] dq_head;
  // Each stored block carries its /MT/ test (stage 1's r_mt) beside it, so the
  // egress learns that a unit ends from a flip-flop, not from its multiplexer.
  logic [N-1:0]       dq_head_mt;
  // What an ingress writes into its FIFOs (dq, rq): the block and its /MT/
  // test, or, where the open unit is cut short (u_cut), the error block as
  // its end.
  logic [N-1:0]       u_cut;
  logic [N-1:0][66:0] u_wr_data;
  // Stored RREQs, per (requester c, memory m) at [c][m]. Two indices, not
  // c*N + m: a run-time product as an index makes Yosys build a full barrel
  // shifter (and a DSP multiplier) whenever its shift-multiply peephole misses,
  // which tripled the switch's LUTs in one flow (docs/hardware.md).
  logic [N-1:0][N-1:0]       rq_wr, rq_valid, rq_pop;
  logic [N-1:0][N-1:0][65:0] rq_head;
  logic [N-1:0][N-1:0]       rq_head_mt;
  logic [N-1:0][N-1:0][RQ_LOG2:0] rq_count;
  always_comb
    for (integer c = 0; c < N; c++)
      for (integer m = 0; m < N; m++)
        // (A write into a full store is ignored: its count is then far
        // above RQ_ROOM either way.)
        rq_room_n[c][m] = next_at_most(8'(rq_count[c][m]), rq_wr[c][m], rq_pop[c][m], int'(RQ_ROOM));
  // Circuits per ingress: destination egress, in grant order; one copy is
  // popped when the ingress sees the unit's /MT/, the other when the egress sends it.
  logic [N-1:0]          circ_push, rxc_valid, rxc_pop, txc_valid, txc_pop, rxc_wready, txc_wready, lost_grant;
  logic [N-1:0][PW-1:0]  circ_dst, rxc_head, txc_head;
  logic [N-1:0][CQ_LOG2:0] txc_count;   // circuits queued per ingress (the later popped copy)
  logic [N-1:0]          rxc_push, txc_push, txc_take;   // what each copy's FIFO takes in / gives up
  // txc_count - rxc_count (units of the ingress past its /MT/ but not yet past
  // the egress's), kept as a register beside the FIFOs and its next value's
  // zero test registered as sk_aligned, so no pointer subtraction sits in
  // front of the egress multiplexers.
  logic [N-1:0][CQ_LOG2:0] circ_gap, circ_gap_n, circ_gap_pushed;
  logic [N-1:0]          sk_aligned_n;
  // Skipping lost grants (header, "Lost grants"): rxc_to[i][d] counts ingress
  // i's queued circuits (rxc copies) toward d; sk_pend: a unit of ingress i
  // that matched a later circuit (toward sk_dst) waits in the data FIFO while
  // the older ones are given up; sk_mt: its /MT/ came meanwhile (its rxc pop
  // is owed); sk_aligned: both copies' heads are one circuit (every earlier
  // unit has left its egress; a register); sk_hold: the unit waits for that.
  logic [N-1:0][N-1:0][CQ_LOG2:0] rxc_to;
  logic [N-1:0][N-1:0]   rxc_to_any;   // rxc_to != 0, a register loaded from its next value
  logic [N-1:0]          sk_pend, sk_pend_n, sk_mt, sk_mt_n, sk_aligned, sk_hold, sk_stale, sk_done, rxc_take;
  logic [N-1:0][PW-1:0]  sk_dst, sk_dst_n;
  // One unit that comes while a skip is under way waits behind it in the
  // data FIFO (sk_next, toward sk_next_dst; sk_next_mt: its /MT/ came) and
  // then skips in turn. sk_void: the waiting unit's circuit went with the
  // skip (only if a header lied): it is discarded from the FIFO, counted.
  logic [N-1:0]          sk_next, sk_next_n, sk_next_mt, sk_next_mt_n, sk_void, sk_void_n, sk_void_end;
  logic [N-1:0][PW-1:0]  sk_next_dst, sk_next_dst_n;
  // Control operations per egress, in grant order: {forward, peer, id, bytes}.
  // peer = the requester (forward) or the grant's destination (/G/).
  localparam int unsigned OW = 1 + PW + IW + SW;
  logic [N-1:0]          fq_push, fq_valid, fq_pop, fq_wready;
  logic [N-1:0][OW-1:0]  fq_in, fq_head;
  logic [N-1:0][CQ_LOG2:0] fq_count;   // control units not yet sent (probed by tb_dual_fabric_top only)
  // /A/ to forward per ingress: {egress, base id, map}; aq_to[m]: a head names egress m.
  localparam int unsigned AW = PW + IW + SW;
  logic [N-1:0]          aq_push, aq_valid, aq_pop, aq_wready;
  logic [N-1:0][AW-1:0]  aq_head;
  logic [N-1:0][N-1:0]   aq_for;       // [egress][ingress]: the ingress's head names the egress
  logic [N-1:0]          aq_to;
  always_comb
    for (integer m = 0; m < N; m++) begin
      for (integer k = 0; k < N; k++) aq_for[m][k] = aq_valid[k] && aq_head[k][IW+SW +: PW] == PW'(m);
      aq_to[m] = aq_for[m] != '0;
    end
  logic [N-1:0]          ctl_left;     // egress i sent a control unit (/G/, /A/ or forward) last cycle
  always_ff @(posedge clk) ctl_left <= rst_n ? e_is_g | e_is_a | fq_pop : '0;
  // Ingress i's circuits whose control unit has left (txc_count - fq_count,
  // kept as a register: +1 as one leaves egress i, -1 as a circuit is taken
  // from txc) and its next value's != 0 registered (ctl_sent_any), so the
  // circuit timeout's head test reads a flip-flop, not two pointer
  // differences and a compare.
  logic [N-1:0][CQ_LOG2:0] ctl_sent;
  logic [N-1:0]          ctl_sent_any;
  always_ff @(posedge clk)
    for (integer i = 0; i < N; i++) begin
      ctl_sent[i] <= rst_n ? ctl_sent[i] + (CQ_LOG2+1)'(e_is_g[i] || fq_pop[i]) - (CQ_LOG2+1)'(txc_take[i]) : '0;
      ctl_sent_any[i] <= rst_n && !next_at_most(8'(ctl_sent[i]), e_is_g[i] || fq_pop[i], txc_take[i], 0);
    end

  // Every FIFO here keeps its head in a register (REG_HEAD): the egress
  // multiplexers, the /MT/ checks and the /G/ CRC start from flip-flops, not
  // from a RAM read (a block RAM's read alone took 5.6 ns of the cycle).
  /* verilator lint_off PINCONNECTEMPTY */
  for (genvar i = 0; i < N; i++) begin : g_port
    edm_fifo #(.WIDTH(67), .DEPTH_LOG2(DQ_LOG2), .REG_HEAD(1)) u_dq (
        .clk, .rst_n, .wr_valid(dq_wr[i]), .wr_ready(dq_wready[i]), .wr_data(u_wr_data[i]),
        .rd_valid(dq_valid[i]), .rd_ready(dq_pop[i]), .rd_data({dq_head_mt[i], dq_head[i]}), .count());
    edm_fifo #(.WIDTH(PW), .DEPTH_LOG2(CQ_LOG2), .REG_HEAD(1)) u_rxc (
        .clk, .rst_n, .wr_valid(circ_push[i]), .wr_ready(rxc_wready[i]), .wr_data(circ_dst[i]),
        .rd_valid(rxc_valid[i]), .rd_ready(rxc_pop[i] || lost_grant[i]), .rd_data(rxc_head[i]), .count());
    edm_fifo #(.WIDTH(PW), .DEPTH_LOG2(CQ_LOG2), .REG_HEAD(1)) u_txc (
        .clk, .rst_n, .wr_valid(circ_push[i]), .wr_ready(txc_wready[i]), .wr_data(circ_dst[i]),
        .rd_valid(txc_valid[i]), .rd_ready(txc_pop[i] || lost_grant[i]), .rd_data(txc_head[i]), .count(txc_count[i]));
    // Both copies of the oldest circuit are its own while nothing of this
    // ingress is under way (no unit open here, its data FIFO empty), or while
    // a skipping unit waits with every earlier unit gone (sk_stale). It is
    // waited for only once its control unit has left (ctl_sent_any: the
    // control queue holds those of the newest circuits); one leaving
    // restarts the wait (for the later circuits).
    edm_circuit_timeout #(.TIMEOUT_CYCLES(CIRCUIT_TIMEOUT_CYCLES)) u_lost (
        .clk, .rst_n, .head_valid(rxc_valid[i] && txc_valid[i] && ctl_sent_any[i]),
        .busy(u_mode[i] == 2'd2 || dq_valid[i] || ctl_left[i]),
        .head_used(rxc_pop[i]), .stale(sk_stale[i]), .give_up(lost_grant[i]),
        .cnt_given_up(cnt_lost_grants[i*16 +: 16]));
    edm_fifo #(.WIDTH(AW), .DEPTH_LOG2(AQ_LOG2), .REG_HEAD(1)) u_aq (
        .clk, .rst_n, .wr_valid(aq_push[i]), .wr_ready(aq_wready[i]),
        .wr_data({r_n_dst[i], r_n_id[i], r_n_size[i]}),
        .rd_valid(aq_valid[i]), .rd_ready(aq_pop[i]), .rd_data(aq_head[i]), .count());
    edm_fifo #(.WIDTH(OW), .DEPTH_LOG2(CQ_LOG2), .REG_HEAD(1)) u_fq (
        .clk, .rst_n, .wr_valid(fq_push[i]), .wr_ready(fq_wready[i]), .wr_data(fq_in[i]),
        .rd_valid(fq_valid[i]), .rd_ready(fq_pop[i]), .rd_data(fq_head[i]), .count(fq_count[i]));
    for (genvar m = 0; m < N; m++) begin : g_rq
      edm_fifo #(.WIDTH(67), .DEPTH_LOG2(RQ_LOG2), .REG_HEAD(1)) u_rq (
          .clk, .rst_n, .wr_valid(rq_wr[i][m]), .wr_ready(), .wr_data(u_wr_data[i]),
          .rd_valid(rq_valid[i][m]), .rd_ready(rq_pop[i][m]), .rd_data({rq_head_mt[i][m], rq_head[i][m]}),
          .count(rq_count[i][m]));
    end
  end
  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- scheduler
  logic [N-1:0]        n_valid, n_ready, n_rres;
  logic [N*PW-1:0]     n_src, n_dst;
  logic [N*IW-1:0]     n_id;
  logic [N*SW-1:0]     n_size;
  logic [N-1:0]        g_valid, g_last;
  logic [N*PW-1:0]     g_src, g_dst;
  logic [N*IW-1:0]     g_id;
  logic [N*SW-1:0]     g_bytes;

  /* verilator lint_off PINCONNECTEMPTY */
  // Zero-queue rules, per port: circuits into it with their control unit sent
  // and their /MT/ not (z_open; at most 2^CQ_LOG2, one source's queue); one's
  // control unit starts now (z_started); the egress sends a circuit's /MT/
  // (e_data_end; registered: z_release); the egress may start a control unit
  // (z_ctl_ok).
  logic [N-1:0][CQ_LOG2:0] z_open;
  logic [N-1:0] z_idle;   // z_open == 0, a register loaded from its next value
  logic [N-1:0] z_started, e_data_end, z_release, z_ctl_ok, z_pause_src, z_pause_dst;
  localparam int unsigned CQ_PAUSE = (1 << CQ_LOG2) - 4;  // z_pause_src: txc_count >= CQ_PAUSE
  // A circuit ends with its /MT/ at the egress, or when it is given up
  // (edm_circuit_timeout): its data never came, and its port must not stay
  // parked. Both cannot meet at one port in one cycle: a port's open circuits
  // are one source's, queued behind the one given up.
  logic [N-1:0] z_ended;
  always_comb begin
    z_ended = e_data_end;
    for (integer i = 0; i < N; i++)
      if (lost_grant[i]) z_ended[txc_head[i]] = 1'b1;
  end
  // The scheduler: an iteration's request stage (cycle t) -> its grant on
  // g_valid (t + its iteration's cycles); iterations start at least that far
  // apart, so grants of at most GRANTS_IN_FLIGHT iterations into a port
  // appear after the cycle the port is paused (those started in its last
  // SCHED_GRANT_LAG + 1 cycles).
  localparam int unsigned SCHED_ITER = edm_pkg::sw_pim_iter_cycles(N, SCHED_REGISTERED_TREE);
  localparam int unsigned SCHED_GRANT_LAG = SCHED_ITER;
  localparam int unsigned GRANTS_IN_FLIGHT = 1 + SCHED_GRANT_LAG / SCHED_ITER;
  localparam bit          IDLE_RULE = ZERO_QUEUE && EGRESS_IDLE_RULE;
  localparam bit          AGE_RULE = ZERO_QUEUE && PARK_AGE_CYCLES != 0;
  // Rule c (header): the non-idle blocks an egress can still send once it
  // pauses its port and holds its control units back (IDLE_DRAIN), and so
  // how many in a row it lets go before that (IDLE_AFTER).
  localparam int unsigned WREQ_UNIT = edm_pkg::unit_blocks(edm_pkg::KIND_WREQ, 16'(CHUNK_BYTES));
  localparam int unsigned RRES_UNIT = edm_pkg::unit_blocks(edm_pkg::KIND_RRES, 16'(CHUNK_BYTES));
  localparam int unsigned DATA_UNIT_MAX = (WREQ_UNIT > RRES_UNIT) ? WREQ_UNIT : RRES_UNIT;
  localparam int unsigned IDLE_DRAIN = ((1 << CQ_LOG2) + GRANTS_IN_FLIGHT) * DATA_UNIT_MAX + CTL_UNIT_MAX;
  // The circuit timeout's floor from the switch's side (header, "Lost
  // grants"): a forward's blocks after its first, the 2 cycles a host takes
  // at least to answer (rule b), the ingress's stages 0 and 1. Only a floor:
  // the hosts' own answer time is the real bound, and far longer.
  localparam int unsigned CIRCUIT_TIMEOUT_MIN = CTL_UNIT_MAX - 1 + 2 + 2;
  if (CIRCUIT_TIMEOUT_CYCLES != 0 && CIRCUIT_TIMEOUT_CYCLES <= CIRCUIT_TIMEOUT_MIN) begin : g_circuit_timeout_too_short
    $error("edm_switch: CIRCUIT_TIMEOUT_CYCLES gives up circuits before any host could answer (or set 0)");
  end
  localparam int          IDLE_AFTER = int'(edm_pkg::IDLE_PERIOD_BLOCKS) - 1 - int'(IDLE_DRAIN);
  localparam int unsigned RUN_W = $clog2(edm_pkg::IDLE_PERIOD_BLOCKS);
  if (IDLE_RULE && IDLE_AFTER < 1) begin : g_idle_rule_cannot_hold
    $error("edm_switch: CHUNK_BYTES and CQ_LOG2 commit more blocks to an egress than IDLE_PERIOD_BLOCKS allow");
  end
  logic [N-1:0][RUN_W-1:0] e_run;   // non-idle blocks in a row on out_block, held at IDLE_AFTER
  logic [N-1:0] e_sent_idle;        // the egress sends an idle (out_block next cycle)
  logic [N-1:0] e_idle_due;         // e_run == IDLE_AFTER (a register): pause the port, no control unit
  // Rule a's age bound (header): per port, the scheduler's parking (the
  // circuits granted into it and not released, sc_park_cnt, to sc_park_src;
  // sc_park_new_src: a grant from another source accepted, registered as
  // z_new_src when it reaches g_valid), its age (cycles since it was last released: z_age, held at
  // PARK_AGE_CYCLES), the cycles it has been unparked (z_unpk, held at
  // PARK_LAPSE) or paused (z_held, held at SCHED_GRANT_LAG + 1), and, per
  // port d, the sources with an entry in its notification queue
  // (sc_src_waiting[d][s]: inserted, last chunk not granted).
  localparam int unsigned PARK_LAPSE = SCHED_ITER + SCHED_GRANT_LAG + 1;
  localparam int unsigned AGE_W = $clog2(PARK_AGE_CYCLES + 2);   // >= 1 bit when off
  localparam int unsigned LAPSE_W = $clog2(PARK_LAPSE + 1);
  localparam int unsigned HELD_W = $clog2(SCHED_GRANT_LAG + 2);
  if (AGE_RULE && PARK_AGE_CYCLES <= PARK_LAPSE) begin : g_park_age_too_short
    $error("edm_switch: PARK_AGE_CYCLES must exceed the scheduler's decision time (or be 0)");
  end
  logic [N-1:0][CQ_LOG2:0]   sc_park_cnt;
  logic [N-1:0][PW-1:0]      sc_park_src;
  logic [N-1:0]              sc_park_new_src, z_new_src;
  logic [N-1:0][AGE_W-1:0]   z_age, z_age_n;
  logic [N-1:0][LAPSE_W-1:0] z_unpk, z_unpk_n;
  logic [N-1:0][HELD_W-1:0]  z_held, z_held_n;
  logic [N-1:0]              z_pause_age, z_pause_age_n;
  logic [N-1:0][N-1:0]       sc_src_waiting;   // [d][s]
  always_comb begin
    for (integer d = 0; d < N; d++) begin
      logic unparked, released, others;
      // Unparked after this edge, as the scheduler will see it (its count
      // has every grant up to g_valid's; z_release, a register: nothing here
      // sits behind the egress decisions).
      unparked = next_at_most(8'(sc_park_cnt[d]), 1'b0, z_release[d], 0);
      z_unpk_n[d] = !unparked ? '0 : (z_unpk[d] == LAPSE_W'(PARK_LAPSE) ? z_unpk[d] : z_unpk[d] + 1'b1);
      z_held_n[d] = !z_pause_age[d] ? '0
                    : (z_held[d] == HELD_W'(SCHED_GRANT_LAG + 1) ? z_held[d] : z_held[d] + 1'b1);
      // Released: unparked long enough for an iteration to have seen it, or
      // after a pause that no grant decided before it can still follow.
      released = unparked && (z_unpk_n[d] == LAPSE_W'(PARK_LAPSE) || z_held[d] == HELD_W'(SCHED_GRANT_LAG + 1));
      if (released || z_new_src[d]) z_age_n[d] = '0;
      else z_age_n[d] = z_age[d] == AGE_W'(PARK_AGE_CYCLES) ? z_age[d] : z_age[d] + 1'b1;
      // Paused once old while another source has a message in the port's
      // queue (alone, its source keeps the port at no cost), until released.
      others = (sc_src_waiting[d] & ~(N'(1) << sc_park_src[d])) != '0;
      z_pause_age_n[d] = AGE_RULE && !released
                         && (z_pause_age[d] || (z_age[d] == AGE_W'(PARK_AGE_CYCLES) && others && !unparked));
    end
  end
  assign z_pause_dst = fq_valid | aq_to | e_idle_due | z_pause_age;
  edm_pim_scheduler #(.N(N), .DEPTH(DEPTH), .SRPT(SRPT), .CHUNK_BYTES(CHUNK_BYTES),
                      .BLOCK_PS(BLOCK_PS), .CYCLE_PS(edm_pkg::CYCLE_PS), .PARK_DST(ZERO_QUEUE),
                      .PARK_W(CQ_LOG2 + 1), .REGISTERED_TREE(SCHED_REGISTERED_TREE)) u_sched (
      .clk, .rst_n, .notif_valid(n_valid), .notif_ready(n_ready), .notif_src(n_src),
      .notif_dst(n_dst), .notif_msg_id(n_id), .notif_size(n_size), .notif_rres(n_rres),
      .dst_release(z_release), .src_pause(z_pause_src), .dst_pause(z_pause_dst),
      .link_up(port_link_up),
      .grant_valid(g_valid), .grant_src(g_src), .grant_dst(g_dst), .grant_msg_id(g_id),
      .grant_bytes(g_bytes), .grant_last(g_last), .occupancy(), .lane_foreign(),
      .dst_park_cnt(sc_park_cnt), .dst_park_src(sc_park_src), .dst_park_new_src(sc_park_new_src),
      .dst_src_waiting(sc_src_waiting));
  /* verilator lint_on PINCONNECTEMPTY */
  logic unused_g_src, unused_rxc_head, unused_fq_count;
  assign unused_g_src = ^g_src;
  assign unused_fq_count = ^fq_count;
  assign unused_rxc_head = ^rxc_head;   // an ingress needs only to know it has an open circuit

  // ---------------------------------------------------------------- ingress stage 1
  // Unit mode per ingress: 0 none, 1 stored RREQ (to rq of pair (i, u_mem)), 2 data, 3 dropped.
  logic [N-1:0][1:0]    u_mode, u_mode_n;
  logic [N-1:0][PW-1:0] u_mem, u_mem_n;
  // Blocks of the open stored unit written so far: a data block after
  // CTL_UNIT_MAX of them (no request is longer) cuts it, so that a stored
  // unit never takes more than RQ_UNIT_MAX blocks of its pair's store.
  localparam int unsigned RQ_LEN_W = $clog2(RQ_UNIT_MAX + 1);
  logic [N-1:0][RQ_LEN_W-1:0] u_rq_len, u_rq_len_n;
  logic [N-1:0]         i_drop, i_drop_new, i_unk, i_non_edm, i_bad_n;
  logic [N-1:0][N-1:0][3:0] rq_units;   // stored RREQs of pair (c, m) not yet granted
  logic [N-1:0][N-1:0]      rq_new, rq_granted;
  logic [N-1:0]         rq_md;         // a block of a stored RREQ unit
  logic [N-1:0]         drop1;
  logic [N-1:0][1:0]    mode1;
  logic [N-1:0][PW-1:0] hmem;

  /* verilator lint_off UNUSEDSIGNAL */
  always_comb begin
    for (integer i = 0; i < N; i++) begin
      logic [63:0] p;
      logic [edm_pkg::PORT_BITS-1:0] hdst;
      logic data_ends;   // the open data unit ends here: its /MT/, or cut short
      p = b1[i][65:2];
      data_ends = 1'b0;
      hdst = p[16 + edm_pkg::HDR_DST_LSB +: edm_pkg::HDR_DST_W];
      mode1[i] = u_mode[i];
      drop1[i] = 1'b0;
      rq_md[i] = 1'b0;
      hmem[i] = hdst[PW-1:0];
      i_unk[i] = r_unk[i];
      i_non_edm[i] = r_std[i];
      i_bad_n[i] = r_nbad[i];
      // The notification (built in stage 0); an RREQ's needs room in its pair's store.
      // A stored RREQ or data unit cut short (header, "Units cut short"):
      // an unknown block, a frame block or a second /MS/ inside it.
      u_cut[i] = ((u_mode[i] == 2'd1 || u_mode[i] == 2'd2) && (r_unk[i] || r_std[i] || r_ms[i]))
                 || (u_mode[i] == 2'd1 && r_data[i] && u_rq_len[i] == RQ_LEN_W'(CTL_UNIT_MAX));
      // The unit that cut it is dropped too (an /MS/ cuts any open unit; the
      // length rule's data block is no /MS/), not behind the whole cut test.
      i_drop_new[i] = (u_mode[i] == 2'd1 || u_mode[i] == 2'd2) && r_ms[i];
      n_valid[i] = r_n_valid[i] && !i_drop_new[i];
      n_src[i*PW +: PW] = r_n_src[i];
      n_dst[i*PW +: PW] = r_n_dst[i];
      n_id[i*IW +: IW] = r_n_id[i];
      n_size[i*SW +: SW] = r_n_size[i];
      n_rres[i] = r_ms[i];
      dq_wr[i] = 1'b0;
      rxc_pop[i] = 1'b0;
      sk_hold[i] = sk_pend[i] && sk_aligned[i];
      sk_stale[i] = sk_hold[i] && !sk_void[i] && rxc_valid[i] && rxc_head[i] != sk_dst[i];
      sk_done[i] = sk_hold[i] && !sk_void[i] && rxc_valid[i] && rxc_head[i] == sk_dst[i];
      sk_void_end[i] = sk_hold[i] && sk_void[i] && dq_valid[i] && dq_head_mt[i];
      sk_pend_n[i] = sk_pend[i] && !sk_done[i] && !sk_void_end[i];
      sk_mt_n[i] = sk_mt[i] && !sk_void_end[i];
      sk_dst_n[i] = sk_dst[i];
      sk_void_n[i] = sk_void[i] && !sk_void_end[i];
      sk_next_n[i] = sk_next[i];
      sk_next_mt_n[i] = sk_next_mt[i];
      sk_next_dst_n[i] = sk_next_dst[i];
      aq_push[i] = r_a_valid[i];
      if (r_ngood[i]) begin
        drop1[i] = !n_valid[i] && !r_a_valid[i];   // an /N/ or /A/ naming no other port
      end else if (u_cut[i]) begin
        // The error block takes the cutting block's place in the unit's
        // FIFO (one write, as any block of the unit) and ends it; the rest
        // of the unit is dropped.
        drop1[i] = 1'b1;
        mode1[i] = 2'd3;
        if (u_mode[i] == 2'd1) rq_md[i] = 1'b1;
        else begin
          dq_wr[i] = 1'b1;
          data_ends = 1'b1;
        end
      end else if (r_ms[i]) begin
        // (A dropped unit that it ends, u_mode 3, was counted when dropped.)
        mode1[i] = 2'd3;
        if (r_rd[i]) begin
          if (!n_valid[i]) drop1[i] = 1'b1;
        end else if (r_wr[i]) begin
          if (!sk_pend[i] && !sk_next[i] && rxc_valid[i] && r_hdst_oh[i][rxc_head[i]]) begin
            mode1[i] = 2'd2;
            dq_wr[i] = 1'b1;
          end else if (!sk_pend[i] && !sk_next[i] && (r_hdst_oh[i] & rxc_to_any[i]) != '0) begin
            // A later circuit matches: the older ones will never be used.
            mode1[i] = 2'd2;
            dq_wr[i] = 1'b1;
            sk_pend_n[i] = 1'b1;
            sk_dst_n[i] = hdst[PW-1:0];
          end else if (sk_pend[i] && !sk_next[i] && (r_hdst_oh[i] & rxc_to_any[i]) != '0) begin
            mode1[i] = 2'd2;   // waits behind the skipping unit
            dq_wr[i] = 1'b1;
            sk_next_n[i] = 1'b1;
            sk_next_dst_n[i] = hdst[PW-1:0];
          end else drop1[i] = 1'b1;  // no circuit toward the header's destination (or two units wait)
        end else drop1[i] = 1'b1;
      end else if (r_data[i] || r_mt[i]) begin
        case (u_mode[i])
          2'd1: rq_md[i] = 1'b1;
          2'd2: dq_wr[i] = 1'b1;
          2'd3: ;
          default: if (r_data[i]) i_non_edm[i] = 1'b1; else drop1[i] = 1'b1;  // frame data; stray /MT/
        endcase
        if (r_mt[i]) begin
          data_ends = u_mode[i] == 2'd2;
          mode1[i] = 2'd0;
        end
      end
      // A data unit's circuit is popped as it ends, or owed to a waiting
      // unit (another unit's /MT/, e.g. a stored RREQ's, leaves that as it is).
      if (data_ends) begin
        if (sk_next[i]) sk_next_mt_n[i] = 1'b1;
        else if (sk_pend[i]) sk_mt_n[i] = 1'b1;
        else rxc_pop[i] = 1'b1;
      end
      // The skip ends with the unit's own circuit at both heads: its owed
      // rxc pop (its /MT/ came, maybe in this cycle) happens now.
      if (sk_done[i]) begin
        rxc_pop[i] = sk_mt_n[i];
        sk_mt_n[i] = 1'b0;
      end
      // The cycle after that, the waiting unit skips in turn (its /MS/ came
      // after the earlier unit's /MT/, whose circuit is gone by now): only
      // circuits still queued toward its destination can be its own.
      if (!sk_pend[i] && sk_next[i]) begin
        sk_pend_n[i] = 1'b1;
        sk_dst_n[i] = sk_next_dst[i];
        sk_mt_n[i] = sk_next_mt_n[i];
        sk_void_n[i] = !rxc_to_any[i][sk_next_dst[i]];
        sk_next_n[i] = 1'b0;
        sk_next_mt_n[i] = 1'b0;
      end
      if (sk_void_end[i]) drop1[i] = 1'b1;
    end
  end
  /* verilator lint_on UNUSEDSIGNAL */
  always_comb
    for (integer i = 0; i < N; i++) u_wr_data[i] = u_cut[i] ? {1'b1, ERROR_BLOCK} : {r_mt[i], b1[i]};
  assign fr_valid = i_non_edm;
  assign fr_block = b1;
  assign rxc_take = rxc_valid & (rxc_pop | lost_grant);
  assign txc_take = txc_valid & (txc_pop | lost_grant);
  assign rxc_push = circ_push & rxc_wready;
  assign txc_push = circ_push & txc_wready;
  always_comb
    for (integer i = 0; i < N; i++) begin
      circ_gap_pushed[i] = circ_gap[i] + (CQ_LOG2+1)'(txc_push[i]) - (CQ_LOG2+1)'(rxc_push[i]);
      circ_gap_n[i] = circ_gap_pushed[i] - (CQ_LOG2+1)'(txc_take[i]) + (CQ_LOG2+1)'(rxc_take[i]);
      // circ_gap_n == 0 with the takes (the egress's and the ingress's
      // decisions, late in the cycle) selecting among constant compares.
      if (txc_take[i] && !rxc_take[i]) sk_aligned_n[i] = circ_gap_pushed[i] == (CQ_LOG2+1)'(1);
      else if (rxc_take[i] && !txc_take[i]) sk_aligned_n[i] = circ_gap_pushed[i] == '1;
      else sk_aligned_n[i] = circ_gap_pushed[i] == '0;
    end

  // Acceptance by the scheduler (a separate block from the decisions above).
  // A stored RREQ starts in the pair that its /MS/ names (r_rd_room: one-hot,
  // only for a well-formed RREQ/RMWREQ /MS/) if the pair has room and the
  // scheduler takes the notification: registers and notif_ready only, not
  // the decision tree, so the pair's FIFO write is a few levels deep.
  always_comb begin
    for (integer i = 0; i < N; i++) begin
      u_mode_n[i] = mode1[i];
      u_mem_n[i] = u_mem[i];
      u_rq_len_n[i] = u_rq_len[i] + RQ_LEN_W'(rq_md[i]);
      i_drop[i] = drop1[i] || (n_valid[i] && !n_ready[i]);
      rq_new[i] = r_rd_room[i] & {N{n_ready[i] && !i_drop_new[i]}};
      rq_wr[i] = rq_new[i];
      if (rq_md[i]) rq_wr[i][u_mem[i]] = 1'b1;
      if (rq_new[i] != '0) begin
        u_mode_n[i] = 2'd1;
        u_mem_n[i] = hmem[i];
        u_rq_len_n[i] = RQ_LEN_W'(1);
      end
    end
  end


  // ---------------------------------------------------------------- grants
  logic [N-1:0][N-1:0] mid, mid_n;    // [src][dst]: a message of the pair is part-granted
  // [src][dst]: a grant of the pair now is a read's first (no message of the
  // pair part-granted, an RREQ of dst to src stored): a register loaded from
  // mid's and rq_units' next values, so a grant's kind is a 4:1 multiplexer.
  logic [N-1:0][N-1:0] first_ok;
  logic [N-1:0]        g_first_read, g_gblk;
  always_comb begin
    rq_granted = '0;
    mid_n = mid;
    for (integer s = 0; s < N; s++) begin
      logic [PW-1:0] d;
      d = g_dst[s*PW +: PW];
      g_first_read[s] = g_valid[s] && first_ok[s][d];
      if (g_valid[s]) mid_n[s][d] = !g_last[s];
      g_gblk[s] = g_valid[s] && !g_first_read[s];
      circ_push[s] = g_valid[s];
      circ_dst[s] = d;
      fq_in[s] = {g_first_read[s], d, g_id[s*IW +: IW], g_bytes[s*SW +: SW]};
      if (g_first_read[s]) rq_granted[d][s] = 1'b1;
    end
  end

  // ---------------------------------------------------------------- egress mux
  logic [N-1:0][1:0]    e_mode, e_mode_n;   // open unit: 0 none, 1 forward, 2 data
  logic [N-1:0][PW-1:0] e_src, e_src_n;     // requester (forward) or ingress (data)
  logic [N-1:0][65:0]   e_out;
  // Each egress decides what it sends as one-hot selects, computed side by
  // side, and its block is an AND-OR of the candidates (a /G/ from the grant
  // lane or from the control queue, a stored RREQ block or a data block of
  // any port, idle), so no candidate passes through a chain of multiplexers
  // behind the decisions that rank it below the others.
  always_comb begin
    dq_pop = '0;
    txc_pop = '0;
    rq_pop = '0;
    fq_pop = '0;
    aq_pop = '0;
    e_data_end = '0;
    z_started = '0;
    for (integer m = 0; m < N; m++) begin
      logic          sel_g, sel_fqg, sel_a, open_fwd, open_data, try_fwd, try_data, start_fwd, start_data;
      logic [N-1:0]  cand, found_oh, rq_sel, dq_sel, a_oh;
      logic [PW-1:0] fpeer;   // the control queue head's requester (forward) or destination (/G/)
      logic [65:0]   blk;
      z_ctl_ok[m] = (!ZERO_QUEUE || z_idle[m]) && !e_idle_due[m];
      fpeer = fq_head[m][IW+SW +: PW];
      // Data at the head of an ingress whose oldest circuit targets this
      // egress, its unit not skipping older circuits; the lowest ingress wins.
      for (integer k = 0; k < N; k++)
        cand[k] = txc_valid[k] && txc_head[k] == PW'(m) && dq_valid[k] && !sk_hold[k];
      for (integer k = 0; k < N; k++) begin
        found_oh[k] = cand[k];
        for (integer j = 0; j < k; j++)
          if (cand[j]) found_oh[k] = 1'b0;
      end
      // The /A/ of the lowest ingress whose ack queue's head names this egress.
      for (integer k = 0; k < N; k++) begin
        a_oh[k] = aq_for[m][k];
        for (integer j = 0; j < k; j++)
          if (aq_for[m][j]) a_oh[k] = 1'b0;
      end
      // Priority: 1. a /G/ with nothing queued before it leaves at once (even
      // inside a data unit, as a filler), else the control queue's head if it
      // is a /G/ (both only outside a forward, and under the zero-queue rules
      // only in gaps); every control operation waits its turn, so a host
      // receives its grants and forwarded requests in grant order; 2. the
      // open unit's next block (idle if not there yet); 3. between units, a
      // forward at the head of the control queue (once its first block is
      // stored), else an /A/ (as a control unit: under the zero-queue rules
      // only in gaps), else circuit data.
      sel_g = g_gblk[m] && !fq_valid[m] && e_mode[m] != 2'd1 && z_ctl_ok[m];
      sel_fqg = fq_valid[m] && !fq_head[m][OW-1] && e_mode[m] != 2'd1 && z_ctl_ok[m];
      open_fwd = e_mode[m] == 2'd1;
      open_data = e_mode[m] == 2'd2 && !sel_g && !sel_fqg;
      try_fwd = e_mode[m] == 2'd0 && fq_valid[m] && fq_head[m][OW-1] && z_ctl_ok[m];
      sel_a = e_mode[m] == 2'd0 && aq_to[m] && !g_gblk[m] && !fq_valid[m] && z_ctl_ok[m];
      try_data = e_mode[m] == 2'd0 && !sel_g && !sel_fqg && !(fq_valid[m] && z_ctl_ok[m]) && !sel_a;
      start_fwd = try_fwd && rq_valid[fpeer][m];
      start_data = try_data && cand != '0;
      for (integer k = 0; k < N; k++) begin
        rq_sel[k] = rq_valid[k][m] && ((open_fwd && e_src[m] == PW'(k)) || (try_fwd && fpeer == PW'(k)));
        dq_sel[k] = (open_data && e_src[m] == PW'(k) && dq_valid[k]) || (try_data && found_oh[k]);
      end
      blk = '0;
      if (sel_g)
        blk = blk | ctl_block(edm_pkg::SUB_G, edm_pkg::PORT_BITS'(g_dst[m*PW +: PW]), g_id[m*IW +: IW],
                              g_bytes[m*SW +: SW], e_gseq[m]);
      if (sel_fqg)
        blk = blk | ctl_block(edm_pkg::SUB_G, edm_pkg::PORT_BITS'(fpeer), fq_head[m][SW +: IW], fq_head[m][SW-1:0],
                              e_gseq[m]);
      // An /A/ names the memory node it came from (its ingress) in NG_DST.
      for (integer k = 0; k < N; k++)
        if (sel_a && a_oh[k])
          blk = blk | ctl_block(edm_pkg::SUB_A, edm_pkg::PORT_BITS'(k), aq_head[k][SW +: IW], aq_head[k][SW-1:0],
                                e_gseq[m]);
      for (integer k = 0; k < N; k++) begin
        if (rq_sel[k]) blk = blk | rq_head[k][m];
        if (dq_sel[k]) blk = blk | dq_head[k];
      end
      e_sent_idle[m] = !sel_g && !sel_fqg && !sel_a && rq_sel == '0 && dq_sel == '0;
      // blk is 0 when nothing is selected: the idle is one more term of the
      // OR, so only its few 1 bits wait for e_sent_idle, not a mux on all 66.
      e_out[m] = blk | (e_sent_idle[m] ? IDLE : '0);
      e_is_g[m] = sel_g || sel_fqg;
      e_is_a[m] = sel_a;
      for (integer k = 0; k < N; k++)
        if (sel_a && a_oh[k]) aq_pop[k] = 1'b1;
      fq_push[m] = g_valid[m] && !sel_g;
      fq_pop[m] = sel_fqg || start_fwd;
      if (sel_g) z_started[g_dst[m*PW +: PW]] = 1'b1;
      if (sel_fqg) z_started[fpeer] = 1'b1;
      if (start_fwd) z_started[fpeer] = 1'b1;
      for (integer k = 0; k < N; k++) begin
        rq_pop[k][m] = rq_sel[k];
        if (dq_sel[k] || (sk_hold[k] && sk_void[k] && dq_valid[k])) dq_pop[k] = 1'b1;   // a void unit discarded
      end
      // The open unit ends with its /MT/ (the stored flag); a new one opens.
      e_mode_n[m] = e_mode[m];
      e_src_n[m] = e_src[m];
      if (open_fwd && rq_valid[e_src[m]][m] && rq_head_mt[e_src[m]][m]) e_mode_n[m] = 2'd0;
      if (open_data && dq_valid[e_src[m]] && dq_head_mt[e_src[m]]) begin
        e_mode_n[m] = 2'd0;
        txc_pop[e_src[m]] = 1'b1;
        e_data_end[m] = 1'b1;
      end
      if (start_fwd) begin
        e_mode_n[m] = 2'd1;
        e_src_n[m] = fpeer;
      end
      if (start_data) begin
        e_mode_n[m] = 2'd2;
        e_src_n[m] = '0;
        for (integer k = 0; k < N; k++)
          if (found_oh[k]) e_src_n[m] = e_src_n[m] | PW'(k);
      end
    end
  end

  // A data block waits: its egress sends something else (every block that
  // can leave is at a FIFO's head: one not popped is held back).
  logic conflict;
  // Counted events are registered before their counters (a counter lags its
  // event by one cycle), so no decision of the cycle fans out to 16 enables.
  logic [N-1:0] ev_bad_n, ev_unk, ev_non_edm, ev_drop, ev_drop_new;
  logic         ev_conflict, ev_overflow;
  assign conflict = |(dq_valid & ~dq_pop & ~sk_hold);  // a skipping unit waits for circuits, not its egress

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      u_mode <= '0;
      e_mode <= '0;
      sk_pend <= '0;
      sk_mt <= '0;
      sk_next <= '0;
      sk_next_mt <= '0;
      sk_void <= '0;
      rxc_to <= '0;
      rxc_to_any <= '0;
      circ_gap <= '0;
      sk_aligned <= '1;
      z_pause_src <= '0;
      mid <= '0;
      first_ok <= '0;
      rq_units <= '0;
      z_open <= '0;
      z_idle <= '1;
      z_release <= '0;
      e_run <= '0;
      e_idle_due <= '0;
      z_new_src <= '0;
      z_unpk <= '0;
      z_age <= '0;
      z_held <= '0;
      z_pause_age <= '0;
      out_block <= {N{IDLE}};
      cnt_bad_notif <= '0;
      cnt_unknown <= '0;
      cnt_non_edm <= '0;
      cnt_dropped <= '0;
      cnt_conflict <= '0;
      ev_bad_n <= '0;
      ev_unk <= '0;
      ev_non_edm <= '0;
      ev_drop <= '0;
      ev_drop_new <= '0;
      ev_conflict <= 1'b0;
      ev_overflow <= 1'b0;
      cnt_overflow <= '0;
      e_gseq <= '0;
    end else begin
      for (integer i = 0; i < N; i++)
        if (e_is_g[i] || e_is_a[i]) e_gseq[i] <= e_gseq[i] + 8'd1;
      u_mode <= u_mode_n;
      e_mode <= e_mode_n;
      sk_pend <= sk_pend_n;
      sk_mt <= sk_mt_n;
      sk_next <= sk_next_n;
      sk_next_mt <= sk_next_mt_n;
      sk_void <= sk_void_n;
      for (integer i = 0; i < N; i++)
        for (integer d = 0; d < N; d++) begin
          logic to_push, to_take;
          to_push = rxc_push[i] && circ_dst[i] == PW'(d);
          to_take = rxc_take[i] && rxc_head[i] == PW'(d);
          rxc_to[i][d] <= rxc_to[i][d] + (CQ_LOG2+1)'(to_push) - (CQ_LOG2+1)'(to_take);
          rxc_to_any[i][d] <= !next_at_most(8'(rxc_to[i][d]), to_push, to_take, 0);
        end
      for (integer m = 0; m < N; m++) begin
        z_open[m] <= z_open[m] + (CQ_LOG2+1)'(z_started[m]) - (CQ_LOG2+1)'(z_ended[m]);
        z_idle[m] <= next_at_most(8'(z_open[m]), z_started[m], z_ended[m], 0);
      end
      z_release <= z_ended;
      for (integer m = 0; m < N; m++) begin
        if (e_sent_idle[m]) e_run[m] <= '0;
        else if (e_run[m] != RUN_W'(IDLE_AFTER)) e_run[m] <= e_run[m] + 1'b1;
        e_idle_due[m] <= IDLE_RULE && !e_sent_idle[m] && (e_idle_due[m] || e_run[m] == RUN_W'(IDLE_AFTER - 1));
      end
      z_new_src <= sc_park_new_src;
      z_unpk <= z_unpk_n;
      z_age <= z_age_n;
      z_held <= z_held_n;
      z_pause_age <= z_pause_age_n;
      for (integer i = 0; i < N; i++) begin
        circ_gap[i] <= circ_gap_n[i];
        sk_aligned[i] <= sk_aligned_n[i];
        z_pause_src[i] <= !next_at_most(8'(txc_count[i]), txc_push[i], txc_take[i], int'(CQ_PAUSE) - 1);
      end
      for (integer c = 0; c < N; c++)
        for (integer m = 0; m < N; m++) begin
          rq_units[c][m] <= rq_units[c][m] + {3'b0, rq_new[c][m]} - {3'b0, rq_granted[c][m]};
        end
      mid <= mid_n;
      for (integer s = 0; s < N; s++)
        for (integer d = 0; d < N; d++)
          first_ok[s][d] <= !mid_n[s][d] && !next_at_most(8'(rq_units[d][s]), rq_new[d][s], rq_granted[d][s], 0);
      for (integer m = 0; m < N; m++) out_block[m*66 +: 66] <= e_out[m];
      for (integer i = 0; i < N; i++) begin
        cnt_bad_notif[i*16 +: 16] <= sat_inc(cnt_bad_notif[i*16 +: 16], ev_bad_n[i]);
        cnt_unknown[i*16 +: 16] <= sat_inc(cnt_unknown[i*16 +: 16], ev_unk[i]);
        cnt_non_edm[i*16 +: 16] <= sat_inc(cnt_non_edm[i*16 +: 16], ev_non_edm[i]);
        cnt_dropped[i*16 +: 16] <= edm_pkg::sat_add(cnt_dropped[i*16 +: 16], {1'b0, ev_drop[i]} + {1'b0, ev_drop_new[i]});
      end
      cnt_conflict <= sat_inc(cnt_conflict, ev_conflict);
      cnt_overflow <= sat_inc(cnt_overflow, ev_overflow);
      ev_bad_n <= i_bad_n;
      ev_unk <= i_unk;
      ev_non_edm <= i_non_edm;
      ev_drop <= i_drop;
      ev_drop_new <= i_drop_new;
      ev_conflict <= conflict;
      ev_overflow <= |(dq_wr & ~dq_wready) | |(circ_push & ~(rxc_wready & txc_wready)) | |(fq_push & ~fq_wready)
                     | |(aq_push & ~aq_wready);
    end
    u_mem <= u_mem_n;
    u_rq_len <= u_rq_len_n;
    e_src <= e_src_n;
    sk_dst <= sk_dst_n;
    sk_next_dst <= sk_next_dst_n;
  end
endmodule

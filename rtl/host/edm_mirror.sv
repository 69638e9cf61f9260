// Dual switch, compute side (paper §3.3): gives each request to every plane's compute-node engine with one message id and completes it once, at its first good completion.
//
// A compute host has one edm_compute_node per plane (built with EXT_ID), each
// with its own link to its plane's switch and its own receive buffer. The
// request's other fields go to every engine unchanged (wired beside this
// module); this module hands the request over and merges the completions.
//
// Issue: the request at req_* gets the next message id of its destination (a
// counter per low destination bits, 2^ID_TABLE_LOG2 of them, as in
// edm_compute_node) and is offered to every plane (eng_req_valid[p], same
// eng_msg_id) until each has taken it. Once at least one plane has it, a plane
// that is down (plane_down[p], its link guard's link_down) is left out at
// once, and one that has not taken it WAIT_CYCLES after it was offered is left
// out too (counted, cnt_unmirrored[p]): a plane whose link or switch is down
// stops taking requests when its engine is full, and must not hold the others
// up (WAIT_CYCLES covers a failure the link guard does not see; it should
// exceed the longest a working plane's engine is busy, since a request left
// out of a plane is lost if the other plane fails before it completes). A
// plane left out by the wait is lagging until it next takes a request; while
// it lags and is not ready, later requests go without it at once.
// req_ready rises in the cycle the request is done.
// Completions: the engines' completions (eng_cpl_*, one taken per cycle,
// planes in turn; one for a request not issued yet, which its engine finished
// before the other plane took it, waits in its engine until the request is
// issued) are matched to the request by the host's tag (tags 0 ..
// 2^TAGS_LOG2-1; the host must not reuse a tag before its completion, as with
// edm_compute_node) and the (destination, id) it was issued with:
//   * the first STATUS_OK completion of a request goes to the host (cpl_*,
//     with cpl_plane: the plane whose engine wrote a read's or RMW's bytes to
//     its receive buffer); any later one is dropped (cnt_dup);
//   * a failed completion (timeout, error) is held back while another plane
//     that has the request has not reported; the last one to report, if none
//     was good, goes to the host with its status;
//   * a completion that matches no request waiting for that plane (a plane's
//     late answer to a tag the host has reused) is dropped (cnt_stale).
// A request is forgotten once every plane that has it has reported.
// Dead planes (DEAD_CYCLES, 0 = never): a plane whose plane_down has held
// DEAD_CYCLES cycles reports for its engine, which may hold requests it took
// before plane_down rose and can never send (a write's grants never come, a
// read's timer never starts): a sweep, one tag a cycle and ahead of the
// engines' completions, reports each request (or orphan) that plane owes as
// failed (STATUS_TIMEOUT), so the host and edm_write_retry get an outcome
// and a free within DEAD_CYCLES + 2 * NP * 2^TAGS_LOG2 cycles (a request and
// an orphan per tag and plane) plus the host's back-pressure. DEAD_CYCLES
// must exceed the longest plane_down of a cut the plane comes back from.
// While a plane is dead, eng_fail_all[p] has its engine take nothing, fail
// what it holds and send none of it (edm_compute_node fail_all): a request swept
// as failed is never applied if the plane comes back; the engine's failed
// completions are its reports, or stale if the sweep was first.
// EXT_ID: the id comes with the request (req_msg_id) instead of the counters:
// edm_write_retry in front numbers the requests and re-sends a write with its
// id (docs/protocol.md §4b); cpl_msg_id names the id a completion is for.
// free_*: the last report of a request every plane that took it has made
// (edm_write_retry re-sends a write only then). A request whose tag the host
// reuses while planes still owe a report is kept aside (one per tag, the
// orphan: o_*) and freed at its last late report.
// Write acknowledgements: each plane's edm_rx /A/ (ack_*[p]) wait in a queue
// per plane (2^ACK_Q_LOG2) and leave merged, one a cycle, planes in turn
// (out_ack_*), for edm_write_retry and edm_write_outcome; both planes' /A/ of
// a write both go (a second is a duplicate there). An /A/ finding its
// queue full is dropped and counted (cnt_ack_dropped): it costs a re-send.
// Counters: 16-bit, saturating.
module edm_mirror #(
    parameter int unsigned NP = 2,             // planes
    parameter int unsigned ID_TABLE_LOG2 = 4,  // message id counters
    parameter int unsigned TAGS_LOG2 = 4,      // host tags tracked
    parameter int unsigned WAIT_CYCLES = 64,   // a plane not taking a request this long is left out
    parameter int unsigned DEAD_CYCLES = 0,    // a plane down this long fails what it holds (0 = never)
    parameter bit          EXT_ID = 1'b0,      // 1: ids from req_msg_id
    parameter int unsigned ACK_Q_LOG2 = 2,     // /A/ queued per plane
    parameter int unsigned PB = edm_pkg::PORT_BITS,
    parameter int unsigned PI = NP > 1 ? $clog2(NP) : 1   // a plane's index
) (
    input  logic             clk,
    input  logic             rst_n,
    // The host's request (only what this module needs; the rest is wired to every engine).
    input  logic             req_valid,
    output logic             req_ready,
    input  logic [2:0]       req_kind,         // kept for a dead plane's failed completion
    input  logic [PB-1:0]    req_dst,
    input  logic [7:0]       req_msg_id,       // EXT_ID: the request's id (else ignored)
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [7:0]       req_tag,          // < 2^TAGS_LOG2
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [NP-1:0]    plane_down,       // known down: not waited for
    output logic [NP-1:0]    eng_fail_all,     // plane dead: its engine fails what it holds
    // Toward each plane's engine (plane p: bit p): the request and its id.
    output logic [NP-1:0]    eng_req_valid,
    input  logic [NP-1:0]    eng_req_ready,
    output logic [7:0]       eng_msg_id,
    // From each plane's engine: its completions (plane p: bits [p*W +: W]).
    input  logic [NP-1:0]    eng_cpl_valid,
    output logic [NP-1:0]    eng_cpl_ready,
    input  logic [NP*3-1:0]  eng_cpl_kind,
    input  logic [NP*PB-1:0] eng_cpl_dst,
    input  logic [NP*8-1:0]  eng_cpl_msg_id,
    input  logic [NP*8-1:0]  eng_cpl_tag,
    input  logic [NP*8-1:0]  eng_cpl_status,
    // Toward the host: one completion per request.
    output logic             cpl_valid,
    input  logic             cpl_ready,
    output logic [2:0]       cpl_kind,
    output logic [PB-1:0]    cpl_dst,
    output logic [7:0]       cpl_tag,
    output logic [7:0]       cpl_status,
    output logic [PI-1:0]    cpl_plane,
    output logic [7:0]       cpl_msg_id,
    // A request every plane that took it has reported (its engines are done with it).
    output logic             free_valid,
    output logic [PB-1:0]    free_dst,
    output logic [7:0]       free_msg_id,
    // Each plane's /A/ (edm_rx's ack_*; plane p: bit p, fields [p*W +: W]) and the merged stream.
    input  logic [NP-1:0]    ack_valid,
    input  logic [NP*PB-1:0] ack_peer,
    input  logic [NP*8-1:0]  ack_base,
    input  logic [NP*edm_pkg::ACK_MAP_W-1:0] ack_map,
    output logic             out_ack_valid,
    output logic [PB-1:0]    out_ack_peer,
    output logic [7:0]       out_ack_base,
    output logic [edm_pkg::ACK_MAP_W-1:0] out_ack_map,
    output logic [15:0]      cnt_ack_dropped,  // /A/ lost to a full queue
    // Counters (16-bit, saturating).
    output logic [15:0]      cnt_dup,          // completions after the first good one
    output logic [15:0]      cnt_stale,        // completions matching no waiting request
    output logic [NP*16-1:0] cnt_unmirrored    // requests plane p was left out of
);
  localparam int unsigned NT = 1 << TAGS_LOG2;
  localparam int unsigned IDN = 1 << ID_TABLE_LOG2;
  localparam int unsigned WW = $clog2(WAIT_CYCLES + 1);
  localparam int unsigned DW = DEAD_CYCLES > 0 ? $clog2(DEAD_CYCLES + 1) : 1;
  localparam logic [7:0] ST_OK = edm_pkg::STATUS_OK;

  // ================================================================ issue
  logic [IDN-1:0][7:0] next_id;
  logic [NP-1:0]       given;      // planes that have taken the request at req_*
  logic [NP-1:0]       taking;     // planes taking it in this cycle
  logic [NP-1:0]       has;        // planes that have it once done
  logic [NP-1:0]       lag;        // left out by the wait, has not taken a request since
  logic [NP-1:0]       skip;       // not waited for
  logic [WW-1:0]       waited;
  logic                issued;
  assign eng_msg_id = EXT_ID ? req_msg_id : next_id[req_dst[ID_TABLE_LOG2-1:0]];
  assign eng_req_valid = req_valid ? ~given : '0;
  assign taking = eng_req_valid & eng_req_ready;
  assign has = given | taking;
  assign skip = plane_down | (lag & ~eng_req_ready);
  assign issued = req_valid && has != '0 && ((has | skip) == '1 || waited == WW'(WAIT_CYCLES));
  assign req_ready = issued;

  // ================================================================ the requests waiting for completions
  logic [NT-1:0][NP-1:0]   t_pend;      // planes that have the request and have not reported
  logic [NT-1:0]           t_done;      // the host has its completion
  logic [NT-1:0][PB-1:0]   t_dst;
  logic [NT-1:0][7:0]      t_id;
  logic [NT-1:0][2:0]      t_kind;
  logic [NT-1:0]           t_open;      // still offered: another plane may take it
  logic [NT-1:0][NP-1:0]   o_pend;      // the tag's previous request: planes still to report
  logic [NT-1:0][PB-1:0]   o_dst;
  logic [NT-1:0][7:0]      o_id;
  // Each plane's completion: does it match its request, and must it wait (its
  // request is not issued yet, so the host has not seen it accepted, and
  // another plane may still take it: taken once it is, at most WAIT_CYCLES on).
  logic [NP-1:0] c_match, c_wait;
  always_comb begin
    logic [TAGS_LOG2-1:0] t;
    for (int p = 0; p < NP; p++) begin
      t = eng_cpl_tag[p*8 +: TAGS_LOG2];
      c_match[p] = t_pend[t][p] && t_dst[t] == eng_cpl_dst[p*PB +: PB] && t_id[t] == eng_cpl_msg_id[p*8 +: 8]
                   && eng_cpl_tag[p*8 + TAGS_LOG2 +: 8 - TAGS_LOG2] == '0;
      c_wait[p] = c_match[p] && t_open[t];
    end
  end
  // One engine completion a cycle, planes in turn from `turn`.
  logic [PI-1:0] turn, pick;
  logic          pick_any;
  always_comb begin
    pick = '0;
    pick_any = 1'b0;
    for (int k = NP - 1; k >= 0; k--) begin   // the first plane from turn with one to take wins
      if (eng_cpl_valid[(int'(turn) + k) % NP] && !c_wait[(int'(turn) + k) % NP]) begin
        pick = PI'((int'(turn) + k) % NP);
        pick_any = 1'b1;
      end
    end
  end
  // ---- dead planes: a plane down DEAD_CYCLES; the sweep's tag and the report it makes
  logic [NP-1:0][DW-1:0] down_for;
  logic [NP-1:0]         dead;
  logic [TAGS_LOG2-1:0]  k_tag;
  logic [PI-1:0]         k_plane;
  logic                  k_req, k_orphan;  // the swept tag's request / orphan owes a dead plane's report
  always_comb begin
    k_plane = '0;
    k_req = 1'b0;
    k_orphan = 1'b0;
    for (int p = NP - 1; p >= 0; p--) begin
      dead[p] = DEAD_CYCLES != 0 && down_for[p] == DW'(DEAD_CYCLES);
      if (dead[p] && ((t_pend[k_tag][p] && !t_open[k_tag]) || o_pend[k_tag][p])) begin
        k_plane = PI'(p);
        k_req = t_pend[k_tag][p] && !t_open[k_tag];
        k_orphan = !(t_pend[k_tag][p] && !t_open[k_tag]);
      end
    end
  end
  // The report taken this cycle: the sweep's (first), else the picked engine completion.
  logic                 use_k;
  logic [PI-1:0]        r_plane;
  logic [7:0]           r_tag_full;
  logic [2:0]           r_kind;
  logic [PB-1:0]        r_dst;
  logic [7:0]           r_id;
  logic [TAGS_LOG2-1:0] e_tag;
  logic [7:0]           e_status;
  logic                 e_match, e_ok, e_last, e_forward, e_take;
  assign eng_fail_all = dead;
  assign use_k = k_req || k_orphan;
  assign r_plane = use_k ? k_plane : pick;
  assign r_tag_full = use_k ? 8'(k_tag) : eng_cpl_tag[int'(pick)*8 +: 8];
  assign r_kind = use_k ? t_kind[k_tag] : eng_cpl_kind[int'(pick)*3 +: 3];
  assign r_dst = use_k ? (k_req ? t_dst[k_tag] : o_dst[k_tag]) : eng_cpl_dst[int'(pick)*PB +: PB];
  assign r_id = use_k ? (k_req ? t_id[k_tag] : o_id[k_tag]) : eng_cpl_msg_id[int'(pick)*8 +: 8];
  assign e_tag = r_tag_full[TAGS_LOG2-1:0];
  assign e_status = use_k ? edm_pkg::STATUS_TIMEOUT : eng_cpl_status[int'(pick)*8 +: 8];
  assign e_match = use_k ? k_req : c_match[pick];
  assign e_ok = e_status == ST_OK;
  assign e_last = (t_pend[e_tag] & ~(NP'(1) << r_plane)) == '0;   // no other plane still to report
  assign e_forward = e_match && !t_done[e_tag] && (e_ok || e_last);
  // A completion is taken when it is dropped or held, or forwarded into a free output.
  assign e_take = (use_k || pick_any) && (!e_forward || !cpl_valid || cpl_ready);
  always_comb begin
    eng_cpl_ready = '0;
    eng_cpl_ready[pick] = e_take && !use_k;
  end
  // The last plane's report of a request no plane can still take, or of an orphan.
  logic o_match, o_last;
  assign o_match = use_k ? k_orphan
                         : !e_match && o_pend[e_tag][pick] && o_dst[e_tag] == r_dst && o_id[e_tag] == r_id;
  assign o_last = (o_pend[e_tag] & ~(NP'(1) << r_plane)) == '0;
  assign free_valid = e_take && ((e_match && e_last && !t_open[e_tag]) || (o_match && o_last));
  assign free_dst = e_match ? t_dst[e_tag] : o_dst[e_tag];
  assign free_msg_id = e_match ? t_id[e_tag] : o_id[e_tag];

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      next_id <= '0;
      given <= '0;
      lag <= '0;
      waited <= '0;
      turn <= '0;
      down_for <= '0;
      k_tag <= '0;
      t_pend <= '0;
      t_done <= '0;
      t_dst <= '0;
      t_id <= '0;
      t_kind <= '0;
      t_open <= '0;
      o_pend <= '0;
      o_dst <= '0;
      o_id <= '0;
      cpl_valid <= 1'b0;
      cpl_kind <= '0;
      cpl_dst <= '0;
      cpl_tag <= '0;
      cpl_status <= '0;
      cpl_plane <= '0;
      cpl_msg_id <= '0;
      cnt_dup <= '0;
      cnt_stale <= '0;
    end else begin
      // ---- issue
      lag <= (lag & ~taking) | ((issued && waited == WW'(WAIT_CYCLES)) ? ~has & ~plane_down : '0);
      if (issued) begin
        given <= '0;
        waited <= '0;
        next_id[req_dst[ID_TABLE_LOG2-1:0]] <= next_id[req_dst[ID_TABLE_LOG2-1:0]] + 8'd1;
      end else if (req_valid) begin
        given <= has;
        if (waited != WW'(WAIT_CYCLES)) waited <= waited + 1'b1;
      end
      // ---- completions (an issue reuses a tag only after its completion went out)
      if (cpl_valid && cpl_ready) cpl_valid <= 1'b0;
      // ---- dead planes (the sweep moves on unless its report waits for the output)
      for (int p = 0; p < NP; p++)
        if (!plane_down[p]) down_for[p] <= '0;
        else if (!dead[p]) down_for[p] <= down_for[p] + 1'b1;
      if (!use_k || e_take) k_tag <= k_tag + 1'b1;
      if (e_take) begin
        if (!use_k) turn <= PI'((int'(pick) + 1) % NP);
        if (e_match) begin
          t_pend[e_tag][r_plane] <= 1'b0;
          if (e_forward) t_done[e_tag] <= 1'b1;
        end
        if (e_forward) begin
          cpl_valid <= 1'b1;
          cpl_kind <= r_kind;
          cpl_dst <= r_dst;
          cpl_tag <= r_tag_full;
          cpl_status <= e_status;
          cpl_plane <= r_plane;
          cpl_msg_id <= r_id;
        end
        cnt_dup <= edm_pkg::sat_add(cnt_dup, {1'b0, !use_k && e_match && t_done[e_tag]});
        cnt_stale <= edm_pkg::sat_add(cnt_stale, {1'b0, !use_k && !e_match});
        if (o_match) o_pend[e_tag][r_plane] <= 1'b0;
      end
      // The request's entry is made when its first plane takes it (that plane's
      // engine may complete it before the others take it); later takes add to it.
      if (taking != '0 && given == '0) begin   // a completion for this tag now is the old request's
        // The old request, if planes still owe a report, becomes the tag's orphan.
        o_pend[req_tag[TAGS_LOG2-1:0]] <= t_pend[req_tag[TAGS_LOG2-1:0]]
            & ~((e_take && e_match && e_tag == req_tag[TAGS_LOG2-1:0]) ? NP'(1) << r_plane : '0);
        o_dst[req_tag[TAGS_LOG2-1:0]] <= t_dst[req_tag[TAGS_LOG2-1:0]];
        o_id[req_tag[TAGS_LOG2-1:0]] <= t_id[req_tag[TAGS_LOG2-1:0]];
        t_pend[req_tag[TAGS_LOG2-1:0]] <= taking;
        t_done[req_tag[TAGS_LOG2-1:0]] <= 1'b0;
        t_dst[req_tag[TAGS_LOG2-1:0]] <= req_dst;
        t_id[req_tag[TAGS_LOG2-1:0]] <= eng_msg_id;
        t_kind[req_tag[TAGS_LOG2-1:0]] <= req_kind;
        t_open[req_tag[TAGS_LOG2-1:0]] <= !issued;
      end else if (taking != '0) begin
        t_pend[req_tag[TAGS_LOG2-1:0]] <= taking | (t_pend[req_tag[TAGS_LOG2-1:0]]
            & ~((e_take && e_match && e_tag == req_tag[TAGS_LOG2-1:0]) ? NP'(1) << r_plane : '0));
      end
      if (issued && given != '0) t_open[req_tag[TAGS_LOG2-1:0]] <= 1'b0;
    end
  end

  // ================================================================ /A/ merge
  localparam int unsigned AW = PB + 8 + edm_pkg::ACK_MAP_W;
  logic [NP-1:0]      aq_valid, aq_ready, aq_pop;
  logic [NP*AW-1:0]   aq_data;
  logic [PI-1:0]      a_turn, a_pick;
  logic               a_any;
  for (genvar p = 0; p < NP; p++) begin : g_ack_q
    /* verilator lint_off PINCONNECTEMPTY */
    edm_fifo #(.WIDTH(AW), .DEPTH_LOG2(ACK_Q_LOG2)) ack_q (
        .clk, .rst_n, .wr_valid(ack_valid[p]), .wr_ready(aq_ready[p]),
        .wr_data({ack_peer[p*PB +: PB], ack_base[p*8 +: 8], ack_map[p*edm_pkg::ACK_MAP_W +: edm_pkg::ACK_MAP_W]}),
        .rd_valid(aq_valid[p]), .rd_ready(aq_pop[p]), .rd_data(aq_data[p*AW +: AW]), .count());
    /* verilator lint_on PINCONNECTEMPTY */
  end
  always_comb begin
    a_pick = '0;
    a_any = 1'b0;
    for (int k = NP - 1; k >= 0; k--)
      if (aq_valid[(int'(a_turn) + k) % NP]) begin
        a_pick = PI'((int'(a_turn) + k) % NP);
        a_any = 1'b1;
      end
    aq_pop = '0;
    aq_pop[a_pick] = a_any;
  end
  assign out_ack_valid = a_any;
  assign {out_ack_peer, out_ack_base, out_ack_map} = aq_data[int'(a_pick)*AW +: AW];
  always_ff @(posedge clk)
    if (!rst_n) begin
      a_turn <= '0;
      cnt_ack_dropped <= '0;
    end else begin
      if (a_any) a_turn <= PI'((int'(a_pick) + 1) % NP);
      cnt_ack_dropped <= edm_pkg::sat_add(cnt_ack_dropped, 2'($countones(ack_valid & ~aq_ready)));
    end

  for (genvar p = 0; p < NP; p++) begin : g_unmirrored
    always_ff @(posedge clk)
      if (!rst_n) cnt_unmirrored[p*16 +: 16] <= '0;
      else cnt_unmirrored[p*16 +: 16] <= edm_pkg::sat_add(cnt_unmirrored[p*16 +: 16], {1'b0, issued && !has[p]});
  end
endmodule

// Dual switch, memory side (paper §3.3): of the copies of a WREQ chunk or RMWREQ arriving on NP planes, passes the first good one and marks every later (or stale) copy, so the engine behind applies it once.
//
// Sits between each plane's edm_rx mem_* port and that plane's memory-node
// engine; the stream passes through unchanged (no added cycle), and the /MT/
// of a dropped copy leaves with out_dup set: edm_mem_node does not write such
// a WREQ and answers such an RMWREQ with an empty RRES (STATUS_DENIED) without
// executing it, so its plane's switch, which has booked a circuit for the
// answer, gets one. RREQs pass on every plane (a read is
// idempotent; each plane's switch has booked a circuit for its answer and the
// compute side keeps the first answer).
//
// The key is (source port, message id, chunk seq). Compute nodes number their
// messages per destination, so at this node each source's ids run 0, 1, 2 ..
// mod 256, and a source has only a few messages in flight (MAX_ACTIVE per
// destination). Per source (ports 0 .. 2^SRC_LOG2-1) the filter keeps the
// newest id it has seen (`hi`, any kind, good units only) and a window of
// W = 2^WINDOW_LOG2 ids (hi-W, hi] with a seen bit per chunk seq
// (0 .. 2^SEQ_LOG2-1). A good unit with id x, d = x - hi (mod 256):
//   * 1 <= d <= NEW_MAX: x is new; the window moves to end at x (the seen
//     bits of the ids that enter it are cleared) and x is recorded;
//   * hi - x <= W-1 (d = 0 included): in the window: a WREQ/RMWREQ whose seen
//     bit is set is a second copy: dropped (cnt_dup); else it is recorded;
//   * otherwise (W <= hi - x <= 256 - NEW_MAX - 1) it is stale: a WREQ/RMWREQ
//     is dropped (cnt_stale).
// The defaults are the write outcome's bounds (docs/protocol.md §4b, the
// simulator's faults/dedup.rs): W = DUP_WINDOW_IDS = 64 and NEW_MAX =
// RETRY_UNRESOLVED = 64 (a requester activates no message 64 or more ids
// ahead of its oldest unresolved one, so every copy of an unresolved
// message is inside the window, and one more than 64 ahead cannot be new);
// W + NEW_MAX <= 128 keeps half the id space as margin for late copies. A copy that old cannot be a first copy in a working fabric
//     and applying it could undo newer writes (e.g. the backlog of a plane
//     that was cut off, sent when it comes back).
// The bound: a copy is recognised as a second copy while its source's newest
// id seen here is less than W ahead of it; after that it is dropped as stale,
// so nothing is ever applied twice. A first copy is applied when it arrives
// less than W ids behind the newest (W must exceed the ids a source can have
// in flight, MAX_ACTIVE, plus the planes' skew), and the ids must not wrap
// between two units seen from one source (fewer than 128 messages lost on
// every plane in a row). Units from ports >= 2^SRC_LOG2, and chunks with seq
// >= 2^SEQ_LOG2, pass unfiltered and are counted (cnt_untracked).
// Whole messages (for the write acknowledgement, docs/protocol.md §4b): a
// WREQ/RMWREQ passed or marked a second copy leaves with out_whole set when
// it is its message's last chunk (header last) and the seen bits of chunks
// 0 .. its seq of its id are all set (itself included): every chunk of the
// message has reached this node, on some plane. The memory node acknowledges
// a write only then, so a write that lost an earlier chunk is not
// acknowledged at its last one; its re-send brings the earlier chunks again
// (second copies, the lost one new) and its last chunk, now whole, is
// acknowledged. A stale or untracked unit (source >= 2^SRC_LOG2, or any
// chunk of a message of more than 2^SEQ_LOG2 chunks) is never whole: such a
// write is not acknowledged and its requester reports it failed (safe: no
// write is called applied that may not be; size SEQ_LOG2 for the longest
// write, MAX_WRITE over the chunk size).
// Plane order: units whose verdicts come in the same cycle are taken plane 0
// first (a tie between the two copies keeps plane 0's).
// RMW results (so the host gets its result whichever plane's answer survives):
// per tracked source the filter keeps the last R = 2^RESULTS_LOG2 RMWREQs
// whose first copy it passed, as (id, result) in a ring. A second copy of an
// RMWREQ whose entry is there leaves with out_replay as well as out_dup: its
// engine answers it, without touching memory, with the first copy's result
// (rmw_done/rmw_ok/rmw_old from the engine that applied it; memo_ready low
// while that engine has not finished it). An entry is forgotten when its id
// leaves the window, or after R newer RMWREQs of its source; a second copy
// then gets no replay (denied), and a replay whose entry went while it
// waited gets memo_ready with memo_ok low (denied). Bound: a second copy gets
// its result while it is fewer than W ids and fewer than R RMWREQs of its
// source late.
module edm_dup_filter #(
    parameter int unsigned NP = 2,           // planes (switches)
    parameter int unsigned SRC_LOG2 = 2,     // sources tracked: ports 0 .. 2^SRC_LOG2-1
    parameter int unsigned WINDOW_LOG2 = $clog2(edm_pkg::DUP_WINDOW_IDS),  // ids remembered per source (<= 7)
    parameter int unsigned NEW_MAX = edm_pkg::RETRY_UNRESOLVED,  // ids ahead of the newest taken as new
    parameter int unsigned SEQ_LOG2 = 2,     // chunks tracked per message (>= 1)
    parameter int unsigned RESULTS_LOG2 = 2  // RMW results remembered per source
) (
    input  logic clk,
    input  logic rst_n,
    // From each plane's edm_rx mem_* port (plane p: bit p, block [p*66 +: 66]).
    input  logic [NP-1:0]    in_valid,
    input  logic [NP*66-1:0] in_block,
    input  logic [NP-1:0]    in_first,
    input  logic [NP-1:0]    in_last,
    input  logic [NP-1:0]    in_error,
    input  logic [NP-1:0]    in_abort,
    // Toward each plane's memory-node engine: the same, and the /MT/ of a dropped copy marked.
    output logic [NP-1:0]    out_valid,
    output logic [NP*66-1:0] out_block,
    output logic [NP-1:0]    out_first,
    output logic [NP-1:0]    out_last,
    output logic [NP-1:0]    out_error,
    output logic [NP-1:0]    out_abort,
    output logic [NP-1:0]    out_dup,        // with a good /MT/: not to be applied
    output logic [NP-1:0]    out_replay,     // with out_dup on an RMWREQ: answer it with the remembered result
    output logic [NP-1:0]    out_whole,      // with a good /MT/: its message's chunks 0 .. this last one all seen
    // From each plane's engine: the RMW (first copy) at its command head is
    // answered now (rmw_done), with rmw_ok and the old value; the key of its
    // command head (also the replay it waits to answer).
    input  logic [NP-1:0]    rmw_done,
    input  logic [NP-1:0]    rmw_ok,
    input  logic [NP*64-1:0] rmw_old,
    input  logic [NP*edm_pkg::PORT_BITS-1:0] rmw_src,
    input  logic [NP*8-1:0]  rmw_id,
    // Toward each plane's engine: the result for its key (ready: known, or forgotten: then not ok).
    output logic [NP-1:0]    memo_ready,
    output logic [NP-1:0]    memo_ok,
    output logic [NP*64-1:0] memo_old,
    // Counters per plane (16-bit, saturating).
    output logic [NP*16-1:0] cnt_dup,        // second copies marked
    output logic [NP*16-1:0] cnt_stale,      // copies older than the window marked
    output logic [NP*16-1:0] cnt_untracked   // WREQ/RMWREQ passed unfiltered (source or seq out of range)
);
  localparam int unsigned S = 1 << SRC_LOG2;
  localparam int unsigned W = 1 << WINDOW_LOG2;
  localparam int unsigned C = 1 << SEQ_LOG2;
  localparam int unsigned R = 1 << RESULTS_LOG2;
  localparam int unsigned PB = edm_pkg::PORT_BITS;
  localparam int unsigned KW = edm_pkg::HDR_KIND_W;
  localparam logic [KW-1:0] K_WREQ = KW'(edm_pkg::KIND_WREQ);
  localparam logic [KW-1:0] K_RMW = KW'(edm_pkg::KIND_RMWREQ);
  if (W + NEW_MAX > 128 || NEW_MAX < 1) begin : g_bounds
    $error("edm_dup_filter: need 1 <= NEW_MAX and 2^WINDOW_LOG2 + NEW_MAX <= 128 (docs/protocol.md §4b)");
  end

  // ---- each plane's unit: its header fields, and its verdict
  logic [NP-1:0]           commit;
  logic [NP*KW-1:0]        rx_kind;
  logic [NP*10-1:0]        rx_src;
  logic [NP*8-1:0]         rx_id;
  logic [NP-1:0]           rx_seq0;
  logic [NP*11-1:0]        seq_hi;      // seq bits 1..11, from T[1]
  logic [NP-1:0]           rx_mlast;    // header last, from T[1]
  for (genvar p = 0; p < NP; p++) begin : g_rx
    logic [7:0]  idx;
    logic        cont;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [63:0] t_word;   // only T[1]'s seq bits
    logic [edm_pkg::PORT_BITS-1:0] rx_dst;
    logic [edm_pkg::HDR_LEN_W-1:0] rx_len;
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_off PINCONNECTEMPTY */
    edm_unit_receiver rx (
        .clk, .rst_n,
        .in_valid(in_valid[p]), .in_block(in_block[p*66 +: 66]), .in_first(in_first[p]), .in_last(in_last[p]),
        .in_error(in_error[p]), .in_abort(in_abort[p]),
        .fresh(), .ms_kind(), .ms_len(), .ms_store(1'b1),
        .t_word, .cont, .commit(commit[p]), .bad_end(),
        .rx_idx(idx), .rx_kind(rx_kind[p*KW +: KW]), .rx_src(rx_src[p*10 +: 10]), .rx_dst,
        .rx_id(rx_id[p*8 +: 8]), .rx_len, .rx_seq0(rx_seq0[p])
    );
    /* verilator lint_on PINCONNECTEMPTY */
    always_ff @(posedge clk)
      if (!rst_n) begin
        seq_hi[p*11 +: 11] <= '0;
        rx_mlast[p] <= 1'b0;
      end else if (cont && idx == 8'd1) begin
        seq_hi[p*11 +: 11] <= t_word[10:0];
        rx_mlast[p] <= t_word[edm_pkg::HDR_LAST_LSB - 48];
      end
  end

  // ---- the table: per source its newest id and the window's seen bits
  logic [S-1:0]     hv, hv_n;          // a unit of this source has been seen
  logic [S*8-1:0]   hi, hi_n;
  logic [S*W*C-1:0] seen, seen_n;      // [(s*W + id mod W)*C + seq]
  logic [NP-1:0]    drop, dup, stale, untracked, whole;
  // The RMW results: entry s*R + r; per source the next entry to take.
  logic [S*R-1:0]   mv, mv_n, md, md_n, mok, mok_n;   // valid, done, ok
  logic [S*R*8-1:0] mid, mid_n;
  logic [S*R*64-1:0] mold, mold_n;
  logic [S*RESULTS_LOG2-1:0] mnext, mnext_n;
  logic [NP-1:0]    replay;

  always_comb begin
    logic [SRC_LOG2-1:0]    s;
    logic [7:0]             x, d, behind;
    logic [WINDOW_LOG2-1:0] j;
    logic [SRC_LOG2+WINDOW_LOG2+SEQ_LOG2-1:0] q;   // x's seen bit for this chunk
    logic [11:0]            seq;
    logic [WINDOW_LOG2-1:0] off;
    logic                   filtered, seq_ok, all_seen;
    off = '0;
    whole = '0;
    hv_n = hv;
    hi_n = hi;
    seen_n = seen;
    drop = '0;
    dup = '0;
    stale = '0;
    untracked = '0;
    replay = '0;
    mv_n = mv;
    md_n = md;
    mok_n = mok;
    mid_n = mid;
    mold_n = mold;
    mnext_n = mnext;
    // An engine's answer to a first copy fills its entry (if it is still there).
    for (int p = 0; p < NP; p++)
      for (int e = 0; e < S * R; e++)
        if (rmw_done[p] && rmw_src[p*PB + SRC_LOG2 +: PB - SRC_LOG2] == '0
            && SRC_LOG2'(e / R) == rmw_src[p*PB +: SRC_LOG2] && mv[e] && mid[e*8 +: 8] == rmw_id[p*8 +: 8]) begin
          md_n[e] = 1'b1;
          mok_n[e] = rmw_ok[p];
          mold_n[e*64 +: 64] = rmw_old[p*64 +: 64];
        end
    for (int p = 0; p < NP; p++) begin   // in plane order: later planes see earlier planes' updates
      s = rx_src[p*10 +: SRC_LOG2];
      x = rx_id[p*8 +: 8];
      j = x[WINDOW_LOG2-1:0];
      seq = {seq_hi[p*11 +: 11], rx_seq0[p]};
      q = {s, j, seq[SEQ_LOG2-1:0]};
      seq_ok = seq >> SEQ_LOG2 == 12'd0;
      filtered = rx_kind[p*KW +: KW] == K_WREQ || rx_kind[p*KW +: KW] == K_RMW;
      d = x - hi_n[s*8 +: 8];
      behind = hi_n[s*8 +: 8] - x;
      if (commit[p] && rx_src[p*10 + SRC_LOG2 +: 10 - SRC_LOG2] != '0) begin
        untracked[p] = filtered;
      end else if (commit[p]) begin
        if (!hv_n[s] || (d != 8'd0 && d <= 8'(NEW_MAX))) begin
          // New id: the ids hi+1 .. x enter the window (all of it if x is W or more ahead).
          for (int k = 0; k < W; k++) begin
            off = WINDOW_LOG2'(k) - hi_n[s*8 +: WINDOW_LOG2] - WINDOW_LOG2'(1);   // k's id is hi + 1 + off
            if (!hv_n[s] || d >= 8'(W) || 8'(off) < d) seen_n[(s*W + k)*C +: C] = '0;
          end
          hv_n[s] = 1'b1;
          hi_n[s*8 +: 8] = x;
          behind = 8'd0;
        end
        if (filtered && behind >= 8'(W)) begin
          stale[p] = 1'b1;
        end else if (filtered && !seq_ok) begin
          untracked[p] = 1'b1;
        end else if (filtered && seen_n[q]) begin
          dup[p] = 1'b1;
          for (int r = 0; r < R; r++)
            if (rx_kind[p*KW +: KW] == K_RMW && mv_n[s*R + r] && mid_n[(s*R + r)*8 +: 8] == x) replay[p] = 1'b1;
        end else if (filtered) begin
          seen_n[q] = 1'b1;
          if (rx_kind[p*KW +: KW] == K_RMW) begin   // a first copy: its result is to come
            mv_n[s*R + int'(mnext_n[s*RESULTS_LOG2 +: RESULTS_LOG2])] = 1'b1;
            md_n[s*R + int'(mnext_n[s*RESULTS_LOG2 +: RESULTS_LOG2])] = 1'b0;
            mid_n[(s*R + int'(mnext_n[s*RESULTS_LOG2 +: RESULTS_LOG2]))*8 +: 8] = x;
            mnext_n[s*RESULTS_LOG2 +: RESULTS_LOG2] = mnext_n[s*RESULTS_LOG2 +: RESULTS_LOG2] + 1'b1;
          end
        end
      end
      drop[p] = dup[p] || stale[p];
      // Whole: a tracked unit (passed or a second copy) whose message's chunks up to it are all seen.
      all_seen = 1'b1;
      for (int k = 0; k < C; k++)
        if (k <= int'(seq[SEQ_LOG2-1:0]) && !seen_n[{s, j, SEQ_LOG2'(k)}]) all_seen = 1'b0;
      whole[p] = commit[p] && filtered && !stale[p] && !untracked[p] && rx_mlast[p] && all_seen;
    end
    // An entry whose id has left its source's window is forgotten (ids wrap).
    for (int e = 0; e < S * R; e++)
      if (8'(hi_n[(e / R)*8 +: 8] - mid_n[e*8 +: 8]) >= 8'(W)) mv_n[e] = 1'b0;
  end

  // The result for each engine's key.
  always_comb
    for (int p = 0; p < NP; p++) begin
      memo_ready[p] = 1'b1;
      memo_ok[p] = 1'b0;
      memo_old[p*64 +: 64] = '0;
      for (int e = 0; e < S * R; e++)
        if (rmw_src[p*PB + SRC_LOG2 +: PB - SRC_LOG2] == '0 && SRC_LOG2'(e / R) == rmw_src[p*PB +: SRC_LOG2]
            && mv[e] && mid[e*8 +: 8] == rmw_id[p*8 +: 8]) begin
          memo_ready[p] = md[e];
          memo_ok[p] = md[e] && mok[e];
          memo_old[p*64 +: 64] = mold[e*64 +: 64];
        end
    end

  always_ff @(posedge clk)
    if (!rst_n) begin
      hv <= '0;
      hi <= '0;
      seen <= '0;
      mv <= '0;
      md <= '0;
      mok <= '0;
      mid <= '0;
      mold <= '0;
      mnext <= '0;
    end else begin
      hv <= hv_n;
      hi <= hi_n;
      seen <= seen_n;
      mv <= mv_n;
      md <= md_n;
      mok <= mok_n;
      mid <= mid_n;
      mold <= mold_n;
      mnext <= mnext_n;
    end

  assign out_valid = in_valid;
  assign out_block = in_block;
  assign out_first = in_first;
  assign out_last = in_last;
  assign out_error = in_error;
  assign out_dup = drop;                // set only with a good /MT/ (commit)
  assign out_replay = replay;
  assign out_whole = whole;
  assign out_abort = in_abort;

  for (genvar p = 0; p < NP; p++) begin : g_cnt
    always_ff @(posedge clk)
      if (!rst_n) begin
        cnt_dup[p*16 +: 16] <= '0;
        cnt_stale[p*16 +: 16] <= '0;
        cnt_untracked[p*16 +: 16] <= '0;
      end else begin
        cnt_dup[p*16 +: 16] <= edm_pkg::sat_add(cnt_dup[p*16 +: 16], {1'b0, dup[p]});
        cnt_stale[p*16 +: 16] <= edm_pkg::sat_add(cnt_stale[p*16 +: 16], {1'b0, stale[p]});
        cnt_untracked[p*16 +: 16] <= edm_pkg::sat_add(cnt_untracked[p*16 +: 16], {1'b0, untracked[p]});
      end
  end
endmodule

// EDM compute-node engine (§3.2.1, §3.2.3, §3.3; docs/protocol.md §3 and §4):
// the mirror image of edm_mem_node. It takes remote-memory requests from the
// host, sends them as EDM units toward edm_tx, and completes them from the
// grants and RRES units that edm_rx delivers.
//
// Clock domains: the engine runs on clk (the TX clock, edm_tx's). Everything
// edm_rx delivers (grants and RRES blocks) is in rx_clk and crosses into clk
// through edm_fifo_async (one for grants, one for the RRES block stream);
// with RX_SAME_CLOCK (rx_clk is clk) there is no crossing. A
// grant or block that finds its crossing FIFO full is lost and counted in
// cnt_rx_overflow (rx_clk domain); a lost RRES block aborts the unit it
// belonged to (it is then dropped and counted in cnt_dropped).
//
// Requests (req_valid/req_ready, queued in a request FIFO, issued in order):
//   KIND_RREQ:   read req_len bytes at req_raddr of node req_dst into local
//                memory at req_laddr.
//   KIND_WREQ:   write req_len bytes from local memory at req_laddr to req_raddr.
//                DMA style: the data stay in local memory; the engine reads each
//                chunk through the lmem_rd_* port only when its grant arrives.
//                The host must not change those bytes before the completion.
//   KIND_RMWREQ: req_rmw_op (RMW_CAS / RMW_FAA / RMW_SWAP) on the 64-bit word at
//                req_raddr with req_arg0, req_arg1; the old value (the 8-byte
//                RRES) is written to local memory at req_laddr, like a read.
//   req_tag is returned with the completion. A zero-length WREQ completes at
//   once (STATUS_OK, nothing sent); an unknown kind completes at once with
//   STATUS_ERROR.
// Message state table (2^SLOTS_LOG2 entries): a request is issued when a slot is
// free and its destination has fewer than MAX_ACTIVE active messages (issued,
// not yet finished); otherwise it waits at the head of the request FIFO (never
// dropped; this also holds back later requests to other destinations). Message
// ids count per destination (a table of 2^ID_TABLE_LOG2 counters indexed by the
// low destination bits, so ids never repeat among active messages of one
// destination while fewer than 256 are outstanding); with EXT_ID the id comes
// with the request instead (req_msg_id: the dual switch's edm_mirror gives each
// plane's engine the same id for the same request). On issue:
//   WREQ: an /N/ (size = length) is queued. A chunk is a fixed function of
//         its message: chunk k is bytes [k*C, min((k+1)*C, length)), seq k,
//         last on the final chunk (C = MAX_CHUNK_BYTES, a power of two: the
//         switch grants min(C, bytes left), so only the last chunk is short).
//         A /G/ of size s for it (grant_dst, id) queues the lowest chunk not
//         yet sent whose size is s (s = C: the lowest unsent full chunk; s < C:
//         the short last chunk if unsent); a grant matching no unsent chunk of
//         an active WREQ is discarded and counted (cnt_stray_grants). So after
//         a lost grant every copy of chunk k (a later grant, a re-sent /N/'s,
//         the other plane's) carries the same bytes and seq, and the
//         receiver's (source, id, seq) key for second copies is sound. Since a
//         full grant always takes the lowest unsent full chunk, the full
//         chunks sent are a prefix and only the tail goes out of order: the
//         bytes granted so far (k*C + the tail if sent, tail < C) say which
//         chunks are sent, with no state beyond the byte count. The message is finished
//         when all its chunks' /MT/s have left. Lost /N/ or /G/ (docs/faults.md §5): a WREQ that
//         has heard no grant cfg_retry cycles (0 = never) after its last /N/
//         left or its last grant came, with bytes not yet granted, and that saw
//         a loss since that /N/ left (ctl_lost: the link down, or a block
//         toward this node lost or corrupted), sends a new /N/ for those bytes, same
//         message id (cnt_retries): they are full chunks and at most the
//         short last one, which the switch grants full ones first, so its
//         grants map onto them one for one; one that saw none waits cfg_retry <<
//         QUIET_RETRY_SHIFT (a /N/ lost on the uplink is not seen here): a
//         grant merely late (its port held by others' lost circuits) is not
//         asked for twice. Data go only against a grant for a chunk not yet
//         sent, so no chunk is sent twice: if the switch still held the
//         message, its surplus grants are stray.
//   RREQ/RMWREQ: the unit itself is queued (it is the notification). Its timer
//         starts when the unit has left. RRES chunks for it (matched by source
//         = its destination and msg_id, seq in order, bytes within the length)
//         are written to local memory at laddr + bytes received so far; the
//         message finishes when the last byte's write has been issued
//         (STATUS_ERROR if an RRES carried a non-OK status or the last flag
//         came early). TIMEOUT (§3.3): if not finished TIMEOUT_CYCLES
//         (cfg_timeout, 0 = never) cycles after its unit left, it finishes with
//         a NULL response, STATUS_TIMEOUT, no (further) local writes
//         (cnt_timeouts); RRES chunks for it that come later find no message
//         and are discarded and counted (cnt_late).
// RRES input (edm_rx's mem_* port), cut-through with a verdict: once a unit's
// header is complete (its second block) it is matched to its message and its
// words go to the message's local buffer as they arrive, but the message
// advances (and can complete) only on the unit's verdict (in_last &&
// !in_error); see w_push below for why no corrupted byte is ever completed as
// valid. A unit that ends in error or abort, is not an RRES, is longer than
// MAX_CHUNK_BYTES, finds no room in the receive ring (2^RING_LOG2 words, up to
// 2^RBUF_LOG2 chunks waiting for the writer) (edm_rx has no back-pressure: the
// local-memory write port must keep up with the link, one word per cycle on
// average, short stalls are absorbed), or matches its message but out of
// sequence, is dropped and counted (cnt_dropped).
// Fail all (fail_all, a level; edm_mirror's eng_fail_all: a plane dead DEAD_CYCLES):
// while it is high the engine takes no request (req_ready low: the mirror
// waits for a live plane) and every one it holds, its request FIFO's too,
// finishes as STATUS_TIMEOUT (cnt_failed_all), never sent again: its jobs (/N/,
// RREQ, RMWREQ, WREQ chunks not yet started) are dropped at the fetcher and
// the emit head (s_dead), its grants are stray, its /N/ is not re-sent. A
// read whose RRES chunk is being written finishes first (as for its timer).
// A unit already started is finished (its first blocks are on the line). A
// slot completes only when no job of it is left (s_jobs), so none is reused
// under a queued job. With fail_all low nothing changes (no cycle moves).
// Completions: one per request, cpl_valid/cpl_ready, in request order per
// destination (a finished message waits for older messages to the same
// destination; messages to different destinations complete independently).
// Output toward edm_tx's memory input: units block by block (valid/ready,
// out_last on the unit's last block), as edm_mem_node's output: /N/ is one
// block, RREQ 3, RMWREQ 5, a WREQ chunk of n bytes 3 + ceil(n/8) (CRC-32C in
// the /MT/). A WREQ chunk starts as soon as its first word is in from local
// memory and each block leaves once its words are (cut-through: back to back
// while local memory answers a word per cycle, idle fillers if it is slower).
// Counters: 16-bit, saturating.
//
// Signal prefixes (the stage a signal belongs to, in the order a request flows):
//   q_  the request at the head of the request FIFO   i_  issuing it into the table
//   s_  the message table, one entry per slot          g_  the grant at the head of its crossing
//   f_  fetcher: WREQ chunk words from local memory    e_  the job at the emit head (eh_)
//   u_  its unit, block by block (edm_unit_emitter)    r_  an RRES block out of the RX crossing
//   rx_ the RRES unit being received (edm_unit_receiver; ms_ its /MS/ fields, nx_ its header as of this block)
//   c_  the message a committed RRES chunk matches     w_  the local-memory writer
//   t_  timeouts (t_word: a received block as T word)  rq_ jq_ eq_ tq_ wq_ gq_: FIFO ports
//   Also r_lo/r_hi (the buffer words of a block) and r_any/r_slot (the completion offered).
module edm_compute_node #(
    parameter int unsigned MAX_CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,  // largest WREQ/RRES chunk
                                                // (the switch's chunk size; a power of two)
    parameter int unsigned MAX_ACTIVE = edm_pkg::DEFAULT_MAX_ACTIVE_NOTIFS, // X per destination
    parameter int unsigned SLOTS_LOG2 = 3,      // message state table entries
    parameter int unsigned REQ_LOG2 = 2,        // request FIFO depth
    parameter int unsigned ID_TABLE_LOG2 = 4,   // message id counters
    parameter int unsigned TAGS_LOG2 = 4,       // local-memory reads in flight
    parameter int unsigned CROSS_LOG2 = 4,      // RX->TX crossing FIFOs
    parameter int unsigned RING_LOG2 = 7,       // RRES receive ring (8-byte words), >= 2 chunks
    parameter int unsigned RBUF_LOG2 = 3,       // committed RRES chunks waiting to be written
    parameter int unsigned TIMER_W = 20,        // timeout counter bits
    parameter bit          EXT_ID = 1'b0,       // 1: message ids from req_msg_id, not the counters
    parameter int unsigned QUIET_RETRY_SHIFT = 2, // no loss seen: a WREQ re-sends after cfg_retry << this
    parameter int unsigned RX_SAME_CLOCK = 0    // 1: rx_clk is clk (e.g. behind the PCS's rate
                                                // matching): no crossing FIFOs, RRES blocks
                                                // taken as they come, grants through edm_fifo
) (
    input  logic        clk,            // TX / engine clock
    input  logic        rst_n,
    input  logic        rx_clk,         // edm_rx's clock
    input  logic        rx_rst_n,
    input  logic [edm_pkg::PORT_BITS-1:0] node_port,      // this node's port: the units' src
    input  logic [TIMER_W-1:0] cfg_timeout,  // read/RMW timeout in clk cycles, 0 = none
    input  logic [TIMER_W-1:0] cfg_retry,    // WREQ /N/ re-send after clk cycles without a grant, 0 = none
    input  logic        ctl_lost,       // a loss seen now (clk): the link down, a block toward this node
                                        // lost or corrupted (edm_rx: a /G/ rejected, cnt_ctl_missed)
    input  logic        fail_all,       // take nothing, fail all held, send none of it (clk)
    // Requests.
    input  logic        req_valid,
    output logic        req_ready,
    input  logic [2:0]  req_kind,       // edm_pkg::KIND_RREQ / KIND_WREQ / KIND_RMWREQ
    input  logic [edm_pkg::PORT_BITS-1:0] req_dst,        // memory node
    input  logic [63:0] req_raddr,
    input  logic [15:0] req_len,        // RREQ / WREQ bytes (RMW: ignored)
    input  logic [63:0] req_laddr,      // local address: read destination / write source / RMW result
    input  logic [3:0]  req_rmw_op,
    input  logic [63:0] req_arg0,
    input  logic [63:0] req_arg1,
    input  logic [7:0]  req_tag,
    input  logic [7:0]  req_msg_id,     // EXT_ID: the request's message id (else ignored)
    // Completions.
    output logic        cpl_valid,
    input  logic        cpl_ready,
    output logic [2:0]  cpl_kind,
    output logic [edm_pkg::PORT_BITS-1:0] cpl_dst,
    output logic [7:0]  cpl_msg_id,
    output logic [7:0]  cpl_tag,
    output logic [7:0]  cpl_status,     // STATUS_OK / STATUS_ERROR / STATUS_TIMEOUT
    // Local memory, read port (WREQ data): one 8-byte word per request; answered
    // in order, >= 1 cycle later, no back-pressure on the answers.
    output logic        lmem_rd_valid,
    input  logic        lmem_rd_ready,
    output logic [63:0] lmem_rd_addr,   // 8-byte aligned
    input  logic        lmem_rd_rsp_valid,
    input  logic [63:0] lmem_rd_rsp_data,
    // Local memory, write port (RRES data): byte-masked 8-byte words.
    output logic        lmem_wr_valid,
    input  logic        lmem_wr_ready,
    output logic [63:0] lmem_wr_addr,   // 8-byte aligned
    output logic [63:0] lmem_wr_data,
    output logic [7:0]  lmem_wr_mask,
    // From edm_rx (rx_clk): memory units block by block, and good /G/ blocks.
    input  logic        in_valid,
    input  logic [65:0] in_block,
    input  logic        in_first,
    input  logic        in_last,
    input  logic        in_error,
    input  logic        in_abort,
    input  logic        grant_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] grant_dst,
    input  logic [7:0]  grant_msg_id,
    input  logic [15:0] grant_size,
    // Toward edm_tx's memory input.
    output logic        out_valid,
    input  logic        out_ready,
    output logic [65:0] out_block,
    output logic        out_last,
    // Counters (16-bit, saturating).
    output logic [15:0] cnt_dropped,       // bad, aborted, unexpected or unstorable units
    output logic [15:0] cnt_stray_grants,  // grants naming no WREQ with bytes left
    output logic [15:0] cnt_timeouts,      // reads / RMWs finished by their timer
    output logic [15:0] cnt_late,          // good RRES chunks for no active message
    output logic [15:0] cnt_retries,       // /N/ sent again (no grant in cfg_retry cycles)
    output logic [15:0] cnt_failed_all,    // requests failed by fail_all
    output logic [15:0] cnt_rx_overflow    // rx_clk domain: grants / blocks lost at the crossing
);
  localparam int unsigned NS = 1 << SLOTS_LOG2;
  localparam int unsigned SW = SLOTS_LOG2;
  localparam int unsigned CW = MAX_CHUNK_BYTES / 8 + 1;        // words of an unaligned chunk
  localparam int unsigned CBW = $clog2(CW);                    // chunk buffer word index
  localparam int unsigned RBW = $clog2(MAX_CHUNK_BYTES / 8 + 2);  // RRES T index (0 .. n_md + 1)
  localparam int unsigned IDN = 1 << ID_TABLE_LOG2;
  localparam int unsigned REQ_W = 3 + edm_pkg::PORT_BITS + 64 + 16 + 64 + 4 + 64 + 64 + 8 + 8;
  localparam int unsigned JOB_W = 2 + SW + 16 + 16 + 12 + 1;
  localparam int unsigned WQ_W = RING_LOG2 + SW + 16 + 16 + 2 + RING_LOG2;
  localparam int unsigned NRB = 1 << RBUF_LOG2;
  localparam int unsigned RING = 1 << RING_LOG2;
  localparam int unsigned RXE_W = 1 + 66 + 4;
  localparam int unsigned GQ_W = edm_pkg::PORT_BITS + 8 + 16;
  localparam int unsigned CL = $clog2(MAX_CHUNK_BYTES);         // chunk k starts at byte k << CL
  // Chunk indices are 12-bit seqs: a 16-bit length has at most 4096 chunks.
  if ((1 << CL) != MAX_CHUNK_BYTES || (65535 >> CL) >= 4096) begin : g_bad_chunk
    $error("edm_compute_node: MAX_CHUNK_BYTES must be a power of two of at least 16");
  end

  localparam logic [2:0] K_RREQ = 3'(edm_pkg::KIND_RREQ);
  localparam logic [2:0] K_WREQ = 3'(edm_pkg::KIND_WREQ);
  localparam logic [2:0] K_RMW = 3'(edm_pkg::KIND_RMWREQ);
  localparam logic [2:0] K_RRES = 3'(edm_pkg::KIND_RRES);
  localparam logic [1:0] J_N = 2'd0, J_RREQ = 2'd1, J_RMW = 2'd2, J_WD = 2'd3;
  localparam logic [15:0] MAX_CHUNK = 16'(MAX_CHUNK_BYTES);
  localparam logic [15:0] RMW_BYTES = 16'(edm_pkg::RMW_RESULT_BYTES);
  localparam logic [7:0] ST_OK = edm_pkg::STATUS_OK;
  localparam logic [7:0] ST_ERR = edm_pkg::STATUS_ERROR;
  localparam logic [7:0] ST_TIMEOUT = edm_pkg::STATUS_TIMEOUT;

  // ================================================================ message table
  logic [NS-1:0]            s_valid, s_done, s_sent;
  logic [NS-1:0][2:0]       s_kind;
  logic [NS-1:0][edm_pkg::PORT_BITS-1:0] s_dst;
  logic [NS-1:0][7:0]       s_id, s_tag, s_status;
  logic [NS-1:0][15:0]      s_len, s_granted, s_rcvd;
  logic [NS-1:0][11:0]      s_seq;      // read: next RRES seq
  logic [NS-1:0][63:0]      s_raddr, s_laddr, s_arg0, s_arg1;
  logic [NS-1:0][3:0]       s_op;
  logic [NS-1:0]            s_err;
  logic [NS-1:0]            s_lost;     // a loss seen (ctl_lost) since the WREQ's last /N/ left
  logic [NS-1:0][RBUF_LOG2:0] s_wbusy;    // committed RRES chunks not yet written
  logic [NS-1:0][TIMER_W-1:0] s_start;
  logic [NS-1:0][NS-1:0]    s_older;    // [i][j]: j was issued before i
  logic [NS-1:0]            s_dead;     // failed by fail_all: its queued jobs are dropped
  logic [NS-1:0][2:0]       s_jobs;     // its jobs queued or being emitted (job and emit queues: <= 4)
  logic [IDN-1:0][7:0]      next_id;
  logic [TIMER_W-1:0]       now;

  // ================================================================ requests
  logic             rq_valid, rq_pop;
  logic [REQ_W-1:0] rq_data;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [REQ_LOG2:0] rq_count;
  logic [1:0] jq_count, eq_count;
  logic [RBUF_LOG2:0] wq_count;
  logic [TAGS_LOG2:0] tq_count;
  /* verilator lint_on UNUSEDSIGNAL */
  // Under fail_all no request is taken: edm_mirror then waits for a live plane.
  logic rq_wr_ready;
  assign req_ready = rq_wr_ready && !fail_all;
  edm_fifo #(.WIDTH(REQ_W), .DEPTH_LOG2(REQ_LOG2)) req_q (
      .clk, .rst_n,
      .wr_valid(req_valid && !fail_all), .wr_ready(rq_wr_ready),
      .wr_data({req_kind, req_dst, req_raddr, req_len, req_laddr, req_rmw_op, req_arg0, req_arg1, req_tag, req_msg_id}),
      .rd_valid(rq_valid), .rd_ready(rq_pop), .rd_data(rq_data), .count(rq_count)
  );
  logic [2:0]  q_kind;
  logic [edm_pkg::PORT_BITS-1:0] q_dst;
  logic [63:0] q_raddr, q_laddr, q_arg0, q_arg1;
  logic [15:0] q_len;
  logic [3:0]  q_op;
  logic [7:0]  q_tag, q_id;
  assign {q_kind, q_dst, q_raddr, q_len, q_laddr, q_op, q_arg0, q_arg1, q_tag, q_id} = rq_data;

  logic          free_any;
  logic [SW-1:0] free_idx;
  logic [SW:0]   act_cnt;   // active messages to q_dst
  always_comb begin
    free_any = 1'b0;
    free_idx = '0;
    act_cnt = '0;
    for (integer i = NS - 1; i >= 0; i--) begin
      if (!s_valid[i]) begin
        free_any = 1'b1;
        free_idx = SW'(i);
      end
      if (s_valid[i] && !s_done[i] && s_dst[i] == q_dst) act_cnt = act_cnt + 1'b1;
    end
  end

  logic i_ok, i_push, i_zero, i_bad, jq_wr_ready;
  assign i_bad  = !(q_kind == K_RREQ || q_kind == K_WREQ || q_kind == K_RMW);
  assign i_zero = q_kind == K_WREQ && q_len == 16'd0;
  assign i_ok   = rq_valid && free_any && act_cnt < (SW + 1)'(MAX_ACTIVE) && jq_wr_ready;
  assign i_push = i_ok && !i_zero && !i_bad && !fail_all;
  assign rq_pop = i_ok;

  // ================================================================ grants (rx_clk -> clk)
  logic            gx_ready, gq_valid, gq_pop;
  logic [GQ_W-1:0] gq_data;
  if (RX_SAME_CLOCK != 0) begin : g_grant_sync
    /* verilator lint_off UNUSEDSIGNAL */
    logic [CROSS_LOG2:0] count;
    /* verilator lint_on UNUSEDSIGNAL */
    edm_fifo #(.WIDTH(GQ_W), .DEPTH_LOG2(CROSS_LOG2)) grant_q (
        .clk, .rst_n,
        .wr_valid(grant_valid), .wr_ready(gx_ready), .wr_data({grant_dst, grant_msg_id, grant_size}),
        .rd_valid(gq_valid), .rd_ready(gq_pop), .rd_data(gq_data), .count
    );
  end else begin : g_grant_async
    edm_fifo_async #(.WIDTH(GQ_W), .DEPTH_LOG2(CROSS_LOG2)) grant_x (
        .wr_clk(rx_clk), .wr_rst_n(rx_rst_n),
        .wr_valid(grant_valid), .wr_ready(gx_ready), .wr_data({grant_dst, grant_msg_id, grant_size}),
        .rd_clk(clk), .rd_rst_n(rst_n),
        .rd_valid(gq_valid), .rd_ready(gq_pop), .rd_data(gq_data)
    );
  end
  logic [edm_pkg::PORT_BITS-1:0] g_dst;
  logic [7:0]    g_id;
  logic [15:0]   g_size, g_take, g_len, g_tail, g_off;
  logic          g_match, g_stray, g_push, g_found, g_last;
  logic [SW-1:0] g_slot;
  logic [11:0]   g_k;        // the chunk the grant is answered with
  logic [16:0]   g_nfull;    // full chunks of the message
  logic [15:0]   g_granted;  // bytes granted so far: full chunks 0 .. g_kfull-1, and the tail if g_tail_sent
  logic [11:0]   g_kfull;    // full chunks sent, so the lowest unsent one
  logic          g_tail_sent;
  assign {g_dst, g_id, g_size} = gq_data;
  always_comb begin
    g_match = 1'b0;
    g_slot = '0;
    for (integer i = NS - 1; i >= 0; i--)
      if (s_valid[i] && !s_done[i] && s_kind[i] == K_WREQ && s_dst[i] == g_dst && s_id[i] == g_id) begin
        g_match = 1'b1;
        g_slot = SW'(i);
      end
  end
  // Grant to chunk: size C names the lowest unsent full chunk, the short
  // tail's size names the last chunk (if unsent); anything else is stray.
  assign g_len   = s_len[g_slot];
  assign g_granted = s_granted[g_slot];
  assign g_nfull = {1'b0, g_len} >> CL;
  assign g_tail  = g_len & 16'(MAX_CHUNK_BYTES - 1);
  assign g_kfull = 12'(g_granted >> CL);
  assign g_tail_sent = (g_granted & 16'(MAX_CHUNK_BYTES - 1)) != 16'd0;
  always_comb begin
    g_found = 1'b0;
    g_k = '0;
    if (g_size == MAX_CHUNK) begin
      g_found = 17'(g_kfull) < g_nfull;
      g_k = g_kfull;
    end else if (g_size == g_tail && g_tail != 16'd0 && !g_tail_sent) begin
      g_found = 1'b1;
      g_k = g_nfull[11:0];
    end
  end
  assign g_take  = g_size;
  assign g_off   = 16'(32'(g_k) << CL);
  assign g_last  = 32'(g_k) == (32'(g_len) - 32'd1) >> CL;
  assign g_stray = gq_valid && (!g_match || !g_found);
  assign g_push  = gq_valid && !g_stray && jq_wr_ready && !i_push;
  assign gq_pop  = g_push || g_stray;

  // ================================================================ jobs: {type, slot, off, size, seq, last}
  logic             jq_wr_valid, jq_valid, jq_pop;
  logic [JOB_W-1:0] jq_wr_data, jq_data;
  logic [1:0]       i_jt;
  assign i_jt = q_kind == K_WREQ ? J_N : (q_kind == K_RREQ ? J_RREQ : J_RMW);
  logic          n_retry_push;
  logic [SW-1:0] n_retry_slot;
  assign jq_wr_valid = i_push || g_push || n_retry_push;
  assign jq_wr_data  = i_push ? {i_jt, free_idx, 16'd0, q_len, 12'd0, 1'b1}
                     : g_push ? {J_WD, g_slot, g_off, g_take, g_k, g_last}
                              : {J_N, n_retry_slot, 16'd0, s_len[n_retry_slot] - s_granted[n_retry_slot], 12'd0, 1'b1};
  edm_fifo #(.WIDTH(JOB_W), .DEPTH_LOG2(1)) job_q (
      .clk, .rst_n,
      .wr_valid(jq_wr_valid), .wr_ready(jq_wr_ready), .wr_data(jq_wr_data),
      .rd_valid(jq_valid), .rd_ready(jq_pop), .rd_data(jq_data), .count(jq_count)
  );

  // ================================================================ fetcher: WREQ chunk words from local memory
  logic [1:0]    f_jt;
  logic [SW-1:0] f_slot;
  logic [15:0]   f_off, f_size;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [11:0]   f_seq;   // passed on in jq_data
  logic          f_last;
  /* verilator lint_on UNUSEDSIGNAL */
  assign {f_jt, f_slot, f_off, f_size, f_seq, f_last} = jq_data;
  logic [63:0]   f_addr;
  logic [16:0]   f_nw;         // words of the chunk
  logic [CBW:0]  f_j;          // next word to read
  logic          f_fb;         // buffer being filled
  logic [1:0]    bufs_used;    // chunk buffers filling or waiting to be sent
  logic          eq_wr_valid, eq_wr_ready, tq_wr_ready, f_fire, f_end;
  assign f_addr = s_laddr[f_slot] + {48'b0, f_off};
  assign f_nw   = ({14'b0, f_addr[2:0]} + {1'b0, f_size} + 17'd7) >> 3;
  assign f_end  = {{(16 - CBW){1'b0}}, f_j} == f_nw - 17'd1;
  // A chunk's job enters the emit queue with its first word's read (cut-through:
  // the unit starts as soon as that word is in, while the fetcher reads on).
  // A chunk of an aborted message not yet started is dropped here (f_skip).
  logic f_skip;
  assign f_skip = jq_valid && f_jt == J_WD && f_j == '0 && s_dead[f_slot];
  assign lmem_rd_valid = jq_valid && f_jt == J_WD && tq_wr_ready && !f_skip
                      && (f_j != '0 || (bufs_used < 2'd2 && eq_wr_ready));
  assign lmem_rd_addr  = {f_addr[63:3] + 61'(f_j), 3'b000};
  assign f_fire = lmem_rd_valid && lmem_rd_ready;
  logic out_fire, unit_end;   // a block / a unit's last block leaves (unit generator)
  assign eq_wr_valid = jq_valid && (f_jt == J_WD ? f_fire && f_j == '0 : eq_valid);
  logic e_skip;   // the emit head's job is an aborted message's, not started: dropped
  assign jq_pop = f_jt == J_WD ? (f_fire && f_end) || f_skip
                               : (eq_valid ? eq_wr_valid && eq_wr_ready : unit_end || e_skip);

  logic             tq_valid;
  logic [CBW:0]     tq_data;
  edm_fifo #(.WIDTH(CBW + 1), .DEPTH_LOG2(TAGS_LOG2)) tag_q (
      .clk, .rst_n,
      .wr_valid(f_fire), .wr_ready(tq_wr_ready), .wr_data({f_fb, f_j[CBW-1:0]}),
      .rd_valid(tq_valid), .rd_ready(lmem_rd_rsp_valid), .rd_data(tq_data), .count(tq_count)
  );
  logic [63:0]  cbuf [2 << CBW];
  logic [1:0][CBW:0] arrived;
  always_ff @(posedge clk)
    if (lmem_rd_rsp_valid && tq_valid) cbuf[tq_data] <= lmem_rd_rsp_data;

  // ================================================================ emit queue: {job, buffer}
  logic             eq_valid, eq_pop;
  logic [JOB_W:0]   eq_data;
  edm_fifo #(.WIDTH(JOB_W + 1), .DEPTH_LOG2(1)) emit_q (
      .clk, .rst_n,
      .wr_valid(eq_wr_valid), .wr_ready(eq_wr_ready), .wr_data({jq_data, f_fb}),
      .rd_valid(eq_valid), .rd_ready(eq_pop), .rd_data(eq_data), .count(eq_count)
  );
  // The emit head: the emit queue's, or, while it is empty, a job that needs no
  // local data (/N/, RREQ, RMWREQ) straight from the job queue: a cycle less
  // from request to line. Order holds: nothing enters the emit queue meanwhile.
  logic           eh_valid;
  logic [JOB_W:0] eh_data;
  assign eh_valid = eq_valid || (jq_valid && f_jt != J_WD);
  assign eh_data  = eq_valid ? eq_data : {jq_data, 1'b0};

  // ================================================================ unit generator
  logic [1:0]    e_jt;
  logic [SW-1:0] e_slot;
  logic [15:0]   e_off, e_size;
  logic [11:0]   e_seq;
  logic          e_last, e_buf;
  assign {e_jt, e_slot, e_off, e_size, e_seq, e_last, e_buf} = eh_data;

  logic [7:0]  u_i;           // block of the unit: 0 /MS/, 1..n_md /MD/, n_md+1 /MT/
  logic [63:0] e_addr, hdr;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [63:0] e_laddr;   // only its alignment matters here
  /* verilator lint_on UNUSEDSIGNAL */
  logic [16:0] ulen, e_nw;
  logic        is_n, data_started, block_in;
  logic [3:0]  e_u;
  logic [16:0] lo_sum;
  logic [CBW:0] r_lo, r_hi;
  logic [63:0] b_lo, b_hi, b_data, tw;
  assign is_n    = e_jt == J_N;
  assign e_addr  = e_jt == J_WD ? s_raddr[e_slot] + {48'b0, e_off} : s_raddr[e_slot];
  assign e_laddr = s_laddr[e_slot] + {48'b0, e_off};
  // Bytes after header and address: RREQ 0, RMWREQ 16 (arg0, arg1), WREQ the data.
  assign ulen    = e_jt == J_WD ? {1'b0, e_size} : (e_jt == J_RMW ? 17'd16 : 17'd0);
  assign e_nw    = ({14'b0, e_laddr[2:0]} + {1'b0, e_size} + 17'd7) >> 3;
  assign data_started = e_jt != J_WD || arrived[e_buf] != '0;

  always_comb begin
    hdr = '0;
    hdr[edm_pkg::HDR_KIND_LSB +: edm_pkg::HDR_KIND_W] = e_jt == J_WD ? K_WREQ : (e_jt == J_RMW ? K_RMW : K_RREQ);
    hdr[edm_pkg::HDR_SRC_LSB +: edm_pkg::HDR_SRC_W] = node_port;
    hdr[edm_pkg::HDR_DST_LSB +: edm_pkg::HDR_DST_W] = s_dst[e_slot];
    hdr[edm_pkg::HDR_ID_LSB +: edm_pkg::HDR_ID_W] = s_id[e_slot];
    hdr[edm_pkg::HDR_LEN_LSB +: edm_pkg::HDR_LEN_W] =
        e_jt == J_WD ? e_size : (e_jt == J_RMW ? 16'(edm_pkg::RMW_OPERAND_BYTES) : s_len[e_slot]);
    hdr[edm_pkg::HDR_SEQ_LSB +: edm_pkg::HDR_SEQ_W] = e_jt == J_WD ? e_seq : 12'd0;
    hdr[edm_pkg::HDR_LAST_LSB] = e_jt == J_WD ? e_last : 1'b1;
    hdr[edm_pkg::HDR_OP_LSB +: edm_pkg::HDR_OP_W] = e_jt == J_RMW ? s_op[e_slot] : 4'd0;
  end

  // WREQ data byte k is T byte 18 + k = buffer byte a + k (a = local address mod
  // 8): T[i] starts at buffer byte 8i + a - 18 = 8(lo_sum - 3) + e_u mod 8.
  assign e_u    = {1'b0, e_laddr[2:0]} + 4'd6;
  assign lo_sum = {16'b0, e_u[3]} + {9'b0, u_i};
  always_comb begin
    r_lo = lo_sum >= 17'd3 ? (CBW + 1)'(lo_sum - 17'd3) : '0;
    r_hi = lo_sum >= 17'd2 ? (CBW + 1)'(lo_sum - 17'd2) : '0;
    if (r_lo > (CBW + 1)'(CW - 1)) r_lo = (CBW + 1)'(CW - 1);
    if (r_hi > (CBW + 1)'(CW - 1)) r_hi = (CBW + 1)'(CW - 1);
  end
  // A WREQ data block (T[2] on) leaves once its last buffer word (r_hi, but
  // none past the chunk) is in.
  logic [16:0] e_need;
  assign e_need   = {{(16 - CBW){1'b0}}, r_hi} < e_nw ? {{(16 - CBW){1'b0}}, r_hi} : e_nw - 17'd1;
  assign block_in = e_jt != J_WD || u_i < 8'd2 || e_need < {{(16 - CBW){1'b0}}, arrived[e_buf]};
  assign b_lo = cbuf[{e_buf, r_lo[CBW-1:0]}];
  assign b_hi = cbuf[{e_buf, r_hi[CBW-1:0]}];
  assign b_data = 64'({b_hi, b_lo} >> {e_u[2:0], 3'b000});

  // T[u_i], u_i >= 1: address, then the data (WREQ) or arg0, arg1 (RMWREQ); the
  // emitter adds header bytes 6..7 to T[1] and zeroes what lies past the unit.
  always_comb begin
    tw = b_data;
    if (u_i == 8'd1) tw = {e_addr[47:0], 16'b0};
    else if (u_i == 8'd2) tw = {e_jt == J_RMW ? s_arg0[e_slot][47:0] : b_data[63:16], e_addr[63:48]};
    else if (e_jt == J_RMW && u_i == 8'd3) tw = {s_arg1[e_slot][47:0], s_arg0[e_slot][63:48]};
    else if (e_jt == J_RMW) tw = {48'b0, s_arg1[e_slot][63:48]};
  end

  // RREQ, RMWREQ and WREQ chunks: |M| = 16 + ulen (header, address, the rest).
  logic        u_valid, u_last;
  logic [65:0] u_block;
  edm_unit_emitter #(.IDX_W(8), .LEN_W(17)) emit (
      .clk, .rst_n,
      .unit_valid(eh_valid && !is_n && !e_skip), .start_ok(data_started), .block_ok(block_in), .hdr, .m_bytes(ulen + 17'd16),
      .idx(u_i), .t_word(tw),
      .out_valid(u_valid), .out_ready, .out_block(u_block), .out_last(u_last));

  // /N/: {crc8, reserved, size, msg_id, dst, SUB_N, BT_EDM}, one block; its
  // CRC-8 starts from the uplink's control sequence number (n_seq: the /N/
  // blocks sent since reset, docs/protocol.md §5a). Every /N/ that leaves here
  // reaches the line (edm_tx drops nothing), so the numbers stay in step.
  logic [55:0] n_fields;
  logic [63:0] n_payload;
  logic [7:0]  n_seq;
  assign n_fields  = {6'b0, e_size, s_id[e_slot], s_dst[e_slot], edm_pkg::SUB_N, edm_pkg::BT_EDM};
  assign n_payload = {edm_pkg::crc8_seq(n_seq, n_fields), n_fields};

  // A WREQ chunk's job is dropped once its buffer is whole (no read of it
  // outstanding), so its buffer is freed as at its unit's end.
  assign e_skip = eh_valid && s_dead[e_slot] && u_i == '0 && (e_jt != J_WD || (!tq_valid && f_j == '0));
  assign out_valid = !e_skip && (is_n ? eh_valid : u_valid);
  assign out_last  = is_n || u_last;
  assign out_block = is_n ? {n_payload, edm_pkg::SYNC_CTRL} : u_block;
  assign out_fire = out_valid && out_ready;
  assign unit_end = out_fire && out_last;
  assign eq_pop   = (unit_end || e_skip) && eq_valid;
  always_ff @(posedge clk) begin
    if (!rst_n) n_seq <= '0;
    else if (out_fire && is_n) n_seq <= n_seq + 8'd1;
  end

  // ================================================================ RRES receive (rx_clk -> clk)
  logic             rx_lost, rxw_valid, rxw_ready, rxr_valid;
  logic [RXE_W-1:0] rxr_data;
  assign rxw_valid = in_valid || in_abort || rx_lost;
  if (RX_SAME_CLOCK != 0) begin : g_rres_sync
    // The receiver below takes a block every cycle: nothing to buffer.
    assign rxw_ready = 1'b1;
    assign rxr_valid = rxw_valid;
    assign rxr_data  = {in_valid, in_block, in_first, in_last, in_error, in_abort || rx_lost};
  end else begin : g_rres_async
    edm_fifo_async #(.WIDTH(RXE_W), .DEPTH_LOG2(CROSS_LOG2)) rres_x (
        .wr_clk(rx_clk), .wr_rst_n(rx_rst_n),
        .wr_valid(rxw_valid), .wr_ready(rxw_ready),
        .wr_data({in_valid, in_block, in_first, in_last, in_error, in_abort || rx_lost}),
        .rd_clk(clk), .rd_rst_n(rst_n),
        .rd_valid(rxr_valid), .rd_ready(1'b1), .rd_data(rxr_data)
    );
  end
  always_ff @(posedge rx_clk) begin
    if (!rx_rst_n) begin
      rx_lost <= 1'b0;
      cnt_rx_overflow <= '0;
    end else begin
      // A lost block (or abort) becomes an abort on the next entry that fits.
      if (rxw_valid) rx_lost <= !rxw_ready;
      cnt_rx_overflow <= edm_pkg::sat_add(cnt_rx_overflow, {1'b0, (in_valid || in_abort) && !rxw_ready}
                                                         + {1'b0, grant_valid && !gx_ready});
    end
  end

  logic        r_bv, r_first, r_last, r_error, r_abort;
  logic [65:0] r_block;
  assign {r_bv, r_block, r_first, r_last, r_error, r_abort} = rxr_data;

  logic           fresh, ms_store, ms_reject, cont, commit, bad_end;
  logic [63:0]    t_word;
  logic [2:0]     ms_kind;
  logic [15:0]    ms_len;
  logic           rx_seq0;
  logic [RBW-1:0] rx_idx;
  logic [edm_pkg::PORT_BITS-1:0] rx_src;
  logic [7:0]     rx_id;
  logic [15:0]    rx_len;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [2:0]     rx_kind;   // always K_RRES: nothing else is kept
  logic [edm_pkg::PORT_BITS-1:0] rx_dst;   // this node
  /* verilator lint_on UNUSEDSIGNAL */
  edm_unit_receiver #(.IDX_W(RBW)) receive (
      .clk, .rst_n,
      .in_valid(rxr_valid && r_bv), .in_block(r_block), .in_first(r_first), .in_last(r_last),
      .in_error(r_error), .in_abort(rxr_valid && r_abort),
      .fresh, .ms_kind, .ms_len, .ms_store, .t_word, .cont, .commit, .bad_end,
      .rx_idx, .rx_kind, .rx_src, .rx_dst, .rx_id, .rx_len, .rx_seq0);

  logic           rx_hmatch, rx_hok, rx_pushed;   // the header's match (see hdr_now)
  logic [SW-1:0]  rx_slot;
  logic [RING_LOG2-1:0] rx_base;   // ring word of the unit's T[0]
  logic [63:48]   rx_hi, nx_hi;    // header bits 48..63 (from T[1])
  logic [RING_LOG2:0] ring_used;   // words of queued chunks not yet written
  logic [16:0]  ms_words;
  assign nx_hi = rx_idx == RBW'(1) ? t_word[15:0] : rx_hi;
  logic [11:0] nx_seq;
  logic        nx_last;
  logic [3:0]  nx_status;
  assign nx_seq    = {nx_hi[58:48], rx_seq0};
  assign nx_last   = nx_hi[edm_pkg::HDR_LAST_LSB];
  assign nx_status = nx_hi[edm_pkg::HDR_OP_LSB +: edm_pkg::HDR_OP_W];

  assign ms_store  = ms_kind == K_RRES && ms_len <= MAX_CHUNK && wq_count < (RBUF_LOG2 + 1)'(NRB)
                   && {{(16 - RING_LOG2){1'b0}}, ring_used} + ms_words <= 17'(RING);
  // An RRES of n bytes is T[0] .. T[ceil(n / 8) + 1].
  assign ms_words  = ({1'b0, ms_len} + 17'd7 >> 3) + 17'd2;
  assign ms_reject = fresh && !ms_store;

  logic [63:0] rbuf [RING];
  always_ff @(posedge clk)
    if (cont) rbuf[rx_base + RING_LOG2'(rx_idx)] <= t_word;

  // Which message the chunk belongs to: decided when its header is complete
  // (T[1] brings seq, last and status), latched for the unit's end.
  logic          c_match, c_ok, c_fin, c_err;
  logic [SW-1:0] c_slot;
  logic [16:0]   c_end;
  always_comb begin
    c_match = 1'b0;
    c_slot = '0;
    for (integer i = NS - 1; i >= 0; i--)
      if (s_valid[i] && !s_done[i] && s_sent[i] && s_kind[i] != K_WREQ && s_dst[i] == rx_src && s_id[i] == rx_id) begin
        c_match = 1'b1;
        c_slot = SW'(i);
      end
  end
  assign c_end = {1'b0, s_rcvd[c_slot]} + {1'b0, rx_len};
  assign c_ok  = c_match && nx_seq == s_seq[c_slot] && c_end <= {1'b0, s_len[c_slot]};
  assign c_fin = c_end == {1'b0, s_len[c_slot]} || nx_last;
  assign c_err = nx_status != 4'(ST_OK) || (nx_last && c_end != {1'b0, s_len[c_slot]});

  // Cut-through with a verdict: a chunk that matches its message at T[1] is
  // queued for the writer at once (w_push) and written to local memory as its
  // words arrive; the verdict (good: its /MT/ without mem_error) follows in
  // verdict_q, in the same order. Only a good chunk advances its message
  // (s_rcvd, s_seq) and may finish it; a bad one is dropped, its words already
  // written. Those land only in [s_rcvd, s_len) of the read's own destination
  // buffer (c_ok), which later good chunks must cover before the read can
  // complete OK (writes are in order), so no corrupted byte is ever handed to
  // the host as valid; a read that gets no good chunk times out, its buffer
  // undefined, as before. The message cannot time out meanwhile (s_wbusy).
  logic          hdr_now, h_match, h_ok, unit_pushed, v_push;
  logic [SW-1:0] u_slot;
  logic [RING_LOG2:0] u_words;
  assign hdr_now = cont && rx_idx == RBW'(1);
  assign h_match = hdr_now ? c_match : rx_hmatch;
  assign h_ok    = hdr_now ? c_ok : rx_hok;
  assign u_slot  = hdr_now ? c_slot : rx_slot;
  assign u_words = (RING_LOG2 + 1)'(({1'b0, rx_len} + 17'd7 >> 3) + 17'd2);   // T[0] .. T[ceil(n / 8) + 1]
  assign unit_pushed = w_push || rx_pushed;
  assign v_push  = unit_pushed && (commit || bad_end);

  // Chunks to write: {buffer, slot, offset, length, finishes, error, T words}.
  logic            wq_valid, wq_pop, w_push;
  logic [WQ_W-1:0] wq_data;
  /* verilator lint_off UNUSEDSIGNAL */
  logic            wq_wr_ready, vq_wr_ready;  // never low: a chunk is stored only with a free buffer
  logic [RBUF_LOG2:0] vq_count;
  /* verilator lint_on UNUSEDSIGNAL */
  assign w_push = hdr_now && c_ok;
  edm_fifo #(.WIDTH(WQ_W), .DEPTH_LOG2(RBUF_LOG2)) write_q (
      .clk, .rst_n,
      .wr_valid(w_push), .wr_ready(wq_wr_ready),
      .wr_data({rx_base, c_slot, s_rcvd[c_slot], rx_len, c_fin, c_err, u_words[RING_LOG2-1:0]}),
      .rd_valid(wq_valid), .rd_ready(wq_pop), .rd_data(wq_data), .count(wq_count)
  );
  logic v_valid, v_good;
  edm_fifo #(.WIDTH(1), .DEPTH_LOG2(RBUF_LOG2)) verdict_q (
      .clk, .rst_n,
      .wr_valid(v_push), .wr_ready(vq_wr_ready), .wr_data(commit),
      .rd_valid(v_valid), .rd_ready(wq_pop), .rd_data(v_good), .count(vq_count)
  );

  // ================================================================ local-memory writer
  logic          w_fin, w_err;
  logic [RING_LOG2-1:0] w_rb, w_words;
  logic [SW-1:0] w_slot;
  logic [15:0]   w_off, w_len;
  assign {w_rb, w_slot, w_off, w_len, w_fin, w_err, w_words} = wq_data;
  logic [63:0]   w_addr;
  logic [2:0]    w_a, w_s;
  logic [16:0]   w_endb;     // a + len - 1
  logic [13:0]   w_j, w_last_j;
  logic [RBW-1:0] w_q;
  logic [63:0]   w_lo, w_hi;
  logic [2:0]    w_first_lane, w_last_lane;
  logic          w_done, w_all, w_word_in, w_fire;
  logic [16:0]   w_need;     // the last T index word w_j reads
  assign w_addr   = s_laddr[w_slot] + {48'b0, w_off};
  assign w_a      = w_addr[2:0];
  assign w_endb   = {14'b0, w_a} + {1'b0, w_len} - 17'd1;
  assign w_last_j = w_endb[16:3];
  // Memory byte 8j + l (from the aligned word) is chunk byte 8j + l - a = T byte
  // 8j + l - a + 10: T[q] and T[q + 1] shifted right by s = (2 - a) mod 8 bytes.
  assign w_q  = RBW'(w_j) + (w_a <= 3'd2 ? RBW'(1) : RBW'(0));
  assign w_s  = 3'd2 - w_a;
  assign w_lo = rbuf[w_rb + RING_LOG2'(w_q)];
  assign w_hi = rbuf[w_rb + RING_LOG2'(w_q) + RING_LOG2'(1)];
  assign lmem_wr_data = 64'({w_hi, w_lo} >> {w_s, 3'b000});
  assign w_first_lane = w_j == 14'd0 ? w_a : 3'd0;
  assign w_last_lane  = w_j == w_last_j ? w_endb[2:0] : 3'd7;
  always_comb
    for (integer b = 0; b < 8; b++) lmem_wr_mask[b] = 3'(b) >= w_first_lane && 3'(b) <= w_last_lane;
  // A chunk still being received (no verdict yet) is written as far as its
  // words have arrived (rx_idx: the next T index); w_all: all written, the
  // verdict still to come. A bad verdict stops it at once.
  assign w_need = 17'(w_q) + 17'd1 < {{(17 - RING_LOG2){1'b0}}, w_words} ? 17'(w_q) + 17'd1
                                                                        : {{(17 - RING_LOG2){1'b0}}, w_words} - 17'd1;
  assign w_word_in = v_valid || w_need < 17'(rx_idx);
  assign lmem_wr_valid = wq_valid && w_len != 16'd0 && !w_all && w_word_in && !(v_valid && !v_good);
  assign lmem_wr_addr  = {w_addr[63:3] + 61'(w_j), 3'b000};
  assign w_fire = lmem_wr_valid && lmem_wr_ready;
  assign w_done = wq_valid && v_valid && (!v_good || w_len == 16'd0 || w_all || (w_fire && w_j == w_last_j));
  assign wq_pop = w_done;

  // ================================================================ timeouts
  logic          t_any;
  logic [SW-1:0] t_slot;
  always_comb begin
    t_any = 1'b0;
    t_slot = '0;
    for (integer i = NS - 1; i >= 0; i--)
      if (s_valid[i] && !s_done[i] && s_sent[i] && s_kind[i] != K_WREQ && s_wbusy[i] == '0
          && !(w_push && c_slot == SW'(i)) && cfg_timeout != '0 && now - s_start[i] >= cfg_timeout) begin
        t_any = 1'b1;
        t_slot = SW'(i);
      end
  end

  // ================================================================ write retries (lost /N/ or /G/)
  // Lowest priority on the job queue. s_sent / s_start of a WREQ: its /N/ has
  // left, and when (or when its last grant came).
  logic n_retry_any;
  logic [TIMER_W+QUIET_RETRY_SHIFT-1:0] quiet_retry;
  assign quiet_retry = (TIMER_W+QUIET_RETRY_SHIFT)'(cfg_retry) << QUIET_RETRY_SHIFT;
  always_comb begin
    n_retry_any = 1'b0;
    n_retry_slot = '0;
    for (integer i = NS - 1; i >= 0; i--) begin
      logic [TIMER_W-1:0] waited;
      waited = now - s_start[i];
      if (s_valid[i] && !s_done[i] && s_sent[i] && s_kind[i] == K_WREQ && s_granted[i] != s_len[i]
          && cfg_retry != '0 && (s_lost[i] ? waited >= cfg_retry
                                            : (TIMER_W+QUIET_RETRY_SHIFT)'(waited) >= quiet_retry)) begin
        n_retry_any = 1'b1;
        n_retry_slot = SW'(i);
      end
    end
  end
  assign n_retry_push = n_retry_any && jq_wr_ready && !i_push && !(gq_valid && !g_stray);

  // ================================================================ fail_all
  // Every message not finished fails at once (s_kill), but a read whose RRES
  // chunk is queued for the writer waits for it, as for its timer. Jobs: one
  // in (j_slot), out at their unit's end or dropped (e_skip, f_skip).
  logic [NS-1:0] s_kill;
  logic [SW-1:0] j_slot;
  always_comb
    for (integer i = 0; i < NS; i++)
      s_kill[i] = fail_all && s_valid[i] && !s_done[i]
                  && (s_kind[i] == K_WREQ || (s_wbusy[i] == '0 && !(w_push && c_slot == SW'(i))));
  assign j_slot = i_push ? free_idx : (g_push ? g_slot : n_retry_slot);
  logic [SW:0] n_failed_all;   // failed by fail_all this cycle (held, and taken)
  assign n_failed_all = (SW + 1)'($countones(s_kill)) + (SW + 1)'(i_ok && fail_all && !i_zero && !i_bad);

  // ================================================================ completions
  logic          r_any;
  logic [SW-1:0] r_slot;
  always_comb begin
    r_any = 1'b0;
    r_slot = '0;
    for (integer i = NS - 1; i >= 0; i--) begin
      logic blocked;
      blocked = 1'b0;
      for (integer j = 0; j < NS; j++)
        if (s_older[i][j] && s_valid[j] && s_dst[j] == s_dst[i]) blocked = 1'b1;
      if (s_valid[i] && s_done[i] && s_jobs[i] == '0 && !blocked) begin
        r_any = 1'b1;
        r_slot = SW'(i);
      end
    end
  end
  assign cpl_valid  = r_any;
  assign cpl_kind   = s_kind[r_slot];
  assign cpl_dst    = s_dst[r_slot];
  assign cpl_msg_id = s_id[r_slot];
  assign cpl_tag    = s_tag[r_slot];
  assign cpl_status = s_status[r_slot];

  // ================================================================ state
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      s_valid <= '0;
      s_done <= '0;
      s_sent <= '0;
      s_kind <= '0;
      s_dst <= '0;
      s_id <= '0;
      s_tag <= '0;
      s_status <= '0;
      s_len <= '0;
      s_granted <= '0;
      s_rcvd <= '0;
      s_seq <= '0;
      s_raddr <= '0;
      s_laddr <= '0;
      s_arg0 <= '0;
      s_arg1 <= '0;
      s_op <= '0;
      s_err <= '0;
      s_wbusy <= '0;
      s_start <= '0;
      s_lost <= '0;
      s_older <= '0;
      s_dead <= '0;
      s_jobs <= '0;
      next_id <= '0;
      now <= '0;
      f_j <= '0;
      f_fb <= 1'b0;
      bufs_used <= '0;
      arrived <= '0;
      rx_base <= '0;
      rx_hi <= '0;
      ring_used <= '0;
      w_j <= '0;
      w_all <= 1'b0;
      rx_hmatch <= 1'b0;
      rx_hok <= 1'b0;
      rx_pushed <= 1'b0;
      rx_slot <= '0;
      cnt_dropped <= '0;
      cnt_stray_grants <= '0;
      cnt_timeouts <= '0;
      cnt_late <= '0;
      cnt_retries <= '0;
      cnt_failed_all <= '0;
    end else begin
      now <= now + 1'b1;
      // ---- issue
      if (i_ok) begin
        s_valid[free_idx] <= 1'b1;
        s_done[free_idx] <= i_zero || i_bad || fail_all;
        s_sent[free_idx] <= 1'b0;
        s_kind[free_idx] <= q_kind;
        s_dst[free_idx] <= q_dst;
        s_id[free_idx] <= EXT_ID ? q_id : next_id[q_dst[ID_TABLE_LOG2-1:0]];
        s_tag[free_idx] <= q_tag;
        s_status[free_idx] <= i_bad ? ST_ERR : (fail_all && !i_zero ? ST_TIMEOUT : ST_OK);
        s_dead[free_idx] <= 1'b0;
        s_len[free_idx] <= q_kind == K_RMW ? RMW_BYTES : q_len;
        s_granted[free_idx] <= '0;
        s_rcvd[free_idx] <= '0;
        s_seq[free_idx] <= '0;
        s_raddr[free_idx] <= q_raddr;
        s_laddr[free_idx] <= q_laddr;
        s_arg0[free_idx] <= q_arg0;
        s_arg1[free_idx] <= q_arg1;
        s_op[free_idx] <= q_op;
        s_err[free_idx] <= 1'b0;
        s_wbusy[free_idx] <= '0;
        s_older[free_idx] <= s_valid;
        for (integer i = 0; i < NS; i++) s_older[i][free_idx] <= 1'b0;
        if (i_push) next_id[q_dst[ID_TABLE_LOG2-1:0]] <= next_id[q_dst[ID_TABLE_LOG2-1:0]] + 8'd1;
      end
      // ---- grants
      if (g_push) begin
        s_granted[g_slot] <= s_granted[g_slot] + g_take;
        s_start[g_slot] <= now;   // a WREQ's retry timer restarts with each grant
      end
      // A loss seen counts for every message waiting now, until its next /N/
      // leaves (a grant does not clear it: a later grant of the same /N/
      // may have been the one lost).
      for (integer i = 0; i < NS; i++)
        if (ctl_lost) s_lost[i] <= 1'b1;
        else if (unit_end && e_jt == J_N && e_slot == SW'(i)) s_lost[i] <= 1'b0;
      if (n_retry_push) s_sent[n_retry_slot] <= 1'b0;   // timed again once the new /N/ has left
      // ---- fetcher
      if (f_fire) begin
        f_j <= f_end ? '0 : f_j + 1'b1;
        if (f_end) f_fb <= !f_fb;
      end
      if (lmem_rd_rsp_valid && tq_valid) arrived[tq_data[CBW]] <= arrived[tq_data[CBW]] + 1'b1;
      bufs_used <= bufs_used + {1'b0, f_fire && f_j == '0} - {1'b0, (unit_end || e_skip) && e_jt == J_WD};
      if (e_skip && e_jt == J_WD) arrived[e_buf] <= '0;
      for (integer i = 0; i < NS; i++)
        s_jobs[i] <= s_jobs[i] + 3'(jq_wr_valid && j_slot == SW'(i))
                               - 3'((unit_end || e_skip) && e_slot == SW'(i)) - 3'(f_skip && f_slot == SW'(i));
      // ---- generator
      if (unit_end) begin
        if (e_jt == J_WD) arrived[e_buf] <= '0;
        // Chunks may leave in any order: done when all the bytes have left
        // (s_rcvd counts a WREQ's bytes sent).
        if (e_jt == J_WD) s_rcvd[e_slot] <= s_rcvd[e_slot] + e_size;
        if (e_jt == J_WD && s_rcvd[e_slot] + e_size == s_len[e_slot]) s_done[e_slot] <= 1'b1;
        if (e_jt == J_RREQ || e_jt == J_RMW || e_jt == J_N) begin
          s_sent[e_slot] <= 1'b1;
          s_start[e_slot] <= now;
        end
      end
      // ---- RRES receive
      if (cont) rx_hi <= nx_hi;
      if (hdr_now) begin
        rx_hmatch <= c_match;
        rx_hok <= c_ok;
        rx_slot <= c_slot;
        rx_pushed <= w_push;
      end
      if (fresh) rx_pushed <= 1'b0;
      // A queued chunk keeps its ring words until written, whatever its verdict.
      if (v_push) rx_base <= rx_base + u_words[RING_LOG2-1:0];
      if (v_push && commit) begin
        s_rcvd[u_slot] <= s_rcvd[u_slot] + rx_len;
        s_seq[u_slot] <= s_seq[u_slot] + 12'd1;
      end
      ring_used <= ring_used + (w_push ? u_words : '0)
                             - (w_done ? {1'b0, w_words} : '0);
      // ---- writer
      if (w_done) begin
        w_j <= '0;
        w_all <= 1'b0;
      end else if (w_fire) begin
        if (w_j == w_last_j) w_all <= 1'b1;
        else w_j <= w_j + 14'd1;
      end
      for (integer i = 0; i < NS; i++)
        s_wbusy[i] <= s_wbusy[i] + (RBUF_LOG2 + 1)'(w_push && c_slot == SW'(i))
                                 - (RBUF_LOG2 + 1)'(w_done && w_slot == SW'(i));
      if (w_done && v_good && w_err) s_err[w_slot] <= 1'b1;
      if (w_done && v_good && w_fin) begin
        s_done[w_slot] <= 1'b1;
        s_status[w_slot] <= (w_err || s_err[w_slot]) ? ST_ERR : ST_OK;
      end
      // ---- timeouts
      if (t_any) begin
        s_done[t_slot] <= 1'b1;
        s_status[t_slot] <= ST_TIMEOUT;
      end
      // ---- fail_all (after the timer: a message failed both ways fails once)
      for (integer i = 0; i < NS; i++)
        if (s_kill[i]) begin
          s_done[i] <= 1'b1;
          s_status[i] <= ST_TIMEOUT;
          s_dead[i] <= 1'b1;
        end
      // ---- completions
      if (r_any && cpl_ready) s_valid[r_slot] <= 1'b0;
      // ---- counters
      cnt_dropped <= edm_pkg::sat_add(cnt_dropped, {1'b0, bad_end} + {1'b0, ms_reject} + {1'b0, commit && h_match && !h_ok});
      cnt_stray_grants <= edm_pkg::sat_add(cnt_stray_grants, {1'b0, g_stray});
      cnt_timeouts <= edm_pkg::sat_add(cnt_timeouts, {1'b0, t_any});
      cnt_late <= edm_pkg::sat_add(cnt_late, {1'b0, commit && !h_match});
      cnt_retries <= edm_pkg::sat_add(cnt_retries, {1'b0, n_retry_push});
      if (17'(cnt_failed_all) + 17'(n_failed_all) > 17'hFFFF) cnt_failed_all <= '1;
      else cnt_failed_all <= cnt_failed_all + 16'(n_failed_all);
    end
  end

endmodule

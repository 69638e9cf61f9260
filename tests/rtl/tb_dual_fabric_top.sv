// Test top for tb_dual_fabric.py: the dual switch in RTL (paper §3.3). Two
// planes, each its own edm_switch with a link (tb_fabric_port) to every host;
// NC compute hosts on ports 0..NC-1, NM memory hosts on NC..NC+NM-1, one
// clock. A compute host gives each request to its two engines
// (edm_compute_node with EXT_ID, one per plane, each with its own local
// memory port: the plane's receive buffer) through edm_mirror, which
// completes it once. A memory host has an engine per plane (edm_mem_node) on
// two DRAM channel pairs of one memory (the bench merges them), behind
// edm_dup_filter, which lets only the first copy of a write or RMW be applied.
// Flattened indices: link (port x, plane y) is x*2 + y; compute engine (c, y)
// is c*2 + y; memory engine (m, y) is m*2 + y. sw_run[y] low holds plane y's
// switch in reset (stopped: its state is lost; the bench cuts its links too).
module tb_dual_fabric_top #(
    parameter int unsigned NC = 2,
    parameter int unsigned NM = 2,
    parameter int unsigned LINK_CYCLES = 19,
    parameter int unsigned CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,
    parameter int unsigned TIMER_W = 20,
    parameter int unsigned BER_WINDOW_CYCLES = 512,   // a cut link goes down after BER_THRESHOLD bad blocks
    parameter int unsigned BER_THRESHOLD = 4,
    parameter int unsigned CIRCUIT_TIMEOUT_CYCLES = 1000,
    parameter int unsigned PARK_AGE_CYCLES = 256,    // edm_switch's age bound on a parked port (0: off)
    parameter int unsigned MIRROR_WAIT_CYCLES = 2048,
    // A plane down this long fails the requests its engines hold (edm_mirror
    // DEAD_CYCLES): above a restored cut's link_down (cut + a clean BER
    // window), far below cfg_give_up, so a write retried on the live plane.
    parameter int unsigned MIRROR_DEAD_CYCLES = 4096,
    parameter bit          ENGINE_FAIL_ALL = 1'b1,  // a dead plane's engine fails what it holds (0: the mutant)
    parameter int unsigned FILTER_WINDOW_LOG2 = 4,   // edm_dup_filter's window: 2^this ids per source
    parameter int unsigned CN_SLOTS_LOG2 = 3,  // edm_compute_node's message table and request FIFO
    parameter int unsigned CN_REQ_LOG2 = 2,    // (the window must cover both: below)
    parameter bit          ENGINE_ORDER = 1'b1,  // a memory host's engines keep one order (0: each its own)
    parameter bit          READ_ORDER = 1'b1,    // ... reads included (0: reads keep their own engine's)
    // Write acknowledgements (docs/protocol.md §4b): the memory engines send
    // /A/, edm_mirror merges both planes' and each compute host has an
    // edm_write_retry in front of its mirror (which takes its ids: EXT_ID) and
    // an edm_write_outcome.
    parameter bit          ACKS = 1'b0,
    parameter bit          RMW_RETRY = 1'b1   // ACKS: an RMW timed out is re-sent (0: the mutant)
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [1:0]         sw_run,
    input  logic [TIMER_W-1:0] cfg_timeout,
    input  logic [TIMER_W-1:0] cfg_retry,
    // Compute hosts: requests and completions (one per request).
    input  logic [NC-1:0]      req_valid,
    output logic [NC-1:0]      req_ready,
    input  logic [NC*3-1:0]    req_kind,
    input  logic [NC*edm_pkg::PORT_BITS-1:0] req_dst,
    input  logic [NC*64-1:0]   req_raddr,
    input  logic [NC*16-1:0]   req_len,
    input  logic [NC*64-1:0]   req_laddr,
    input  logic [NC*4-1:0]    req_rmw_op,
    input  logic [NC*64-1:0]   req_arg0,
    input  logic [NC*64-1:0]   req_arg1,
    input  logic [NC*8-1:0]    req_tag,
    output logic [NC-1:0]      cpl_valid,
    input  logic [NC-1:0]      cpl_ready,
    output logic [NC*3-1:0]    cpl_kind,
    output logic [NC*edm_pkg::PORT_BITS-1:0] cpl_dst,
    output logic [NC*8-1:0]    cpl_tag,
    output logic [NC*8-1:0]    cpl_status,
    output logic [NC-1:0]      cpl_plane,
    output logic [NC*8-1:0]    req_msg_id,     // the message id edm_mirror gives the request offered now
    input  logic [TIMER_W-1:0] cfg_ack_timeout,   // ACKS: a write re-sent after this long without /A/
    input  logic [TIMER_W-1:0] cfg_give_up,       // ACKS: ... and reported failed after this long
    output logic [NC-1:0]      wo_valid,          // ACKS: each write's outcome (edm_write_outcome)
    output logic [NC*edm_pkg::PORT_BITS-1:0] wo_dst,
    output logic [NC*8-1:0]    wo_id,
    output logic [NC*8-1:0]    wo_tag,
    output logic [NC-1:0]      wo_ok,
    output logic [NC*16-1:0]   wr_cnt_resent,
    output logic [NC*16-1:0]   wr_cnt_gave_up,    // ACKS: writes the retry stopped re-sending (diagnosis)
    output logic [NC*16-1:0]   wo_cnt_stray,      // ACKS: /A/ ids the outcome matched to no write (diagnosis)
    // ACKS: per compute host {RMWs unknown (re-send DENIED), given up, re-sent} (edm_write_retry).
    output logic [NC*48-1:0]   wr_cnt_rmw,
    // ACKS, diagnosis (compute host c: [c*128 +: 128]): the retry's entry states (2 bits
    // each), its entries waiting for the mirror's free, and {q_hold, r_due, q_valid, q_ready}.
    output logic [NC*128-1:0]  wr_state,
    // Diagnosis: each compute engine's table (c, plane): {s_valid, s_done, s_sent, s_kind, s_id}.
    output logic [NC*2*128-1:0] cn_table,
    output logic [NC*16-1:0]   mirror_cnt_dup,
    output logic [NC*16-1:0]   mirror_cnt_stale,
    output logic [NC*2*16-1:0] mirror_cnt_unmirrored,
    // Compute engines (c, plane): local memory, counters.
    output logic [NC*2-1:0]    lrd_valid,
    input  logic [NC*2-1:0]    lrd_ready,
    output logic [NC*2*64-1:0] lrd_addr,
    input  logic [NC*2-1:0]    lrd_rsp_valid,
    input  logic [NC*2*64-1:0] lrd_rsp_data,
    output logic [NC*2-1:0]    lwr_valid,
    input  logic [NC*2-1:0]    lwr_ready,
    output logic [NC*2*64-1:0] lwr_addr,
    output logic [NC*2*64-1:0] lwr_data,
    output logic [NC*2*8-1:0]  lwr_mask,
    output logic [NC*2*16-1:0] cn_cnt_dropped,
    output logic [NC*2*16-1:0] cn_cnt_stray,
    output logic [NC*2*16-1:0] cn_cnt_timeouts,
    output logic [NC*2*16-1:0] cn_cnt_late,
    output logic [NC*2*16-1:0] cn_cnt_retries,
    output logic [NC*2*16-1:0] cn_cnt_failed_all,   // requests a dead plane's engine failed
    // Memory engines (m, plane): DRAM channels, counters; the filter's per (m, plane).
    output logic [NM*2-1:0]    dram_rd_valid,
    input  logic [NM*2-1:0]    dram_rd_ready,
    output logic [NM*2*64-1:0] dram_rd_addr,
    input  logic [NM*2-1:0]    dram_rsp_valid,
    input  logic [NM*2*64-1:0] dram_rsp_data,
    output logic [NM*2-1:0]    dram_wr_valid,
    input  logic [NM*2-1:0]    dram_wr_ready,
    output logic [NM*2*64-1:0] dram_wr_addr,
    output logic [NM*2*64-1:0] dram_wr_data,
    output logic [NM*2*8-1:0]  dram_wr_mask,
    output logic [NM*2*16-1:0] mn_cnt_dropped,
    output logic [NM*2*16-1:0] mn_cnt_stray,
    output logic [NM*2*16-1:0] mn_cnt_overflow,
    output logic [NM*2*16-1:0] filter_cnt_dup,
    output logic [NM*2*16-1:0] filter_cnt_stale,
    output logic [NM*2*16-1:0] filter_cnt_untracked,
    // Memory engines (m, plane): a unit committed now (its /MT/, good), its
    // source, message id and kind, and whether the filter marked it a second copy.
    output logic [NM*2-1:0]    mn_commit,
    output logic [NM*2*edm_pkg::PORT_BITS-1:0] mn_commit_src,
    output logic [NM*2*8-1:0]  mn_commit_id,
    output logic [NM*2*3-1:0]  mn_commit_kind,
    output logic [NM*2-1:0]    mn_commit_dup,
    // The filter's verdicts (m, plane): a unit committed now, its chunk seq,
    // and whether it was marked as older than the window (stale) or a second copy.
    output logic [NM*2-1:0]    f_commit,
    output logic [NM*2*edm_pkg::PORT_BITS-1:0] f_commit_src,
    output logic [NM*2*8-1:0]  f_commit_id,
    output logic [NM*2*3-1:0]  f_commit_kind,
    output logic [NM*2*12-1:0] f_commit_seq,
    output logic [NM*2-1:0]    f_commit_dup,
    output logic [NM*2-1:0]    f_commit_stale,
    // Memory engines (m, plane), diagnosis: {e_state, cmd_valid, c_kind, c_replay, c_dup, memo_ready,
    // r_hazard, r_peer_hazard, w_peer_hazard}.
    output logic [NM*2*13-1:0] mn_state,
    // Each plane's switch, diagnosis (plane y: [y*64 +: 64], packed per port as in edm_switch):
    // z_open, txc_count, fq_count, the scheduler's park_cnt and park_src, and {sk_pend, fq_valid}.
    output logic [2*64-1:0]    sw_z_open,
    output logic [2*64-1:0]    sw_txc_count,
    output logic [2*64-1:0]    sw_fq_count,
    output logic [2*64-1:0]    sw_park_cnt,
    output logic [2*64-1:0]    sw_park_src,
    output logic [2*64-1:0]    sw_flags,
    // Links (port, plane): Ethernet frames (host -> switch, switch -> host; the
    // bench sends none), bit errors on the wire (a cut: every block garbled),
    // the host's side down, and what the receivers counted.
    input  logic [(NC+NM)*2-1:0]    h_enc_valid,
    input  logic [(NC+NM)*2*66-1:0] h_enc_block,
    input  logic [(NC+NM)*2-1:0]    s_enc_valid,
    input  logic [(NC+NM)*2*66-1:0] s_enc_block,
    input  logic [(NC+NM)*2*66-1:0] up_flip,
    input  logic [(NC+NM)*2*66-1:0] down_flip,
    output logic [(NC+NM)*2-1:0]    link_down,
    output logic [(NC+NM)*2*16-1:0] h_cnt_corrupted,
    output logic [(NC+NM)*2*16-1:0] sw_cnt_dropped,
    output logic [(NC+NM)*2*16-1:0] sw_cnt_lost_grants,
    output logic [(NC+NM)*2*16-1:0] sw_cnt_unknown
);
  localparam int unsigned N = NC + NM;
  localparam int unsigned PB = edm_pkg::PORT_BITS;
  // The filter's window against the compute engines (docs/faults.md §6): a
  // plane's engine sends a unit only of a message in its table; while it holds
  // message x of a destination it has taken at most 2^CN_SLOTS_LOG2 - 1 later
  // ids of it into the table (completions to one destination go in order, so
  // they keep their entries) and 2^CN_REQ_LOG2 into its FIFO, and the other
  // plane at most one more (edm_mirror offers the next only when every plane
  // took this one, unless it leaves a plane out). So a copy arrives at most
  // 2^CN_SLOTS_LOG2 + 2^CN_REQ_LOG2 ids behind the newest its source sent the
  // node; the window must exceed that, or a late first copy is refused.
  if ((1 << FILTER_WINDOW_LOG2) <= (1 << CN_SLOTS_LOG2) + (1 << CN_REQ_LOG2)) begin : g_window_check
    $error("edm_dup_filter's window (%0d ids) does not exceed the compute engines' table and FIFO (%0d + %0d)",
           1 << FILTER_WINDOW_LOG2, 1 << CN_SLOTS_LOG2, 1 << CN_REQ_LOG2);
  end

  // Per link (port x, plane y: x*2 + y), engine side.
  logic [N*2*16-1:0] ctl_missed;   // the host's edm_rx: control blocks lost (docs/protocol.md §5a)
  logic [N*2-1:0]    e_valid, e_ready, e_last;
  logic [N*2*66-1:0] e_block;
  logic [N*2-1:0]    r_valid, r_first, r_last, r_error, r_abort, g_valid;
  logic [N*2*66-1:0] r_block;
  logic [N*2*PB-1:0] g_dst;
  logic [N*2*8-1:0]  g_id;
  logic [N*2*16-1:0] g_size;
  logic [N*2-1:0]    a_valid;      // the host's edm_rx: good /A/
  logic [N*2*PB-1:0] a_peer;
  logic [N*2*8-1:0]  a_base;
  logic [N*2*16-1:0] a_map;

  for (genvar y = 0; y < 2; y++) begin : g_plane
    logic [N*66-1:0] sw_in, sw_out;
    logic [N*16-1:0] dropped, lost, unknown;
    logic [N-1:0]    link_up;   // each port's link state at this plane's switch end
    edm_switch #(.N(N), .CHUNK_BYTES(CHUNK_BYTES), .CIRCUIT_TIMEOUT_CYCLES(CIRCUIT_TIMEOUT_CYCLES),
                 .PARK_AGE_CYCLES(PARK_AGE_CYCLES)) sw (
        .clk, .rst_n(rst_n && sw_run[y]),
        .in_block(sw_in), .port_link_up(link_up), .out_block(sw_out),
        .cnt_bad_notif(), .cnt_unknown(unknown), .cnt_non_edm(), .cnt_dropped(dropped),
        .cnt_conflict(), .cnt_overflow(), .cnt_lost_grants(lost), .fr_valid(), .fr_block()
    );
    assign sw_z_open[y*64 +: 64] = 64'(sw.z_open);
    assign sw_txc_count[y*64 +: 64] = 64'(sw.txc_count);
    assign sw_fq_count[y*64 +: 64] = 64'(sw.fq_count);
    assign sw_park_cnt[y*64 +: 64] = 64'(sw.u_sched.park_cnt);
    assign sw_park_src[y*64 +: 64] = 64'(sw.u_sched.park_src);
    assign sw_flags[y*64 +: 64] = 64'({sw.sk_pend, sw.fq_valid});
    for (genvar x = 0; x < N; x++) begin : g_link
      localparam int unsigned K = x * 2 + y;
      assign sw_cnt_dropped[K*16 +: 16] = dropped[x*16 +: 16];
      assign sw_cnt_lost_grants[K*16 +: 16] = lost[x*16 +: 16];
      assign sw_cnt_unknown[K*16 +: 16] = unknown[x*16 +: 16];
      tb_fabric_port #(.LINK_CYCLES(LINK_CYCLES), .BER_WINDOW_CYCLES(BER_WINDOW_CYCLES),
                       .BER_THRESHOLD(BER_THRESHOLD)) phy (
          .hclk(clk), .sclk(clk), .rst_n,
          .e_valid(e_valid[K]), .e_ready(e_ready[K]), .e_block(e_block[K*66 +: 66]), .e_last(e_last[K]),
          .h_enc_valid(h_enc_valid[K]), .h_enc_ready(), .h_enc_block(h_enc_block[K*66 +: 66]),
          .s_enc_valid(s_enc_valid[K]), .s_enc_ready(), .s_enc_block(s_enc_block[K*66 +: 66]),
          .sw_in(sw_in[x*66 +: 66]), .sw_out(sw_out[x*66 +: 66]), .sw_line('0),
          .up_flip(up_flip[K*66 +: 66]), .down_flip(down_flip[K*66 +: 66]),
          .h_tx_line(), .h_rx_line(), .dec_valid(), .dec_block(),
          .mem_valid(r_valid[K]), .mem_block(r_block[K*66 +: 66]), .mem_first(r_first[K]), .mem_last(r_last[K]),
          .mem_error(r_error[K]), .mem_abort(r_abort[K]),
          .grant_valid(g_valid[K]), .grant_dst(g_dst[K*PB +: PB]), .grant_msg_id(g_id[K*8 +: 8]),
          .grant_size(g_size[K*16 +: 16]),
          .ack_valid(a_valid[K]), .ack_peer(a_peer[K*PB +: PB]), .ack_base(a_base[K*8 +: 8]),
          .ack_map(a_map[K*16 +: 16]),
          .cnt_corrupted(h_cnt_corrupted[K*16 +: 16]), .cnt_unknown(), .cnt_ctl_missed(ctl_missed[K*16 +: 16]),
          .cnt_paced(),
          .link_down(link_down[K]), .sw_link_up(link_up[x]), .up_link_fault(), .down_link_fault(),  // the private wire (LINK_FAULT_RS = 0)
          .up_rm_deleted(), .up_rm_inserted(), .up_rm_overflow(), .up_rm_underflow(), .up_rm_starved(),
          .down_rm_deleted(), .down_rm_inserted(), .down_rm_overflow(), .down_rm_underflow(), .down_rm_starved(),
          .up_cnt_bad_sync(), .up_cnt_hi_ber(), .up_cnt_discarded(),
          .down_cnt_bad_sync(), .down_cnt_hi_ber(), .down_cnt_discarded()
      );
    end
  end

  for (genvar c = 0; c < NC; c++) begin : g_cn
    logic [1:0]    eng_req_valid, eng_req_ready, eng_cpl_valid, eng_cpl_ready, eng_fail_all;
    logic [7:0]    eng_msg_id;
    logic [2*3-1:0]  eng_cpl_kind;
    logic [2*PB-1:0] eng_cpl_dst;
    logic [2*8-1:0]  eng_cpl_msg_id, eng_cpl_tag, eng_cpl_status;
    // The request the mirror and the engines take (ACKS: edm_write_retry's, a
    // re-send or the host's), and the mirror's completion (ACKS: to the retry).
    logic          q_valid, q_ready, m_cpl_valid, m_cpl_ready, ma_valid, m_free_valid;
    logic [2:0]    q_kind, m_cpl_kind;
    logic [PB-1:0] q_dst, m_cpl_dst, ma_peer;
    logic [63:0]   q_raddr, q_laddr, q_arg0, q_arg1;
    logic [15:0]   q_len, ma_map;
    logic [3:0]    q_op;
    logic [7:0]    q_tag, q_id, m_cpl_tag, m_cpl_status, m_cpl_id, ma_base, m_free_id;
    logic [PB-1:0] m_free_dst;
    // With ACKS a re-send's tag is 32 + its retry entry (4 x 8): the mirror keeps 64 tags.
    edm_mirror #(.NP(2), .WAIT_CYCLES(MIRROR_WAIT_CYCLES), .DEAD_CYCLES(MIRROR_DEAD_CYCLES), .EXT_ID(ACKS),
                 .TAGS_LOG2(ACKS ? 6 : 4)) mirror (
        .clk, .rst_n,
        .req_valid(q_valid), .req_ready(q_ready), .req_kind(q_kind), .req_dst(q_dst), .req_msg_id(q_id), .req_tag(q_tag),
        .plane_down(link_down[c*2 +: 2]), .eng_fail_all, .eng_req_valid, .eng_req_ready, .eng_msg_id,
        .eng_cpl_valid, .eng_cpl_ready, .eng_cpl_kind, .eng_cpl_dst, .eng_cpl_msg_id, .eng_cpl_tag, .eng_cpl_status,
        .cpl_valid(m_cpl_valid), .cpl_ready(m_cpl_ready), .cpl_kind(m_cpl_kind),
        .cpl_dst(m_cpl_dst), .cpl_tag(m_cpl_tag), .cpl_status(m_cpl_status),
        .cpl_plane(cpl_plane[c]), .cpl_msg_id(m_cpl_id),
        .free_valid(m_free_valid), .free_dst(m_free_dst), .free_msg_id(m_free_id),
        .ack_valid(a_valid[c*2 +: 2]), .ack_peer(a_peer[c*2*PB +: 2*PB]), .ack_base(a_base[c*16 +: 16]),
        .ack_map(a_map[c*32 +: 32]),
        .out_ack_valid(ma_valid), .out_ack_peer(ma_peer), .out_ack_base(ma_base), .out_ack_map(ma_map),
        .cnt_ack_dropped(),
        .cnt_dup(mirror_cnt_dup[c*16 +: 16]), .cnt_stale(mirror_cnt_stale[c*16 +: 16]),
        .cnt_unmirrored(mirror_cnt_unmirrored[c*32 +: 32])
    );
    assign req_msg_id[c*8 +: 8] = eng_msg_id;
    // edm_write_front in front of the mirror (ACKS: edm_write_retry, whose ids
    // the mirror takes, and edm_write_outcome; else a wire).
    /* verilator lint_off PINCONNECTEMPTY */
    edm_write_front #(.ACKS(ACKS), .DST_LOG2($clog2(N)), .TIMER_W(TIMER_W), .RESEND_TAG_BASE(32),
                      .WAIT_FREE(1'b1), .RMW_RETRY(RMW_RETRY)) front (
        .clk, .rst_n, .cfg_ack_timeout, .cfg_give_up,
        .in_req_valid(req_valid[c]), .in_req_ready(req_ready[c]),
        .in_req_kind(req_kind[c*3 +: 3]), .in_req_dst(req_dst[c*PB +: PB]),
        .in_req_raddr(req_raddr[c*64 +: 64]), .in_req_len(req_len[c*16 +: 16]),
        .in_req_laddr(req_laddr[c*64 +: 64]), .in_req_rmw_op(req_rmw_op[c*4 +: 4]),
        .in_req_arg0(req_arg0[c*64 +: 64]), .in_req_arg1(req_arg1[c*64 +: 64]), .in_req_tag(req_tag[c*8 +: 8]),
        .out_req_valid(q_valid), .out_req_ready(q_ready), .out_req_kind(q_kind), .out_req_dst(q_dst),
        .out_req_raddr(q_raddr), .out_req_len(q_len), .out_req_laddr(q_laddr), .out_req_rmw_op(q_op),
        .out_req_arg0(q_arg0), .out_req_arg1(q_arg1), .out_req_tag(q_tag), .out_req_msg_id(q_id),
        .eng_cpl_valid(m_cpl_valid), .eng_cpl_ready(m_cpl_ready), .eng_cpl_kind(m_cpl_kind),
        .eng_cpl_dst(m_cpl_dst), .eng_cpl_msg_id(m_cpl_id), .eng_cpl_tag(m_cpl_tag),
        .eng_cpl_status(m_cpl_status),
        .cpl_valid(cpl_valid[c]), .cpl_ready(cpl_ready[c]), .cpl_kind(cpl_kind[c*3 +: 3]),
        .cpl_dst(cpl_dst[c*PB +: PB]), .cpl_msg_id(), .cpl_tag(cpl_tag[c*8 +: 8]),
        .cpl_status(cpl_status[c*8 +: 8]),
        .free_valid(m_free_valid), .free_dst(m_free_dst), .free_msg_id(m_free_id),
        .ack_valid(ma_valid), .ack_peer(ma_peer), .ack_base(ma_base), .ack_map(ma_map),
        .wo_valid(wo_valid[c]), .wo_dst(wo_dst[c*PB +: PB]), .wo_id(wo_id[c*8 +: 8]), .wo_tag(wo_tag[c*8 +: 8]),
        .wo_ok(wo_ok[c]), .wo_age(),
        .cnt_resent(wr_cnt_resent[c*16 +: 16]), .cnt_gave_up(wr_cnt_gave_up[c*16 +: 16]),
        .cnt_wo_stray(wo_cnt_stray[c*16 +: 16]), .cnt_wo_failed());
    /* verilator lint_on PINCONNECTEMPTY */
    if (ACKS) begin : g_retry_state
      assign wr_state[c*128 +: 128] = 128'({front.g_acks.retry.r_due, front.g_acks.retry.q_hold, q_valid, q_ready,
                                            28'(front.g_acks.retry.m_count), 32'(front.g_acks.retry.s_busy),
                                            64'(front.g_acks.retry.s_state)});
      assign wr_cnt_rmw[c*48 +: 48] = {front.g_acks.retry.cnt_rmw_unknown, front.g_acks.retry.cnt_rmw_gave_up,
                                       front.g_acks.retry.cnt_rmw_resent};
    end else begin : g_no_retry_state
      assign wr_state[c*128 +: 128] = '0;
      assign wr_cnt_rmw[c*48 +: 48] = '0;
    end
    for (genvar y = 0; y < 2; y++) begin : g_engine
      localparam int unsigned E = c * 2 + y;   // this engine, and its link
      // A loss the host sees (docs/faults.md §5): its link down, or its edm_rx
      // counting a lost control block or a corrupted one (a rejected /G/) or
      // unit (the engine re-sends /N/ sooner then).
      logic [31:0] rx_counts, rx_counts_seen;
      logic        ctl_lost;
      assign rx_counts = {ctl_missed[E*16 +: 16], h_cnt_corrupted[E*16 +: 16]};
      always_ff @(posedge clk) rx_counts_seen <= rx_counts;
      assign ctl_lost = link_down[E] || rx_counts_seen != rx_counts;
      edm_compute_node #(.MAX_CHUNK_BYTES(CHUNK_BYTES), .TIMER_W(TIMER_W), .RX_SAME_CLOCK(1), .EXT_ID(1'b1),
                         .SLOTS_LOG2(CN_SLOTS_LOG2), .REQ_LOG2(CN_REQ_LOG2)) cn (
          .clk, .rst_n, .rx_clk(clk), .rx_rst_n(rst_n),
          .node_port(PB'(c)),
          .cfg_timeout, .cfg_retry, .ctl_lost, .fail_all(ENGINE_FAIL_ALL && eng_fail_all[y]),
          .req_valid(eng_req_valid[y]), .req_ready(eng_req_ready[y]),
          .req_kind(q_kind), .req_dst(q_dst), .req_raddr(q_raddr), .req_len(q_len),
          .req_laddr(q_laddr), .req_rmw_op(q_op), .req_arg0(q_arg0), .req_arg1(q_arg1), .req_tag(q_tag),
          .req_msg_id(eng_msg_id),
          .cpl_valid(eng_cpl_valid[y]), .cpl_ready(eng_cpl_ready[y]), .cpl_kind(eng_cpl_kind[y*3 +: 3]),
          .cpl_dst(eng_cpl_dst[y*PB +: PB]), .cpl_msg_id(eng_cpl_msg_id[y*8 +: 8]), .cpl_tag(eng_cpl_tag[y*8 +: 8]),
          .cpl_status(eng_cpl_status[y*8 +: 8]),
          .lmem_rd_valid(lrd_valid[E]), .lmem_rd_ready(lrd_ready[E]), .lmem_rd_addr(lrd_addr[E*64 +: 64]),
          .lmem_rd_rsp_valid(lrd_rsp_valid[E]), .lmem_rd_rsp_data(lrd_rsp_data[E*64 +: 64]),
          .lmem_wr_valid(lwr_valid[E]), .lmem_wr_ready(lwr_ready[E]), .lmem_wr_addr(lwr_addr[E*64 +: 64]),
          .lmem_wr_data(lwr_data[E*64 +: 64]), .lmem_wr_mask(lwr_mask[E*8 +: 8]),
          .in_valid(r_valid[E]), .in_block(r_block[E*66 +: 66]), .in_first(r_first[E]), .in_last(r_last[E]),
          .in_error(r_error[E]), .in_abort(r_abort[E]),
          .grant_valid(g_valid[E]), .grant_dst(g_dst[E*PB +: PB]), .grant_msg_id(g_id[E*8 +: 8]),
          .grant_size(g_size[E*16 +: 16]),
          .out_valid(e_valid[E]), .out_ready(e_ready[E]), .out_block(e_block[E*66 +: 66]), .out_last(e_last[E]),
          .cnt_dropped(cn_cnt_dropped[E*16 +: 16]), .cnt_stray_grants(cn_cnt_stray[E*16 +: 16]),
          .cnt_timeouts(cn_cnt_timeouts[E*16 +: 16]), .cnt_late(cn_cnt_late[E*16 +: 16]),
          .cnt_rx_overflow(), .cnt_retries(cn_cnt_retries[E*16 +: 16]),
          .cnt_failed_all(cn_cnt_failed_all[E*16 +: 16])
      );
      assign cn_table[E*128 +: 128] = 128'({cn.s_valid, cn.s_done, cn.s_sent, cn.s_kind, cn.s_id});
    end
  end

  for (genvar m = 0; m < NM; m++) begin : g_mn
    localparam int unsigned L = (NC + m) * 2;   // the host's plane-0 link; plane 1 is L + 1
    logic [1:0]    f_valid, f_first, f_last, f_error, f_abort, f_dup, f_replay, f_whole;
    logic [2*66-1:0] f_block;
    // The engines' RMW results, kept by the filter for second copies.
    logic [1:0]    rmw_done, rmw_ok, memo_ready, memo_ok;
    logic [2*64-1:0] rmw_old, memo_old;
    logic [2*PB-1:0] rmw_src;
    logic [2*8-1:0]  rmw_id;
    edm_dup_filter #(.NP(2), .WINDOW_LOG2(FILTER_WINDOW_LOG2)) filter (
        .clk, .rst_n,
        .in_valid(r_valid[L +: 2]), .in_block(r_block[L*66 +: 2*66]), .in_first(r_first[L +: 2]),
        .in_last(r_last[L +: 2]), .in_error(r_error[L +: 2]), .in_abort(r_abort[L +: 2]),
        .out_valid(f_valid), .out_block(f_block), .out_first(f_first), .out_last(f_last), .out_error(f_error),
        .out_abort(f_abort), .out_dup(f_dup), .out_replay(f_replay), .out_whole(f_whole),
        .rmw_done, .rmw_ok, .rmw_old, .rmw_src, .rmw_id, .memo_ready, .memo_ok, .memo_old,
        .cnt_dup(filter_cnt_dup[m*32 +: 32]), .cnt_stale(filter_cnt_stale[m*32 +: 32]),
        .cnt_untracked(filter_cnt_untracked[m*32 +: 32])
    );
    // The engines' order across planes (edm_mem_node PEER): each sees the
    // other's write and response slots, sized here (as the engine's defaults
    // would: docs/hardware.md, "Memory node sizing") so the buses match.
    localparam int unsigned MWS_LOG2 = $clog2((CHUNK_BYTES / 8 + 2 + 3) / 4 + 2);
    localparam int unsigned MRS_LOG2 = $clog2(NC * edm_pkg::DEFAULT_MAX_ACTIVE_NOTIFS);
    localparam int unsigned MWS = 1 << MWS_LOG2;
    localparam int unsigned MRS = 1 << MRS_LOG2;
    logic [2*MWS-1:0]    o_wr_busy, o_wr_new, o_wr_done;
    logic [2*MWS*61-1:0] o_wr_w0, o_wr_wl;
    logic [2*MRS-1:0]    o_rs_busy, o_rs_new, o_rs_done, o_rs_rmw, o_rd_wait;
    logic [2*MRS*61-1:0] o_rs_w0, o_rs_wl;
    for (genvar y = 0; y < 2; y++) begin : g_engine
      localparam int unsigned E = m * 2 + y;
      localparam int unsigned K = L + y;
      localparam int unsigned Q = 1 - y;   // the peer engine
      edm_mem_node #(.CHUNK_BYTES(CHUNK_BYTES), .MAX_WRITE_BYTES(CHUNK_BYTES), .COMPUTE_NODES(NC),
                     .READ_SLOTS_LOG2(MRS_LOG2), .WSLOTS_LOG2(MWS_LOG2), .PEER(ENGINE_ORDER), .PEER_FIRST(y == 1),
                     .PEER_READS(READ_ORDER), .ACKS(ACKS), .ACK_SRC_LOG2(NC <= 2 ? 1 : $clog2(NC))) mn (
          .clk, .rst_n,
          .in_valid(f_valid[y]), .in_block(f_block[y*66 +: 66]), .in_first(f_first[y]), .in_last(f_last[y]),
          .in_error(f_error[y]), .in_abort(f_abort[y]), .in_dup(f_dup[y]), .in_replay(f_replay[y]),
          .in_whole(f_whole[y]),
          .rmw_done(rmw_done[y]), .rmw_ok(rmw_ok[y]), .rmw_old(rmw_old[y*64 +: 64]), .rmw_src(rmw_src[y*PB +: PB]),
          .rmw_id(rmw_id[y*8 +: 8]), .memo_ready(memo_ready[y]), .memo_ok(memo_ok[y]), .memo_old(memo_old[y*64 +: 64]),
          .ord_wr_busy(o_wr_busy[y*MWS +: MWS]), .ord_wr_new(o_wr_new[y*MWS +: MWS]),
          .ord_wr_done(o_wr_done[y*MWS +: MWS]), .ord_wr_w0(o_wr_w0[y*MWS*61 +: MWS*61]),
          .ord_wr_wl(o_wr_wl[y*MWS*61 +: MWS*61]), .ord_rs_busy(o_rs_busy[y*MRS +: MRS]),
          .ord_rs_new(o_rs_new[y*MRS +: MRS]), .ord_rs_done(o_rs_done[y*MRS +: MRS]),
          .ord_rs_rmw(o_rs_rmw[y*MRS +: MRS]), .ord_rd_wait(o_rd_wait[y*MRS +: MRS]),
          .ord_rs_w0(o_rs_w0[y*MRS*61 +: MRS*61]), .ord_rs_wl(o_rs_wl[y*MRS*61 +: MRS*61]),
          .peer_wr_busy(o_wr_busy[Q*MWS +: MWS]), .peer_wr_new(o_wr_new[Q*MWS +: MWS]),
          .peer_wr_done(o_wr_done[Q*MWS +: MWS]), .peer_wr_w0(o_wr_w0[Q*MWS*61 +: MWS*61]),
          .peer_wr_wl(o_wr_wl[Q*MWS*61 +: MWS*61]), .peer_rs_busy(o_rs_busy[Q*MRS +: MRS]),
          .peer_rs_new(o_rs_new[Q*MRS +: MRS]), .peer_rs_done(o_rs_done[Q*MRS +: MRS]),
          .peer_rs_rmw(o_rs_rmw[Q*MRS +: MRS]), .peer_rd_wait(o_rd_wait[Q*MRS +: MRS]),
          .peer_rs_w0(o_rs_w0[Q*MRS*61 +: MRS*61]), .peer_rs_wl(o_rs_wl[Q*MRS*61 +: MRS*61]),
          .in_room_read(), .in_room_write(),
          .xl_addr('0), .xl_deny(1'b0),
          .grant_valid(g_valid[K]), .grant_dst(g_dst[K*PB +: PB]), .grant_msg_id(g_id[K*8 +: 8]),
          .grant_size(g_size[K*16 +: 16]),
          .dram_rd_valid(dram_rd_valid[E]), .dram_rd_ready(dram_rd_ready[E]), .dram_rd_addr(dram_rd_addr[E*64 +: 64]),
          .dram_rsp_valid(dram_rsp_valid[E]), .dram_rsp_data(dram_rsp_data[E*64 +: 64]),
          .dram_wr_valid(dram_wr_valid[E]), .dram_wr_ready(dram_wr_ready[E]), .dram_wr_addr(dram_wr_addr[E*64 +: 64]),
          .dram_wr_data(dram_wr_data[E*64 +: 64]), .dram_wr_mask(dram_wr_mask[E*8 +: 8]),
          .out_valid(e_valid[K]), .out_ready(e_ready[K]), .out_block(e_block[K*66 +: 66]), .out_last(e_last[K]),
          .cnt_rreq(), .cnt_wreq(), .cnt_rmw(),
          .cnt_dropped(mn_cnt_dropped[E*16 +: 16]), .cnt_overflow(mn_cnt_overflow[E*16 +: 16]),
          .cnt_rejected(), .cnt_stray_grants(mn_cnt_stray[E*16 +: 16]),
          .cnt_acks(), .cnt_ack_dropped()
      );
      // (the engine's own view, through its hierarchy: the bench's commit order)
      assign mn_commit[E] = mn.commit;
      assign mn_commit_src[E*PB +: PB] = mn.rx_src;
      assign mn_commit_id[E*8 +: 8] = mn.rx_id;
      assign mn_commit_kind[E*3 +: 3] = mn.rx_kind;
      assign mn_commit_dup[E] = f_dup[y];
      // (the filter's own view: its key and verdict, through its hierarchy)
      assign f_commit[E] = filter.commit[y];
      assign f_commit_src[E*PB +: PB] = PB'(filter.rx_src[y*10 +: 10]);
      assign f_commit_id[E*8 +: 8] = filter.rx_id[y*8 +: 8];
      assign f_commit_kind[E*3 +: 3] = filter.rx_kind[y*edm_pkg::HDR_KIND_W +: 3];
      assign f_commit_seq[E*12 +: 12] = {filter.seq_hi[y*11 +: 11], filter.rx_seq0[y]};
      assign f_commit_dup[E] = filter.dup[y];
      assign f_commit_stale[E] = filter.stale[y];
      assign mn_state[E*13 +: 13] = {mn.e_state, mn.cmd_valid, mn.c_kind, mn.c_replay, mn.c_dup, memo_ready[y],
                                     mn.r_hazard, mn.r_peer_hazard, mn.w_peer_hazard};
    end
  end
endmodule

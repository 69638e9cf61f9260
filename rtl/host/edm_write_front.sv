// A compute host's front for acknowledged writes (docs/protocol.md §4b): between
// the host and its engine (edm_compute_node, or edm_mirror in front of one per
// plane), edm_write_retry keeps each write until its /A/ and gives it to the
// engine again without one, and edm_write_outcome gives the host each write's
// outcome (acknowledged, or failed cfg_give_up cycles after its posted
// completion). With ACKS = 0 it is a wire: requests and completions pass
// unchanged, message ids are the engine's own (out_req_msg_id 0), no outcomes.
//
// Why one module: every compute host with write acknowledgements wires the
// two the same way (the retry owns the message ids, EXT_ID on the engine; the
// outcome's posted completion is the host's completion of a write as it is
// taken, with the id the engine gave it; both read the same /A/ stream), and
// the fabric tops (tests/rtl/tb_fabric_top.sv, tb_dual_fabric_top.sv) differ
// only in what stands behind it. Invariant: a write reaches the host's
// completion port once (a re-send's completion is the retry's), and gets one
// outcome.
//
// Behind a mirror (edm_mirror, several planes): RESEND_TAG_BASE and WAIT_FREE
// as edm_write_retry's, free_* from the mirror (a message id every plane's
// copy of has finished); one engine: tie free_valid low.
module edm_write_front #(
    parameter bit          ACKS = 1'b1,
    parameter int unsigned DST_LOG2 = 2,       // destinations tracked: ports 0 .. 2^DST_LOG2-1
    parameter int unsigned TIMER_W = 20,
    parameter int unsigned RESEND_TAG_BASE = 0,  // edm_write_retry's
    parameter bit          WAIT_FREE = 1'b0,     // edm_write_retry's
    parameter bit          RMW_RETRY = 1'b1      // edm_write_retry's: an RMW timed out is re-sent
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [TIMER_W-1:0] cfg_ack_timeout,  // a write re-sent after this long without /A/, 0 = never
    input  logic [TIMER_W-1:0] cfg_give_up,      // ... and reported failed this long after its posted completion
    // The host's requests.
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
    // Toward the engine: the host's requests and re-sends, with their message ids.
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
    // The host's completions (a write's: its posted completion).
    output logic        cpl_valid,
    input  logic        cpl_ready,
    output logic [2:0]  cpl_kind,
    output logic [edm_pkg::PORT_BITS-1:0] cpl_dst,
    output logic [7:0]  cpl_msg_id,
    output logic [7:0]  cpl_tag,
    output logic [7:0]  cpl_status,
    // Behind a mirror: a message id whose every copy has finished (WAIT_FREE).
    input  logic        free_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] free_dst,
    input  logic [7:0]  free_msg_id,
    // Good /A/ blocks (edm_rx's, or the mirror's merge of its planes').
    input  logic        ack_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] ack_peer,
    input  logic [7:0]  ack_base,
    input  logic [edm_pkg::ACK_MAP_W-1:0] ack_map,
    // Each write's outcome (always taken).
    output logic        wo_valid,
    output logic [edm_pkg::PORT_BITS-1:0] wo_dst,
    output logic [7:0]  wo_id,
    output logic [7:0]  wo_tag,
    output logic        wo_ok,
    output logic [TIMER_W-1:0] wo_age,   // cycles from the posted completion to its /A/
    // Counters (16-bit, saturating; 0 without ACKS).
    output logic [15:0] cnt_resent,      // edm_write_retry's
    output logic [15:0] cnt_gave_up,
    output logic [15:0] cnt_wo_stray,    // edm_write_outcome's /A/ for no write it keeps
    output logic [15:0] cnt_wo_failed
);
  if (ACKS) begin : g_acks
    /* verilator lint_off PINCONNECTEMPTY */   // counters the hosts do not read
    edm_write_retry #(.DST_LOG2(DST_LOG2), .TIMER_W(TIMER_W), .RESEND_TAG_BASE(RESEND_TAG_BASE),
                      .WAIT_FREE(WAIT_FREE), .RMW_RETRY(RMW_RETRY)) retry (
        .clk, .rst_n, .cfg_ack_timeout, .cfg_give_up,
        .in_req_valid, .in_req_ready, .in_req_kind, .in_req_dst, .in_req_raddr, .in_req_len, .in_req_laddr,
        .in_req_rmw_op, .in_req_arg0, .in_req_arg1, .in_req_tag,
        .out_req_valid, .out_req_ready, .out_req_kind, .out_req_dst, .out_req_raddr, .out_req_len,
        .out_req_laddr, .out_req_rmw_op, .out_req_arg0, .out_req_arg1, .out_req_tag, .out_req_msg_id,
        .eng_cpl_valid, .eng_cpl_ready, .eng_cpl_kind, .eng_cpl_dst, .eng_cpl_msg_id, .eng_cpl_tag,
        .eng_cpl_status,
        .cpl_valid, .cpl_ready, .cpl_kind, .cpl_dst, .cpl_msg_id, .cpl_tag, .cpl_status,
        .free_valid, .free_dst, .free_msg_id,
        .ack_valid, .ack_peer, .ack_base, .ack_map,
        .cnt_resent, .cnt_gave_up, .cnt_untracked(), .cnt_rmw_resent(), .cnt_rmw_gave_up(),
        .cnt_rmw_unknown());
    // The posted completion of a write: the host's completion, taken.
    edm_write_outcome #(.DST_LOG2(DST_LOG2), .TIMER_W(TIMER_W)) outcome (
        .clk, .rst_n, .cfg_give_up,
        .posted_valid(cpl_valid && cpl_ready && cpl_kind == 3'(edm_pkg::KIND_WREQ)),
        .posted_dst(cpl_dst), .posted_id(cpl_msg_id), .posted_tag(cpl_tag),
        .ack_valid, .ack_peer, .ack_base, .ack_map,
        .out_valid(wo_valid), .out_ready(1'b1), .out_dst(wo_dst), .out_id(wo_id), .out_tag(wo_tag),
        .out_ok(wo_ok), .out_age(wo_age),
        .cnt_acked(), .cnt_failed(cnt_wo_failed), .cnt_stray(cnt_wo_stray), .cnt_untracked(),
        .cnt_ack_overflow());
    /* verilator lint_on PINCONNECTEMPTY */
  end else begin : g_wire
    assign {out_req_valid, out_req_kind, out_req_dst, out_req_raddr, out_req_len, out_req_laddr} =
           {in_req_valid, in_req_kind, in_req_dst, in_req_raddr, in_req_len, in_req_laddr};
    assign {out_req_rmw_op, out_req_arg0, out_req_arg1, out_req_tag, out_req_msg_id} =
           {in_req_rmw_op, in_req_arg0, in_req_arg1, in_req_tag, 8'd0};
    assign in_req_ready = out_req_ready;
    assign {cpl_valid, cpl_kind, cpl_dst, cpl_msg_id, cpl_tag, cpl_status} =
           {eng_cpl_valid, eng_cpl_kind, eng_cpl_dst, eng_cpl_msg_id, eng_cpl_tag, eng_cpl_status};
    assign eng_cpl_ready = cpl_ready;
    assign {wo_valid, wo_dst, wo_id, wo_tag, wo_ok, wo_age} = '0;
    assign {cnt_resent, cnt_gave_up, cnt_wo_stray, cnt_wo_failed} = '0;
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused = ^{clk, rst_n, cfg_ack_timeout, cfg_give_up, free_valid, free_dst, free_msg_id, ack_valid, ack_peer,
                      ack_base, ack_map};
  end
endmodule

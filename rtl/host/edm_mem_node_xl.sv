// A memory node that translates and protects (Clio; docs/hardware.md
// "Translation and protection"): edm_mem_translate in front of the edm_mem_node
// engine, sharing its DRAM read channel. Ports as edm_mem_node's, plus the
// translation's management path and counters; units or grants lost in the
// translation's hold FIFO count in cnt_overflow. in_room_* are low while
// events are held: the engine has not seen them, so its room is not yet theirs.
module edm_mem_node_xl #(
    parameter int unsigned CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,
    parameter int unsigned MAX_READ_BYTES = 1024,
    parameter int unsigned MAX_WRITE_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,
    parameter int unsigned COMPUTE_NODES = 3,
    parameter int unsigned MAX_ACTIVE = edm_pkg::DEFAULT_MAX_ACTIVE_NOTIFS,
    parameter int unsigned PAGE_BITS = 12,
    parameter int unsigned TLB_LOG2 = 3,
    parameter logic [63:0] PT_BASE = 64'h0,
    parameter int unsigned PT_BUCKETS_LOG2 = 10,
    parameter int unsigned PT_WAYS = 4,
    parameter int unsigned HOLD_LOG2 = 5
) (
    input  logic        clk,
    input  logic        rst_n,
    // From edm_rx: memory units and good /G/ blocks (as edm_mem_node).
    input  logic        in_valid,
    input  logic [65:0] in_block,
    input  logic        in_first,
    input  logic        in_last,
    input  logic        in_error,
    input  logic        in_abort,
    output logic        in_room_read,
    output logic        in_room_write,
    input  logic        grant_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] grant_dst,
    input  logic [7:0]  grant_msg_id,
    input  logic [15:0] grant_size,
    // Memory: read and write channels (as edm_mem_node).
    output logic        dram_rd_valid,
    input  logic        dram_rd_ready,
    output logic [63:0] dram_rd_addr,
    input  logic        dram_rsp_valid,
    input  logic [63:0] dram_rsp_data,
    output logic        dram_wr_valid,
    input  logic        dram_wr_ready,
    output logic [63:0] dram_wr_addr,
    output logic [63:0] dram_wr_data,
    output logic [7:0]  dram_wr_mask,
    // Toward edm_tx: RRES units.
    output logic        out_valid,
    input  logic        out_ready,
    output logic [65:0] out_block,
    output logic        out_last,
    // Management: invalidate a page's (or a whole space's) TLB entries.
    input  logic        mgmt_valid,
    input  logic [edm_pkg::ADDR_ASID_W-1:0] mgmt_asid,
    input  logic [edm_pkg::ADDR_ASID_LSB-PAGE_BITS-1:0] mgmt_vpn,
    input  logic        mgmt_whole_space,
    // Status counters (16-bit, saturating).
    output logic [15:0] cnt_rreq,
    output logic [15:0] cnt_wreq,
    output logic [15:0] cnt_rmw,
    output logic [15:0] cnt_dropped,
    output logic [15:0] cnt_overflow,
    output logic [15:0] cnt_rejected,
    output logic [15:0] cnt_stray_grants,
    output logic [15:0] cnt_denied,     // requests refused: outside the requester's mappings
    output logic [15:0] cnt_tlb_hit,
    output logic [15:0] cnt_tlb_miss
);
  logic        e_room_read, e_room_write, waiting;
  logic        e_valid, e_first, e_last, e_error, e_abort, e_grant_valid, e_rd_valid, e_rd_ready, e_rsp_valid;
  logic [65:0] e_block;
  logic [edm_pkg::PORT_BITS-1:0] e_grant_dst;
  logic [7:0]  e_grant_msg_id;
  logic [15:0] e_grant_size, engine_overflow, held_overflow;
  logic [63:0] xl_addr, e_rd_addr, e_rsp_data;
  logic        xl_deny;

  edm_mem_translate #(
      .PAGE_BITS(PAGE_BITS), .TLB_LOG2(TLB_LOG2), .PT_BASE(PT_BASE), .PT_BUCKETS_LOG2(PT_BUCKETS_LOG2),
      .PT_WAYS(PT_WAYS), .HOLD_LOG2(HOLD_LOG2)
  ) translate (
      .clk, .rst_n,
      .in_valid, .in_block, .in_first, .in_last, .in_error, .in_abort,
      .grant_valid, .grant_dst, .grant_msg_id, .grant_size,
      .out_valid(e_valid), .out_block(e_block), .out_first(e_first), .out_last(e_last), .out_error(e_error),
      .out_abort(e_abort), .out_grant_valid(e_grant_valid), .out_grant_dst(e_grant_dst),
      .out_grant_msg_id(e_grant_msg_id), .out_grant_size(e_grant_size), .out_waiting(waiting),
      .xl_addr, .xl_deny,
      .eng_rd_valid(e_rd_valid), .eng_rd_ready(e_rd_ready), .eng_rd_addr(e_rd_addr),
      .eng_rsp_valid(e_rsp_valid), .eng_rsp_data(e_rsp_data),
      .dram_rd_valid, .dram_rd_ready, .dram_rd_addr, .dram_rsp_valid, .dram_rsp_data,
      .mgmt_valid, .mgmt_asid, .mgmt_vpn, .mgmt_whole_space,
      .cnt_denied, .cnt_tlb_hit, .cnt_tlb_miss, .cnt_overflow(held_overflow)
  );

  /* verilator lint_off PINCONNECTEMPTY */   // no dual switch: its RMW results and order go nowhere
  edm_mem_node #(
      .CHUNK_BYTES(CHUNK_BYTES), .MAX_READ_BYTES(MAX_READ_BYTES), .MAX_WRITE_BYTES(MAX_WRITE_BYTES),
      .COMPUTE_NODES(COMPUTE_NODES), .MAX_ACTIVE(MAX_ACTIVE), .TRANSLATE(1'b1)
  ) engine (
      .clk, .rst_n,
      .in_valid(e_valid), .in_block(e_block), .in_first(e_first), .in_last(e_last), .in_error(e_error),
      .in_abort(e_abort), .in_dup(1'b0), .in_replay(1'b0), .in_whole(1'b1),
      .rmw_done(), .rmw_ok(), .rmw_old(), .rmw_src(), .rmw_id(),
      .memo_ready(1'b1), .memo_ok(1'b0), .memo_old('0),
      .ord_wr_busy(), .ord_wr_new(), .ord_wr_done(), .ord_wr_w0(), .ord_wr_wl(),
      .ord_rs_busy(), .ord_rs_new(), .ord_rs_done(), .ord_rs_rmw(), .ord_rd_wait(), .ord_rs_w0(), .ord_rs_wl(),
      .peer_wr_busy('0), .peer_wr_new('0), .peer_wr_done('0), .peer_wr_w0('0), .peer_wr_wl('0),
      .peer_rs_busy('0), .peer_rs_new('0), .peer_rs_done('0), .peer_rs_rmw('0), .peer_rd_wait('0),
      .peer_rs_w0('0), .peer_rs_wl('0),  // one engine
      .in_room_read(e_room_read), .in_room_write(e_room_write),
      .grant_valid(e_grant_valid), .grant_dst(e_grant_dst), .grant_msg_id(e_grant_msg_id),
      .grant_size(e_grant_size),
      .xl_addr, .xl_deny,
      .dram_rd_valid(e_rd_valid), .dram_rd_ready(e_rd_ready), .dram_rd_addr(e_rd_addr),
      .dram_rsp_valid(e_rsp_valid), .dram_rsp_data(e_rsp_data),
      .dram_wr_valid, .dram_wr_ready, .dram_wr_addr, .dram_wr_data, .dram_wr_mask,
      .out_valid, .out_ready, .out_block, .out_last,
      .cnt_rreq, .cnt_wreq, .cnt_rmw, .cnt_dropped, .cnt_overflow(engine_overflow), .cnt_rejected,
      .cnt_stray_grants, .cnt_acks(), .cnt_ack_dropped()
  );
  /* verilator lint_on PINCONNECTEMPTY */
  assign in_room_read = e_room_read && !waiting;
  assign in_room_write = e_room_write && !waiting;
  // Both stages' losses in one counter; it saturates like each of them.
  logic [16:0] overflow_sum;
  assign overflow_sum = {1'b0, engine_overflow} + {1'b0, held_overflow};
  assign cnt_overflow = overflow_sum[16] ? 16'hFFFF : overflow_sum[15:0];
endmodule

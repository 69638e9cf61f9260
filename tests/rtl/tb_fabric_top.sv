// Test top for tb_fabric.py: the whole EDM fabric in RTL. NC compute nodes on
// switch ports 0..NC-1 and NM memory nodes on ports NC..NC+NM-1, each host with
// its PHY path (tb_fabric_port), one edm_switch, one clock. Vectors are
// flattened per node (node k: bits [k*W +: W]) since ports cannot be arrays.
module tb_fabric_top #(
    parameter bit          ZERO_QUEUE = 1'b1,  // the switch's zero-queue rules (edm_switch)
    parameter int unsigned NC = 2,
    parameter int unsigned NM = 2,
    parameter int unsigned LINK_CYCLES = 19,   // PMA+PMD+transceiver twice + propagation, per hop
    parameter int unsigned CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,
    parameter int unsigned TIMER_W = 20
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [TIMER_W-1:0] cfg_timeout,
    // Compute nodes: requests, completions, local memory.
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
    output logic [NC-1:0]      lrd_valid,
    input  logic [NC-1:0]      lrd_ready,
    output logic [NC*64-1:0]   lrd_addr,
    input  logic [NC-1:0]      lrd_rsp_valid,
    input  logic [NC*64-1:0]   lrd_rsp_data,
    output logic [NC-1:0]      lwr_valid,
    input  logic [NC-1:0]      lwr_ready,
    output logic [NC*64-1:0]   lwr_addr,
    output logic [NC*64-1:0]   lwr_data,
    output logic [NC*8-1:0]    lwr_mask,
    output logic [NC*16-1:0]   cn_cnt_dropped,
    output logic [NC*16-1:0]   cn_cnt_stray,
    output logic [NC*16-1:0]   cn_cnt_timeouts,
    output logic [NC*16-1:0]   cn_cnt_late,
    output logic [NC*16-1:0]   cn_cnt_rx_overflow,
    // Memory nodes: DRAM, a read and a write channel each.
    output logic [NM-1:0]      dram_rd_valid,
    input  logic [NM-1:0]      dram_rd_ready,
    output logic [NM*64-1:0]   dram_rd_addr,
    input  logic [NM-1:0]      dram_rsp_valid,
    input  logic [NM*64-1:0]   dram_rsp_data,
    output logic [NM-1:0]      dram_wr_valid,
    input  logic [NM-1:0]      dram_wr_ready,
    output logic [NM*64-1:0]   dram_wr_addr,
    output logic [NM*64-1:0]   dram_wr_data,
    output logic [NM*8-1:0]    dram_wr_mask,
    output logic [NM*16-1:0]   mn_cnt_dropped,
    output logic [NM*16-1:0]   mn_cnt_overflow,
    output logic [NM*16-1:0]   mn_cnt_rejected,
    output logic [NM*16-1:0]   mn_cnt_stray,
    // Every port (host p = switch port p): Ethernet frames in both directions.
    input  logic [NC+NM-1:0]      h_enc_valid,    // host MAC/encoder -> host edm_tx
    output logic [NC+NM-1:0]      h_enc_ready,
    input  logic [(NC+NM)*66-1:0] h_enc_block,
    input  logic [NC+NM-1:0]      s_enc_valid,    // switch L2 side -> switch egress toward host
    output logic [NC+NM-1:0]      s_enc_ready,
    input  logic [(NC+NM)*66-1:0] s_enc_block,
    output logic [NC+NM-1:0]      h_dec_valid,    // host edm_rx -> decoder (frames)
    output logic [(NC+NM)*66-1:0] h_dec_block,
    // Bit errors: XORed into each link's scrambled line before the descrambler
    // (host p -> switch, switch -> host p), one mask per port.
    input  logic [(NC+NM)*66-1:0] up_flip,
    input  logic [(NC+NM)*66-1:0] down_flip,
    // Probes (for the latency breakdown): host line before the scrambler,
    // after the descrambler, and the switch's own input and output.
    output logic [(NC+NM)*66-1:0] h_tx_line,
    output logic [(NC+NM)*66-1:0] h_rx_line,
    output logic [(NC+NM)*66-1:0] sw_in,
    output logic [(NC+NM)*66-1:0] sw_out,
    output logic [(NC+NM)*16-1:0] h_cnt_corrupted,
    output logic [(NC+NM)*16-1:0] h_cnt_unknown,
    output logic [(NC+NM)*16-1:0] h_cnt_ctl_missed,   // host edm_rx: /G/ sequence gaps (§5a)
    output logic [(NC+NM)*16-1:0] sw_cnt_bad_notif,
    output logic [(NC+NM)*16-1:0] sw_cnt_unknown,
    output logic [(NC+NM)*16-1:0] sw_cnt_non_edm,
    output logic [(NC+NM)*16-1:0] sw_cnt_dropped,
    output logic [15:0]           sw_cnt_conflict,
    output logic [15:0]           sw_cnt_overflow
);
  localparam int unsigned N = NC + NM;
  localparam int unsigned PB = edm_pkg::PORT_BITS;  // a port index

  // Per-port engine-side signals.
  logic [N-1:0]      e_out_valid, e_out_ready, e_out_last;
  logic [N*66-1:0]   e_out_block;
  logic [N-1:0]      r_mem_valid, r_mem_first, r_mem_last, r_mem_error, r_mem_abort, r_grant_valid;
  logic [N*66-1:0]   r_mem_block;
  logic [N*PB-1:0]   r_grant_dst;
  logic [N*8-1:0]    r_grant_id;
  logic [N*16-1:0]   r_grant_size;

  edm_switch #(.N(N), .CHUNK_BYTES(CHUNK_BYTES), .ZERO_QUEUE(ZERO_QUEUE)) sw (
      .clk, .rst_n,
      .in_block(sw_in), .out_block(sw_out),
      .cnt_bad_notif(sw_cnt_bad_notif), .cnt_unknown(sw_cnt_unknown),
      .cnt_non_edm(sw_cnt_non_edm), .cnt_dropped(sw_cnt_dropped),
      .cnt_conflict(sw_cnt_conflict), .cnt_overflow(sw_cnt_overflow)
  );

  for (genvar p = 0; p < N; p++) begin : g_port
    tb_fabric_port #(.LINK_CYCLES(LINK_CYCLES)) phy (
        .clk, .rst_n,
        .e_valid(e_out_valid[p]), .e_ready(e_out_ready[p]),
        .e_block(e_out_block[p*66 +: 66]), .e_last(e_out_last[p]),
        .h_enc_valid(h_enc_valid[p]), .h_enc_ready(h_enc_ready[p]), .h_enc_block(h_enc_block[p*66 +: 66]),
        .s_enc_valid(s_enc_valid[p]), .s_enc_ready(s_enc_ready[p]), .s_enc_block(s_enc_block[p*66 +: 66]),
        .sw_in(sw_in[p*66 +: 66]), .sw_out(sw_out[p*66 +: 66]),
        .up_flip(up_flip[p*66 +: 66]), .down_flip(down_flip[p*66 +: 66]),
        .h_tx_line(h_tx_line[p*66 +: 66]), .h_rx_line(h_rx_line[p*66 +: 66]),
        .dec_valid(h_dec_valid[p]), .dec_block(h_dec_block[p*66 +: 66]),
        .mem_valid(r_mem_valid[p]), .mem_block(r_mem_block[p*66 +: 66]),
        .mem_first(r_mem_first[p]), .mem_last(r_mem_last[p]),
        .mem_error(r_mem_error[p]), .mem_abort(r_mem_abort[p]),
        .grant_valid(r_grant_valid[p]), .grant_dst(r_grant_dst[p*PB +: PB]),
        .grant_msg_id(r_grant_id[p*8 +: 8]), .grant_size(r_grant_size[p*16 +: 16]),
        .cnt_corrupted(h_cnt_corrupted[p*16 +: 16]), .cnt_unknown(h_cnt_unknown[p*16 +: 16]),
        .cnt_ctl_missed(h_cnt_ctl_missed[p*16 +: 16])
    );
  end

  for (genvar c = 0; c < NC; c++) begin : g_cn
    // One clock everywhere: the engine takes edm_rx's outputs without crossing FIFOs.
    edm_compute_node #(.MAX_CHUNK_BYTES(CHUNK_BYTES), .TIMER_W(TIMER_W), .RX_SAME_CLOCK(1)) cn (
        .clk, .rst_n, .rx_clk(clk), .rx_rst_n(rst_n),
        .node_port(PB'(c)),
        .cfg_timeout,
        .req_valid(req_valid[c]), .req_ready(req_ready[c]),
        .req_kind(req_kind[c*3 +: 3]), .req_dst(req_dst[c*PB +: PB]),
        .req_raddr(req_raddr[c*64 +: 64]), .req_len(req_len[c*16 +: 16]),
        .req_laddr(req_laddr[c*64 +: 64]), .req_rmw_op(req_rmw_op[c*4 +: 4]),
        .req_arg0(req_arg0[c*64 +: 64]), .req_arg1(req_arg1[c*64 +: 64]), .req_tag(req_tag[c*8 +: 8]),
        .cpl_valid(cpl_valid[c]), .cpl_ready(cpl_ready[c]), .cpl_kind(cpl_kind[c*3 +: 3]),
        .cpl_dst(cpl_dst[c*PB +: PB]), .cpl_msg_id(), .cpl_tag(cpl_tag[c*8 +: 8]),
        .cpl_status(cpl_status[c*8 +: 8]),
        .lmem_rd_valid(lrd_valid[c]), .lmem_rd_ready(lrd_ready[c]), .lmem_rd_addr(lrd_addr[c*64 +: 64]),
        .lmem_rd_rsp_valid(lrd_rsp_valid[c]), .lmem_rd_rsp_data(lrd_rsp_data[c*64 +: 64]),
        .lmem_wr_valid(lwr_valid[c]), .lmem_wr_ready(lwr_ready[c]), .lmem_wr_addr(lwr_addr[c*64 +: 64]),
        .lmem_wr_data(lwr_data[c*64 +: 64]), .lmem_wr_mask(lwr_mask[c*8 +: 8]),
        .in_valid(r_mem_valid[c]), .in_block(r_mem_block[c*66 +: 66]),
        .in_first(r_mem_first[c]), .in_last(r_mem_last[c]),
        .in_error(r_mem_error[c]), .in_abort(r_mem_abort[c]),
        .grant_valid(r_grant_valid[c]), .grant_dst(r_grant_dst[c*PB +: PB]),
        .grant_msg_id(r_grant_id[c*8 +: 8]), .grant_size(r_grant_size[c*16 +: 16]),
        .out_valid(e_out_valid[c]), .out_ready(e_out_ready[c]),
        .out_block(e_out_block[c*66 +: 66]), .out_last(e_out_last[c]),
        .cnt_dropped(cn_cnt_dropped[c*16 +: 16]), .cnt_stray_grants(cn_cnt_stray[c*16 +: 16]),
        .cnt_timeouts(cn_cnt_timeouts[c*16 +: 16]), .cnt_late(cn_cnt_late[c*16 +: 16]),
        .cnt_rx_overflow(cn_cnt_rx_overflow[c*16 +: 16])
    );
  end

  for (genvar m = 0; m < NM; m++) begin : g_mn
    localparam int unsigned P = NC + m;
    // Default sizes: the node sizes itself for its NC requesters (docs/hardware.md,
    // "Memory node sizing").
    edm_mem_node #(.CHUNK_BYTES(CHUNK_BYTES), .MAX_WRITE_BYTES(CHUNK_BYTES), .COMPUTE_NODES(NC)) mn (
        .clk, .rst_n,
        .in_valid(r_mem_valid[P]), .in_block(r_mem_block[P*66 +: 66]),
        .in_first(r_mem_first[P]), .in_last(r_mem_last[P]),
        .in_error(r_mem_error[P]), .in_abort(r_mem_abort[P]), .in_room_read(), .in_room_write(),
        .grant_valid(r_grant_valid[P]), .grant_dst(r_grant_dst[P*PB +: PB]),
        .grant_msg_id(r_grant_id[P*8 +: 8]), .grant_size(r_grant_size[P*16 +: 16]),
        .dram_rd_valid(dram_rd_valid[m]), .dram_rd_ready(dram_rd_ready[m]),
        .dram_rd_addr(dram_rd_addr[m*64 +: 64]),
        .dram_rsp_valid(dram_rsp_valid[m]), .dram_rsp_data(dram_rsp_data[m*64 +: 64]),
        .dram_wr_valid(dram_wr_valid[m]), .dram_wr_ready(dram_wr_ready[m]),
        .dram_wr_addr(dram_wr_addr[m*64 +: 64]), .dram_wr_data(dram_wr_data[m*64 +: 64]),
        .dram_wr_mask(dram_wr_mask[m*8 +: 8]),
        .out_valid(e_out_valid[P]), .out_ready(e_out_ready[P]),
        .out_block(e_out_block[P*66 +: 66]), .out_last(e_out_last[P]),
        .cnt_rreq(), .cnt_wreq(), .cnt_rmw(),
        .cnt_dropped(mn_cnt_dropped[m*16 +: 16]), .cnt_overflow(mn_cnt_overflow[m*16 +: 16]),
        .cnt_rejected(mn_cnt_rejected[m*16 +: 16]), .cnt_stray_grants(mn_cnt_stray[m*16 +: 16])
    );
  end
endmodule

// One host's PHY path and the switch side of its link, both directions:
//   engine -> edm_tx (with the host's frames) -> scrambler -> link -> descrambler -> switch
//   switch -> egress mux (edm_tx, strict, with the switch's frames) -> scrambler
//          -> link -> descrambler -> edm_rx -> engine (units, grants) and decoder (frames)
// The link is a LINK_CYCLES-block delay line per direction.
module tb_fabric_port #(
    parameter int unsigned LINK_CYCLES = 19
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        e_valid,
    output logic        e_ready,
    input  logic [65:0] e_block,
    input  logic        e_last,
    input  logic        h_enc_valid,
    output logic        h_enc_ready,
    input  logic [65:0] h_enc_block,
    input  logic        s_enc_valid,
    output logic        s_enc_ready,
    input  logic [65:0] s_enc_block,
    output logic [65:0] sw_in,
    input  logic [65:0] sw_out,
    input  logic [65:0] up_flip,
    input  logic [65:0] down_flip,
    output logic [65:0] h_tx_line,
    output logic [65:0] h_rx_line,
    output logic        dec_valid,
    output logic [65:0] dec_block,
    output logic        mem_valid,
    output logic [65:0] mem_block,
    output logic        mem_first,
    output logic        mem_last,
    output logic        mem_error,
    output logic        mem_abort,
    output logic        grant_valid,
    output logic [edm_pkg::PORT_BITS-1:0] grant_dst,
    output logic [7:0]  grant_msg_id,
    output logic [15:0] grant_size,
    output logic [15:0] cnt_corrupted,
    output logic [15:0] cnt_unknown,
    output logic [15:0] cnt_ctl_missed
);
  localparam logic [65:0] IDLE = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};

  // ---- host -> switch
  edm_tx #(.STRICT(1'b0)) host_tx (
      .clk, .rst_n,
      .enc_valid(h_enc_valid), .enc_ready(h_enc_ready), .enc_block(h_enc_block),
      .mem_valid(e_valid), .mem_ready(e_ready), .mem_block(e_block), .mem_last(e_last),
      .out_block(h_tx_line), .out_is_memory(), .buffered()
  );
  logic [65:0] up_line;
  tb_scrambled_link #(.LINK_CYCLES(LINK_CYCLES)) up (.clk, .rst_n, .tx(h_tx_line), .flip(up_flip), .rx(sw_in),
                                                     .line(up_line));

  // ---- switch -> host. The switch cannot be held, so its blocks go first
  // (strict); its units are kept whole (a unit is open from /MS/ to /MT/, and
  // the switch's idle fillers inside it stay in it).
  logic sw_is_idle, sw_is_ms, sw_is_mt, sw_open, sw_mem, sw_last;
  logic [65:0] s_tx_line;
  assign sw_is_idle = sw_out == IDLE;
  assign sw_is_ms = sw_out[1:0] == edm_pkg::SYNC_CTRL && sw_out[9:2] == edm_pkg::BT_EDM
                    && sw_out[17:10] == edm_pkg::SUB_MS;
  assign sw_is_mt = sw_out[1:0] == edm_pkg::SYNC_CTRL && sw_out[9:2] == edm_pkg::BT_EDM
                    && sw_out[17:10] == edm_pkg::SUB_MT;
  assign sw_mem = sw_open || !sw_is_idle;
  assign sw_last = sw_open ? sw_is_mt : !sw_is_ms;
  always_ff @(posedge clk)
    if (!rst_n) sw_open <= 1'b0;
    else if (sw_is_ms) sw_open <= 1'b1;
    else if (sw_is_mt) sw_open <= 1'b0;
  edm_tx #(.STRICT(1'b1)) switch_tx (
      .clk, .rst_n,
      .enc_valid(s_enc_valid), .enc_ready(s_enc_ready), .enc_block(s_enc_block),
      .mem_valid(sw_mem), .mem_ready(), .mem_block(sw_out), .mem_last(sw_last),
      .out_block(s_tx_line), .out_is_memory(), .buffered()
  );
  logic [65:0] down_line;
  tb_scrambled_link #(.LINK_CYCLES(LINK_CYCLES)) down (.clk, .rst_n, .tx(s_tx_line), .flip(down_flip),
                                                       .rx(h_rx_line), .line(down_line));

  edm_rx host_rx (
      .clk, .rst_n,
      .in_valid(1'b1), .in_block(h_rx_line),
      .out_valid(dec_valid), .out_block(dec_block),
      .mem_valid, .mem_block, .mem_first, .mem_last, .mem_error, .mem_abort,
      .notif_valid(), .notif_dst(), .notif_msg_id(), .notif_size(),
      .grant_valid, .grant_dst, .grant_msg_id, .grant_size,
      .cnt_msg_ok(), .cnt_corrupted, .cnt_unknown, .cnt_notif_ok(), .cnt_grant_ok(), .cnt_bad_sync(),
      .cnt_ctl_missed, .cnt_ctl_in_data()
  );
endmodule

// Scrambler -> LINK_CYCLES delay -> descrambler; the sync header travels beside
// the payload (aligned with the scramblers' one-cycle registers).
module tb_scrambled_link #(
    parameter int unsigned LINK_CYCLES = 19
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [65:0] tx,
    input  logic [65:0] flip,  // bit errors on the wire
    output logic [65:0] rx,
    output logic [65:0] line   // on the wire (scrambled), after the delay and the errors
);
  // A valid bit travels with each block so the receiver sees idles, not the
  // delay line's reset contents, until the first block arrives.
  localparam logic [65:0] IDLE = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  logic [63:0] scr, descr;
  logic [1:0]  scr_sync, rx_sync;
  logic        scr_valid, descr_valid;
  pcs_scrambler #(.DESCRAMBLE(1'b0)) s (
      .clk, .rst_n, .in_valid(1'b1), .in_data(tx[65:2]), .out_valid(scr_valid), .out_data(scr));
  always_ff @(posedge clk) scr_sync <= tx[1:0];
  logic [66:0] dl [LINK_CYCLES + 1];
  assign dl[0] = {scr_valid, scr, scr_sync};
  for (genvar k = 0; k < LINK_CYCLES; k++) begin : g_delay
    always_ff @(posedge clk)
      if (!rst_n) dl[k + 1] <= '0;
      else dl[k + 1] <= dl[k];
  end
  assign line = dl[LINK_CYCLES][65:0] ^ flip;
  pcs_scrambler #(.DESCRAMBLE(1'b1)) d (
      .clk, .rst_n, .in_valid(dl[LINK_CYCLES][66]), .in_data(line[65:2]), .out_valid(descr_valid),
      .out_data(descr));
  always_ff @(posedge clk) rx_sync <= line[1:0];
  assign rx = descr_valid ? {descr, rx_sync} : IDLE;
endmodule

// Test top for tb_fabric.py: the whole EDM fabric in RTL. NC compute nodes on
// switch ports 0..NC-1 and NM memory nodes on ports NC..NC+NM-1, each host with
// its PHY path (tb_fabric_port), one edm_eth_switch (the memory datapath, its
// L2 stage for the hosts' Ethernet frames and its egress muxes; the hosts'
// frames go host -> switch -> host). Vectors are flattened per node
// (node k: bits [k*W +: W]) since ports cannot be arrays; the per-node wiring
// is generated (g_port, g_cn, g_mn).
// Clocks: with RATE_MATCH = 0 everything runs on clk, and the links need no
// elastic buffers (the latency figures of docs/hardware.md are measured so).
// With RATE_MATCH = 1 each host (engine, its PHY's transmit side, its receive
// side after the elastic buffer) and the switch have clocks of their own:
// host p's clock has the edges of clk where tick[p] is set, the switch's those
// where tick[NC+NM] is (the bench leaves out evenly spread edges for each
// clock's offset in ppm below the fastest), and every receiver moves blocks
// from the recovered clock into its own through pcs_rate_match.
module tb_fabric_top #(
    parameter bit          ZERO_QUEUE = 1'b1,  // the switch's zero-queue rules (edm_switch)
    parameter int unsigned NC = 2,
    parameter int unsigned NM = 2,
    parameter int unsigned LINK_CYCLES = 19,   // PMA+PMD+transceiver twice + propagation, per hop
    parameter int unsigned CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,
    parameter int unsigned TIMER_W = 20,
    parameter int unsigned RATE_MATCH = 0,
    parameter int unsigned BER_WINDOW_CYCLES = 48828,  // pcs_ber_monitor at every receiver
    parameter int unsigned BER_THRESHOLD = 16,
    parameter int unsigned CIRCUIT_TIMEOUT_CYCLES = 0,  // the switch gives up circuits idle this long
    parameter bit          LINK_FAULT_RS = 1'b1,  // tb_fabric_port: 802.3 link fault signalling on the line
    parameter int unsigned L2_QUEUE_LOG2 = 12,   // the switch's frame queue per egress, blocks
    parameter int unsigned XGMII_MACS = 0,       // 1: hosts' frames from cocotbext-eth on an XGMII (g_port[p].g_mac)
    parameter bit          ACKS = 1'b0           // memory nodes acknowledge writes with /A/ (docs/protocol.md §4b)
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [NC+NM:0] tick,   // RATE_MATCH = 1: clock enables, hosts 0..NC+NM-1, then the switch
    input  logic [TIMER_W-1:0] cfg_timeout,
    input  logic [TIMER_W-1:0] cfg_retry,    // compute nodes: /N/ re-sent after this long without a grant
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
    output logic [NC*16-1:0]   cn_cnt_retries,
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
    output logic [NM*16-1:0]   mn_cnt_acks,
    // ACKS: each compute node's write outcomes (edm_write_outcome): one per
    // write, acknowledged (wo_ok) or failed cfg_give_up cycles after its
    // posted completion; wo_age the cycles from posted to its /A/.
    input  logic [TIMER_W-1:0] cfg_give_up,
    // ACKS: each compute node's write retry (edm_write_retry): a write with no
    // /A/ this long after its posted completion is sent again (0 = never).
    input  logic [TIMER_W-1:0] cfg_ack_timeout,
    output logic [NC*16-1:0]   wr_cnt_resent,
    output logic [NM*16-1:0]   mn_cnt_dup,      // ACKS: second copies the memory node's edm_dup_filter marked
    output logic [NC-1:0]      wo_valid,
    output logic [NC*edm_pkg::PORT_BITS-1:0] wo_dst,
    output logic [NC*8-1:0]    wo_id,
    output logic [NC*8-1:0]    wo_tag,
    output logic [NC-1:0]      wo_ok,
    output logic [NC*TIMER_W-1:0] wo_age,
    output logic [NC*16-1:0]   wo_cnt_stray,
    // Every port (host p = switch port p): the host's Ethernet frames (to the
    // switch's L2 stage, which forwards them to other hosts) and what it receives.
    input  logic [NC+NM-1:0]      h_enc_valid,    // host MAC/encoder -> host edm_tx
    output logic [NC+NM-1:0]      h_enc_ready,
    input  logic [(NC+NM)*66-1:0] h_enc_block,
    output logic [NC+NM-1:0]      h_dec_valid,    // host edm_rx -> decoder (frames)
    output logic [(NC+NM)*66-1:0] h_dec_block,
    // XGMII_MACS: hosts 0..3's MAC sides for cocotbext-eth (named ports: a
    // model drives or reads a whole signal; generate scopes are not visible).
    input  logic [63:0]           mac0_txd,
    input  logic [7:0]            mac0_txc,
    input  logic                  mac0_tx_en,
    output logic                  mac0_room,
    output logic [63:0]           mac0_rxd,
    output logic [7:0]            mac0_rxc,
    output logic                  mac0_rx_valid,
    input  logic [63:0]           mac1_txd,
    input  logic [7:0]            mac1_txc,
    input  logic                  mac1_tx_en,
    output logic                  mac1_room,
    output logic [63:0]           mac1_rxd,
    output logic [7:0]            mac1_rxc,
    output logic                  mac1_rx_valid,
    input  logic [63:0]           mac2_txd,
    input  logic [7:0]            mac2_txc,
    input  logic                  mac2_tx_en,
    output logic                  mac2_room,
    output logic [63:0]           mac2_rxd,
    output logic [7:0]            mac2_rxc,
    output logic                  mac2_rx_valid,
    input  logic [63:0]           mac3_txd,
    input  logic [7:0]            mac3_txc,
    input  logic                  mac3_tx_en,
    output logic                  mac3_room,
    output logic [63:0]           mac3_rxd,
    output logic [7:0]            mac3_rxc,
    output logic                  mac3_rx_valid,
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
    output logic [15:0]           sw_cnt_overflow,
    output logic [(NC+NM)*16-1:0] sw_cnt_lost_grants,
    // The switch's L2 stage (edm_l2_stage), per port.
    output logic [(NC+NM)*16-1:0] sw_cnt_rx_frames,
    output logic [(NC+NM)*16-1:0] sw_cnt_rx_dropped,
    output logic [(NC+NM)*16-1:0] sw_cnt_rx_bad,
    output logic [(NC+NM)*16-1:0] sw_cnt_ordered_sets,
    output logic [(NC+NM)*16-1:0] sw_cnt_filtered,
    output logic [(NC+NM)*16-1:0] sw_cnt_tx_frames,
    output logic [(NC+NM)*16-1:0] sw_cnt_tx_dropped,
    // Rate matching (RATE_MATCH = 1, else 0): the switch's receiver from host p
    // (up_) and host p's receiver (down_), pcs_rate_match's counters; and the
    // cycles each host's idle pacer held memory back (edm_idle_pacer).
    output logic [(NC+NM)*16-1:0] up_rm_deleted,
    output logic [(NC+NM)*16-1:0] up_rm_inserted,
    output logic [(NC+NM)*16-1:0] up_rm_overflow,
    output logic [(NC+NM)*16-1:0] up_rm_underflow,
    output logic [(NC+NM)*16-1:0] up_rm_starved,
    output logic [(NC+NM)*16-1:0] down_rm_deleted,
    output logic [(NC+NM)*16-1:0] down_rm_inserted,
    output logic [(NC+NM)*16-1:0] down_rm_overflow,
    output logic [(NC+NM)*16-1:0] down_rm_underflow,
    output logic [(NC+NM)*16-1:0] down_rm_starved,
    output logic [(NC+NM)*16-1:0] h_cnt_paced,
    // Link disable on a high bit-error rate (pcs_link_guard at both ends):
    // host p has stopped sending, and each end's monitor counters.
    output logic [NC+NM-1:0]      link_down,
    output logic [NC+NM-1:0]      sw_link_up,     // each switch port's link state (edm_switch port_link_up)
    // Link fault signalling (LINK_FAULT_RS): each end's pcs_link_fault state
    // (0 OK, 1 local fault, 2 remote fault), the switch's receiver (up_) and
    // the host's (down_).
    output logic [(NC+NM)*2-1:0]  up_link_fault,
    output logic [(NC+NM)*2-1:0]  down_link_fault,
    output logic [(NC+NM)*16-1:0] up_cnt_bad_sync,
    output logic [(NC+NM)*16-1:0] up_cnt_hi_ber,
    output logic [(NC+NM)*16-1:0] up_cnt_discarded,
    output logic [(NC+NM)*16-1:0] down_cnt_bad_sync,
    output logic [(NC+NM)*16-1:0] down_cnt_hi_ber,
    output logic [(NC+NM)*16-1:0] down_cnt_discarded
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
  logic [N-1:0]      r_ack_valid;
  logic [N*PB-1:0]   r_ack_peer;
  logic [N*8-1:0]    r_ack_base;
  logic [N*16-1:0]   r_ack_map;

  // The clocks (see the header). tick is unused with one clock.
  logic          sclk;
  logic [N-1:0]  hclk;
  if (RATE_MATCH != 0) begin : g_clocks
    assign sclk = clk & tick[N];
    assign hclk = {N{clk}} & tick[N-1:0];
  end else begin : g_one_clock
    /* verilator lint_off UNUSEDSIGNAL */
    logic [N:0] unused_tick;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_tick = tick;
    assign sclk = clk;
    assign hclk = {N{clk}};
  end

  // The switch with its frame path: its egresses merge frames themselves (sw_line).
  logic [N*66-1:0] sw_line;
  edm_eth_switch #(.N(N), .CHUNK_BYTES(CHUNK_BYTES), .CIRCUIT_TIMEOUT_CYCLES(CIRCUIT_TIMEOUT_CYCLES),
                   .ZERO_QUEUE(ZERO_QUEUE), .L2_QUEUE_LOG2(L2_QUEUE_LOG2)) sw (
      .clk(sclk), .rst_n,
      .in_block(sw_in), .port_link_up(sw_link_up), .out_line(sw_line), .edm_out(sw_out),
      .cnt_bad_notif(sw_cnt_bad_notif), .cnt_unknown(sw_cnt_unknown),
      .cnt_non_edm(sw_cnt_non_edm), .cnt_dropped(sw_cnt_dropped),
      .cnt_conflict(sw_cnt_conflict), .cnt_overflow(sw_cnt_overflow), .cnt_lost_grants(sw_cnt_lost_grants),
      .cnt_rx_frames(sw_cnt_rx_frames), .cnt_rx_dropped(sw_cnt_rx_dropped), .cnt_rx_bad(sw_cnt_rx_bad),
      .cnt_ordered_sets(sw_cnt_ordered_sets), .cnt_filtered(sw_cnt_filtered),
      .cnt_tx_frames(sw_cnt_tx_frames), .cnt_tx_dropped(sw_cnt_tx_dropped)
  );

  // The named MAC ports as per-host vectors (hosts beyond 4 have none).
  localparam int unsigned NX = N < 4 ? N : 4;
  logic [4*64-1:0] x_txd_all, x_rxd_all;
  logic [4*8-1:0]  x_txc_all, x_rxc_all;
  logic [3:0]      x_tx_en_all, x_room_all, x_rx_valid_all;
  logic [N*64-1:0] x_rxd;
  logic [N*8-1:0]  x_rxc;
  logic [N-1:0]    x_room, x_rx_valid;
  assign x_txd_all = {mac3_txd, mac2_txd, mac1_txd, mac0_txd};
  assign x_txc_all = {mac3_txc, mac2_txc, mac1_txc, mac0_txc};
  assign x_tx_en_all = {mac3_tx_en, mac2_tx_en, mac1_tx_en, mac0_tx_en};
  always_comb begin
    x_rxd_all = '0;
    x_rxc_all = '0;
    x_room_all = '0;
    x_rx_valid_all = '0;
    x_rxd_all[NX*64-1:0] = x_rxd[NX*64-1:0];
    x_rxc_all[NX*8-1:0] = x_rxc[NX*8-1:0];
    x_room_all[NX-1:0] = x_room[NX-1:0];
    x_rx_valid_all[NX-1:0] = x_rx_valid[NX-1:0];
  end
  assign {mac3_rxd, mac2_rxd, mac1_rxd, mac0_rxd} = x_rxd_all;
  assign {mac3_rxc, mac2_rxc, mac1_rxc, mac0_rxc} = x_rxc_all;
  assign {mac3_room, mac2_room, mac1_room, mac0_room} = x_room_all;
  assign {mac3_rx_valid, mac2_rx_valid, mac1_rx_valid, mac0_rx_valid} = x_rx_valid_all;

  for (genvar p = 0; p < N; p++) begin : g_port
    // The host's MAC side: the bench's blocks (h_enc_*), or with XGMII_MACS
    // a 64-bit XGMII for cocotbext-eth (macP_*) through a pcs_encoder and an
    // 8-block MAC buffer, as in tb_host_path_top (the source has only a clock
    // enable: the bench drives macP_tx_en from macP_room, and a word sent
    // under it is taken a cycle later); its frames leave edm_rx through a
    // pcs_decoder (macP_rx*).
    logic        enc_valid, enc_ready;
    logic [65:0] enc_block;
    if (XGMII_MACS != 0 && p < 4) begin : g_mac
      logic [63:0] xgmii_txd;
      logic [7:0]  xgmii_txc;
      logic        xgmii_tx_en, tx_word_valid, w_valid, w_invalid;
      logic [65:0] w_block;
      logic [3:0]  buf_count;
      always_ff @(posedge hclk[p])
        if (!rst_n) tx_word_valid <= 1'b0;
        else tx_word_valid <= xgmii_tx_en;
      pcs_encoder encoder (
          .clk(hclk[p]), .rst_n, .in_valid(tx_word_valid), .xgmii_data(xgmii_txd), .xgmii_ctrl(xgmii_txc),
          .out_valid(w_valid), .block(w_block), .invalid(w_invalid)
      );
      edm_fifo #(.WIDTH(66), .DEPTH_LOG2(3)) mac_buffer (
          .clk(hclk[p]), .rst_n, .wr_valid(w_valid), .wr_ready(), .wr_data(w_block),
          .rd_valid(enc_valid), .rd_ready(enc_ready), .rd_data(enc_block), .count(buf_count)
      );
      assign x_room[p] = buf_count <= 4'd4;
      pcs_decoder decoder (
          .clk(hclk[p]), .rst_n, .in_valid(h_dec_valid[p]), .block(h_dec_block[p*66 +: 66]),
          .out_valid(x_rx_valid[p]), .xgmii_data(x_rxd[p*64 +: 64]), .xgmii_ctrl(x_rxc[p*8 +: 8]), .invalid()
      );
      assign xgmii_txd = x_txd_all[p*64 +: 64];
      assign xgmii_txc = x_txc_all[p*8 +: 8];
      assign xgmii_tx_en = x_tx_en_all[p];
      assign h_enc_ready[p] = 1'b0;
    end else begin : g_blocks
      assign enc_valid = h_enc_valid[p];
      assign enc_block = h_enc_block[p*66 +: 66];
      assign h_enc_ready[p] = enc_ready;
      assign {x_room[p], x_rx_valid[p], x_rxd[p*64 +: 64], x_rxc[p*8 +: 8]} = '0;
    end
    tb_fabric_port #(.LINK_CYCLES(LINK_CYCLES), .RATE_MATCH(RATE_MATCH), .BER_WINDOW_CYCLES(BER_WINDOW_CYCLES),
                     .BER_THRESHOLD(BER_THRESHOLD), .LINK_FAULT_RS(LINK_FAULT_RS), .SWITCH_MERGES(1'b1)) phy (
        .hclk(hclk[p]), .sclk, .rst_n,
        .e_valid(e_out_valid[p]), .e_ready(e_out_ready[p]),
        .e_block(e_out_block[p*66 +: 66]), .e_last(e_out_last[p]),
        .h_enc_valid(enc_valid), .h_enc_ready(enc_ready), .h_enc_block(enc_block),
        .s_enc_valid(1'b0), .s_enc_ready(), .s_enc_block('0),
        .sw_in(sw_in[p*66 +: 66]), .sw_out(sw_out[p*66 +: 66]), .sw_line(sw_line[p*66 +: 66]),
        .up_flip(up_flip[p*66 +: 66]), .down_flip(down_flip[p*66 +: 66]),
        .h_tx_line(h_tx_line[p*66 +: 66]), .h_rx_line(h_rx_line[p*66 +: 66]),
        .dec_valid(h_dec_valid[p]), .dec_block(h_dec_block[p*66 +: 66]),
        .mem_valid(r_mem_valid[p]), .mem_block(r_mem_block[p*66 +: 66]),
        .mem_first(r_mem_first[p]), .mem_last(r_mem_last[p]),
        .mem_error(r_mem_error[p]), .mem_abort(r_mem_abort[p]),
        .grant_valid(r_grant_valid[p]), .grant_dst(r_grant_dst[p*PB +: PB]),
        .grant_msg_id(r_grant_id[p*8 +: 8]), .grant_size(r_grant_size[p*16 +: 16]),
        .ack_valid(r_ack_valid[p]), .ack_peer(r_ack_peer[p*PB +: PB]), .ack_base(r_ack_base[p*8 +: 8]),
        .ack_map(r_ack_map[p*16 +: 16]),
        .cnt_corrupted(h_cnt_corrupted[p*16 +: 16]), .cnt_unknown(h_cnt_unknown[p*16 +: 16]),
        .cnt_ctl_missed(h_cnt_ctl_missed[p*16 +: 16]),
        .up_rm_deleted(up_rm_deleted[p*16 +: 16]), .up_rm_inserted(up_rm_inserted[p*16 +: 16]),
        .up_rm_overflow(up_rm_overflow[p*16 +: 16]), .up_rm_underflow(up_rm_underflow[p*16 +: 16]),
        .up_rm_starved(up_rm_starved[p*16 +: 16]),
        .down_rm_deleted(down_rm_deleted[p*16 +: 16]), .down_rm_inserted(down_rm_inserted[p*16 +: 16]),
        .down_rm_overflow(down_rm_overflow[p*16 +: 16]), .down_rm_underflow(down_rm_underflow[p*16 +: 16]),
        .down_rm_starved(down_rm_starved[p*16 +: 16]), .cnt_paced(h_cnt_paced[p*16 +: 16]),
        .link_down(link_down[p]), .sw_link_up(sw_link_up[p]),
        .up_link_fault(up_link_fault[p*2 +: 2]), .down_link_fault(down_link_fault[p*2 +: 2]),
        .up_cnt_bad_sync(up_cnt_bad_sync[p*16 +: 16]), .up_cnt_hi_ber(up_cnt_hi_ber[p*16 +: 16]),
        .up_cnt_discarded(up_cnt_discarded[p*16 +: 16]),
        .down_cnt_bad_sync(down_cnt_bad_sync[p*16 +: 16]), .down_cnt_hi_ber(down_cnt_hi_ber[p*16 +: 16]),
        .down_cnt_discarded(down_cnt_discarded[p*16 +: 16])
    );
  end

  for (genvar c = 0; c < NC; c++) begin : g_cn
    // A loss the host sees (docs/faults.md §5): its link down, or its edm_rx
    // counting a lost control block or a corrupted one (a rejected /G/) or
    // unit (the engine re-sends /N/ sooner then).
    logic [31:0] rx_counts, rx_counts_seen;
    logic        ctl_lost;
    assign rx_counts = {h_cnt_ctl_missed[c*16 +: 16], h_cnt_corrupted[c*16 +: 16]};
    always_ff @(posedge hclk[c]) rx_counts_seen <= rx_counts;
    assign ctl_lost = link_down[c] || rx_counts_seen != rx_counts;
    // edm_write_front between the host and the engine (which takes its ids,
    // EXT_ID, with ACKS): edm_write_retry keeps each write until its /A/ and
    // sends it again without; the host sees the engine's completions but a
    // re-send's; edm_write_outcome gives each write its outcome.
    logic        e_req_valid, e_req_ready, e_cpl_valid, e_cpl_ready;
    logic [2:0]  e_req_kind, e_cpl_kind;
    logic [PB-1:0] e_req_dst, e_cpl_dst;
    logic [63:0] e_req_raddr, e_req_laddr, e_req_arg0, e_req_arg1;
    logic [15:0] e_req_len;
    logic [3:0]  e_req_op;
    logic [7:0]  e_req_tag, e_req_id, e_cpl_id, e_cpl_tag, e_cpl_status;
    /* verilator lint_off PINCONNECTEMPTY */
    edm_write_front #(.ACKS(ACKS), .DST_LOG2($clog2(N)), .TIMER_W(TIMER_W)) front (
        .clk(hclk[c]), .rst_n, .cfg_ack_timeout, .cfg_give_up,
        .in_req_valid(req_valid[c]), .in_req_ready(req_ready[c]),
        .in_req_kind(req_kind[c*3 +: 3]), .in_req_dst(req_dst[c*PB +: PB]),
        .in_req_raddr(req_raddr[c*64 +: 64]), .in_req_len(req_len[c*16 +: 16]),
        .in_req_laddr(req_laddr[c*64 +: 64]), .in_req_rmw_op(req_rmw_op[c*4 +: 4]),
        .in_req_arg0(req_arg0[c*64 +: 64]), .in_req_arg1(req_arg1[c*64 +: 64]), .in_req_tag(req_tag[c*8 +: 8]),
        .out_req_valid(e_req_valid), .out_req_ready(e_req_ready), .out_req_kind(e_req_kind),
        .out_req_dst(e_req_dst), .out_req_raddr(e_req_raddr), .out_req_len(e_req_len),
        .out_req_laddr(e_req_laddr), .out_req_rmw_op(e_req_op), .out_req_arg0(e_req_arg0),
        .out_req_arg1(e_req_arg1), .out_req_tag(e_req_tag), .out_req_msg_id(e_req_id),
        .eng_cpl_valid(e_cpl_valid), .eng_cpl_ready(e_cpl_ready), .eng_cpl_kind(e_cpl_kind),
        .eng_cpl_dst(e_cpl_dst), .eng_cpl_msg_id(e_cpl_id), .eng_cpl_tag(e_cpl_tag),
        .eng_cpl_status(e_cpl_status),
        .cpl_valid(cpl_valid[c]), .cpl_ready(cpl_ready[c]), .cpl_kind(cpl_kind[c*3 +: 3]),
        .cpl_dst(cpl_dst[c*PB +: PB]), .cpl_msg_id(), .cpl_tag(cpl_tag[c*8 +: 8]),
        .cpl_status(cpl_status[c*8 +: 8]),
        .free_valid(1'b0), .free_dst('0), .free_msg_id('0),   // one engine: no mirror
        .ack_valid(r_ack_valid[c]), .ack_peer(r_ack_peer[c*PB +: PB]), .ack_base(r_ack_base[c*8 +: 8]),
        .ack_map(r_ack_map[c*16 +: 16]),
        .wo_valid(wo_valid[c]), .wo_dst(wo_dst[c*PB +: PB]), .wo_id(wo_id[c*8 +: 8]), .wo_tag(wo_tag[c*8 +: 8]),
        .wo_ok(wo_ok[c]), .wo_age(wo_age[c*TIMER_W +: TIMER_W]),
        .cnt_resent(wr_cnt_resent[c*16 +: 16]), .cnt_gave_up(), .cnt_wo_stray(wo_cnt_stray[c*16 +: 16]),
        .cnt_wo_failed());
    /* verilator lint_on PINCONNECTEMPTY */
    // edm_rx runs on the host's clock too: the engine takes its outputs without crossing FIFOs.
    edm_compute_node #(.MAX_CHUNK_BYTES(CHUNK_BYTES), .TIMER_W(TIMER_W), .RX_SAME_CLOCK(1), .EXT_ID(ACKS)) cn (
        .clk(hclk[c]), .rst_n, .rx_clk(hclk[c]), .rx_rst_n(rst_n),
        .node_port(PB'(c)),
        .cfg_timeout, .cfg_retry, .ctl_lost, .fail_all(1'b0),
        .req_valid(e_req_valid), .req_ready(e_req_ready),
        .req_kind(e_req_kind), .req_dst(e_req_dst),
        .req_raddr(e_req_raddr), .req_len(e_req_len),
        .req_laddr(e_req_laddr), .req_rmw_op(e_req_op),
        .req_arg0(e_req_arg0), .req_arg1(e_req_arg1), .req_tag(e_req_tag), .req_msg_id(e_req_id),
        .cpl_valid(e_cpl_valid), .cpl_ready(e_cpl_ready), .cpl_kind(e_cpl_kind),
        .cpl_dst(e_cpl_dst), .cpl_msg_id(e_cpl_id), .cpl_tag(e_cpl_tag),
        .cpl_status(e_cpl_status),
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
        .cnt_rx_overflow(cn_cnt_rx_overflow[c*16 +: 16]), .cnt_retries(cn_cnt_retries[c*16 +: 16]),
        /* verilator lint_off PINCONNECTEMPTY */ .cnt_failed_all() /* verilator lint_on PINCONNECTEMPTY */
    );
  end

  for (genvar m = 0; m < NM; m++) begin : g_mn
    localparam int unsigned P = NC + m;
    // ACKS: a re-sent write's chunks that were applied before, and re-sent
    // RMWs, reach the node again: edm_dup_filter (one plane) marks them, so
    // each is applied once and a write's second copy is acknowledged again.
    logic        f_valid, f_first, f_last, f_error, f_abort, f_dup, f_replay, f_whole;
    logic [65:0] f_block;
    logic        rmw_done, rmw_ok, memo_ready, memo_ok;
    logic [63:0] rmw_old, memo_old;
    logic [PB-1:0] rmw_src;
    logic [7:0]  rmw_id;
    if (ACKS) begin : g_filter
      edm_dup_filter #(.NP(1), .SRC_LOG2(NC <= 2 ? 1 : $clog2(NC))) filter (
          .clk(hclk[P]), .rst_n,
          .in_valid(r_mem_valid[P]), .in_block(r_mem_block[P*66 +: 66]), .in_first(r_mem_first[P]),
          .in_last(r_mem_last[P]), .in_error(r_mem_error[P]), .in_abort(r_mem_abort[P]),
          .out_valid(f_valid), .out_block(f_block), .out_first(f_first), .out_last(f_last), .out_error(f_error),
          .out_abort(f_abort), .out_dup(f_dup), .out_replay(f_replay), .out_whole(f_whole),
          .rmw_done, .rmw_ok, .rmw_old, .rmw_src, .rmw_id, .memo_ready, .memo_ok, .memo_old,
          .cnt_dup(mn_cnt_dup[m*16 +: 16]), .cnt_stale(), .cnt_untracked());
    end else begin : g_no_filter
      assign {f_valid, f_block, f_first, f_last, f_error, f_abort} =
             {r_mem_valid[P], r_mem_block[P*66 +: 66], r_mem_first[P], r_mem_last[P], r_mem_error[P], r_mem_abort[P]};
      assign {f_dup, f_replay, memo_ready, memo_ok, memo_old} = {1'b0, 1'b0, 1'b1, 1'b0, 64'd0};  // no second copies
      assign f_whole = 1'b1;   // no acknowledgements
      assign mn_cnt_dup[m*16 +: 16] = '0;
    end
    // Default sizes: the node sizes itself for its NC requesters (docs/hardware.md,
    // "Memory node sizing").
    edm_mem_node #(.CHUNK_BYTES(CHUNK_BYTES), .MAX_WRITE_BYTES(CHUNK_BYTES), .COMPUTE_NODES(NC),
                   .ACKS(ACKS), .ACK_SRC_LOG2(NC <= 2 ? 1 : $clog2(NC))) mn (
        .clk(hclk[P]), .rst_n,
        .in_valid(f_valid), .in_block(f_block), .in_first(f_first), .in_last(f_last),
        .in_error(f_error), .in_abort(f_abort), .in_room_read(), .in_room_write(),
        .in_dup(f_dup), .in_replay(f_replay), .in_whole(f_whole), .rmw_done, .rmw_ok, .rmw_old, .rmw_src, .rmw_id,
        .memo_ready, .memo_ok, .memo_old,
        .ord_wr_busy(), .ord_wr_new(), .ord_wr_done(), .ord_wr_w0(), .ord_wr_wl(),
        .ord_rs_busy(), .ord_rs_new(), .ord_rs_done(), .ord_rs_rmw(), .ord_rd_wait(), .ord_rs_w0(), .ord_rs_wl(),
        .peer_wr_busy('0), .peer_wr_new('0), .peer_wr_done('0), .peer_wr_w0('0), .peer_wr_wl('0),
        .peer_rs_busy('0), .peer_rs_new('0), .peer_rs_done('0), .peer_rs_rmw('0), .peer_rd_wait('0),
        .peer_rs_w0('0), .peer_rs_wl('0),  // one engine
        .xl_addr('0), .xl_deny(1'b0),  // TRANSLATE = 0: physical addresses
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
        .cnt_rejected(mn_cnt_rejected[m*16 +: 16]), .cnt_stray_grants(mn_cnt_stray[m*16 +: 16]),
        .cnt_acks(mn_cnt_acks[m*16 +: 16]), .cnt_ack_dropped()
    );
  end
endmodule

// One host's PHY path and the switch side of its link, both directions:
//   engine -> idle pacer -> edm_tx (with the host's frames) -> scrambler -> link
//          -> descrambler -> [rate match] -> link guard -> switch
//   switch -> egress mux (edm_tx, strict, with the switch's frames) -> scrambler
//          -> link -> descrambler -> [rate match] -> link guard -> edm_rx
//          -> engine (units, grants) and decoder (frames)
// The link is a LINK_CYCLES-block delay line per direction, in its sender's
// clock (the receiver's descrambler runs on the recovered clock); with
// RATE_MATCH the elastic buffer moves blocks into the receiver's clock. The
// link guards disable the link, both directions, when either end's BER monitor
// raises hi_ber: received blocks become idles and the host stops sending
// memory units (its edm_tx then sends fillers or finishes a frame).
// LINK_FAULT_RS = 0: the partner's hi_ber reaches each guard on a private
// wire (remote_down, two flops). LINK_FAULT_RS = 1: 802.3 link fault
// signalling on the line instead (docs/protocol.md §6a): a pcs_link_fault at
// each end reads its receiver's standard blocks (through a pcs_decoder) with
// its own hi_ber as the PCS's fault; in Local Fault its end sends remote
// fault blocks in place of its line, in Remote Fault idles; a guard discards
// only on its own hi_ber, and the host sends memory units only while its RS
// has the link up.
module tb_fabric_port #(
    parameter int unsigned LINK_CYCLES = 19,
    parameter int unsigned RATE_MATCH = 0,
    parameter int unsigned BER_WINDOW_CYCLES = 48828,
    parameter int unsigned BER_THRESHOLD = 16,
    parameter bit          LINK_FAULT_RS = 1'b0,
    // 1: the switch merges its frames itself (edm_eth_switch): sw_line goes to
    // the link as it is. 0: sw_out and s_enc merged here (edm_switch_egress).
    parameter bit          SWITCH_MERGES = 1'b0
) (
    input  logic        hclk,   // the host's clock
    input  logic        sclk,   // the switch's
    input  logic        rst_n,
    // Host side (hclk): the engine's units, the host's frames, what it receives.
    input  logic        e_valid,
    output logic        e_ready,
    input  logic [65:0] e_block,
    input  logic        e_last,
    input  logic        h_enc_valid,
    output logic        h_enc_ready,
    input  logic [65:0] h_enc_block,
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
    output logic        ack_valid,
    output logic [edm_pkg::PORT_BITS-1:0] ack_peer,
    output logic [7:0]  ack_base,
    output logic [15:0] ack_map,
    output logic [15:0] cnt_corrupted,
    output logic [15:0] cnt_unknown,
    output logic [15:0] cnt_ctl_missed,
    output logic [15:0] cnt_paced,
    output logic        link_down,
    output logic        sw_link_up,       // the switch end's link state (its RS's, or its guard's)
    output logic [1:0]  up_link_fault,    // the switch end's RS (0 with LINK_FAULT_RS = 0)
    output logic [1:0]  down_link_fault,  // the host end's
    // Switch side (sclk): its port, and its frames toward the host.
    input  logic        s_enc_valid,
    output logic        s_enc_ready,
    input  logic [65:0] s_enc_block,
    output logic [65:0] sw_in,
    input  logic [65:0] sw_out,
    input  logic [65:0] sw_line,
    // Bit errors on the wire, each in its sender's clock.
    input  logic [65:0] up_flip,
    input  logic [65:0] down_flip,
    // Rate matching, receiver from host -> switch (up_) and switch -> host (down_).
    output logic [15:0] up_rm_deleted,
    output logic [15:0] up_rm_inserted,
    output logic [15:0] up_rm_overflow,
    output logic [15:0] up_rm_underflow,
    output logic [15:0] up_rm_starved,
    output logic [15:0] down_rm_deleted,
    output logic [15:0] down_rm_inserted,
    output logic [15:0] down_rm_overflow,
    output logic [15:0] down_rm_underflow,
    output logic [15:0] down_rm_starved,
    // The link guards' monitors.
    output logic [15:0] up_cnt_bad_sync,
    output logic [15:0] up_cnt_hi_ber,
    output logic [15:0] up_cnt_discarded,
    output logic [15:0] down_cnt_bad_sync,
    output logic [15:0] down_cnt_hi_ber,
    output logic [15:0] down_cnt_discarded
);
  localparam logic [65:0] IDLE = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  logic up_hi_ber, down_hi_ber;   // the switch's receiver, the host's

  // ---- host -> switch
  logic pace_ready, tx_valid, tx_ready;
  edm_idle_pacer pacer (
      .clk(hclk), .rst_n, .line_block(h_tx_line),
      .src_valid(e_valid && !link_down), .src_ready(pace_ready), .tx_valid, .tx_ready, .cnt_paced
  );
  assign e_ready = pace_ready && !link_down;
  edm_tx #(.STRICT(1'b0)) host_tx (
      .clk(hclk), .rst_n,
      .enc_valid(h_enc_valid), .enc_ready(h_enc_ready), .enc_block(h_enc_block),
      .mem_valid(tx_valid), .mem_ready(tx_ready), .mem_block(e_block), .mem_last(e_last),
      .out_block(h_tx_line), .out_is_memory(), .buffered()
  );
  logic [65:0] up_rx, up_matched;
  logic        up_matched_valid, up_guarded_valid;
  logic [65:0] up_guarded;
  logic [65:0] h_line;  // h_tx_line, or what the host's RS sends in its place
  logic        up_guard_down;
  tb_scrambled_link #(.LINK_CYCLES(LINK_CYCLES)) up (.clk(hclk), .rst_n, .tx(h_line), .flip(up_flip),
                                                     .rx(up_rx), .line());
  tb_link_receiver #(.RATE_MATCH(RATE_MATCH)) up_rm (
      .in_clk(hclk), .out_clk(sclk), .rst_n, .in_block(up_rx), .out_valid(up_matched_valid), .out_block(up_matched),
      .cnt_deleted(up_rm_deleted), .cnt_inserted(up_rm_inserted), .cnt_overflow(up_rm_overflow),
      .cnt_underflow(up_rm_underflow), .cnt_idle_starved(up_rm_starved)
  );
  pcs_link_guard #(.WINDOW_CYCLES(BER_WINDOW_CYCLES), .THRESHOLD(BER_THRESHOLD)) up_guard (
      .clk(sclk), .rst_n, .in_valid(up_matched_valid), .in_block(up_matched),
      .out_valid(up_guarded_valid), .out_block(up_guarded),
      .remote_down(LINK_FAULT_RS ? 1'b0 : down_hi_ber), .hi_ber(up_hi_ber), .link_down(up_guard_down),
      .cnt_bad_sync(up_cnt_bad_sync), .cnt_hi_ber(up_cnt_hi_ber), .cnt_discarded(up_cnt_discarded),
      .cnt_cut_units()
  );
  assign sw_in = up_guarded_valid ? up_guarded : IDLE;   // the switch takes a block every cycle

  // ---- switch -> host: the switch's blocks and its frames through the
  // egress mux (edm_switch_egress: edm_tx, strict), in the switch or here.
  logic [65:0] s_tx_line;
  if (SWITCH_MERGES) begin : g_merged
    /* verilator lint_off UNUSEDSIGNAL */
    logic [66:0] unused_s_enc;
    logic [65:0] unused_sw_out;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_s_enc = {s_enc_valid, s_enc_block};
    assign unused_sw_out = sw_out;
    assign s_enc_ready = 1'b0;
    assign s_tx_line = sw_line;
  end else begin : g_merge_here
    /* verilator lint_off UNUSEDSIGNAL */
    logic [65:0] unused_sw_line;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_sw_line = sw_line;
    edm_switch_egress switch_tx (
        .clk(sclk), .rst_n, .edm_block(sw_out), .frame_valid(s_enc_valid), .frame_ready(s_enc_ready),
        .frame_block(s_enc_block), .line_block(s_tx_line)
    );
  end
  logic [65:0] down_rx, down_matched;
  logic        down_matched_valid;
  logic [65:0] s_line;  // s_tx_line, or what the switch end's RS sends in its place
  tb_scrambled_link #(.LINK_CYCLES(LINK_CYCLES)) down (.clk(sclk), .rst_n, .tx(s_line), .flip(down_flip),
                                                       .rx(down_rx), .line());
  tb_link_receiver #(.RATE_MATCH(RATE_MATCH)) down_rm (
      .in_clk(sclk), .out_clk(hclk), .rst_n, .in_block(down_rx), .out_valid(down_matched_valid),
      .out_block(down_matched),
      .cnt_deleted(down_rm_deleted), .cnt_inserted(down_rm_inserted), .cnt_overflow(down_rm_overflow),
      .cnt_underflow(down_rm_underflow), .cnt_idle_starved(down_rm_starved)
  );
  logic rx_valid, guard_down;
  pcs_link_guard #(.WINDOW_CYCLES(BER_WINDOW_CYCLES), .THRESHOLD(BER_THRESHOLD)) down_guard (
      .clk(hclk), .rst_n, .in_valid(down_matched_valid), .in_block(down_matched),
      .out_valid(rx_valid), .out_block(h_rx_line),
      .remote_down(LINK_FAULT_RS ? 1'b0 : up_hi_ber), .hi_ber(down_hi_ber), .link_down(guard_down),
      .cnt_bad_sync(down_cnt_bad_sync), .cnt_hi_ber(down_cnt_hi_ber), .cnt_discarded(down_cnt_discarded),
      .cnt_cut_units()
  );

  if (LINK_FAULT_RS) begin : g_rs
    tb_link_fault_end sw_end (
        .clk(sclk), .rst_n, .rx_valid(up_guarded_valid), .rx_block(up_guarded), .pcs_fault(up_hi_ber),
        .tx_block(s_tx_line), .line(s_line), .link_fault(up_link_fault), .link_up(sw_link_up)
    );
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_guard_down;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_guard_down = up_guard_down;
    logic h_link_up;
    tb_link_fault_end host_end (
        .clk(hclk), .rst_n, .rx_valid(dec_valid), .rx_block(dec_block), .pcs_fault(down_hi_ber),
        .tx_block(h_tx_line), .line(h_line), .link_fault(down_link_fault), .link_up(h_link_up)
    );
    assign link_down = !h_link_up;
  end else begin : g_wire
    assign s_line = s_tx_line;
    assign h_line = h_tx_line;
    assign {up_link_fault, down_link_fault} = '0;
    assign link_down = guard_down;
    assign sw_link_up = !up_guard_down;
  end

  edm_rx host_rx (
      .clk(hclk), .rst_n,
      .in_valid(rx_valid), .in_block(h_rx_line),
      .out_valid(dec_valid), .out_block(dec_block),
      .mem_valid, .mem_block, .mem_first, .mem_last, .mem_error, .mem_abort,
      .notif_valid(), .notif_dst(), .notif_msg_id(), .notif_size(),
      .grant_valid, .grant_dst, .grant_msg_id, .grant_size,
      .ack_valid, .ack_peer, .ack_base, .ack_map,
      .cnt_msg_ok(), .cnt_corrupted, .cnt_unknown, .cnt_notif_ok(), .cnt_grant_ok(), .cnt_ack_ok(), .cnt_bad_sync(),
      .cnt_ctl_missed, .cnt_ctl_in_data()
  );
endmodule

// A receiver's move from the recovered clock (in_clk: the link's sender's) into
// its own: pcs_rate_match with RATE_MATCH, else a wire (one clock) with zero counters.
module tb_link_receiver #(
    parameter int unsigned RATE_MATCH = 0
) (
    input  logic        in_clk,
    input  logic        out_clk,
    input  logic        rst_n,
    input  logic [65:0] in_block,
    output logic        out_valid,
    output logic [65:0] out_block,
    output logic [15:0] cnt_deleted,
    output logic [15:0] cnt_inserted,
    output logic [15:0] cnt_overflow,
    output logic [15:0] cnt_underflow,
    output logic [15:0] cnt_idle_starved
);
  if (RATE_MATCH != 0) begin : g_elastic
    pcs_rate_match elastic (
        .in_clk, .in_rst_n(rst_n), .in_valid(1'b1), .in_block, .cnt_deleted, .cnt_overflow, .cnt_idle_starved,
        .out_clk, .out_rst_n(rst_n), .out_valid, .out_block, .cnt_inserted, .cnt_underflow
    );
  end else begin : g_wire
    /* verilator lint_off UNUSEDSIGNAL */
    logic [2:0] unused_clocks;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_clocks = {in_clk, out_clk, rst_n};
    assign out_valid = 1'b1;
    assign out_block = in_block;
    assign {cnt_deleted, cnt_inserted, cnt_overflow, cnt_underflow, cnt_idle_starved} = '0;
  end
endmodule

// One end of a link with 802.3 link fault signalling, at the block level of
// the fabric's lines: its receiver's standard blocks (decoded) into a
// pcs_link_fault; while that says Local Fault the end sends remote fault
// blocks in place of its line, in Remote Fault idles (the line's memory
// units and frames are lost then: link_up tells the host to hold them).
module tb_link_fault_end (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        rx_valid,
    input  logic [65:0] rx_block,
    input  logic        pcs_fault,
    input  logic [65:0] tx_block,
    output logic [65:0] line,
    output logic [1:0]  link_fault,
    output logic        link_up
);
  localparam logic [31:0] RF_COLUMN = {edm_pkg::SEQ_REMOTE_FAULT, edm_pkg::XGMII_SEQ};
  localparam logic [65:0] RF_BLOCK = {RF_COLUMN[31:8], edm_pkg::O_CODE_SEQ, edm_pkg::O_CODE_SEQ, RF_COLUMN[31:8],
                                      edm_pkg::BT_O0_O4, edm_pkg::SYNC_CTRL};
  localparam logic [65:0] IDLE = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  logic        w_valid;
  logic [63:0] w_data;
  logic [7:0]  w_ctrl;
  pcs_decoder decoder (
      .clk, .rst_n, .in_valid(rx_valid), .block(rx_block), .out_valid(w_valid), .xgmii_data(w_data),
      .xgmii_ctrl(w_ctrl), .invalid()
  );
  pcs_link_fault rs (
      .clk, .rst_n, .rx_valid(w_valid), .rx_data(w_data), .rx_ctrl(w_ctrl), .pcs_fault,
      .tx_valid(1'b0), .tx_in_data({8{edm_pkg::XGMII_IDLE}}), .tx_in_ctrl(8'hFF), .tx_data(), .tx_ctrl(),
      .link_fault, .link_up, .cnt_local_fault(), .cnt_remote_fault()
  );
  assign line = link_fault == 2'd1 ? RF_BLOCK : link_fault == 2'd2 ? IDLE : tx_block;
endmodule

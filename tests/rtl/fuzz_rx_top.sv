// The receive path the RTL fuzzer drives (tests/rtl/fuzz_rx_main.cpp): line
// words -> pcs_block_lock -> descrambler -> edm_rx -> pcs_decoder, with the
// BER monitor on the aligned blocks. rx_rst_n resets only edm_rx and the
// decoder (a new segment of the fuzz stream); lock and descrambler run on.
module fuzz_rx_top (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        rx_rst_n,
    input  logic        in_valid,
    input  logic [65:0] in_word,
    // Block lock and the BER monitor.
    output logic        block_lock,
    output logic [31:0] slips,
    output logic        hi_ber,
    output logic [15:0] cnt_hi_ber,
    // What edm_rx is given this cycle (the descrambler's output).
    output logic        rx_in_valid,
    output logic [65:0] rx_in_block,
    // edm_rx.
    output logic        out_valid,
    output logic [65:0] out_block,
    output logic        mem_valid,
    output logic        mem_first,
    output logic        mem_last,
    output logic        mem_error,
    output logic        mem_abort,
    output logic        notif_valid,
    output logic [edm_pkg::PORT_BITS-1:0] notif_dst,
    output logic [7:0]  notif_msg_id,
    output logic [15:0] notif_size,
    output logic        grant_valid,
    output logic [edm_pkg::PORT_BITS-1:0] grant_dst,
    output logic [7:0]  grant_msg_id,
    output logic [15:0] grant_size,
    output logic        ack_valid,
    output logic [edm_pkg::PORT_BITS-1:0] ack_peer,
    output logic [7:0]  ack_base,
    output logic [edm_pkg::ACK_MAP_W-1:0] ack_map,
    output logic [15:0] cnt_msg_ok,
    output logic [15:0] cnt_corrupted,
    output logic [15:0] cnt_unknown,
    output logic [15:0] cnt_notif_ok,
    output logic [15:0] cnt_grant_ok,
    output logic [15:0] cnt_ack_ok,
    output logic [15:0] cnt_bad_sync,
    output logic [15:0] cnt_ctl_missed,
    output logic [15:0] cnt_ctl_in_data,
    // The decoder: its verdict on what edm_rx forwarded.
    output logic        dec_valid,
    output logic        dec_invalid
);
  logic        locked_valid;
  logic [65:0] locked_block;
  logic [1:0]  sync_d;  // the sync header, beside the descrambler's 1-cycle latency
  logic [63:0] descrambled;
  logic [65:0] mem_block;
  logic [63:0] dec_data;
  logic [7:0]  dec_ctrl;
  logic [15:0] cnt_ber_bad_sync;

  pcs_block_lock lock (
      .clk, .rst_n, .in_valid, .in_word,
      .out_valid(locked_valid), .block(locked_block), .block_lock, .slips);
  pcs_ber_monitor ber (
      .clk, .rst_n, .block_lock, .in_valid(locked_valid), .in_sync(locked_block[1:0]),
      .hi_ber, .cnt_bad_sync(cnt_ber_bad_sync), .cnt_hi_ber);
  pcs_scrambler #(.DESCRAMBLE(1'b1)) descrambler (
      .clk, .rst_n, .in_valid(locked_valid), .in_data(locked_block[65:2]),
      .out_valid(rx_in_valid), .out_data(descrambled));
  always_ff @(posedge clk) if (locked_valid) sync_d <= locked_block[1:0];
  assign rx_in_block = {descrambled, sync_d};

  edm_rx rx (
      .clk, .rst_n(rx_rst_n), .in_valid(rx_in_valid), .in_block(rx_in_block),
      .out_valid, .out_block, .mem_valid, .mem_block, .mem_first, .mem_last, .mem_error, .mem_abort,
      .notif_valid, .notif_dst, .notif_msg_id, .notif_size,
      .grant_valid, .grant_dst, .grant_msg_id, .grant_size,
      .ack_valid, .ack_peer, .ack_base, .ack_map,
      .cnt_msg_ok, .cnt_corrupted, .cnt_unknown, .cnt_notif_ok, .cnt_grant_ok, .cnt_ack_ok, .cnt_bad_sync,
      .cnt_ctl_missed, .cnt_ctl_in_data);
  pcs_decoder decoder (
      .clk, .rst_n(rx_rst_n), .in_valid(out_valid), .block(out_block),
      .out_valid(dec_valid), .xgmii_data(dec_data), .xgmii_ctrl(dec_ctrl), .invalid(dec_invalid));

  // Checked through edm_rx's outputs and the BER monitor's hi_ber.
  logic unused;
  assign unused = ^{mem_block, dec_data, dec_ctrl, cnt_ber_bad_sync};
endmodule

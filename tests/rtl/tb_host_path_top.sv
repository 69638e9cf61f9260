// Test top for tb_host_path.py: one host's transmit path and its partner's
// receive path, with a MAC-side XGMII at both ends for cocotbext-eth:
//   XGMII in -> pcs_encoder -> MAC buffer -> edm_tx (+ memory units) -> scrambler
//   -> LINK_CYCLES delay -> descrambler -> edm_rx -> pcs_decoder -> XGMII out
//                                                 |                -> pcs_link_fault
//                                                 -> memory units out
// The XGMII source has no ready, only a clock enable: the bench drives
// xgmii_tx_en from mac_room each cycle, and a word sent under the enable is
// taken one cycle later (xgmii_tx_en registered: the source updates its
// outputs after the edge that saw the enable). The MAC buffer (8 blocks)
// takes the encoder's blocks while edm_tx holds them (enc_ready low while
// memory preempts); mac_room leaves room for the three words in flight.
// xgmii_rx_valid marks the decoder's words (none where memory blocks were).
module tb_host_path_top #(
    parameter int unsigned LINK_CYCLES = 4
) (
    input  logic        clk,
    input  logic        rst_n,
    // MAC side, transmitting host.
    input  logic [63:0] xgmii_txd,
    input  logic [7:0]  xgmii_txc,
    input  logic        xgmii_tx_en,
    output logic        mac_room,
    // Memory units (whole units, mem_last on a unit's last block).
    input  logic        mem_valid,
    output logic        mem_ready,
    input  logic [65:0] mem_block,
    input  logic        mem_last,
    // MAC side, receiving host.
    output logic [63:0] xgmii_rxd,
    output logic [7:0]  xgmii_rxc,
    output logic        xgmii_rx_valid,
    // Memory units received.
    output logic        rx_mem_valid,
    output logic [65:0] rx_mem_block,
    output logic        rx_mem_first,
    output logic        rx_mem_last,
    output logic        rx_mem_error,
    output logic        rx_mem_abort,
    // The receiving host's reconciliation sublayer (pcs_link_fault) on the
    // decoder's words: its link state and the remote faults it took.
    output logic [1:0]  rx_link_fault,
    output logic        rx_link_up,
    output logic [15:0] cnt_rx_remote_fault,
    // Status: words the encoder or decoder could not code, MAC buffer
    // overflows (must stay 0), the receiver's counters.
    output logic [15:0] cnt_enc_invalid,
    output logic [15:0] cnt_dec_invalid,
    output logic [15:0] cnt_mac_overflow,
    output logic [15:0] cnt_corrupted,
    output logic [15:0] cnt_unknown,
    output logic [15:0] cnt_bad_sync
);
  logic        tx_word_valid;
  logic        enc_valid, enc_invalid, buf_ready, buf_valid, buf_taken;
  logic [65:0] enc_block, buf_block, line_tx, line_rx;
  logic [3:0]  buf_count;

  always_ff @(posedge clk)
    if (!rst_n) tx_word_valid <= 1'b0;
    else tx_word_valid <= xgmii_tx_en;

  pcs_encoder encoder (
      .clk, .rst_n, .in_valid(tx_word_valid), .xgmii_data(xgmii_txd), .xgmii_ctrl(xgmii_txc),
      .out_valid(enc_valid), .block(enc_block), .invalid(enc_invalid)
  );
  edm_fifo #(.WIDTH(66), .DEPTH_LOG2(3)) mac_buffer (
      .clk, .rst_n, .wr_valid(enc_valid), .wr_ready(buf_ready), .wr_data(enc_block),
      .rd_valid(buf_valid), .rd_ready(buf_taken), .rd_data(buf_block), .count(buf_count)
  );
  assign mac_room = buf_count <= 4'd4;

  edm_tx #(.STRICT(1'b0)) host_tx (
      .clk, .rst_n,
      .enc_valid(buf_valid), .enc_ready(buf_taken), .enc_block(buf_block),
      .mem_valid, .mem_ready, .mem_block, .mem_last,
      .out_block(line_tx), .out_is_memory(), .buffered()
  );

  tb_scrambled_link #(.LINK_CYCLES(LINK_CYCLES)) link (
      .clk, .rst_n, .tx(line_tx), .flip('0), .rx(line_rx), .line()
  );

  logic        dec_in_valid, dec_invalid;
  logic [65:0] dec_in_block;
  edm_rx partner_rx (
      .clk, .rst_n, .in_valid(1'b1), .in_block(line_rx),
      .out_valid(dec_in_valid), .out_block(dec_in_block),
      .mem_valid(rx_mem_valid), .mem_block(rx_mem_block), .mem_first(rx_mem_first), .mem_last(rx_mem_last),
      .mem_error(rx_mem_error), .mem_abort(rx_mem_abort),
      .notif_valid(), .notif_dst(), .notif_msg_id(), .notif_size(),
      .grant_valid(), .grant_dst(), .grant_msg_id(), .grant_size(),
      .ack_valid(), .ack_peer(), .ack_base(), .ack_map(),
      .cnt_msg_ok(), .cnt_corrupted, .cnt_unknown, .cnt_notif_ok(), .cnt_grant_ok(), .cnt_ack_ok(), .cnt_bad_sync,
      .cnt_ctl_missed(), .cnt_ctl_in_data()
  );
  pcs_decoder decoder (
      .clk, .rst_n, .in_valid(dec_in_valid), .block(dec_in_block),
      .out_valid(xgmii_rx_valid), .xgmii_data(xgmii_rxd), .xgmii_ctrl(xgmii_rxc), .invalid(dec_invalid)
  );

  // Its transmit side has no line here: the MAC words it would send are idles.
  pcs_link_fault partner_rs (
      .clk, .rst_n, .rx_valid(xgmii_rx_valid), .rx_data(xgmii_rxd), .rx_ctrl(xgmii_rxc), .pcs_fault(1'b0),
      .tx_valid(1'b1), .tx_in_data({8{edm_pkg::XGMII_IDLE}}), .tx_in_ctrl(8'hFF), .tx_data(), .tx_ctrl(),
      .link_fault(rx_link_fault), .link_up(rx_link_up), .cnt_local_fault(), .cnt_remote_fault(cnt_rx_remote_fault)
  );

  always_ff @(posedge clk)
    if (!rst_n) begin
      cnt_enc_invalid <= '0;
      cnt_dec_invalid <= '0;
      cnt_mac_overflow <= '0;
    end else begin
      cnt_enc_invalid <= edm_pkg::sat_add(cnt_enc_invalid, {1'b0, enc_valid && enc_invalid});
      cnt_dec_invalid <= edm_pkg::sat_add(cnt_dec_invalid, {1'b0, xgmii_rx_valid && dec_invalid});
      cnt_mac_overflow <= edm_pkg::sat_add(cnt_mac_overflow, {1'b0, enc_valid && !buf_ready});
    end
endmodule

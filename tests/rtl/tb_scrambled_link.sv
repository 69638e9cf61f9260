// One direction of a test link, shared by the test tops (tb_fabric_top,
// tb_host_path_top).
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

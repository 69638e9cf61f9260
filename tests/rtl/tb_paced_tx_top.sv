// edm_idle_pacer in front of edm_tx's memory port, for tb_idle_pacer.py
// (UNPACED = 1 bypasses it, to show the line it prevents).
module tb_paced_tx_top #(
    parameter bit UNPACED = 1'b0
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        enc_valid,
    output logic        enc_ready,
    input  logic [65:0] enc_block,
    input  logic        mem_valid,
    output logic        mem_ready,
    input  logic [65:0] mem_block,
    input  logic        mem_last,
    output logic [65:0] out_block,
    output logic [2:0]  buffered,
    output logic [15:0] cnt_paced
);
  logic tx_valid, tx_ready, paced_ready, out_is_memory;

  edm_idle_pacer pacer (
      .clk, .rst_n, .line_block(out_block), .src_valid(mem_valid), .src_ready(paced_ready),
      .tx_valid, .tx_ready, .cnt_paced);
  edm_tx tx (
      .clk, .rst_n, .enc_valid, .enc_ready, .enc_block, .mem_valid(UNPACED ? mem_valid : tx_valid), .mem_ready(tx_ready),
      .mem_block, .mem_last, .out_block, .out_is_memory, .buffered);

  assign mem_ready = UNPACED ? tx_ready : paced_ready;

  logic unused;
  assign unused = out_is_memory;
endmodule

// One switch egress toward its link: the EDM datapath's block of the cycle
// (edm_switch's out_block: a unit's blocks, its idle fillers, /G/, idles) and
// the port's Ethernet frames (the L2 stage's queue) merged by the hosts' own
// transmit mux, edm_tx, with STRICT = 1: the switch's blocks cannot be held,
// so memory goes first whenever it has a block; a unit is kept whole (open
// from /MS/ to /MT/, its fillers stay in it) and preempts a frame only
// between two of the frame's blocks. Frame blocks wait in edm_tx's 4-block
// buffer (enc_ready holds the queue). Adds edm_tx's one register.
module edm_switch_egress (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [65:0] edm_block,     // the datapath's block (one every cycle)
    input  logic        frame_valid,
    output logic        frame_ready,
    input  logic [65:0] frame_block,
    output logic [65:0] line_block
);
  localparam logic [65:0] IDLE = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  logic is_idle, is_ms, is_mt, open_unit, is_mem, is_last;
  assign is_idle = edm_block == IDLE;
  assign is_ms = edm_block[1:0] == edm_pkg::SYNC_CTRL && edm_block[9:2] == edm_pkg::BT_EDM
                 && edm_block[17:10] == edm_pkg::SUB_MS;
  assign is_mt = edm_block[1:0] == edm_pkg::SYNC_CTRL && edm_block[9:2] == edm_pkg::BT_EDM
                 && edm_block[17:10] == edm_pkg::SUB_MT;
  assign is_mem = open_unit || !is_idle;
  assign is_last = open_unit ? is_mt : !is_ms;
  always_ff @(posedge clk)
    if (!rst_n) open_unit <= 1'b0;
    else if (is_ms) open_unit <= 1'b1;
    else if (is_mt) open_unit <= 1'b0;
  /* verilator lint_off PINCONNECTEMPTY */
  edm_tx #(.STRICT(1'b1)) mux (
      .clk, .rst_n,
      .enc_valid(frame_valid), .enc_ready(frame_ready), .enc_block(frame_block),
      .mem_valid(is_mem), .mem_ready(), .mem_block(edm_block), .mem_last(is_last),
      .out_block(line_block), .out_is_memory(), .buffered()
  );
  /* verilator lint_on PINCONNECTEMPTY */
endmodule

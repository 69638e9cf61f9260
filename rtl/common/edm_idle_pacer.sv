// The sender's idle rule (docs/faults.md §1): in front of edm_tx's memory
// port, it holds memory units back once PACE_AFTER blocks have gone on the
// line without an all-idle block, until one has. Held mid-unit, edm_tx sends
// an idle filler at once; otherwise a frame in progress finishes and its gap
// idle goes out. So every IDLE_PERIOD_BLOCKS blocks on the line hold an idle,
// which a receiver with a slower clock deletes (pcs_rate_match). PACE_AFTER
// leaves room for the longest frame (ETH_MAX_FRAME_BYTES) and edm_tx's output
// register.
module edm_idle_pacer #(
    parameter int unsigned PACE_AFTER = edm_pkg::IDLE_PERIOD_BLOCKS - 2
                                      - (edm_pkg::ETH_PREAMBLE_BYTES + edm_pkg::ETH_MAX_FRAME_BYTES) / 8 - 1
) (
    input  logic        clk,
    input  logic        rst_n,
    // edm_tx's output: the line.
    input  logic [65:0] line_block,
    // From the memory-unit source, toward edm_tx's mem_valid / mem_ready.
    input  logic        src_valid,
    output logic        src_ready,
    output logic        tx_valid,
    input  logic        tx_ready,
    output logic [15:0] cnt_paced  // cycles memory was held back
);
  localparam logic [65:0] IDLE_BLOCK = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  localparam int unsigned RUN_W = $clog2(PACE_AFTER + 1);

  logic [RUN_W-1:0] since_idle;  // held at PACE_AFTER
  logic hold;

  assign hold      = since_idle == RUN_W'(PACE_AFTER);
  assign tx_valid  = src_valid && !hold;
  assign src_ready = tx_ready && !hold;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      since_idle <= '0;
      cnt_paced <= '0;
    end else begin
      if (line_block == IDLE_BLOCK) since_idle <= '0;
      else if (!hold) since_idle <= since_idle + 1'b1;
      cnt_paced <= edm_pkg::sat_add(cnt_paced, {1'b0, hold && src_valid});
    end
  end
endmodule

// Lost-grant recovery at a switch ingress (docs/faults.md §5): the ingress's
// oldest circuit (set up by a grant) is given up when no unit has arrived on
// it for TIMEOUT_CYCLES cycles while nothing of this ingress is still on its
// way to an egress: its grant, or the data it asked for, was lost (or the
// grant was surplus to a re-sent /N/). Hosts answer grants in order and a
// unit only starts once its grant arrived, so a circuit that waits idle that
// long would otherwise hold the ingress's later units (and the egress's
// copy) for ever. TIMEOUT_CYCLES = 0: never. The same reasoning gives the
// head up at once when a unit for a later circuit has come (stale).
module edm_circuit_timeout #(
    parameter int unsigned TIMEOUT_CYCLES = 0
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        head_valid,  // a circuit waits for its unit
    input  logic        busy,        // a unit is arriving, or blocks of this ingress are still queued
    input  logic        head_used,   // the circuit's unit ended (popped by the datapath)
    input  logic        stale,       // a later circuit's unit came: give the head up now
    output logic        give_up,     // pop the circuit (both copies) now
    output logic [15:0] cnt_given_up
);
  localparam int unsigned W = TIMEOUT_CYCLES > 1 ? $clog2(TIMEOUT_CYCLES + 1) : 1;
  logic [W-1:0] idle;  // cycles the head has waited with nothing of its ingress under way

  assign give_up = head_valid && !head_used
                   && (stale || (TIMEOUT_CYCLES != 0 && !busy && idle >= W'(TIMEOUT_CYCLES - 1)));

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      idle <= '0;
      cnt_given_up <= '0;
    end else begin
      idle <= (!head_valid || busy || head_used || give_up) ? '0 : idle + 1'b1;
      cnt_given_up <= edm_pkg::sat_add(cnt_given_up, {1'b0, give_up});
    end
  end
endmodule

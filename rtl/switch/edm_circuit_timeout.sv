// Lost-grant recovery at a switch ingress (docs/faults.md §5): gives up the ingress's oldest circuit once its unit can no longer come.
//
// head_valid: the oldest circuit waits for its unit and its control unit (the
// /G/ or forwarded request that asks the host for it) has left; one still
// queued at the egress cannot have been answered. busy: something of this
// ingress is under way (a unit arriving, blocks queued) or a control unit has
// just left toward this host. The head is given up once the ingress has been
// quiet (a head waiting, not busy) for TIMEOUT_CYCLES cycles: hosts answer
// grants in order, so every circuit whose control unit is that old and that
// still waits was lost (its grant, or the data it asked for; or it was
// surplus to a re-sent /N/). A give-up does not restart the wait: the next
// oldest circuit, whose control unit left before the quiet time began, is
// just as surely lost and goes in the next cycle, so k lost grants hold their
// ports (the zero-queue parking, a port's control units) one timeout, not k.
// TIMEOUT_CYCLES = 0: never. The same reasoning gives the head up at once
// when a unit for a later circuit has come (stale). For speed, the wait's
// end is a register (quiet_long, loaded from the count's next value) and the
// counter lags its give-ups by a cycle (registered first, as the switch's
// other counters), so give_up is a few gates from its inputs.
module edm_circuit_timeout #(
    parameter int unsigned TIMEOUT_CYCLES = 0
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        head_valid,  // the oldest circuit's control unit has left; it waits for its unit
    input  logic        busy,        // a unit arriving, blocks of this ingress queued, a control unit just sent
    input  logic        head_used,   // the circuit's unit ended (popped by the datapath)
    input  logic        stale,       // a later circuit's unit came: give the head up now
    output logic        give_up,     // pop the circuit (both copies) now
    output logic [15:0] cnt_given_up   // a cycle behind the give-ups, as the switch's counters
);
  localparam int unsigned W = TIMEOUT_CYCLES > 1 ? $clog2(TIMEOUT_CYCLES + 1) : 1;
  localparam logic [W-1:0] LONG = W'(TIMEOUT_CYCLES > 1 ? TIMEOUT_CYCLES - 1 : 0);
  logic [W-1:0] idle;         // quiet cycles, up to LONG
  logic         restart;      // the quiet time restarts
  logic         quiet_long;   // idle == LONG
  logic         given_up_q;   // give_up, a cycle later

  assign give_up = head_valid && !head_used && (stale || (TIMEOUT_CYCLES != 0 && !busy && quiet_long));
  assign restart = !head_valid || busy || head_used;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      idle <= '0;
      quiet_long <= LONG == '0;
      given_up_q <= 1'b0;
      cnt_given_up <= '0;
    end else begin
      idle <= restart ? '0 : (idle != LONG ? idle + 1'b1 : idle);
      // = (idle's next value == LONG), the compares on the register (idle
      // saturates at LONG), the late restart only gating them.
      quiet_long <= LONG == '0 || (!restart && idle >= LONG - 1'b1);
      given_up_q <= give_up;
      cnt_given_up <= edm_pkg::sat_add(cnt_given_up, {1'b0, given_up_q});
    end
  end
endmodule

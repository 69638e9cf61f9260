// BER monitor (IEEE 802.3 Clause 49, figure 49-13, in clock cycles): counts
// invalid sync headers of a locked receiver in windows of WINDOW_CYCLES
// cycles (802.3: 125 us, 48828 cycles of the 2.56 ns PCS clock) and raises
// hi_ber, which disables the link (paper §3.3), as soon as THRESHOLD of them
// fall in one window (802.3: 16). hi_ber stays up until a whole window ends
// with fewer. A receiver out of block lock restarts the monitor (hi_ber low,
// as in 802.3: the lost lock already takes the link down).
module pcs_ber_monitor #(
    parameter int unsigned WINDOW_CYCLES = 48828,
    parameter int unsigned THRESHOLD = 16
) (
    input  logic        clk,
    input  logic        rst_n,
    // From block lock: aligned blocks and whether they are.
    input  logic        block_lock,
    input  logic        in_valid,
    input  logic [1:0]  in_sync,
    // Link disable, and status counters (16-bit, saturating).
    output logic        hi_ber,
    output logic [15:0] cnt_bad_sync,
    output logic [15:0] cnt_hi_ber  // times hi_ber rose
);
  localparam int unsigned TIMER_W = $clog2(WINDOW_CYCLES);
  localparam int unsigned COUNT_W = $clog2(THRESHOLD + 1);

  logic [TIMER_W-1:0] timer;
  logic [COUNT_W-1:0] bad_in_window;  // held at THRESHOLD
  logic bad, window_end, over;

  assign bad        = block_lock && in_valid && in_sync != edm_pkg::SYNC_DATA && in_sync != edm_pkg::SYNC_CTRL;
  assign window_end = timer == TIMER_W'(WINDOW_CYCLES - 1);
  assign over       = bad_in_window + COUNT_W'(bad) >= COUNT_W'(THRESHOLD);

  always_ff @(posedge clk) begin
    if (!rst_n || !block_lock) begin
      timer <= '0;
      bad_in_window <= '0;
      hi_ber <= 1'b0;
    end else begin
      timer <= window_end ? '0 : timer + 1'b1;
      if (window_end) bad_in_window <= '0;
      else if (!over) bad_in_window <= bad_in_window + COUNT_W'(bad);
      else bad_in_window <= COUNT_W'(THRESHOLD);
      if (over) hi_ber <= 1'b1;
      else if (window_end) hi_ber <= 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      cnt_bad_sync <= '0;
      cnt_hi_ber <= '0;
    end else begin
      cnt_bad_sync <= edm_pkg::sat_add(cnt_bad_sync, {1'b0, bad});
      cnt_hi_ber <= edm_pkg::sat_add(cnt_hi_ber, {1'b0, block_lock && over && !hi_ber});
    end
  end
endmodule

// Link disable on a high bit-error rate (paper §3.3, docs/faults.md §2): the
// receiver's pcs_ber_monitor and a gate that, while the link is down, turns
// every received block into an idle, so nothing from a noisy link reaches the
// EDM receiver (a switch port then gets no notification, request or data from
// it). The link is down while this end's hi_ber is up or the partner reports
// its own (remote_down: 802.3's remote fault, here a wire synchronised into
// this clock); link_down tells the local sender to stop. Nothing is registered
// on the data path, so a working link's latency is unchanged. The fabric has
// no block lock of its own (aligned by construction): the monitor runs locked.
module pcs_link_guard #(
    parameter int unsigned WINDOW_CYCLES = 48828,
    parameter int unsigned THRESHOLD = 16
) (
    input  logic        clk,
    input  logic        rst_n,
    // Received blocks (descrambled; the sync header as on the line).
    input  logic        in_valid,
    input  logic [65:0] in_block,
    output logic        out_valid,
    output logic [65:0] out_block,
    // Link state.
    input  logic        remote_down,  // the partner's hi_ber, from any clock
    output logic        hi_ber,       // this receiver's
    output logic        link_down,
    // Status counters (16-bit, saturating).
    output logic [15:0] cnt_bad_sync,
    output logic [15:0] cnt_hi_ber,    // times this receiver's hi_ber rose
    output logic [15:0] cnt_discarded  // non-idle blocks turned into idles while down
);
  localparam logic [65:0] IDLE_BLOCK = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};

  pcs_ber_monitor #(.WINDOW_CYCLES(WINDOW_CYCLES), .THRESHOLD(THRESHOLD)) monitor (
      .clk, .rst_n, .block_lock(1'b1), .in_valid, .in_sync(in_block[1:0]),
      .hi_ber, .cnt_bad_sync, .cnt_hi_ber
  );

  logic [1:0] remote_sync;  // two flops: remote_down comes from the partner's clock
  always_ff @(posedge clk)
    if (!rst_n) remote_sync <= '0;
    else remote_sync <= {remote_sync[0], remote_down};

  assign link_down = hi_ber || remote_sync[1];
  assign out_valid = in_valid;
  assign out_block = link_down ? IDLE_BLOCK : in_block;

  always_ff @(posedge clk)
    if (!rst_n) cnt_discarded <= '0;
    else cnt_discarded <= edm_pkg::sat_add(cnt_discarded, {1'b0, in_valid && link_down && in_block != IDLE_BLOCK});
endmodule

// Rate matching between the recovered receive clock and the local clock
// (802.3 Clause 49/82 style, docs/faults.md §1): an elastic buffer
// (edm_fifo_async_level) that deletes idle blocks when it runs full and repeats
// an idle block when it runs empty. Only whole all-idle blocks (BT_C8, eight
// /I/) are deleted or inserted, and an idle is inserted only right after an
// idle, so no EDM block (/MS/ /MD/ /MT/ /N/ /G/) or frame block is ever
// dropped, split or separated by a block where none was: idles are legal only
// between frames and as fillers inside memory units, and so are the copies.
//   Write side (in_clk): an idle is deleted when the writer's level is at
//   least 3/4 full (or the buffer is full). Any other block that finds the
//   buffer full is lost and counted (cnt_overflow): it cannot happen while
//   the sender keeps the idle density below. Runs of IDLE_PERIOD blocks
//   without an idle break the sender's rule (edm_pkg::IDLE_PERIOD_BLOCKS) and
//   are counted (cnt_idle_starved).
//   Read side (out_clk): starts once half full, then one block per cycle; an
//   idle is repeated while the reader's level is at most 1/4 full and the
//   block just sent was an idle. Finding the buffer empty (cnt_underflow)
//   leaves out_valid low and waits until it is half full again.
// Counters are 16-bit, saturating, each in its own clock domain.
module pcs_rate_match #(
    parameter int unsigned DEPTH_LOG2 = 5,
    parameter int unsigned IDLE_PERIOD = edm_pkg::IDLE_PERIOD_BLOCKS
) (
    // Receive side: blocks at the link partner's rate (recovered clock).
    input  logic        in_clk,
    input  logic        in_rst_n,
    input  logic        in_valid,
    input  logic [65:0] in_block,
    output logic [15:0] cnt_deleted,
    output logic [15:0] cnt_overflow,
    output logic [15:0] cnt_idle_starved,
    // Local side: one block per local clock once started.
    input  logic        out_clk,
    input  logic        out_rst_n,
    output logic        out_valid,
    output logic [65:0] out_block,
    output logic [15:0] cnt_inserted,
    output logic [15:0] cnt_underflow
);
  localparam logic [65:0] IDLE_BLOCK = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};
  localparam logic [DEPTH_LOG2:0] HIGH = (DEPTH_LOG2+1)'(3 << (DEPTH_LOG2 - 2));
  localparam logic [DEPTH_LOG2:0] HALF = (DEPTH_LOG2+1)'(1 << (DEPTH_LOG2 - 1));
  localparam logic [DEPTH_LOG2:0] LOW  = (DEPTH_LOG2+1)'(1 << (DEPTH_LOG2 - 2));
  localparam int unsigned RUN_W = $clog2(IDLE_PERIOD + 1);

  logic              wr_ready, rd_valid, rd_ready;
  logic [65:0]       rd_data;
  logic [DEPTH_LOG2:0] wr_level, rd_level;
  logic              in_idle, delete, push;

  assign in_idle = in_block == IDLE_BLOCK;
  assign delete  = in_valid && in_idle && (wr_level >= HIGH || !wr_ready);
  assign push    = in_valid && !delete;

  edm_fifo_async_level #(.WIDTH(66), .DEPTH_LOG2(DEPTH_LOG2)) elastic (
      .wr_clk(in_clk), .wr_rst_n(in_rst_n), .wr_valid(push), .wr_ready, .wr_data(in_block), .wr_level,
      .rd_clk(out_clk), .rd_rst_n(out_rst_n), .rd_valid, .rd_ready, .rd_data, .rd_level
  );

  // ---- Write side ----
  logic [RUN_W-1:0] run;  // blocks since the last idle, held at IDLE_PERIOD
  always_ff @(posedge in_clk) begin
    if (!in_rst_n) begin
      run <= '0;
      cnt_deleted <= '0;
      cnt_overflow <= '0;
      cnt_idle_starved <= '0;
    end else if (in_valid) begin
      if (in_idle) run <= '0;
      else if (run != RUN_W'(IDLE_PERIOD)) run <= run + 1'b1;
      cnt_deleted <= edm_pkg::sat_add(cnt_deleted, {1'b0, delete});
      cnt_overflow <= edm_pkg::sat_add(cnt_overflow, {1'b0, push && !wr_ready});
      cnt_idle_starved <= edm_pkg::sat_add(cnt_idle_starved,
                                           {1'b0, !in_idle && run == RUN_W'(IDLE_PERIOD - 1)});
    end
  end

  // ---- Read side ----
  logic started, sent_idle, insert;
  assign insert   = sent_idle && rd_level <= LOW;
  assign rd_ready = started && !insert;
  always_ff @(posedge out_clk) begin
    if (!out_rst_n) begin
      started <= 1'b0;
      sent_idle <= 1'b0;
      out_valid <= 1'b0;
      out_block <= IDLE_BLOCK;
      cnt_inserted <= '0;
      cnt_underflow <= '0;
    end else begin
      out_valid <= 1'b0;
      if (!started) begin
        started <= rd_level >= HALF;
      end else if (insert) begin
        out_valid <= 1'b1;
        out_block <= IDLE_BLOCK;
        cnt_inserted <= edm_pkg::sat_add(cnt_inserted, 2'd1);
      end else if (rd_valid) begin
        out_valid <= 1'b1;
        out_block <= rd_data;
        sent_idle <= rd_data == IDLE_BLOCK;
      end else begin
        started <= 1'b0;
        cnt_underflow <= edm_pkg::sat_add(cnt_underflow, 2'd1);
      end
    end
  end
endmodule

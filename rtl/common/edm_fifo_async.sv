// The dual-clock variant of edm_fifo (same ports, split per clock domain):
// Gray-coded pointers cross domains through two-flop synchronisers, so full
// and empty are pessimistic for two cycles but never wrong. First-word
// fall-through on the read side. edm_fifo_async_level (below) is the same
// FIFO that also reports each side's view of its fill level (pcs_rate_match).
module edm_fifo_async #(
    parameter int unsigned WIDTH = 66,
    parameter int unsigned DEPTH_LOG2 = 2
) (
    input  logic             wr_clk,
    input  logic             wr_rst_n,
    input  logic             wr_valid,
    output logic             wr_ready,
    input  logic [WIDTH-1:0] wr_data,
    input  logic             rd_clk,
    input  logic             rd_rst_n,
    output logic             rd_valid,
    input  logic             rd_ready,
    output logic [WIDTH-1:0] rd_data
);
  /* verilator lint_off PINCONNECTEMPTY */
  edm_fifo_async_level #(.WIDTH(WIDTH), .DEPTH_LOG2(DEPTH_LOG2)) fifo (
      .wr_clk, .wr_rst_n, .wr_valid, .wr_ready, .wr_data, .wr_level(),
      .rd_clk, .rd_rst_n, .rd_valid, .rd_ready, .rd_data, .rd_level()
  );
  /* verilator lint_on PINCONNECTEMPTY */
endmodule

/* verilator lint_off DECLFILENAME */  // kept beside its wrapper so no file list changes
// edm_fifo_async with fill levels: wr_level (write domain) counts the entries
// against the synchronised read pointer, so it may be up to three reads too
// high; rd_level (read domain) may be up to three writes too low. Both are
// therefore safe bounds: the writer never sees room that is not there, the
// reader never sees an entry that is not there.
module edm_fifo_async_level #(
    parameter int unsigned WIDTH = 66,
    parameter int unsigned DEPTH_LOG2 = 2
) (
    input  logic                wr_clk,
    input  logic                wr_rst_n,
    input  logic                wr_valid,
    output logic                wr_ready,
    input  logic [WIDTH-1:0]    wr_data,
    output logic [DEPTH_LOG2:0] wr_level,
    input  logic                rd_clk,
    input  logic                rd_rst_n,
    output logic                rd_valid,
    input  logic                rd_ready,
    output logic [WIDTH-1:0]    rd_data,
    output logic [DEPTH_LOG2:0] rd_level
);
  /* verilator lint_on DECLFILENAME */
  localparam int unsigned AW = DEPTH_LOG2;

  logic [WIDTH-1:0] mem [1 << AW];
  logic [AW:0] wr_bin, wr_gray, rd_bin, rd_gray;
  logic [AW:0] rd_gray_w1, rd_gray_w2;  // read pointer seen by the writer
  logic [AW:0] wr_gray_r1, wr_gray_r2;  // write pointer seen by the reader

  function automatic [AW:0] to_gray(input [AW:0] b);
    to_gray = b ^ (b >> 1);
  endfunction

  function automatic [AW:0] from_gray(input [AW:0] g);
    from_gray = g;
    for (integer i = AW - 1; i >= 0; i--) from_gray[i] = from_gray[i + 1] ^ g[i];
  endfunction

  // Full: the writer is a whole FIFO ahead (top two Gray bits differ, rest equal).
  assign wr_ready = wr_gray != {~rd_gray_w2[AW:AW-1], rd_gray_w2[AW-2:0]};
  assign rd_valid = rd_gray != wr_gray_r2;
  assign rd_data  = mem[rd_bin[AW-1:0]];
  assign wr_level = wr_bin - from_gray(rd_gray_w2);
  assign rd_level = from_gray(wr_gray_r2) - rd_bin;

  always_ff @(posedge wr_clk) begin
    if (!wr_rst_n) begin
      wr_bin <= '0;
      wr_gray <= '0;
      rd_gray_w1 <= '0;
      rd_gray_w2 <= '0;
    end else begin
      {rd_gray_w2, rd_gray_w1} <= {rd_gray_w1, rd_gray};
      if (wr_valid && wr_ready) begin
        mem[wr_bin[AW-1:0]] <= wr_data;
        wr_bin <= wr_bin + 1'b1;
        wr_gray <= to_gray(wr_bin + 1'b1);
      end
    end
  end

  always_ff @(posedge rd_clk) begin
    if (!rd_rst_n) begin
      rd_bin <= '0;
      rd_gray <= '0;
      wr_gray_r1 <= '0;
      wr_gray_r2 <= '0;
    end else begin
      {wr_gray_r2, wr_gray_r1} <= {wr_gray_r1, wr_gray};
      if (rd_valid && rd_ready) begin
        rd_bin <= rd_bin + 1'b1;
        rd_gray <= to_gray(rd_bin + 1'b1);
      end
    end
  end
endmodule

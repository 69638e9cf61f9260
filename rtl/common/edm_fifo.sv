// One synchronous FIFO for the whole design: valid/ready on both sides,
// registered storage, first-word fall-through read (rd_data valid with rd_valid).
module edm_fifo #(
    parameter int unsigned WIDTH = 66,
    parameter int unsigned DEPTH_LOG2 = 2
) (
    input  logic                  clk,
    input  logic                  rst_n,
    input  logic                  wr_valid,
    output logic                  wr_ready,
    input  logic [WIDTH-1:0]      wr_data,
    output logic                  rd_valid,
    input  logic                  rd_ready,
    output logic [WIDTH-1:0]      rd_data,
    output logic [DEPTH_LOG2:0]   count
);
  localparam int unsigned DEPTH = 1 << DEPTH_LOG2;

  logic [WIDTH-1:0] mem [DEPTH];
  // One extra pointer bit tells full from empty.
  logic [DEPTH_LOG2:0] wr_ptr, rd_ptr;

  assign count    = wr_ptr - rd_ptr;
  assign wr_ready = count != DEPTH[DEPTH_LOG2:0];
  assign rd_valid = count != '0;
  assign rd_data  = mem[rd_ptr[DEPTH_LOG2-1:0]];

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wr_ptr <= '0;
      rd_ptr <= '0;
    end else begin
      if (wr_valid && wr_ready) begin
        mem[wr_ptr[DEPTH_LOG2-1:0]] <= wr_data;
        wr_ptr <= wr_ptr + 1'b1;
      end
      if (rd_valid && rd_ready) rd_ptr <= rd_ptr + 1'b1;
    end
  end
endmodule

// One synchronous FIFO for the whole design: valid/ready on both sides,
// registered storage, first-word fall-through read (rd_data valid with rd_valid).
module edm_fifo #(
    parameter int unsigned WIDTH = 66,
    parameter int unsigned DEPTH_LOG2 = 2,
    // 1: rd_data from a register (a copy of the head, loaded from the RAM a
    // cycle ahead), not from the RAM's read port, whose access time would
    // start every path through the head, and rd_valid and wr_ready from
    // flip-flops, not from pointer compares; same behaviour, cycle for cycle,
    // for WIDTH + DEPTH_LOG2 + 3 more flip-flops.
    parameter bit          REG_HEAD = 1'b0
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
  logic wr_en, rd_en;

  // Full and empty from the pointers' bits, not from the count's subtraction,
  // so no carry chain is in front of the logic that rd_valid steers.
  assign count    = wr_ptr - rd_ptr;
  assign wr_en    = wr_valid && wr_ready;
  assign rd_en    = rd_valid && rd_ready;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wr_ptr <= '0;
      rd_ptr <= '0;
    end else begin
      if (wr_en) begin
        mem[wr_ptr[DEPTH_LOG2-1:0]] <= wr_data;
        wr_ptr <= wr_ptr + 1'b1;
      end
      if (rd_en) rd_ptr <= rd_ptr + 1'b1;
    end
  end

  if (REG_HEAD) begin : g_head
    // The head after this edge is entry rd_ptr + rd_en: the word written now
    // if that entry is the one being written, else its RAM word (read at a
    // registered address, rd_ptr + 1, beside the pop rather than after it).
    logic [WIDTH-1:0]    head;
    logic [DEPTH_LOG2:0] rd_ptr1, wr_ptr1;   // rd_ptr + 1, wr_ptr + 1
    logic                nonempty, not_full;   // from the pointers' next values
    always_ff @(posedge clk) begin
      if (!rst_n) begin
        rd_ptr1 <= 1;
        wr_ptr1 <= 1;
        nonempty <= 1'b0;
        not_full <= 1'b1;
      end else begin
        if (rd_en) rd_ptr1 <= rd_ptr1 + 1'b1;
        if (wr_en) wr_ptr1 <= wr_ptr1 + 1'b1;
        // Empty after this edge only if the last entry is read and none
        // written; full only if the last free one is written and none read.
        nonempty <= wr_en || (nonempty && !(rd_en && wr_ptr == rd_ptr1));
        not_full <= rd_en || (not_full && !(wr_en && wr_ptr1 == {~rd_ptr[DEPTH_LOG2], rd_ptr[DEPTH_LOG2-1:0]}));
      end
      if (rd_en) head <= (wr_en && wr_ptr == rd_ptr1) ? wr_data : mem[rd_ptr1[DEPTH_LOG2-1:0]];
      else if (wr_en && wr_ptr == rd_ptr) head <= wr_data;
    end
    assign rd_data = head;
    assign rd_valid = nonempty;
    assign wr_ready = not_full;
  end else begin : g_ram_head
    assign rd_data = mem[rd_ptr[DEPTH_LOG2-1:0]];
    assign rd_valid = wr_ptr != rd_ptr;
    assign wr_ready = wr_ptr != {~rd_ptr[DEPTH_LOG2], rd_ptr[DEPTH_LOG2-1:0]};
  end
endmodule

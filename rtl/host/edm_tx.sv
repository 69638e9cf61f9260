// EDM TX multiplexer, between the 64b/66b encoder and the scrambler (§3.2.3).
// Memory blocks (/MS/ /MD/ /MT/ /N/ /G/ units) take the place of idle blocks and
// preempt Ethernet frames between any two of their blocks. A memory unit is
// never split (if its source stalls mid-unit, idle fillers go out, which the
// receiver skips). Frame blocks wait in a 4-block buffer; when it is full the
// encoder is held (enc_ready low), which back-pressures the MAC.
//   STRICT = 1: memory first whenever a unit waits.
//   STRICT = 0 (fair, the paper's default): after a memory unit, one waiting
//   frame block goes before the next unit.
module edm_tx #(
    parameter bit STRICT = 1'b0
) (
    input  logic        clk,
    input  logic        rst_n,
    // Encoder side: every block the encoder makes (frames and idles).
    input  logic        enc_valid,
    output logic        enc_ready,
    input  logic [65:0] enc_block,
    // Memory side: the blocks of whole units, mem_last on a unit's last block.
    input  logic        mem_valid,
    output logic        mem_ready,
    input  logic [65:0] mem_block,
    input  logic        mem_last,
    // Toward the scrambler: one block per cycle.
    output logic [65:0] out_block,
    output logic        out_is_memory,
    output logic [2:0]  buffered  // frame blocks waiting (at most 4)
);
  localparam logic [65:0] IDLE_BLOCK = {56'b0, edm_pkg::BT_C8, edm_pkg::SYNC_CTRL};

  logic        buf_valid, buf_ready;
  logic [65:0] buf_block;
  logic        in_unit;     // a memory unit has started and not ended
  logic        owe_frame;   // fair: a frame block is owed after a unit
  logic        head_is_idle, send_memory, send_frame;

  edm_fifo #(.WIDTH(66), .DEPTH_LOG2(2)) frame_buffer (
      .clk, .rst_n,
      .wr_valid(enc_valid), .wr_ready(enc_ready), .wr_data(enc_block),
      .rd_valid(buf_valid), .rd_ready(buf_ready), .rd_data(buf_block),
      .count(buffered)
  );

  assign head_is_idle = buf_valid && buf_block == IDLE_BLOCK;
  always_comb begin
    send_memory = 1'b0;
    if (in_unit) send_memory = mem_valid;
    else if (mem_valid)
      send_memory = !buf_valid || head_is_idle || STRICT || !owe_frame;
  end
  assign send_frame = !send_memory && !in_unit && buf_valid;
  // An idle at the head of the buffer is dropped when memory takes its slot.
  assign buf_ready  = send_frame || (send_memory && head_is_idle);
  assign mem_ready  = send_memory;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      in_unit <= 1'b0;
      owe_frame <= 1'b0;
      out_block <= IDLE_BLOCK;
      out_is_memory <= 1'b0;
    end else begin
      out_is_memory <= send_memory;
      if (send_memory) begin
        out_block <= mem_block;
        in_unit <= !mem_last;
        owe_frame <= mem_last;
      end else if (send_frame) begin
        out_block <= buf_block;
        owe_frame <= 1'b0;
      end else begin
        out_block <= IDLE_BLOCK;  // nothing to send, or a stalled unit's filler
      end
    end
  end
endmodule

// CRC-32C of a memory unit, one block per cycle (combinational step). Shared by
// the receiver (edm_rx, which checks it) and edm_unit_emitter, the unit
// generator of edm_compute_node and edm_mem_node (which puts it in the /MT/).
//
// The unit's bytes arrive 6 (/MS/), 8 per /MD/ (3..8 in the last) and 0..2
// (/MT/). Rather than a CRC engine for every byte count, the engine always
// takes whole 8-byte words of the byte string
//   Z = z zero bytes || M with bytes 0..3 inverted,  z = -|M| mod 8,
// whose length is a multiple of 8. With the register starting at 0, leading
// zeros change nothing and inverting M's first 4 bytes is the same as the
// all-ones initial value, so the register after Z is the CRC-32C register
// after M. A block's bytes sit at a fixed byte offset s = (z + 6) mod 8
// within Z's words: each block completes one word (its first 8 - s bytes
// after the s residue bytes of the previous one) and leaves s bytes. The
// /MS/ counts as the 8-byte chunk {0, 0, M0..M5}: when z < 2 its word is all
// zero (a no-op at register 0). The last /MD/ completes Z's last word when
// the /MT/ has no tail (its padding then lies in the residue); otherwise the
// /MT/'s tail bytes complete it (s + tail = 8). One fixed word update and one
// byte shifter instead of a variable-length chain.
//
// The unit's CRC-32C (the /MT/'s field) is then ~crc_next at the /MT/ if the
// /MT/ has tail bytes ((|M| - 1) mod 8 >= 6), else ~crc (after the last /MD/).
module edm_crc32c_unit (
    input  logic        is_ms,         // this block is the unit's /MS/ (restarts the state)
    input  logic        is_mt,         // this block is the unit's /MT/
    input  logic [63:0] payload,       // the block's payload as on the wire; /MT/: only the tail
                                       // bytes [31:16] are read
    input  logic [2:0]  len_mod8,      // |M| mod 8; read at the /MS/ only
    input  logic [31:0] crc,           // state: the register over Z's words so far
    input  logic [63:0] residue,       // state: bytes 0..s-1 not yet in a word
    input  logic [2:0]  shift,         // state: s
    output logic [31:0] crc_next,      // the state after this block
    output logic [63:0] residue_next,
    output logic [2:0]  shift_next
);
  localparam logic [32*96-1:0] CRC_MASKS = edm_pkg::crc32c_word_masks(0);
  logic [31:0] crc_in;
  logic [63:0] chunk, res_in, keep, word;
  always_comb begin
    crc_in     = crc;
    res_in     = residue;
    shift_next = shift;
    chunk      = payload;
    if (is_ms) begin
      crc_in     = '0;
      res_in     = '0;
      shift_next = 3'd6 - len_mod8;
      chunk      = {payload[63:48], ~payload[47:16], 16'b0};
    end else if (is_mt) begin
      chunk      = {48'b0, payload[31:16]};
    end
  end
  // The chunk rotated by s bytes: bytes s..7 complete the word, bytes 0..s-1
  // are the next residue.
  assign residue_next = (chunk << {shift_next, 3'b000}) | (chunk >> (7'd64 - {1'b0, shift_next, 3'b000}));
  assign keep = ~(64'hFFFF_FFFF_FFFF_FFFF << {shift_next, 3'b000});  // bytes 0..s-1
  assign word = (res_in & keep) | (residue_next & ~keep);
  for (genvar j = 0; j < 32; j++) begin : g_crc
    assign crc_next[j] = ^({word, crc_in} & CRC_MASKS[96*j +: 96]);
  end
endmodule

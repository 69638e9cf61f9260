// Block lock (IEEE 802.3 Clause 49, figure 49-14): finds the 66-bit block
// boundary in a stream of unaligned 66-bit words by testing sync headers, and
// slips one bit at a time until 64 consecutive headers are valid. Once locked,
// 16 invalid headers within 64 blocks lose the lock. Aligned blocks leave one
// cycle after the word that completes them; bit 0 of every word is first on the wire.
module pcs_block_lock (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        in_valid,
    input  logic [65:0] in_word,
    output logic        out_valid,
    output logic [65:0] block,
    output logic        block_lock,
    output logic [31:0] slips  // status counter: how often the boundary moved
);
  logic [65:0] previous;
  logic [131:0] window;
  logic [6:0] offset;  // where the current block starts within `window`
  logic [6:0] sh_cnt;
  logic [4:0] sh_invld_cnt;
  logic [65:0] candidate;
  logic sh_valid;

  assign window = {in_word, previous};
  assign candidate = window[{1'b0, offset} +: 66];
  assign sh_valid = candidate[0] ^ candidate[1];

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      previous <= '0;
      offset <= '0;
      sh_cnt <= '0;
      sh_invld_cnt <= '0;
      block_lock <= 1'b0;
      out_valid <= 1'b0;
      block <= '0;
      slips <= '0;
    end else begin
      out_valid <= 1'b0;
      if (in_valid) begin
        previous <= in_word;
        out_valid <= block_lock;
        block <= candidate;
        if (sh_valid) begin
          if (sh_cnt == 7'd63) begin
            if (sh_invld_cnt == '0) block_lock <= 1'b1;
            sh_cnt <= '0;
            sh_invld_cnt <= '0;
          end else begin
            sh_cnt <= sh_cnt + 1'b1;
          end
        end else if (sh_invld_cnt == 5'd15 || !block_lock) begin
          // SLIP: try the next bit position (a slip past 65 wraps to 0).
          block_lock <= 1'b0;
          offset <= offset == 7'd65 ? 7'd0 : offset + 1'b1;
          slips <= slips + 1'b1;
          sh_cnt <= '0;
          sh_invld_cnt <= '0;
        end else if (sh_cnt == 7'd63) begin
          sh_cnt <= '0;
          sh_invld_cnt <= '0;
        end else begin
          sh_cnt <= sh_cnt + 1'b1;
          sh_invld_cnt <= sh_invld_cnt + 1'b1;
        end
      end
    end
  end
endmodule

// IEEE 802.3 Clause 49 self-synchronising scrambler x^58 + x^39 + 1 over the
// 64 payload bits of a block (bit 0 first), one block per cycle, 1 cycle latency.
// DESCRAMBLE = 0: S_i = D_i ^ S_{i-39} ^ S_{i-58} (history = sent scrambled bits).
// DESCRAMBLE = 1: D_i = S_i ^ S_{i-39} ^ S_{i-58} (history = received scrambled bits).
module pcs_scrambler #(
    parameter bit DESCRAMBLE = 1'b0
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        in_valid,
    input  logic [63:0] in_data,
    output logic        out_valid,
    output logic [63:0] out_data
);
  // history[j] is the scrambled bit sent 58-j bits ago (history[57] the latest).
  logic [57:0] history;
  logic [121:0] stream;  // {scrambled bits of this block, history}
  logic [63:0] result;

  always_comb begin
    stream = {64'b0, history};
    for (int i = 0; i < 64; i++) begin
      result[i] = in_data[i] ^ stream[i + 19] ^ stream[i];
      stream[58 + i] = DESCRAMBLE ? in_data[i] : result[i];
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      history   <= '1;
      out_valid <= 1'b0;
      out_data  <= '0;
    end else begin
      out_valid <= in_valid;
      if (in_valid) begin
        history  <= stream[121:64];
        out_data <= result;
      end
    end
  end
endmodule

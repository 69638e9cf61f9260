// Follows memory units arriving from edm_rx's mem_* port: the /MS/'s fields, each block's T word, the unit's end.
module edm_unit_receiver #(
    parameter int unsigned IDX_W = 8     // T index bits: units of up to 2^IDX_W blocks
) (
    input  logic             clk,
    input  logic             rst_n,
    // edm_rx's mem_* port, one block a cycle; in_abort comes alone or with the
    // next unit's /MS/ (edm_rx), never with a later block of a unit.
    input  logic             in_valid,
    input  logic [edm_pkg::BLOCK_BITS-1:0] in_block,
    input  logic             in_first,
    input  logic             in_last,
    input  logic             in_error,
    input  logic             in_abort,
    // The /MS/ arriving in this cycle (fresh), and whether the user keeps its unit.
    output logic             fresh,
    output logic [edm_pkg::HDR_KIND_W-1:0] ms_kind,
    output logic [edm_pkg::HDR_LEN_W-1:0]  ms_len,
    input  logic             ms_store,   // read with fresh: the unit's blocks follow as cont
    // The block as a word of T = 2 zero bytes || M: T[i] the i-th /MD/, the
    // /MT/'s tail bytes in bytes 0..1 (edm_unit_emitter's layout).
    output logic [63:0]      t_word,
    output logic             cont,       // a later block of the kept unit: T[rx_idx]
    output logic             commit,     // its /MT/, good: the unit may act now
    output logic             bad_end,    // the kept unit ends in error or abort: forget it
    // The kept unit, as its /MS/ announced it.
    output logic [IDX_W-1:0] rx_idx,     // T index of its next block
    output logic [edm_pkg::HDR_KIND_W-1:0] rx_kind,
    output logic [edm_pkg::PORT_BITS-1:0] rx_src,
    output logic [edm_pkg::PORT_BITS-1:0] rx_dst,
    output logic [edm_pkg::HDR_ID_W-1:0]   rx_id,
    output logic [edm_pkg::HDR_LEN_W-1:0]  rx_len,
    output logic             rx_seq0     // seq bit 0 (the header's bits 48.. are in T[1])
);
  logic        rx_open;   // a kept unit is being received
  logic [63:0] p;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [1:0] in_sync;  // edm_rx checked it
  /* verilator lint_on UNUSEDSIGNAL */
  assign in_sync = in_block[1:0];
  assign p = in_block[edm_pkg::BLOCK_BITS-1:2];
  assign t_word = in_last ? {48'b0, p[edm_pkg::MT_TAIL_OFFSET*8 +: 16]} : p;

  // Header bytes 0..5 are the /MS/ payload's bytes 2..7.
  assign ms_kind = p[16 + edm_pkg::HDR_KIND_LSB +: edm_pkg::HDR_KIND_W];
  assign ms_len  = p[16 + edm_pkg::HDR_LEN_LSB +: edm_pkg::HDR_LEN_W];

  assign fresh   = in_valid && in_first;
  assign cont    = in_valid && !in_first && rx_open && !in_abort;
  assign commit  = cont && in_last && !in_error;
  assign bad_end = (rx_open && in_abort) || (cont && in_last && in_error);

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rx_open <= 1'b0;
      rx_idx <= '0;
      rx_kind <= '0;
      rx_src <= '0;
      rx_dst <= '0;
      rx_id <= '0;
      rx_len <= '0;
      rx_seq0 <= 1'b0;
    end else begin
      if (in_abort) rx_open <= 1'b0;
      if (cont) begin
        rx_idx <= rx_idx + IDX_W'(1);
        if (in_last) rx_open <= 1'b0;
      end
      if (fresh) begin   // an /MS/ also starts over after an abort in the same cycle
        rx_open <= ms_store;
        rx_idx <= IDX_W'(1);
        rx_kind <= ms_kind;
        rx_src <= p[16 + edm_pkg::HDR_SRC_LSB +: edm_pkg::HDR_SRC_W];
        rx_dst <= p[16 + edm_pkg::HDR_DST_LSB +: edm_pkg::HDR_DST_W];
        rx_id <= p[16 + edm_pkg::HDR_ID_LSB +: edm_pkg::HDR_ID_W];
        rx_len <= ms_len;
        rx_seq0 <= p[16 + edm_pkg::HDR_SEQ_LSB];
      end
    end
  end
endmodule

// Sends one memory unit block by block: /MS/ with the header, /MD/s, /MT/ with the CRC-32C.
module edm_unit_emitter #(
    parameter int unsigned IDX_W = 8,    // block index bits: units of up to 2^IDX_W blocks
    parameter int unsigned LEN_W = 17    // |M| bits
) (
    input  logic             clk,
    input  logic             rst_n,
    // The unit, held until done: M = header || extension || payload, read as the
    // 8-byte words of T = 2 zero bytes || M (T[0] the /MS/, T[1..n_md] the /MD/s,
    // T[n_md + 1] the /MT/'s tail bytes 0..1; n_md = (|M| - 1) / 8).
    input  logic             unit_valid,
    input  logic             start_ok,   // its /MS/ may leave (e.g. its first data word is in)
    input  logic             block_ok,   // the block at idx may leave (its T word is in); a unit
                                         // whose data stall goes out with idle fillers (edm_tx)
    input  logic [63:0]      hdr,        // message bytes 0..7
    input  logic [LEN_W-1:0] m_bytes,    // |M|: header, extension and payload bytes
    output logic [IDX_W-1:0] idx,        // block offered: 0 /MS/, 1..n_md /MD/, n_md + 1 /MT/
    input  logic [63:0]      t_word,     // T[idx] for idx >= 1; header bytes 6..7 (T[1] bytes 0..1)
                                         // and bytes past the unit are put in here
    // Toward edm_tx's memory input.
    output logic             out_valid,
    input  logic             out_ready,
    output logic [65:0]      out_block,
    output logic             out_last    // the /MT/: the unit is done when it leaves
);
  // Each block is combinational from idx and the CRC state; both advance as it leaves.
  logic [31:0] crc;
  logic [63:0] residue;
  logic [2:0]  shift;

  logic [LEN_W-1:0] n_md, lim;
  logic             is_ms, is_mt, fire;
  logic [63:0]      tw, ms_payload;
  assign n_md  = (m_bytes - LEN_W'(1)) >> 3;
  assign lim   = m_bytes + LEN_W'(2);   // T bytes from here on are past the unit: zero
  assign is_ms = idx == '0;
  assign is_mt = LEN_W'(idx) == n_md + LEN_W'(1);
  assign ms_payload = {hdr[47:0], edm_pkg::SUB_MS, edm_pkg::BT_EDM};

  always_comb begin
    tw = t_word;
    if (idx == IDX_W'(1)) tw[15:0] = hdr[63:48];
    for (integer l = 0; l < 8; l++)
      if (LEN_W'({idx, 3'b000}) + LEN_W'(l) >= lim) tw[8*l +: 8] = 8'h00;
  end

  // CRC-32C as edm_rx checks it (see edm_crc32c_unit): fixed 8-byte word
  // updates over z zero bytes || M (first 4 bytes inverted), z = -|M| mod 8.
  logic [63:0] residue_next;
  logic [31:0] crc_next, crc_out;
  logic [2:0]  shift_next, lay_b;
  edm_crc32c_unit crc32c (
      .is_ms, .is_mt,
      .payload(is_ms ? ms_payload : (is_mt ? {32'b0, tw[15:0], 16'b0} : tw)),
      .len_mod8(m_bytes[2:0]), .crc, .residue, .shift,
      .crc_next, .residue_next, .shift_next);
  // The /MT/ has tail bytes if b = (|M| - 1) mod 8 >= 6; else the last /MD/ ended the CRC.
  assign lay_b   = m_bytes[2:0] + 3'd7;
  assign crc_out = ~(lay_b >= 3'd6 ? crc_next : crc);

  assign out_valid = unit_valid && block_ok && (!is_ms || start_ok);
  assign out_last  = is_mt;
  always_comb begin
    if (is_ms) out_block = {ms_payload, edm_pkg::SYNC_CTRL};
    else if (is_mt) out_block = {crc_out, tw[15:0], edm_pkg::SUB_MT, edm_pkg::BT_EDM, edm_pkg::SYNC_CTRL};
    else out_block = {tw, edm_pkg::SYNC_DATA};
  end
  assign fire = out_valid && out_ready;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      idx <= '0;
      crc <= '0;
      residue <= '0;
      shift <= '0;
    end else if (fire) begin
      idx <= is_mt ? '0 : idx + IDX_W'(1);
      crc <= crc_next;
      residue <= residue_next;
      if (is_ms) shift <= shift_next;
    end
  end
endmodule

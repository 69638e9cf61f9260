// Clause 49 64b/66b decoder: the inverse of pcs_encoder (see there).

module pcs_decoder (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        in_valid,
    input  logic [65:0] block,
    output logic        out_valid,
    output logic [63:0] xgmii_data,
    output logic [7:0]  xgmii_ctrl,
    output logic        invalid  // not a block we decode (sent on as /E/)
);
  logic [63:0] p;
  logic [63:0] data;
  logic [7:0]  ctrl;
  logic        ok;

  assign p = block[65:2];

  always_comb begin
    data = '0;
    ctrl = '0;
    ok = 1'b0;
    if (block[1:0] == edm_pkg::SYNC_DATA) begin
      data = p;
      ok = 1'b1;
    end else if (block[1:0] == edm_pkg::SYNC_CTRL) begin
      ok = 1'b1;
      case (p[7:0])
        edm_pkg::BT_C8: begin
          ctrl = 8'hFF;
          for (int i = 0; i < 8; i++) begin
            data[8*i +: 8] = pcs_codec_pkg::xgmii_of_code7(p[8 + 7*i +: 7]);
            ok &= pcs_codec_pkg::is_known_code7(p[8 + 7*i +: 7]);
          end
        end
        edm_pkg::BT_S0: begin
          ctrl = 8'h01;
          data = {p[63:8], edm_pkg::XGMII_START};
        end
        edm_pkg::BT_C4_S4, edm_pkg::BT_C4_O4: begin
          // C0..C3, then S4 after a zero nibble or the sequence O4.
          ctrl = 8'h1F;
          for (int i = 0; i < 4; i++) begin
            data[8*i +: 8] = pcs_codec_pkg::xgmii_of_code7(p[8 + 7*i +: 7]);
            ok &= pcs_codec_pkg::is_known_code7(p[8 + 7*i +: 7]);
          end
          ok &= p[39:36] == (p[7:0] == edm_pkg::BT_C4_S4 ? 4'b0 : edm_pkg::O_CODE_SEQ);
          data[63:32] = {p[63:40], p[7:0] == edm_pkg::BT_C4_S4 ? edm_pkg::XGMII_START : edm_pkg::XGMII_SEQ};
        end
        edm_pkg::BT_O0_S4, edm_pkg::BT_O0_O4: begin
          // /Q/ D1..D3, then S4 after a zero nibble or the sequence O4.
          ctrl = 8'h11;
          ok &= p[35:32] == edm_pkg::O_CODE_SEQ;
          ok &= p[39:36] == (p[7:0] == edm_pkg::BT_O0_S4 ? 4'b0 : edm_pkg::O_CODE_SEQ);
          data = {p[63:40], p[7:0] == edm_pkg::BT_O0_S4 ? edm_pkg::XGMII_START : edm_pkg::XGMII_SEQ,
                  p[31:8], edm_pkg::XGMII_SEQ};
        end
        edm_pkg::BT_O0_C4: begin
          // /Q/ D1..D3, then C4..C7.
          ctrl = 8'hF1;
          ok &= p[35:32] == edm_pkg::O_CODE_SEQ;
          data[31:0] = {p[31:8], edm_pkg::XGMII_SEQ};
          for (int i = 4; i < 8; i++) begin
            data[8*i +: 8] = pcs_codec_pkg::xgmii_of_code7(p[36 + 7*(i - 4) +: 7]);
            ok &= pcs_codec_pkg::is_known_code7(p[36 + 7*(i - 4) +: 7]);
          end
        end
        default: begin
          ok = 1'b0;
          for (int k = 0; k < 8; k++) begin
            if (p[7:0] == pcs_codec_pkg::terminate_type(k)) begin
              ok = 1'b1;
              ctrl = 8'hFF << k;
              for (int i = 0; i < k; i++) data[8*i +: 8] = p[8 + 8*i +: 8];
              data[8*k +: 8] = edm_pkg::XGMII_TERM;
              // The 7-k pad bits after the data must be zero.
              for (int b = 0; b < 7 - k; b++) ok &= !p[8 + 8*k + b];
              for (int i = k + 1; i < 8; i++) begin
                data[8*i +: 8] = pcs_codec_pkg::xgmii_of_code7(p[8 + 8*k + (7 - k) + 7*(i - k - 1) +: 7]);
                ok &= pcs_codec_pkg::is_known_code7(p[8 + 8*k + (7 - k) + 7*(i - k - 1) +: 7]);
              end
            end
          end
        end
      endcase
    end
    if (!ok) begin
      ctrl = 8'hFF;
      data = {8{edm_pkg::XGMII_ERROR}};
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      out_valid <= 1'b0;
      xgmii_data <= '0;
      xgmii_ctrl <= '0;
      invalid <= 1'b0;
    end else begin
      out_valid <= in_valid;
      invalid <= in_valid && !ok;
      if (in_valid) begin
        xgmii_data <= data;
        xgmii_ctrl <= ctrl;
      end
    end
  end
endmodule

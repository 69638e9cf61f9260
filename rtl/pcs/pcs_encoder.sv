// IEEE 802.3 Clause 49 64b/66b encoder and decoder between XGMII (64-bit data,
// 8 control bits, lane i = data[8i+7:8i], ctrl[i]) and 66-bit blocks
// {payload, sync}. Formats handled: all data, all control (idle /I/, error /E/),
// start in lane 0 or lane 4 (after idles or a sequence ordered set), terminate
// in any lane, and the sequence ordered set /Q/ (link fault signalling) in
// lane 0 and/or lane 4: every format of figure 49-7. The encoder turns any
// other XGMII word into an all-error block; the decoder turns any other block
// into an all-error XGMII word and pulses `invalid`. One cycle each.
module pcs_encoder (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        in_valid,
    input  logic [63:0] xgmii_data,
    input  logic [7:0]  xgmii_ctrl,
    output logic        out_valid,
    output logic [65:0] block,
    output logic        invalid  // the word had no encoding (sent as /E/)
);
  logic [63:0] payload;
  logic [1:0]  sync;
  logic        ok;
  logic [7:0]  lane0, lane4;

  assign lane0 = pcs_codec_pkg::lane(xgmii_data, 0);
  assign lane4 = pcs_codec_pkg::lane(xgmii_data, 4);

  always_comb begin
    sync = edm_pkg::SYNC_CTRL;
    payload = '0;
    ok = 1'b0;
    if (xgmii_ctrl == 8'h00) begin
      sync = edm_pkg::SYNC_DATA;
      payload = xgmii_data;
      ok = 1'b1;
    end else if (xgmii_ctrl == 8'h01 && lane0 == edm_pkg::XGMII_START) begin
      payload = {xgmii_data[63:8], edm_pkg::BT_S0};
      ok = 1'b1;
    end else if (xgmii_ctrl == 8'h1F && (lane4 == edm_pkg::XGMII_START || lane4 == edm_pkg::XGMII_SEQ)) begin
      // C0..C3 then S4 (a zero nibble) or O4.
      ok = 1'b1;
      payload = lane4 == edm_pkg::XGMII_START ? {xgmii_data[63:40], 4'b0, 28'b0, edm_pkg::BT_C4_S4}
                                              : {xgmii_data[63:40], edm_pkg::O_CODE_SEQ, 28'b0, edm_pkg::BT_C4_O4};
      for (int i = 0; i < 4; i++) begin
        ok &= pcs_codec_pkg::is_idle_or_error(pcs_codec_pkg::lane(xgmii_data, i));
        payload[8 + 7*i +: 7] = pcs_codec_pkg::code7(pcs_codec_pkg::lane(xgmii_data, i));
      end
    end else if (xgmii_ctrl == 8'h11 && lane0 == edm_pkg::XGMII_SEQ
                 && (lane4 == edm_pkg::XGMII_START || lane4 == edm_pkg::XGMII_SEQ)) begin
      // O0 then S4 or O4: D1..D3, the O0 code, a zero nibble or the O4 code, D5..D7.
      ok = 1'b1;
      payload = {xgmii_data[63:40], lane4 == edm_pkg::XGMII_START ? 4'b0 : edm_pkg::O_CODE_SEQ,
                 edm_pkg::O_CODE_SEQ, xgmii_data[31:8],
                 lane4 == edm_pkg::XGMII_START ? edm_pkg::BT_O0_S4 : edm_pkg::BT_O0_O4};
    end else if (xgmii_ctrl == 8'hF1 && lane0 == edm_pkg::XGMII_SEQ) begin
      // O0 then C4..C7.
      ok = 1'b1;
      payload = {28'b0, edm_pkg::O_CODE_SEQ, xgmii_data[31:8], edm_pkg::BT_O0_C4};
      for (int i = 4; i < 8; i++) begin
        ok &= pcs_codec_pkg::is_idle_or_error(pcs_codec_pkg::lane(xgmii_data, i));
        payload[36 + 7*(i - 4) +: 7] = pcs_codec_pkg::code7(pcs_codec_pkg::lane(xgmii_data, i));
      end
    end else if (xgmii_ctrl == 8'hFF && lane0 != edm_pkg::XGMII_TERM) begin
      ok = 1'b1;
      payload = {56'b0, edm_pkg::BT_C8};
      for (int i = 0; i < 8; i++) begin
        ok &= pcs_codec_pkg::is_idle_or_error(pcs_codec_pkg::lane(xgmii_data, i));
        payload[8 + 7*i +: 7] = pcs_codec_pkg::code7(pcs_codec_pkg::lane(xgmii_data, i));
      end
    end else begin
      // /T/ in lane k: lanes below are data, lanes above idle/error.
      for (int k = 0; k < 8; k++) begin
        if (xgmii_ctrl == (8'hFF << k) && pcs_codec_pkg::lane(xgmii_data, k) == edm_pkg::XGMII_TERM) begin
          ok = 1'b1;
          payload = {56'b0, pcs_codec_pkg::terminate_type(k)};
          for (int i = 0; i < k; i++) payload[8 + 8*i +: 8] = pcs_codec_pkg::lane(xgmii_data, i);
          for (int i = k + 1; i < 8; i++) begin
            ok &= pcs_codec_pkg::is_idle_or_error(pcs_codec_pkg::lane(xgmii_data, i));
            payload[8 + 8*k + (7 - k) + 7*(i - k - 1) +: 7] = pcs_codec_pkg::code7(pcs_codec_pkg::lane(xgmii_data, i));
          end
        end
      end
    end
    if (!ok) begin
      sync = edm_pkg::SYNC_CTRL;
      payload = pcs_codec_pkg::error_payload(0);
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      out_valid <= 1'b0;
      block <= '0;
      invalid <= 1'b0;
    end else begin
      out_valid <= in_valid;
      invalid <= in_valid && !ok;
      if (in_valid) block <= {payload, sync};
    end
  end
endmodule

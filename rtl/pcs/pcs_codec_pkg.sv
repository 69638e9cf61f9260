// Helpers shared by pcs_encoder and pcs_decoder (Clause 49 block formats).
// Written as Verilog-2005 style functions (result assigned to the name) so
// both Verilator and Yosys accept them.
package pcs_codec_pkg;
  function automatic [7:0] lane(input [63:0] data, input integer i);
    lane = data[8*i +: 8];
  endfunction

  function automatic is_idle_or_error(input [7:0] x);
    is_idle_or_error = x == edm_pkg::XGMII_IDLE || x == edm_pkg::XGMII_ERROR;
  endfunction

  // 7-bit block code of an idle/error XGMII character.
  function automatic [6:0] code7(input [7:0] x);
    code7 = x == edm_pkg::XGMII_IDLE ? edm_pkg::CTRL_IDLE[6:0] : edm_pkg::CTRL_ERROR[6:0];
  endfunction

  // Whether a 7-bit block code is one we decode (idle or error).
  function automatic is_known_code7(input [6:0] c);
    is_known_code7 = c == edm_pkg::CTRL_IDLE[6:0] || c == edm_pkg::CTRL_ERROR[6:0];
  endfunction

  // XGMII character of a 7-bit code (anything unknown becomes /E/).
  function automatic [7:0] xgmii_of_code7(input [6:0] c);
    xgmii_of_code7 = c == edm_pkg::CTRL_IDLE[6:0] ? edm_pkg::XGMII_IDLE : edm_pkg::XGMII_ERROR;
  endfunction

  function automatic [7:0] terminate_type(input integer k);
    case (k)
      0: terminate_type = edm_pkg::BT_T0;
      1: terminate_type = edm_pkg::BT_T1;
      2: terminate_type = edm_pkg::BT_T2;
      3: terminate_type = edm_pkg::BT_T3;
      4: terminate_type = edm_pkg::BT_T4;
      5: terminate_type = edm_pkg::BT_T5;
      6: terminate_type = edm_pkg::BT_T6;
      default: terminate_type = edm_pkg::BT_T7;
    endcase
  endfunction

  // The block of eight /E/ characters.
  function automatic [63:0] error_payload(input integer unused);
    error_payload = {56'b0, edm_pkg::BT_C8};
    for (integer i = 0; i < 8; i++) error_payload[8 + 7*i +: 7] = edm_pkg::CTRL_ERROR[6:0];
  endfunction
endpackage

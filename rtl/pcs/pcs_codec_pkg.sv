// Helpers shared by pcs_encoder and pcs_decoder (Clause 49 block formats).
package pcs_codec_pkg;
  function automatic logic [7:0] lane(input logic [63:0] data, input int i);
    return data[8*i +: 8];
  endfunction

  function automatic logic is_idle_or_error(input logic [7:0] x);
    return x == edm_pkg::XGMII_IDLE || x == edm_pkg::XGMII_ERROR;
  endfunction

  // 7-bit block code of an idle/error XGMII character.
  function automatic logic [6:0] code7(input logic [7:0] x);
    return x == edm_pkg::XGMII_IDLE ? edm_pkg::CTRL_IDLE[6:0] : edm_pkg::CTRL_ERROR[6:0];
  endfunction

  function automatic logic [7:0] terminate_type(input int k);
    case (k)
      0: return edm_pkg::BT_T0;
      1: return edm_pkg::BT_T1;
      2: return edm_pkg::BT_T2;
      3: return edm_pkg::BT_T3;
      4: return edm_pkg::BT_T4;
      5: return edm_pkg::BT_T5;
      6: return edm_pkg::BT_T6;
      default: return edm_pkg::BT_T7;
    endcase
  endfunction

  // The block of eight /E/ characters.
  function automatic logic [63:0] error_payload();
    logic [63:0] p;
    p = {56'b0, edm_pkg::BT_C8};
    for (int i = 0; i < 8; i++) p[8 + 7*i +: 7] = edm_pkg::CTRL_ERROR[6:0];
    return p;
  endfunction
endpackage

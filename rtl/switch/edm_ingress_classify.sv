// The switch's ingress classifier (stages 0 and 1 of edm_switch), every port
// side by side: each block is classified in one register stage
// (SW_CLASSIFY_CYCLES): an /N/ or /A/ (a host's control blocks, numbered in
// one sequence per uplink) whose CRC-8 checks for the number its uplink's
// control sequence expects next (docs/protocol.md §5a; after a loss, two
// rejected ones with consecutive numbers resynchronise it, as in edm_rx) is
// good (r_ngood), any other bad, as is a data block that is the /N/ or /A/
// expected next (its sync header flipped); a good /A/ naming another port
// (r_a_valid) is for the switch to forward (docs/protocol.md §4b), its fields
// on r_n_dst, r_n_id (the base id) and r_n_size (the map); /MS/ and /MT/; an /MS/'s kind
// (RREQ/RMWREQ: r_rd, WREQ/RRES: r_wr) and destination (one-hot); the
// notification it makes for the scheduler (a good /N/ naming another port
// and some bytes, or a well-formed RREQ/RMWREQ's implicit one if its pair's
// store has room after this edge, rq_room_n); standard Ethernet blocks other
// than idle (r_std: frame blocks, ordered sets, /E/) and unknown ones (bad
// sync, unknown type or subtype, /MST/, a /G/ from a host). Frame data
// blocks are data blocks (r_data): the datapath tells them from a unit's by
// its open units. The /N/ sequence state lives here.
// Prefixes: c_ stage 0 (the block as it comes), r_ stage 1 (registered), n_
// the control sequence.
module edm_ingress_classify #(
    parameter int unsigned N = 4
) (
    input  logic                    clk,
    input  logic                    rst_n,
    input  logic [N*66-1:0]         in_block,     // port i: bits [i*66 +: 66]
    input  logic [N-1:0][N-1:0]     rq_room_n,    // [requester][memory]: the pair's store takes a unit
    output logic [N-1:0][65:0]      b1,           // the block, registered
    output logic [N-1:0]            r_data,       // data (not a flipped /N/)
    output logic [N-1:0]            r_nbad,       // a bad /N/ or a flipped one
    output logic [N-1:0]            r_ngood,      // a good /N/ or /A/
    output logic [N-1:0]            r_a_valid,    // a good /A/ naming another port
    output logic [N-1:0]            r_ms,
    output logic [N-1:0]            r_mt,
    output logic [N-1:0]            r_std,
    output logic [N-1:0]            r_unk,
    output logic [N-1:0]            r_rd,
    output logic [N-1:0]            r_wr,
    output logic [N-1:0][N-1:0]     r_hdst_oh,
    output logic [N-1:0]            r_n_valid,
    output logic [N-1:0][N-1:0]     r_rd_room,
    output logic [N-1:0][$clog2(N)-1:0] r_n_src,
    output logic [N-1:0][$clog2(N)-1:0] r_n_dst,
    output logic [N-1:0][edm_pkg::NG_ID_W-1:0]   r_n_id,
    output logic [N-1:0][edm_pkg::NG_SIZE_W-1:0] r_n_size
);
  localparam int unsigned PW = $clog2(N);
  localparam int unsigned IW = edm_pkg::NG_ID_W;
  localparam int unsigned SW = edm_pkg::NG_SIZE_W;
  // The CRC-8 of a /N/ as flat XORs (edm_pkg::crc8_implied_masks): the
  // bit-serial function maps to a chain about 13 LUT levels deep.
  localparam logic [8*64-1:0] CRC8_IMPLIED_MASKS = edm_pkg::crc8_implied_masks(0);

  // x + 1 (mod 256) as logic, not a carry chain: each bit 2 LUT levels deep.
  function automatic [7:0] succ8(input [7:0] x);
    logic carry;
    carry = 1'b1;
    for (integer k = 0; k < 8; k++) begin
      succ8[k] = x[k] ^ carry;
      carry = carry & x[k];
    end
  endfunction

  // Control sequence per uplink (docs/protocol.md §5a): the /N/ expected
  // next and the successor of the previous one's number if rejected (kept
  // + 1, so the checks are equalities with registers).
  logic [N-1:0][7:0] n_expected, n_rej_succ;
  logic [N-1:0]      n_rej_valid, n_accept, n_resync, n_cid, n_moves;

  // ---------------------------------------------------------------- stage 0: classify
  // The /N/ sequence check is split across the two stages so that no path
  // runs from a block's wire through the CRC-8 to the sequence registers:
  // stage 0 computes the number a /N/ implies (c_implied) and its successor
  // (registered: r_implied_succ), and what kind of /N/ candidate the block
  // is; stage 1 updates the sequence registers. A /N/ still takes effect one
  // block after the previous one, and the classification reaches stage 1 in
  // the same cycle as before.
  logic [N-1:0][65:0] b0;
  logic [N-1:0][7:0] c_implied, c_implied_succ, r_implied_succ;
  // c_nany: an /N/ or /A/ (the uplink's numbered control blocks); c_isa: subtype /A/.
  logic [N-1:0] c_data_sync, c_nany, c_isa, c_nseen, c_ncand, c_ms, c_mt, c_idle, c_std, c_unk;
  // The number's comparisons, made here against each register's value and
  // against the one that the /N/ now in stage 1 leaves in it if it moves
  // the sequence (r_implied_succ, both as the expected number and as the
  // rejected one's successor), picked by stage 1's decision of this cycle:
  // the /N/ is accepted (c_ngood) with a flip-flop in stage 1.
  logic [N-1:0] c_eq_exp, c_eq_rej_succ, c_eq_succ, c_eq_exp_next, c_eq_rej_next, c_ngood, c_cid;
  // Header checks made here (the block's own fields): an /MS/ opens an
  // RREQ/RMWREQ (c_rd) or a WREQ/RRES (c_wr). The notification the block
  // makes is built here too, registered for the scheduler: a good /N/ that
  // names another port and some bytes (c_nv_n), or an RREQ/RMWREQ's implicit
  // one if well formed (c_rd_pair: one-hot by memory node; the pair's room
  // is added as it is registered), and its fields (c_n_*).
  logic [N-1:0] c_nv_n, c_av, c_rd, c_wr;
  logic [N-1:0][N-1:0] c_rd_pair;
  logic [N-1:0][N-1:0] c_hdst_oh;   // an /MS/ header's destination, one-hot (none if >= N)
  logic [N-1:0][PW-1:0] c_n_src, c_n_dst;
  logic [N-1:0][IW-1:0] c_n_id;
  logic [N-1:0][SW-1:0] c_n_size;
  always_comb begin
    for (integer i = 0; i < N; i++) begin
      logic [63:0] p;
      logic ctrl, edm;
      logic [2:0]  kind;
      logic [edm_pkg::PORT_BITS-1:0] hdst, ndst;
      logic [15:0] hlen;
      b0[i] = in_block[i*66 +: 66];
      p = b0[i][65:2];
      ctrl = b0[i][1:0] == edm_pkg::SYNC_CTRL;
      edm = ctrl && p[7:0] == edm_pkg::BT_EDM;
      c_ms[i] = edm && p[15:8] == edm_pkg::SUB_MS;
      c_mt[i] = edm && p[15:8] == edm_pkg::SUB_MT;
      for (integer j = 0; j < 8; j++) c_implied[i][j] = ^(p & CRC8_IMPLIED_MASKS[64*j +: 64]);
      c_implied_succ[i] = succ8(c_implied[i]);
      c_eq_exp[i] = c_implied[i] == n_expected[i];
      c_eq_rej_succ[i] = c_implied[i] == n_rej_succ[i];
      c_eq_succ[i] = c_implied[i] == r_implied_succ[i];
      c_eq_exp_next[i] = n_moves[i] ? c_eq_succ[i] : c_eq_exp[i];       // == n_expected next cycle
      c_eq_rej_next[i] = r_nany[i] ? c_eq_succ[i] : c_eq_rej_succ[i];   // == n_rej_succ next cycle
      c_data_sync[i] = b0[i][1:0] == edm_pkg::SYNC_DATA;
      c_isa[i] = p[15:8] == edm_pkg::SUB_A;
      c_nany[i] = edm && (p[15:8] == edm_pkg::SUB_N || c_isa[i]);
      c_nseen[i] = c_nany[i] && p[55:50] == 6'b0;
      // A data block shaped as a /N/ or /A/: if it is the one expected next,
      // a sync-header flip (counted, dropped).
      c_ncand[i] = c_data_sync[i] && p[7:0] == edm_pkg::BT_EDM && (p[15:8] == edm_pkg::SUB_N || c_isa[i])
                   && p[55:50] == 6'b0;
      c_ngood[i] = c_nseen[i] && c_eq_exp_next[i];
      c_cid[i] = c_ncand[i] && c_eq_exp_next[i];
      ndst = p[edm_pkg::NG_DST_LSB +: edm_pkg::NG_DST_W];
      c_nv_n[i] = c_ngood[i] && !c_isa[i] && 32'(ndst) < N && ndst != edm_pkg::PORT_BITS'(i)
                  && p[edm_pkg::NG_SIZE_LSB +: SW] != '0;
      c_av[i] = c_ngood[i] && c_isa[i] && 32'(ndst) < N && ndst != edm_pkg::PORT_BITS'(i);
      kind = p[16 + edm_pkg::HDR_KIND_LSB +: 3];
      hdst = p[16 + edm_pkg::HDR_DST_LSB +: edm_pkg::HDR_DST_W];
      hlen = p[16 + edm_pkg::HDR_LEN_LSB +: 16];
      c_rd[i] = kind == edm_pkg::KIND_RREQ[2:0] || kind == edm_pkg::KIND_RMWREQ[2:0];
      c_wr[i] = kind == edm_pkg::KIND_WREQ[2:0] || kind == edm_pkg::KIND_RRES[2:0];
      // An RMWREQ's response has a fixed size (never 0); an RREQ's is its len.
      for (integer m = 0; m < N; m++) c_hdst_oh[i][m] = hdst == edm_pkg::PORT_BITS'(m);
      for (integer m = 0; m < N; m++)
        c_rd_pair[i][m] = c_ms[i] && c_rd[i] && c_hdst_oh[i][m] && m != i
                          && (kind == edm_pkg::KIND_RMWREQ[2:0] ? hlen == 16'(edm_pkg::RMW_OPERAND_BYTES) : hlen != '0);
      // The notification's fields: the /N/'s, or for an /MS/ the implicit
      // notification of an RREQ/RMWREQ's response (memory -> requester).
      if (c_ms[i]) begin
        c_n_src[i] = hdst[PW-1:0];
        c_n_dst[i] = PW'(i);
        c_n_id[i] = p[16 + edm_pkg::HDR_ID_LSB +: IW];
        c_n_size[i] = kind == edm_pkg::KIND_RMWREQ[2:0] ? 16'(edm_pkg::RMW_RESULT_BYTES) : hlen;
      end else begin
        c_n_src[i] = PW'(i);
        c_n_dst[i] = ndst[PW-1:0];
        c_n_id[i] = p[edm_pkg::NG_ID_LSB +: IW];
        c_n_size[i] = p[edm_pkg::NG_SIZE_LSB +: SW];
      end
      c_idle[i] = ctrl && p == {56'b0, edm_pkg::BT_C8};
      case (p[7:0])
        edm_pkg::BT_C8, edm_pkg::BT_C4_O4, edm_pkg::BT_C4_S4, edm_pkg::BT_O0_S4,
        edm_pkg::BT_O0_O4, edm_pkg::BT_S0, edm_pkg::BT_O0_C4,
        edm_pkg::BT_T0, edm_pkg::BT_T1, edm_pkg::BT_T2, edm_pkg::BT_T3,
        edm_pkg::BT_T4, edm_pkg::BT_T5, edm_pkg::BT_T6, edm_pkg::BT_T7: c_std[i] = ctrl && !c_idle[i];
        default: c_std[i] = 1'b0;
      endcase
      // Bad sync, unknown type, /MST/, unknown subtype, a /G/ sent by a host
      // (every data block is data or a bad /N/, every /N/ good or bad).
      c_unk[i] = !c_data_sync[i] && !c_nany[i] && !c_ms[i] && !c_mt[i] && !c_idle[i] && !c_std[i];
    end
  end

  // ---------------------------------------------------------------- stage 1 registers
  // The notification for the scheduler, a flip-flop: a good /N/ (c_nv_n) or
  // an RREQ/RMWREQ whose pair has room for it (r_rd_room: the pair, one-hot,
  // if it has), room taken from the store's count after this edge (rq_room_n),
  // as stage 1 would have read it from a register.
  logic [N-1:0] r_data_sync, r_nany, r_nseen, r_cid, r_eq_rej;
  always_ff @(posedge clk) begin
    b1 <= b0;
    r_implied_succ <= c_implied_succ;
    r_eq_rej <= c_eq_rej_next; r_rd <= c_rd; r_wr <= c_wr; r_hdst_oh <= c_hdst_oh;
    r_n_src <= c_n_src; r_n_dst <= c_n_dst; r_n_id <= c_n_id; r_n_size <= c_n_size;
    if (!rst_n) begin
      r_data_sync <= '0; r_nany <= '0; r_nseen <= '0;
      r_ms <= '0; r_mt <= '0; r_std <= '0; r_unk <= '0;
      r_ngood <= '0; r_cid <= '0; r_n_valid <= '0; r_rd_room <= '0; r_a_valid <= '0;
    end else begin
      r_data_sync <= c_data_sync; r_nany <= c_nany; r_nseen <= c_nseen;
      r_ms <= c_ms; r_mt <= c_mt; r_std <= c_std; r_unk <= c_unk;
      r_ngood <= c_ngood; r_cid <= c_cid; r_a_valid <= c_av;
      for (integer i = 0; i < N; i++) begin
        r_rd_room[i] <= c_rd_pair[i] & rq_room_n[i];
        r_n_valid[i] <= c_nv_n[i] || (c_rd_pair[i] & rq_room_n[i]) != '0;
      end
    end
  end
  // The /N/ sequence check (docs/protocol.md §5a), its comparisons registered.
  always_comb
    for (integer i = 0; i < N; i++) begin
      n_accept[i] = r_ngood[i];
      n_resync[i] = r_nseen[i] && !n_accept[i] && n_rej_valid[i] && r_eq_rej[i];
      n_cid[i] = r_cid[i];
      n_moves[i] = r_nany[i] && (n_accept[i] || n_resync[i]);
      r_nbad[i] = (r_nany[i] && !n_accept[i]) || n_cid[i];
      r_data[i] = r_data_sync[i] && !n_cid[i];
    end

  always_ff @(posedge clk)
    if (!rst_n) begin
      n_expected <= '0;
      n_rej_succ <= {N{8'd1}};
      n_rej_valid <= '0;
    end else
      for (integer i = 0; i < N; i++)
        if (r_nany[i]) begin
          n_rej_valid[i] <= r_nseen[i] && !n_accept[i] && !n_resync[i];
          n_rej_succ[i] <= r_implied_succ[i];
          if (n_accept[i] || n_resync[i]) n_expected[i] <= r_implied_succ[i];
        end
endmodule

// Memory-node address translation and protection (Clio, docs/hardware.md
// "Translation and protection"): maps each request unit's (address space,
// virtual page) to a physical frame through a TLB and a hash page table in the
// node's DRAM, and marks accesses outside the requester's mappings as denied.
//
// It sits between edm_rx's memory port and the engine (edm_mem_node), as a
// stage that passes the unit blocks and /G/ grants through unchanged, in the
// same cycle, and holds them only where a translation is not ready:
//   * The address word of a request unit (RREQ, WREQ, RMWREQ) is T[1][63:16]
//     (bits 47..0, the virtual address) and T[2] bits 15..0 (the ASID,
//     edm_pkg::ADDR_ASID_*); T[2] is the /MT/ of an RREQ, an /MD/ otherwise.
//     When T[2] passes, the TLB is looked up in that cycle; on a hit the
//     translation is ready at once, so a TLB hit adds no cycle.
//   * On a miss the walker reads the key's bucket (PT_WAYS slots of two 8-byte
//     words) from the DRAM read channel, ahead of the engine's reads, and fills
//     the TLB (LRU victim, an invalid entry first). A unit's last block is held
//     (and whatever else ends it) until its translation is known; everything behind it (blocks and grants,
//     in arrival order) waits in a FIFO of HOLD_LOG2 entries (full: the event is
//     lost, cnt_overflow). The walk is bounded: 2 x PT_WAYS reads, no software
//     and no fault path (the page table is overflow-free by construction: the
//     management side never installs a mapping into a full bucket).
//   * Lookups are made only while no walk runs, and a unit cannot end before
//     its lookup, so the TLB sees every unit whose address arrived once, one
//     after another (the Python model, edm.related.clio_model, replays it).
//   * With the unit's last block (out_last) come xl_addr, the physical address
//     {frame, page offset}, and xl_deny: no mapping, a write (WREQ, RMWREQ) to a
//     read-only page, or a unit whose bytes cross a page boundary. A denied unit
//     is never served (the engine answers STATUS_DENIED or drops a write) and is
//     counted here (cnt_denied).
// Page table: bucket b of 2^PT_BUCKETS_LOG2 at PT_BASE + b * PT_WAYS * 16; slot
// word 0 = {asid[15:0], vpn zero-extended to 48 bits} (the key), word 1 =
// {valid[63], writable[62], frame[61:0]}. Bucket of a key: the XOR of its
// PT_BUCKETS_LOG2-bit slices (bucket_of). Management (mgmt_valid): a mapping is
// installed by writing its slot in DRAM (no TLB action: misses are never
// cached); removed by clearing the slot and then invalidating (asid, vpn), or
// every page of asid with mgmt_whole_space. An invalidation during a walk
// discards the walk, which starts again.
// DRAM read channel: the engine's (eng_rd_*) and the walker's share it; the
// memory answers in order, so a FIFO of owners routes each answer.
module edm_mem_translate #(
    parameter int unsigned PAGE_BITS = 12,          // 4 KiB pages
    parameter int unsigned TLB_LOG2 = 3,            // 8 TLB entries
    parameter logic [63:0] PT_BASE = 64'h0,         // page table's byte address in DRAM
    parameter int unsigned PT_BUCKETS_LOG2 = 10,
    parameter int unsigned PT_WAYS = 4,             // slots per bucket
    parameter int unsigned HOLD_LOG2 = 4,           // events held behind a walk
    parameter int unsigned OWNERS_LOG2 = 5          // DRAM reads in flight
) (
    input  logic        clk,
    input  logic        rst_n,
    // From edm_rx: memory units block by block, and good /G/ blocks.
    input  logic        in_valid,
    input  logic [65:0] in_block,
    input  logic        in_first,
    input  logic        in_last,
    input  logic        in_error,
    input  logic        in_abort,
    input  logic        grant_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] grant_dst,
    input  logic [7:0]  grant_msg_id,
    input  logic [15:0] grant_size,
    // To the engine: the same events, in order.
    output logic        out_valid,
    output logic [65:0] out_block,
    output logic        out_first,
    output logic        out_last,
    output logic        out_error,
    output logic        out_abort,
    output logic        out_grant_valid,
    output logic [edm_pkg::PORT_BITS-1:0] out_grant_dst,
    output logic [7:0]  out_grant_msg_id,
    output logic [15:0] out_grant_size,
    output logic        out_waiting,     // events are held (the engine's in_room_* lag)
    // The translation of the unit whose last block is out_last.
    output logic [63:0] xl_addr,
    output logic        xl_deny,
    // The engine's DRAM read channel, and the memory's.
    input  logic        eng_rd_valid,
    output logic        eng_rd_ready,
    input  logic [63:0] eng_rd_addr,
    output logic        eng_rsp_valid,
    output logic [63:0] eng_rsp_data,
    output logic        dram_rd_valid,
    input  logic        dram_rd_ready,
    output logic [63:0] dram_rd_addr,
    input  logic        dram_rsp_valid,
    input  logic [63:0] dram_rsp_data,
    // Management: invalidate (asid, vpn), or every page of asid.
    input  logic        mgmt_valid,
    input  logic [edm_pkg::ADDR_ASID_W-1:0] mgmt_asid,
    input  logic [edm_pkg::ADDR_ASID_LSB-PAGE_BITS-1:0] mgmt_vpn,
    input  logic        mgmt_whole_space,
    // Status counters (16-bit, saturating).
    output logic [15:0] cnt_denied,     // units refused (never served)
    output logic [15:0] cnt_tlb_hit,    // units translated from the TLB
    output logic [15:0] cnt_tlb_miss,   // page-table walks
    output logic [15:0] cnt_overflow    // events lost to a full hold FIFO
);
  localparam int unsigned AW = edm_pkg::ADDR_ASID_W;
  localparam int unsigned VA_W = edm_pkg::ADDR_ASID_LSB;
  localparam int unsigned VPN_W = VA_W - PAGE_BITS;
  localparam int unsigned FRAME_W = 64 - PAGE_BITS;
  localparam int unsigned TLB_N = 1 << TLB_LOG2;
  localparam int unsigned WALK_READS = 2 * PT_WAYS;
  localparam int unsigned WJ_W = $clog2(WALK_READS + 1);
  localparam int unsigned EV_W = 1 + 66 + 4 + 1 + edm_pkg::PORT_BITS + 8 + 16;
  localparam logic [2:0] K_RREQ = 3'(edm_pkg::KIND_RREQ);
  localparam logic [2:0] K_WREQ = 3'(edm_pkg::KIND_WREQ);
  localparam logic [2:0] K_RMW = 3'(edm_pkg::KIND_RMWREQ);

  // The bucket of a key {asid, vpn zero-extended to 48 bits}.
  function automatic [PT_BUCKETS_LOG2-1:0] bucket_of(input [63:0] key);
    bucket_of = '0;
    for (integer i = 0; i < 64; i += PT_BUCKETS_LOG2) bucket_of = bucket_of ^ PT_BUCKETS_LOG2'(key >> i);
  endfunction

  // ================================================================ hold FIFO
  // An event is one cycle's input: {unit block and flags, grant}.
  logic [EV_W-1:0] ev_in, ev_head, ev;
  logic            in_present, hq_valid, hq_wr_ready, hq_push, hq_pop, present, deliver, hold;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [HOLD_LOG2:0] hq_count;
  /* verilator lint_on UNUSEDSIGNAL */
  assign ev_in = {in_valid, in_block, in_first, in_last, in_error, in_abort,
                  grant_valid, grant_dst, grant_msg_id, grant_size};
  assign in_present = in_valid || in_abort || grant_valid;
  edm_fifo #(.WIDTH(EV_W), .DEPTH_LOG2(HOLD_LOG2)) hold_q (
      .clk, .rst_n,
      .wr_valid(hq_push), .wr_ready(hq_wr_ready), .wr_data(ev_in),
      .rd_valid(hq_valid), .rd_ready(hq_pop), .rd_data(ev_head),
      .count(hq_count)
  );
  // The event offered to the engine: the oldest held one, else this cycle's.
  assign ev = hq_valid ? ev_head : ev_in;
  assign present = hq_valid || in_present;
  assign deliver = present && !hold;
  assign hq_pop  = hq_valid && deliver;
  assign hq_push = in_present && (hq_valid || hold);

  logic        o_valid, o_first, o_last, o_error, o_abort, o_grant;
  logic [65:0] o_block;
  logic [edm_pkg::PORT_BITS-1:0] o_gdst;
  logic [7:0]  o_gid;
  logic [15:0] o_gsize;
  assign {o_valid, o_block, o_first, o_last, o_error, o_abort, o_grant, o_gdst, o_gid, o_gsize} = ev;
  assign out_valid = deliver && o_valid;
  assign out_block = o_block;
  assign out_first = o_first;
  assign out_last = o_last;
  assign out_error = o_error;
  assign out_abort = deliver && o_abort;
  assign out_grant_valid = deliver && o_grant;
  assign out_grant_dst = o_gdst;
  assign out_grant_msg_id = o_gid;
  assign out_grant_size = o_gsize;
  assign out_waiting = hq_valid;

  // ================================================================ the unit on the output
  logic [63:0] p;
  assign p = o_block[65:2];
  logic           u_open;    // a request unit is passing (its /MS/ went out)
  logic [1:0]     u_idx;     // T index of its next block, saturating at 3
  logic [2:0]     u_kind;
  logic [15:0]    u_len;
  logic [VA_W-1:0] u_va;     // from T[1]
  logic           u_known;   // T[2] went out: u_asid is valid
  logic [AW-1:0]  u_asid;
  logic           u_res, u_deny, u_absent, u_missed;
  logic [FRAME_W-1:0] u_frame;

  logic [2:0] ms_kind;
  assign ms_kind = p[16 + edm_pkg::HDR_KIND_LSB +: edm_pkg::HDR_KIND_W];
  logic at_t2;   // the offered block is its unit's T[2]: the address completes
  assign at_t2 = o_valid && !o_first && u_open && u_idx == 2'd2;
  logic [AW-1:0] t2_asid;
  assign t2_asid = o_last ? p[edm_pkg::MT_TAIL_OFFSET*8 +: AW] : p[AW-1:0];

  logic [AW-1:0]    k_asid;
  logic [VPN_W-1:0] k_vpn;
  logic [63:0]      k_key;
  assign k_asid = at_t2 ? t2_asid : u_asid;
  assign k_vpn  = u_va[VA_W-1:PAGE_BITS];
  assign k_key  = {k_asid, VA_W'(k_vpn)};
  logic [31:0] k_bytes, k_end;
  logic        k_cross, k_write;
  assign k_bytes = u_kind == K_RMW ? 32'(edm_pkg::RMW_OPERAND_BYTES) : 32'(u_len);
  assign k_end   = 32'(u_va[PAGE_BITS-1:0]) + k_bytes;
  assign k_cross = k_bytes != 32'd0 && k_end > (32'd1 << PAGE_BITS);
  assign k_write = u_kind != K_RREQ;

  // ================================================================ TLB
  logic [TLB_N-1:0]              t_valid, t_writable;
  logic [TLB_N-1:0][AW-1:0]      t_asid;
  logic [TLB_N-1:0][VPN_W-1:0]   t_vpn;
  logic [TLB_N-1:0][FRAME_W-1:0] t_frame;
  logic [TLB_N-1:0][TLB_LOG2-1:0] t_rank;  // 0 = most recently used

  logic walking, lookup;
  assign lookup = u_open && (at_t2 || (u_known && !u_res)) && !walking;
  logic                hit;
  logic [TLB_LOG2-1:0] hit_i;
  always_comb begin
    hit = 1'b0;
    hit_i = '0;
    for (integer i = 0; i < TLB_N; i++)
      if (t_valid[i] && t_asid[i] == k_asid && t_vpn[i] == k_vpn) begin
        hit = 1'b1;
        hit_i = TLB_LOG2'(i);
      end
  end
  // Resolved this cycle (cross-page and absent need no entry).
  logic r_now, r_deny, r_hit;
  assign r_hit  = lookup && !k_cross && hit;
  assign r_now  = lookup && (k_cross || hit || u_absent);
  assign r_deny = k_cross || !hit || (k_write && !t_writable[hit_i]);

  // Whatever ends a unit (its last block, good or bad, an abort, the next /MS/)
  // waits for its translation, so every unit whose address came is looked up
  // exactly once, in order.
  logic ends;
  assign ends = o_abort || (o_valid && (o_first || o_last));
  assign hold = u_open && (at_t2 || u_known) && !u_res && !r_now && ends;
  assign xl_deny = u_res ? u_deny : r_deny;
  assign xl_addr = {u_res ? u_frame : t_frame[hit_i], u_va[PAGE_BITS-1:0]};

  // ================================================================ walker
  logic [AW-1:0]    w_asid;
  logic [VPN_W-1:0] w_vpn;
  logic [63:0]      w_base;
  logic [WJ_W-1:0]  w_issued, w_got;
  logic             w_match, w_found, w_stale, w_writable;
  logic [FRAME_W-1:0] w_frame;
  logic w_start, w_rd, w_end, owner_walk, owner_ready, owner_valid;
  assign w_start = lookup && !r_now;
  assign w_rd    = walking && w_issued != WJ_W'(WALK_READS);

  // The DRAM read channel: the walker first; owners in issue order.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [OWNERS_LOG2:0] owner_count;
  /* verilator lint_on UNUSEDSIGNAL */
  assign dram_rd_valid = owner_ready && (w_rd || eng_rd_valid);
  assign dram_rd_addr  = w_rd ? w_base + 64'({w_issued, 3'b000}) : eng_rd_addr;
  assign eng_rd_ready  = owner_ready && !w_rd && dram_rd_ready;
  edm_fifo #(.WIDTH(1), .DEPTH_LOG2(OWNERS_LOG2)) owner_q (
      .clk, .rst_n,
      .wr_valid(dram_rd_valid && dram_rd_ready), .wr_ready(owner_ready), .wr_data(w_rd),
      .rd_valid(owner_valid), .rd_ready(dram_rsp_valid), .rd_data(owner_walk),
      .count(owner_count)
  );
  assign eng_rsp_valid = dram_rsp_valid && !(owner_valid && owner_walk);
  assign eng_rsp_data  = dram_rsp_data;
  logic w_rsp;
  assign w_rsp = dram_rsp_valid && owner_valid && owner_walk;
  assign w_end = w_rsp && w_got + WJ_W'(1) == WJ_W'(WALK_READS);

  // The walk's outcome for the slot whose word 1 arrives now.
  logic w_slot_hit;
  assign w_slot_hit = w_match && dram_rsp_data[63];
  logic fill;   // a found mapping goes into the TLB
  assign fill = w_end && !w_stale && !mgmt_valid && (w_found || w_slot_hit);
  logic [TLB_LOG2-1:0] victim;
  logic                free_any;
  always_comb begin
    free_any = 1'b0;
    victim = '0;
    for (integer i = TLB_N - 1; i >= 0; i--)
      if (!t_valid[i]) begin
        free_any = 1'b1;
        victim = TLB_LOG2'(i);
      end
    if (!free_any)
      for (integer i = 0; i < TLB_N; i++)
        if (t_rank[i] == TLB_LOG2'(TLB_N - 1)) victim = TLB_LOG2'(i);
  end
  // LRU: the entry used (a hit that resolves a unit, or a fill) becomes rank 0.
  logic                touch;
  logic [TLB_LOG2-1:0] touch_i;
  assign touch   = fill || r_hit;
  assign touch_i = fill ? victim : hit_i;

  logic mgmt_hits [TLB_N];
  always_comb
    for (integer i = 0; i < TLB_N; i++)
      mgmt_hits[i] = t_asid[i] == mgmt_asid && (mgmt_whole_space || t_vpn[i] == mgmt_vpn);

  logic commit_out;
  assign commit_out = deliver && o_valid && !o_first && o_last && !o_error && u_open;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      u_open <= 1'b0;
      u_idx <= '0;
      u_kind <= '0;
      u_len <= '0;
      u_va <= '0;
      u_known <= 1'b0;
      u_asid <= '0;
      u_res <= 1'b0;
      u_deny <= 1'b0;
      u_absent <= 1'b0;
      u_missed <= 1'b0;
      u_frame <= '0;
      t_valid <= '0;
      t_writable <= '0;
      t_asid <= '0;
      t_vpn <= '0;
      t_frame <= '0;
      for (integer i = 0; i < TLB_N; i++) t_rank[i] <= TLB_LOG2'(i);
      walking <= 1'b0;
      w_asid <= '0;
      w_vpn <= '0;
      w_base <= '0;
      w_issued <= '0;
      w_got <= '0;
      w_match <= 1'b0;
      w_found <= 1'b0;
      w_stale <= 1'b0;
      w_writable <= 1'b0;
      w_frame <= '0;
      cnt_denied <= '0;
      cnt_tlb_hit <= '0;
      cnt_tlb_miss <= '0;
      cnt_overflow <= '0;
    end else begin
      // ---- the unit on the output
      if (r_now) begin
        u_res <= 1'b1;
        u_deny <= r_deny;
        u_frame <= t_frame[hit_i];
      end
      if (deliver && o_abort) u_open <= 1'b0;
      if (deliver && o_valid && !o_first && u_open) begin
        if (u_idx != 2'd3) u_idx <= u_idx + 2'd1;
        if (u_idx == 2'd1) u_va <= p[63:16];
        if (at_t2) begin
          u_known <= 1'b1;
          u_asid <= t2_asid;
        end
        if (o_last) u_open <= 1'b0;
      end
      if (deliver && o_valid && o_first) begin
        u_open <= ms_kind == K_RREQ || ms_kind == K_WREQ || ms_kind == K_RMW;
        u_idx <= 2'd1;
        u_kind <= ms_kind;
        u_len <= p[16 + edm_pkg::HDR_LEN_LSB +: edm_pkg::HDR_LEN_W];
        u_known <= 1'b0;
        u_res <= 1'b0;
        u_absent <= 1'b0;
        u_missed <= 1'b0;
      end
      // ---- walker
      if (w_start) begin
        walking <= 1'b1;
        w_asid <= k_asid;
        w_vpn <= k_vpn;
        w_base <= PT_BASE + {{(64 - PT_BUCKETS_LOG2){1'b0}}, bucket_of(k_key)} * 64'(PT_WAYS * 16);
        w_issued <= '0;
        w_got <= '0;
        w_found <= 1'b0;
        w_stale <= 1'b0;
        u_missed <= 1'b1;
      end
      if (w_rd && dram_rd_ready && owner_ready) w_issued <= w_issued + WJ_W'(1);
      if (w_rsp) begin
        w_got <= w_got + WJ_W'(1);
        if (!w_got[0]) w_match <= dram_rsp_data == {w_asid, VA_W'(w_vpn)};
        else if (w_slot_hit && !w_found) begin
          w_found <= 1'b1;
          w_writable <= dram_rsp_data[62];
          w_frame <= FRAME_W'(dram_rsp_data[61:0]);
        end
      end
      if (walking && mgmt_valid) w_stale <= 1'b1;
      if (w_end) begin
        walking <= 1'b0;
        // Nothing found for the unit still waiting on this key: it is denied.
        if (!fill && !w_stale && !mgmt_valid && (at_t2 || u_known) && k_asid == w_asid && k_vpn == w_vpn)
          u_absent <= 1'b1;
      end
      // ---- TLB
      for (integer i = 0; i < TLB_N; i++) begin
        if (touch && t_rank[i] < t_rank[touch_i]) t_rank[i] <= t_rank[i] + TLB_LOG2'(1);
        if (mgmt_valid && mgmt_hits[i]) t_valid[i] <= 1'b0;
      end
      if (touch) t_rank[touch_i] <= '0;
      if (fill) begin
        t_valid[victim] <= 1'b1;
        t_asid[victim] <= w_asid;
        t_vpn[victim] <= w_vpn;
        t_writable[victim] <= w_found ? w_writable : dram_rsp_data[62];
        t_frame[victim] <= w_found ? w_frame : FRAME_W'(dram_rsp_data[61:0]);
      end
      // ---- counters
      cnt_denied <= edm_pkg::sat_add(cnt_denied, {1'b0, commit_out && xl_deny});
      cnt_tlb_hit <= edm_pkg::sat_add(cnt_tlb_hit, {1'b0, r_hit && !u_missed});
      cnt_tlb_miss <= edm_pkg::sat_add(cnt_tlb_miss, {1'b0, w_start});
      cnt_overflow <= edm_pkg::sat_add(cnt_overflow, {1'b0, hq_push && !hq_wr_ready});
    end
  end

endmodule

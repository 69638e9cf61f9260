// EDM memory-node engine (§3.2.1 "Implementing RMWREQ", §2.3, docs/protocol.md
// §3 and §4): serves the RREQ, WREQ and RMWREQ units that edm_rx delivers at a
// memory node against a local memory (a DRAM controller port), and sends the
// read responses as RRES units toward edm_tx, one chunk per grant.
//
// Input (from edm_rx's mem_* port, block by block, no back-pressure): a unit
// is acted on only when it is complete and good (in_last && !in_error). Until
// then nothing leaves the receive buffers; a unit that ends in in_error or
// in_abort is forgotten and counted in cnt_dropped, as is a unit of a kind a
// memory node does not serve (RRES) or a WREQ longer than MAX_WRITE_BYTES.
// A unit that starts without room for its kind (in_room_write low for a WREQ:
// no data slot free; in_room_read low for an RREQ/RMWREQ: no response slot
// free) is not stored and is counted in cnt_overflow, as is a /G/ that finds
// the grant queue full. in_room_* are for the link side (edm_rx has no
// back-pressure; a testbench can pace on them). The default sizes lose nothing
// at full load without pacing (docs/hardware.md, "Memory node sizing"):
// COMPUTE_NODES x MAX_ACTIVE response slots, as many grant-queue entries again,
// and WREQ data slots for the shortest WREQs that arrive while the longest is
// written.
//
// Two memory channels, so that writes arriving at a word per cycle and reads
// leaving at a word per cycle both keep up with the link: the write engine
// serves WREQs in arrival order on the write channel; the read engine reaches
// RREQs and serves RMWREQs in arrival order, and reads each RREQ chunk's words
// when the chunk is granted, on the read channel. Memory order is still
// arrival order: a command waits while an earlier command of the other kind
// that overlaps it in 8-byte words is not finished (a read: all its words
// issued; an RMW: its write; a write: all its words), so every read sees
// exactly the writes that arrived before it. A read that a waiting write or
// RMW would overwrite is read to its end at once, ahead of its grants, so a
// write never waits for the switch. The memory must make a write accepted in
// one cycle visible to reads accepted in later cycles, and answer reads in
// order.
//   WREQ:   the data bytes are written with byte masks (any address, any length
//           1..MAX_WRITE_BYTES), one 8-byte word per write request.
//   RREQ:   takes a response slot as it arrives (so its grants find it); when
//           the read engine reaches it, its first chunk is queued as granted (the
//           RREQ is the first grant: min(CHUNK_BYTES, len) bytes); each queued
//           chunk's words are read into the slot's buffer, in grant order, the
//           first one in the cycle the chunk is queued. A read of
//           0 bytes gets an empty RRES (STATUS_OK); a read longer than
//           MAX_READ_BYTES an empty RRES with STATUS_ERROR (cnt_rejected).
//   RMWREQ: RMW_CAS / RMW_FAA / RMW_SWAP (edm_pkg) on the aligned 64-bit
//           little-endian word: read, then write (a failed CAS writes nothing).
//           ATOMIC: no other request to that word between the read and the
//           write (the order rule above; its read takes the read channel ahead
//           of the chunk reads, its write the write channel ahead of the write
//           engine). The old value returns as an 8-byte RRES once the write is
//           issued. An unknown opcode or an unaligned address is not executed:
//           empty RRES with STATUS_ERROR (cnt_rejected).
// Second copies (the dual switch, paper §3.3): a good unit whose last block
// comes with in_dup (edm_dup_filter saw its first copy on the other plane) is
// handled as a denied one: a WREQ is not written, an RMWREQ is answered with an
// empty RRES, STATUS_DENIED, without touching memory, so the switch of its
// plane, which has booked a circuit for the answer, gets one. An RMWREQ marked
// with in_replay as well (the filter keeps its first copy's result) is
// answered instead with that result, STATUS_OK, 8 bytes, without touching
// memory: when the engine reaches it, it waits for memo_ready (the other
// plane's engine may not have applied the first copy yet; memo_ok low: the
// result was forgotten or failed, answered STATUS_DENIED). The key of the
// command at the head (rmw_src, rmw_id) goes to the filter for the lookup, and
// rmw_done reports each RMWREQ answered that is not a second copy, with its
// result, so the filter can keep it.
// Order across the engines (PEER, the dual switch's two engines on one
// memory): each engine applies the first copies its plane brought; a first
// copy of a write or RMW, and a read (PEER_READS), also waits for the peer's
// overlapping commands that were committed before it, as it would for its own
// (ord_* out, peer_* in; "order across a dual node's engines" below), so the
// memory sees one commit order.
// Grants (/G/ for message (grant_dst, grant_msg_id) of this node): queued; each
// one releases the next chunk of its message, of min(grant_size, bytes not yet
// granted) bytes, seq counting from 0, last on the chunk that completes the
// message. One that names no pending response (e.g. its RREQ was corrupted) or
// no bytes left is discarded and counted (cnt_stray_grants).
// Chunk order = grant order: the switch routes an RRES unit by the order of the
// circuits it set up for this node (the forwarded RREQ and every /G/), not by
// its header, so chunks must leave in the order their grants arrived. A good
// RREQ/RMWREQ therefore puts a "first chunk" token in the grant queue when it
// arrives, and the queue is served strictly in order: a token waits until the
// engine has reached its command (the RMW's write issued), and every grant
// behind it waits too.
// Write acknowledgements (ACKS = 1; docs/protocol.md §4b): each WREQ that
// completes its message whole (header last, and in_whole: edm_dup_filter has
// seen every earlier chunk of it) is acknowledged once its last word is
// written (a write of no bytes: when the engine reaches it), and a second
// copy (in_dup) of one is acknowledged again as it arrives (if whole), so a
// requester whose /A/ was lost learns the outcome from its retry, and one
// whose earlier chunk was lost gets no /A/ until its re-send fills the hole;
// a denied WREQ is not acknowledged. The earlier chunks are committed (in
// this engine's queue or its peer's), not necessarily written, when the last
// one is acknowledged, as a second copy's /A/ may precede its first copy's
// write: an /A/ says the write will be applied, once. Without a filter tie
// in_whole high (a write then is acknowledged at its last chunk).
// edm_ack_sender turns them into /A/ blocks (per requester, paced to
// one per ACK_GAP_BLOCKS uplink blocks), sent between RRES units, ahead of
// the next one (one block). A second copy arriving in the cycle of a write's
// completion waits a cycle in a one-entry register; one more in that time is
// not acknowledged (counted in cnt_ack_dropped, as the sender's own drops).
// Output: the RRES units block by block (/MS/ /MD/.. /MT/, CRC-32C), out_last on
// the /MT/, and the /A/ blocks (ACKS); valid/ready as edm_tx's memory input. A chunk starts as soon as its
// first word is in the buffer and each block leaves once its words are
// (cut-through: back to back while the memory answers a word per cycle).
// Counters: 16-bit, saturating.
//
// Signal prefixes (the stage a signal belongs to, in the order a unit flows):
//   ms_ the fields of an arriving /MS/     rx_ the unit being received (edm_unit_receiver; nx_: as of this block)
//   x_  what a committed RREQ/RMWREQ will answer      rs_ the response slots
//   c_  the read command at the head of the command FIFO   e_  the read engine serving it
//   ws_ the WREQ data slots   w_  the write engine, the WREQ word being written
//   rmw_ the RMW's new value   a_ the answer is an error   f_ the chunk read (fq_: its queue)
//   t_  a memory read's tag (t_push, t_slot_q: a token at the head of the grant queue)
//   g_  the grant at the head of the grant queue      j_  the chunk at the head of the job queue
//   u_  its unit, block by block (edm_unit_emitter)   cmd_ gq_ jq_ tq_: FIFO ports
//   ak_ the write acknowledgements (ACKS)
module edm_mem_node #(
    parameter int unsigned CHUNK_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,  // the scheduler's chunk
    parameter int unsigned MAX_READ_BYTES = 1024,   // longest RREQ served (multiple of 8)
    parameter int unsigned MAX_WRITE_BYTES = edm_pkg::DEFAULT_CHUNK_BYTES,  // longest WREQ unit
    parameter int unsigned COMPUTE_NODES = 3,       // requesters sharing this node
    parameter int unsigned MAX_ACTIVE = edm_pkg::DEFAULT_MAX_ACTIVE_NOTIFS,  // X per requester
    // Responses in progress at once: one per read a requester may have open.
    parameter int unsigned READ_SLOTS_LOG2 = $clog2(COMPUTE_NODES * MAX_ACTIVE),
    parameter int unsigned TAGS_LOG2 = 4,           // memory reads in flight
    // Grant and chunk queues: a token per response slot and as many grants.
    parameter int unsigned GRANTS_LOG2 = READ_SLOTS_LOG2 + 1,
    // WREQ units buffered: one arriving, one being written and the shortest
    // WREQs (4 blocks) that can arrive while the longest one (up to
    // MAX_WRITE_BYTES / 8 + 1 words) is written (docs/hardware.md, "Memory node sizing").
    parameter int unsigned WSLOTS_LOG2 = $clog2((MAX_WRITE_BYTES / 8 + 2 + 3) / 4 + 2),
    // Request addresses are translated in front of the engine (edm_mem_translate
    // in edm_mem_node_xl): each unit's physical address and verdict arrive on
    // xl_addr / xl_deny with its last block. 0: the address is physical.
    parameter bit TRANSLATE = 1'b0,
    // A peer engine on the same memory (the dual switch: one engine per plane
    // behind edm_dup_filter): each first copy of a write or RMW is applied
    // after the peer's overlapping ones committed before it (peer_*). PEER_FIRST:
    // the peer's commits in the same cycle come first (the filter's plane order).
    // PEER_READS: reads take part too (a read after the peer's earlier writes and
    // RMWs, a write or RMW after its earlier reads); 0 leaves them out.
    parameter bit PEER = 1'b0,
    parameter bit PEER_FIRST = 1'b0,
    parameter bit PEER_READS = 1'b1,
    // Write acknowledgements (/A/, docs/protocol.md §4b), for requesters on
    // ports 0 .. 2^ACK_SRC_LOG2-1. 0: none (the node before issue 40).
    parameter bit ACKS = 1'b0,
    parameter int unsigned ACK_SRC_LOG2 = COMPUTE_NODES <= 2 ? 1 : $clog2(COMPUTE_NODES)
) (
    input  logic        clk,
    input  logic        rst_n,
    // From edm_rx: memory units, block by block.
    input  logic        in_valid,
    input  logic [65:0] in_block,
    input  logic        in_first,
    input  logic        in_last,
    input  logic        in_error,
    input  logic        in_abort,
    input  logic        in_dup,        // with in_last: a second copy (edm_dup_filter), handled as denied
    input  logic        in_replay,     // with in_dup on an RMWREQ: answered with the first copy's result
    input  logic        in_whole,      // with in_last: every chunk of its message up to this one seen (ACKS)
    output logic        in_room_read,  // a new RREQ/RMWREQ would be stored
    output logic        in_room_write, // a new WREQ would be stored
    // From edm_rx: good /G/ blocks.
    input  logic        grant_valid,
    input  logic [edm_pkg::PORT_BITS-1:0] grant_dst,
    input  logic [7:0]  grant_msg_id,
    input  logic [15:0] grant_size,
    // RMW results for second copies (edm_dup_filter; tie memo_ready high when unused).
    output logic        rmw_done,      // an RMWREQ (not a second copy) is answered now
    output logic        rmw_ok,        // ... with STATUS_OK and the old value rmw_old
    output logic [63:0] rmw_old,
    output logic [edm_pkg::PORT_BITS-1:0] rmw_src,  // the key of the command at the head
    output logic [7:0]  rmw_id,
    input  logic        memo_ready,    // the result for that key is known (or forgotten)
    input  logic        memo_ok,       // known and OK: the old value is memo_old
    input  logic [63:0] memo_old,
    // The order across a dual node's two engines (PEER): the commands this
    // engine has still to apply (ord_*, to the peer's peer_*), as slot masks:
    // busy, committed now (new), finished now (done), and the 8-byte words they
    // touch: writes (wr, per WREQ slot), and per response slot (rs) RMWs
    // (rs_rmw) and, with PEER_READS, reads not all fetched. ord_rd_wait: the
    // peer's reads this engine's next write or RMW waits for (the peer fetches
    // them at once). Tie peer_* to 0 without a peer.
    output logic [(1 << WSLOTS_LOG2)-1:0]      ord_wr_busy, ord_wr_new, ord_wr_done,
    output logic [(1 << WSLOTS_LOG2)*61-1:0]   ord_wr_w0, ord_wr_wl,
    output logic [(1 << READ_SLOTS_LOG2)-1:0]  ord_rs_busy, ord_rs_new, ord_rs_done, ord_rs_rmw, ord_rd_wait,
    output logic [(1 << READ_SLOTS_LOG2)*61-1:0] ord_rs_w0, ord_rs_wl,
    input  logic [(1 << WSLOTS_LOG2)-1:0]      peer_wr_busy, peer_wr_new, peer_wr_done,
    input  logic [(1 << WSLOTS_LOG2)*61-1:0]   peer_wr_w0, peer_wr_wl,
    input  logic [(1 << READ_SLOTS_LOG2)-1:0]  peer_rs_busy, peer_rs_new, peer_rs_done, peer_rs_rmw, peer_rd_wait,
    input  logic [(1 << READ_SLOTS_LOG2)*61-1:0] peer_rs_w0, peer_rs_wl,
    // With TRANSLATE: the translation of the unit whose last block is in_last.
    // A denied RREQ/RMWREQ is answered STATUS_DENIED, a denied WREQ never written.
    input  logic [63:0] xl_addr,
    input  logic        xl_deny,
    // Memory read channel: one 8-byte word per request; answered in order, any
    // number of cycles (>= 1) later, with no back-pressure on the answers.
    output logic        dram_rd_valid,
    input  logic        dram_rd_ready,
    output logic [63:0] dram_rd_addr,    // byte address, 8-byte aligned
    input  logic        dram_rsp_valid,
    input  logic [63:0] dram_rsp_data,
    // Memory write channel: one 8-byte word per request, visible to reads
    // accepted in any later cycle.
    output logic        dram_wr_valid,
    input  logic        dram_wr_ready,
    output logic [63:0] dram_wr_addr,    // byte address, 8-byte aligned
    output logic [63:0] dram_wr_data,    // little-endian: byte k of the word in bits [8k+7:8k]
    output logic [7:0]  dram_wr_mask,    // bit k: write byte k
    // Toward edm_tx's memory input: RRES units.
    output logic        out_valid,
    input  logic        out_ready,
    output logic [65:0] out_block,
    output logic        out_last,
    // Status counters (16-bit, saturating).
    output logic [15:0] cnt_rreq,          // RREQs served
    output logic [15:0] cnt_wreq,          // WREQs served
    output logic [15:0] cnt_rmw,           // RMWREQs served
    output logic [15:0] cnt_dropped,       // bad, aborted or unservable units
    output logic [15:0] cnt_overflow,      // units or grants lost to full queues
    output logic [15:0] cnt_rejected,      // good requests answered with STATUS_ERROR
    output logic [15:0] cnt_stray_grants,  // grants naming no pending response
    output logic [15:0] cnt_acks,          // /A/ sent (ACKS)
    output logic [15:0] cnt_ack_dropped    // acknowledgements not sent for lack of room (ACKS)
);
  // ---------------------------------------------------------------- sizes
  localparam int unsigned RS = 1 << READ_SLOTS_LOG2;          // response slots
  localparam int unsigned RSW = READ_SLOTS_LOG2;
  localparam int unsigned SLOT_WORDS = MAX_READ_BYTES / 8 + 1;  // an unaligned read spans one more word
  localparam int unsigned WIW = $clog2(SLOT_WORDS + 1);       // a word index or count in a slot
  localparam int unsigned RBW = $clog2(RS * SLOT_WORDS);      // response buffer address
  // WREQ data slots: the unit's blocks as 8-byte words T[i] (see below).
  localparam int unsigned WBW = $clog2(MAX_WRITE_BYTES / 8 + 6);
  localparam int unsigned WS = 1 << WSLOTS_LOG2;               // WREQ data slots
  localparam int unsigned CMD_W = 3 + 3 + 16 + 4 + 64 + 64 + 64 + READ_SLOTS_LOG2;
  localparam int unsigned TAG_W = 1 + RSW + WIW;
  localparam int unsigned GQ_W = 1 + RSW + edm_pkg::PORT_BITS + 8 + 16;  // {token, slot, dst, id, size}
  localparam int unsigned JOB_W = RSW + 16 + 16 + 12 + 1;

  localparam logic [2:0] K_RREQ = 3'(edm_pkg::KIND_RREQ);
  localparam logic [2:0] K_WREQ = 3'(edm_pkg::KIND_WREQ);
  localparam logic [2:0] K_RMW = 3'(edm_pkg::KIND_RMWREQ);
  localparam logic [3:0] OP_CAS = 4'(edm_pkg::RMW_CAS);
  localparam logic [3:0] OP_FAA = 4'(edm_pkg::RMW_FAA);
  localparam logic [3:0] OP_SWAP = 4'(edm_pkg::RMW_SWAP);
  localparam logic [15:0] CHUNK = 16'(CHUNK_BYTES);
  localparam logic [15:0] MAX_READ = 16'(MAX_READ_BYTES);
  localparam logic [15:0] MAX_WRITE = 16'(MAX_WRITE_BYTES);
  localparam logic [15:0] RMW_BYTES = 16'(edm_pkg::RMW_RESULT_BYTES);
  localparam int unsigned OP_IN_T1 = edm_pkg::HDR_OP_LSB - 48;  // header bits 48..63 are T[1][15:0]
  localparam int unsigned LAST_IN_T1 = edm_pkg::HDR_LAST_LSB - 48;

  // A unit as 8-byte words: T = 2 zero bytes || M, so T[0] is the /MS/ payload
  // with its type bytes cleared, T[i] the i-th /MD/ (i >= 1) and T[n_md + 1] the
  // /MT/ tail bytes in bytes 0..1. Hence the address is {T[2][15:0], T[1][63:16]},
  // arg0 {T[3][15:0], T[2][63:16]}, arg1 {T[4][15:0], T[3][63:16]}, and WREQ data
  // byte k is T byte 18 + k.

  // ================================================================ receive
  logic           fresh, cont, commit, bad_end;
  logic [63:0]    t_word;
  logic [2:0]     ms_kind;
  logic [15:0]    ms_len;
  logic           ms_supported, ms_room, ms_store;
  logic [WBW-1:0] rx_idx;    // T index of the next block
  logic [2:0]     rx_kind;
  logic [edm_pkg::PORT_BITS-1:0] rx_src, rx_dst;
  logic [7:0]     rx_id;
  logic [15:0]    rx_len;
  /* verilator lint_off UNUSEDSIGNAL */
  logic           rx_seq0;   // a request's seq is 0
  /* verilator lint_on UNUSEDSIGNAL */
  edm_unit_receiver #(.IDX_W(WBW)) receive (
      .clk, .rst_n,
      .in_valid, .in_block, .in_first, .in_last, .in_error, .in_abort,
      .fresh, .ms_kind, .ms_len, .ms_store, .t_word, .cont, .commit, .bad_end,
      .rx_idx, .rx_kind, .rx_src, .rx_dst, .rx_id, .rx_len, .rx_seq0);
  assign ms_supported = ms_kind == K_RREQ || ms_kind == K_RMW || (ms_kind == K_WREQ && ms_len <= MAX_WRITE);
  assign ms_room  = ms_kind == K_WREQ ? in_room_write : in_room_read;
  assign ms_store = ms_supported && ms_room;

  logic [3:0]     rx_op, nx_op;
  logic           rx_mlast, nx_mlast;  // the unit completes its message (header last)
  logic [63:0]    rx_addr, rx_arg0, rx_arg1, nx_addr, nx_arg0, nx_arg1;
  logic [WSLOTS_LOG2-1:0] rx_wslot;     // WREQ data slot of the unit being received
  logic [WSLOTS_LOG2:0]   wslots_used;  // committed WREQs whose data the engine still needs

  always_comb begin
    nx_op = rx_op;
    nx_mlast = rx_mlast;
    nx_addr = rx_addr;
    nx_arg0 = rx_arg0;
    nx_arg1 = rx_arg1;
    if (rx_idx == 1) begin
      nx_addr[47:0] = t_word[63:16];
      nx_op = t_word[OP_IN_T1 +: edm_pkg::HDR_OP_W];
      nx_mlast = t_word[LAST_IN_T1];
    end
    if (rx_idx == 2) begin
      nx_addr[63:48] = t_word[15:0];
      nx_arg0[47:0] = t_word[63:16];
    end
    if (rx_idx == 3) begin
      nx_arg0[63:48] = t_word[15:0];
      nx_arg1[47:0] = t_word[63:16];
    end
    if (rx_idx == 4) nx_arg1[63:48] = t_word[15:0];
  end

  // The committed unit's physical address, and whether it is denied.
  logic [63:0] x_addr;
  logic        x_deny, x_replay;
  assign x_addr = TRANSLATE ? xl_addr : nx_addr;
  assign x_replay = in_dup && in_replay && rx_kind == K_RMW;
  assign x_deny = (TRANSLATE && xl_deny) || (in_dup && !x_replay);
  // What a committed RREQ/RMWREQ will answer: x_len bytes, STATUS_ERROR if x_err
  // (STATUS_DENIED if x_deny).
  logic        x_err;
  logic [15:0] x_len;
  always_comb begin
    if (rx_kind == K_RREQ) x_err = rx_len > MAX_READ;
    else x_err = !(nx_op == OP_CAS || nx_op == OP_FAA || nx_op == OP_SWAP) || nx_addr[2:0] != 3'd0;
    x_err = x_err || x_deny;
    x_len = x_err ? 16'd0 : (rx_kind == K_RREQ ? rx_len : RMW_BYTES);
  end

  logic cmd_wr_ready;
  logic w_commit;
  assign w_commit = commit && rx_kind == K_WREQ && !x_deny;  // a denied write takes no slot
  // A committed RREQ/RMWREQ's place in the grant order. edm_rx delivers one
  // block's result per cycle, so a /G/ never comes in the cycle of a unit's
  // last block; if it does, the grant is lost and counted in cnt_overflow.
  logic tok_in;
  assign tok_in = commit && rx_kind != K_WREQ;

  // WREQ data slots: WS x 2^WBW words, written as the blocks arrive.
  logic [63:0] wram [WS << WBW];
  always_ff @(posedge clk)
    if (cont && rx_kind == K_WREQ) wram[{rx_wslot, rx_idx}] <= t_word;

  // The 8-byte words a committed unit touches: [x_w0, x_wl] (RMW: one word).
  logic [60:0] x_w0, x_wl;
  logic [16:0] x_end;  // the last byte's offset from word x_w0
  assign x_end = {14'b0, nx_addr[2:0]} + {1'b0, rx_kind == K_WREQ ? rx_len : x_len} - 17'd1;
  assign x_w0  = x_addr[63:3];
  assign x_wl  = x_w0 + {47'b0, 14'(x_end >> 3)};
  // Accesses memory at all (an empty or rejected request does not).
  logic x_access;
  assign x_access = rx_kind == K_WREQ ? rx_len != 16'd0 : (x_len != 16'd0 && !x_err && !x_replay);

  // ================================================================ queues
  // Read commands (RREQ, RMWREQ), each holding a response slot, so never full.
  logic               cmd_valid, cmd_pop;
  logic [CMD_W-1:0]   cmd_data;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [READ_SLOTS_LOG2:0] cmd_count;
  /* verilator lint_on UNUSEDSIGNAL */
  edm_fifo #(.WIDTH(CMD_W), .DEPTH_LOG2(READ_SLOTS_LOG2)) cmd_q (
      .clk, .rst_n,
      .wr_valid(tok_in), .wr_ready(cmd_wr_ready),
      .wr_data({in_dup, x_replay, x_deny, rx_kind, rx_len, nx_op, x_addr, nx_arg0, nx_arg1, free_idx}),
      .rd_valid(cmd_valid), .rd_ready(cmd_pop), .rd_data(cmd_data),
      .count(cmd_count)
  );
  assign in_room_write = wslots_used < (WSLOTS_LOG2 + 1)'(WS);
  assign in_room_read  = free_any;

  // WREQ commands: one per data slot, served in slot order by the write engine.
  logic [WS-1:0]            ws_busy;   // committed, not yet all written
  logic [WS-1:0]            ws_access; // has bytes to write
  logic [WS-1:0][63:0]      ws_addr;
  logic [WS-1:0][15:0]      ws_len;
  logic [WS-1:0][60:0]      ws_w0, ws_wl;
  logic [WS-1:0][RS-1:0]    ws_after;  // the reads and RMWs that arrived before it, not finished

  // Memory reads in flight: {rmw, slot, word}.
  logic             tq_wr_valid, tq_wr_ready, tq_valid, tq_pop;
  logic [TAG_W-1:0] tq_wr_data, tq_data;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [TAGS_LOG2:0] tq_count;
  logic [GRANTS_LOG2:0] gq_count, jq_count;
  /* verilator lint_on UNUSEDSIGNAL */
  edm_fifo #(.WIDTH(TAG_W), .DEPTH_LOG2(TAGS_LOG2)) tag_q (
      .clk, .rst_n,
      .wr_valid(tq_wr_valid), .wr_ready(tq_wr_ready), .wr_data(tq_wr_data),
      .rd_valid(tq_valid), .rd_ready(tq_pop), .rd_data(tq_data),
      .count(tq_count)
  );

  // Grants: {dst, msg_id, size}.
  logic            gq_wr_ready, gq_valid, gq_pop;
  logic [GQ_W-1:0] gq_data;
  edm_fifo #(.WIDTH(GQ_W), .DEPTH_LOG2(GRANTS_LOG2)) grant_q (
      .clk, .rst_n,
      .wr_valid(grant_valid || tok_in), .wr_ready(gq_wr_ready),
      .wr_data(tok_in ? {1'b1, free_idx, 34'b0} : {1'b0, RSW'(0), grant_dst, grant_msg_id, grant_size}),
      .rd_valid(gq_valid), .rd_ready(gq_pop), .rd_data(gq_data),
      .count(gq_count)
  );

  // Chunks to send: {slot, offset, size, seq, last}.
  logic             jq_wr_valid, jq_wr_ready, jq_valid, jq_pop;
  logic [JOB_W-1:0] jq_wr_data, jq_data;
  edm_fifo #(.WIDTH(JOB_W), .DEPTH_LOG2(GRANTS_LOG2)) job_q (
      .clk, .rst_n,
      .wr_valid(jq_wr_valid), .wr_ready(jq_wr_ready), .wr_data(jq_wr_data),
      .rd_valid(jq_valid), .rd_ready(jq_pop), .rd_data(jq_data),
      .count(jq_count)
  );

  // ================================================================ response slots
  logic [RS-1:0]            rs_valid;
  logic [RS-1:0]            rs_started;  // its first chunk is queued
  logic [RS-1:0]            rs_reached;  // the engine has reached its command
  logic [RS-1:0][edm_pkg::PORT_BITS-1:0] rs_req;      // the requester: the RRES's dst
  logic [RS-1:0][edm_pkg::PORT_BITS-1:0] rs_port;     // this node: the RRES's src
  logic [RS-1:0][7:0]       rs_id;
  logic [RS-1:0][15:0]      rs_len;      // bytes the response carries
  logic [RS-1:0][15:0]      rs_granted;  // bytes queued as chunks so far
  logic [RS-1:0][11:0]      rs_seq;      // seq of the next chunk
  logic [RS-1:0][2:0]       rs_a;        // address mod 8
  logic [RS-1:0]            rs_err;      // STATUS_ERROR
  logic [RS-1:0]            rs_denied;   // STATUS_DENIED
  logic [RS-1:0][WIW-1:0]   rs_arrived;  // words in the buffer
  logic [RS-1:0]            rs_pend;     // its memory requests are not all issued
  logic [RS-1:0][WIW-1:0]   rs_fetched;  // RREQ: words read (issued) so far
  logic [RS-1:0][WIW-1:0]   rs_total;    // RREQ: words to read
  logic [RS-1:0][60:0]      rs_w0, rs_wl;  // the words it reads
  logic [RS-1:0][WS-1:0]    rs_after;    // the WREQs that arrived before it, not all written

  logic [63:0] rbuf [RS * SLOT_WORDS];

  logic           free_any;
  logic [RSW-1:0] free_idx;
  always_comb begin
    free_any = 1'b0;
    free_idx = '0;
    for (integer i = RS - 1; i >= 0; i--)
      if (!rs_valid[i]) begin
        free_any = 1'b1;
        free_idx = RSW'(i);
      end
  end

  // ================================================================ read engine
  localparam logic [2:0] E_IDLE = 3'd0, E_REPLAY = 3'd1, E_RMW_RD = 3'd3,
                         E_RMW_WAIT = 3'd4, E_RMW_WR = 3'd5, E_RMW_DONE = 3'd6;
  logic [2:0]  e_state;
  logic [63:0] e_old;       // RMW: the word read

  logic [2:0]  c_kind;
  logic [15:0] c_len;
  logic [3:0]  c_op;
  logic [63:0] c_addr, c_arg0, c_arg1;
  logic [RSW-1:0] c_slot;   // its response slot
  logic        c_deny, c_dup, c_replay;
  assign {c_dup, c_replay, c_deny, c_kind, c_len, c_op, c_addr, c_arg0, c_arg1, c_slot} = cmd_data;

  logic c_read_ok, c_rmw_ok;
  assign c_read_ok = c_len <= MAX_READ;
  assign c_rmw_ok  = (c_op == OP_CAS || c_op == OP_FAA || c_op == OP_SWAP) && c_addr[2:0] == 3'd0;

  // An earlier WREQ not all written that touches the command's words.
  logic r_hazard;
  always_comb begin
    r_hazard = 1'b0;
    for (integer k = 0; k < WS; k++)
      if (rs_after[c_slot][k]
          && ws_w0[k] <= rs_wl[c_slot] && rs_w0[c_slot] <= ws_wl[k])
        r_hazard = 1'b1;
  end
  // An RMW also waits for the earlier reads that have not fetched its word yet
  // (every reached read is earlier; they are fetched ahead, see f_force).
  logic [RS-1:0] rmw_war;
  always_comb
    for (integer i = 0; i < RS; i++)
      rmw_war[i] = e_state == E_RMW_RD && rs_reached[i] && rs_pend[i]
                   && rs_w0[i] <= c_addr[63:3] && c_addr[63:3] <= rs_wl[i];

  // RMW: the new value.
  logic        rmw_write, rmw_wr;
  logic [63:0] rmw_new;
  always_comb begin
    rmw_write = 1'b1;
    rmw_new = c_arg0;                          // SWAP
    if (c_op == OP_FAA) rmw_new = e_old + c_arg0;
    if (c_op == OP_CAS) begin
      rmw_new = c_arg1;
      rmw_write = e_old == c_arg0;
    end
  end
  assign rmw_wr = e_state == E_RMW_WR && rmw_write;
  // The RMW's read: it has the read channel before the chunk fetches.
  logic rmw_rd, dram_fire;
  assign rmw_rd = e_state == E_RMW_RD && !r_hazard && rmw_war == '0 && !r_peer_hazard;

  // Read answers go to the response buffer.
  logic           rsp_fire, t_rmw;
  logic [RSW-1:0] t_slot;
  logic [WIW-1:0] t_word_idx;
  assign {t_rmw, t_slot, t_word_idx} = tq_data;
  assign rsp_fire = dram_rsp_valid && tq_valid;
  assign tq_pop   = rsp_fire;
  // A replayed RMW's result goes to its slot's buffer in a cycle without a
  // read answer (chunk fetches pause meanwhile, so one comes).
  logic replay_fill;
  assign replay_fill = e_state == E_REPLAY && memo_ready && !rsp_fire;
  always_ff @(posedge clk)
    if (rsp_fire) rbuf[RBW'(t_slot) * RBW'(SLOT_WORDS) + RBW'(t_word_idx)] <= dram_rsp_data;
    else if (replay_fill) rbuf[RBW'(c_slot) * RBW'(SLOT_WORDS)] <= memo_ok ? memo_old : '0;
  assign rmw_src  = rs_req[c_slot];
  assign rmw_id   = rs_id[c_slot];
  assign rmw_done = e_done && c_kind == K_RMW && !c_dup;
  assign rmw_ok   = !a_err;
  assign rmw_old  = e_old;

  // The engine reaches an RREQ once no earlier write it reads is pending (its
  // words are then fetched chunk by chunk as granted), an RMW once it is done.
  logic        e_push, e_done, a_err;
  assign a_err = c_deny || (c_kind == K_RREQ ? !c_read_ok : !c_rmw_ok);
  // (e_push: the engine has reached the command; its first chunk goes when its
  // token reaches the head of the grant queue.)
  assign e_push = (e_state == E_IDLE && cmd_valid
                   && ((c_kind == K_RREQ && !(rs_pend[c_slot] && (r_hazard || r_peer_hazard)))
                       || (c_kind == K_RMW && a_err)))
                  || e_state == E_RMW_DONE;
  assign e_done = e_push;
  assign cmd_pop = e_done;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      e_state <= E_IDLE;
      e_old <= '0;
    end else begin
      case (e_state)
        E_IDLE: if (cmd_valid && c_kind == K_RMW && !a_err) e_state <= c_replay ? E_REPLAY : E_RMW_RD;
        E_REPLAY: if (replay_fill) e_state <= E_RMW_DONE;
        E_RMW_RD: if (dram_fire && rmw_rd) e_state <= E_RMW_WAIT;
        E_RMW_WAIT:
          if (rsp_fire && t_rmw) begin
            e_old <= dram_rsp_data;
            e_state <= E_RMW_WR;
          end
        E_RMW_WR: if (dram_wr_ready || !rmw_write) e_state <= E_RMW_DONE;
        E_RMW_DONE: e_state <= E_IDLE;
        default: e_state <= E_IDLE;
      endcase
    end
  end

  // ================================================================ write engine
  logic [WSLOTS_LOG2-1:0] w_head;   // data slot of the WREQ being written
  logic [13:0] w_j;                 // its word being written
  logic [2:0]  w_a;
  logic [16:0] w_end;               // a + len - 1: the last byte's offset from its first word
  logic [13:0] w_last_j;
  logic        w_hazard, w_issue, w_fire, w_done;
  assign w_a      = ws_addr[w_head][2:0];
  assign w_end    = {14'b0, w_a} + {1'b0, ws_len[w_head]} - 17'd1;
  assign w_last_j = w_end[16:3];
  // An earlier read or RMW not finished that touches the WREQ's words.
  logic [RS-1:0] w_hazard_rs;
  always_comb
    for (integer i = 0; i < RS; i++)
      w_hazard_rs[i] = ws_busy[w_head] && ws_access[w_head] && ws_after[w_head][i]
                       && rs_w0[i] <= ws_wl[w_head] && ws_w0[w_head] <= rs_wl[i];
  assign w_hazard = w_hazard_rs != '0;

  // WREQ word w_j: memory bytes 8*w_j .. 8*w_j+7 from its first word are T bytes
  // 8*w_j + 18 - a .. : T[q] and T[q+1] shifted right by s bytes.
  logic [WBW-1:0] w_q;
  logic [2:0]     w_s;
  logic [63:0]    w_lo, w_hi, w_data;
  logic [2:0]     w_first_lane, w_last_lane;
  logic [7:0]     w_mask;
  assign w_q  = w_j[WBW-1:0] + (w_a <= 3'd2 ? WBW'(2) : WBW'(1));
  assign w_s  = 3'd2 - w_a;
  assign w_lo = wram[{w_head, w_q}];
  assign w_hi = wram[{w_head, w_q + WBW'(1)}];
  assign w_data = 64'({w_hi, w_lo} >> {w_s, 3'b000});
  assign w_first_lane = w_j == 14'd0 ? w_a : 3'd0;
  assign w_last_lane  = w_j == w_last_j ? w_end[2:0] : 3'd7;
  always_comb
    for (integer b = 0; b < 8; b++) w_mask[b] = 3'(b) >= w_first_lane && 3'(b) <= w_last_lane;

  // The write channel: an RMW's write first, else the WREQ's next word.
  assign w_issue = ws_busy[w_head] && ws_access[w_head] && !w_hazard && !w_peer_hazard && !rmw_wr;
  always_comb begin
    dram_wr_valid = rmw_wr || w_issue;
    dram_wr_addr  = {ws_addr[w_head][63:3] + 61'(w_j), 3'b000};
    dram_wr_data  = w_data;
    dram_wr_mask  = w_mask;
    if (rmw_wr) begin
      dram_wr_addr = {c_addr[63:3], 3'b000};
      dram_wr_data = rmw_new;
      dram_wr_mask = 8'hFF;
    end
  end
  assign w_fire = w_issue && dram_wr_ready;
  assign w_done = ws_busy[w_head] && (!ws_access[w_head] || (w_fire && w_j == w_last_j));

  // Commands finishing this cycle, as masks (dependencies on them are cleared).
  logic [RS-1:0] rd_finish;
  logic [WS-1:0] wr_finish;
  always_comb begin
    rd_finish = '0;
    wr_finish = '0;
    if (e_done && c_kind == K_RMW) rd_finish[c_slot] = 1'b1;
    if (f_fire && rs_fetched[f_slot] + WIW'(1) == rs_total[f_slot]) rd_finish[f_slot] = 1'b1;
    if (w_done) wr_finish[w_head] = 1'b1;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      w_head <= '0;
      w_j <= '0;
    end else if (w_done) begin
      w_head <= w_head + 1'b1;
      w_j <= '0;
    end else if (w_fire) w_j <= w_j + 14'd1;
  end

  // ================================================================ order across a dual node's engines
  // Each first copy of a write or RMW, and each read (PEER_READS), keeps the
  // peer's commands that were committed before it and are not finished
  // (cleared as they finish; a slot is reused only after) and waits while one
  // it must follow touches its words, as within one engine: a read follows
  // writes and RMWs, a write or RMW follows all three. The memory then sees
  // one commit order, as one engine would give it (RMWs atomic against each
  // other, a read a snapshot at its commit). A peer read that a waiting write
  // or RMW needs is fetched to its end at once (ord_rd_wait, as f_force here),
  // so no write waits for a grant. Every wait is for a command committed
  // earlier, so none can close a cycle.
  logic [RS-1:0]         rs_rmw_w;      // an RMW that writes, not done
  logic [WS-1:0][WS-1:0] ws_peer_wr;    // per WREQ slot: the peer's earlier writes
  logic [WS-1:0][RS-1:0] ws_peer_rs;    // ... and reads and RMWs
  logic [RS-1:0][WS-1:0] rs_peer_wr;    // per response slot, likewise
  logic [RS-1:0][RS-1:0] rs_peer_rs;
  logic [WS-1:0] peer_wr_before, wr_commit_slot;
  logic [RS-1:0] peer_rs_before, rs_commit_slot, rmw_commit_w;
  logic          rs_ordered;            // the response slot committed now takes part
  assign peer_wr_before = PEER ? (peer_wr_busy & ~peer_wr_done) | (PEER_FIRST ? peer_wr_new : '0) : '0;
  assign peer_rs_before = PEER ? (peer_rs_busy & ~peer_rs_done) | (PEER_FIRST ? peer_rs_new : '0) : '0;
  assign wr_commit_slot = w_commit ? WS'(1) << rx_wslot : '0;
  assign rs_commit_slot = tok_in ? RS'(1) << free_idx : '0;
  assign rs_ordered     = x_access && (rx_kind == K_RMW || PEER_READS);
  assign rmw_commit_w   = rx_kind == K_RMW && x_access ? rs_commit_slot : '0;
  assign ord_wr_busy = ws_busy & ws_access;
  assign ord_wr_new  = x_access ? wr_commit_slot : '0;
  assign ord_wr_done = wr_finish;
  assign ord_wr_w0   = ws_w0;
  assign ord_wr_wl   = ws_wl;
  assign ord_rs_busy = PEER_READS ? rs_pend : rs_rmw_w;   // rs_pend: reads not all fetched, RMWs not done
  assign ord_rs_new  = rs_ordered ? rs_commit_slot : '0;
  assign ord_rs_done = rd_finish;
  assign ord_rs_rmw  = rs_rmw_w;
  assign ord_rs_w0   = rs_w0;
  assign ord_rs_wl   = rs_wl;
  logic w_peer_hazard, r_peer_hazard;
  logic [RS-1:0] peer_rs_needed;   // the peer's reads and RMWs the next write or RMW waits for
  always_comb begin
    logic [60:0] pw0, pwl;
    w_peer_hazard = 1'b0;
    r_peer_hazard = 1'b0;
    peer_rs_needed = '0;
    for (integer k = 0; k < WS; k++) begin
      pw0 = peer_wr_w0[k*61 +: 61];
      pwl = peer_wr_wl[k*61 +: 61];
      if (ws_peer_wr[w_head][k] && pw0 <= ws_wl[w_head] && ws_w0[w_head] <= pwl) w_peer_hazard = 1'b1;
      if (rs_peer_wr[c_slot][k] && pw0 <= rs_wl[c_slot] && rs_w0[c_slot] <= pwl) r_peer_hazard = 1'b1;
    end
    for (integer i = 0; i < RS; i++) begin
      pw0 = peer_rs_w0[i*61 +: 61];
      pwl = peer_rs_wl[i*61 +: 61];
      if (ws_peer_rs[w_head][i] && pw0 <= ws_wl[w_head] && ws_w0[w_head] <= pwl) begin
        w_peer_hazard = 1'b1;
        peer_rs_needed[i] = ws_busy[w_head] && ws_access[w_head];
      end
      // (a read does not wait for the peer's reads)
      if (rs_peer_rs[c_slot][i] && (c_kind == K_RMW || peer_rs_rmw[i])
          && pw0 <= rs_wl[c_slot] && rs_w0[c_slot] <= pwl) begin
        r_peer_hazard = 1'b1;
        if (e_state == E_RMW_RD) peer_rs_needed[i] = 1'b1;
      end
    end
  end
  assign ord_rd_wait = peer_rs_needed & ~peer_rs_rmw;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rs_rmw_w <= '0;
      ws_peer_wr <= '0;
      ws_peer_rs <= '0;
      rs_peer_wr <= '0;
      rs_peer_rs <= '0;
    end else begin
      rs_rmw_w <= (rs_rmw_w | rmw_commit_w) & ~rd_finish;
      for (integer k = 0; k < WS; k++) begin
        ws_peer_wr[k] <= wr_commit_slot[k] ? peer_wr_before : ws_peer_wr[k] & ~peer_wr_done;
        ws_peer_rs[k] <= wr_commit_slot[k] ? peer_rs_before : ws_peer_rs[k] & ~peer_rs_done;
      end
      // A command that takes no part starts with empty masks (its slot's last
      // ones may still name unfinished commands).
      for (integer i = 0; i < RS; i++) begin
        rs_peer_wr[i] <= rs_commit_slot[i] ? (rs_ordered ? peer_wr_before : '0) : rs_peer_wr[i] & ~peer_wr_done;
        rs_peer_rs[i] <= rs_commit_slot[i] ? (rs_ordered ? peer_rs_before : '0) : rs_peer_rs[i] & ~peer_rs_done;
      end
    end
  end

  // ================================================================ grants
  logic [edm_pkg::PORT_BITS-1:0] g_dst;
  logic [7:0]     g_id;
  logic [15:0]    g_size, g_rem, g_take;
  logic           g_match, g_push, g_stray;
  logic [RSW-1:0] g_slot;
  logic           g_tok;
  logic [RSW-1:0] t_slot_q;
  logic           t_push;
  assign {g_tok, t_slot_q, g_dst, g_id, g_size} = gq_data;
  // A token at the head: the read's first chunk, once the engine has reached it.
  assign t_push = gq_valid && g_tok && (rs_reached[t_slot_q] || (e_push && c_slot == t_slot_q))
                  && jq_wr_ready && fq_wr_ready;
  always_comb begin
    g_match = 1'b0;
    g_slot = '0;
    for (integer i = RS - 1; i >= 0; i--)
      if (rs_valid[i] && rs_req[i] == g_dst && rs_id[i] == g_id) begin
        g_match = 1'b1;
        g_slot = RSW'(i);
      end
  end
  assign g_rem   = rs_len[g_slot] - rs_granted[g_slot];
  assign g_take  = g_size < g_rem ? g_size : g_rem;
  // A grant for a slot whose first chunk is not queued yet waits (it is next).
  assign g_stray = gq_valid && !g_tok
                   && (!g_match || !rs_started[g_slot] || g_rem == 16'd0 || g_size == 16'd0);
  assign g_push  = gq_valid && !g_tok && !g_stray && jq_wr_ready && fq_wr_ready;
  assign gq_pop  = t_push || g_push || g_stray;

  assign jq_wr_valid = t_push || g_push;
  assign jq_wr_data  = t_push ? {t_slot_q, 16'd0, rs_granted[t_slot_q], 12'd0,
                                 rs_granted[t_slot_q] == rs_len[t_slot_q]}
                              : {g_slot, rs_granted[g_slot], g_take, rs_seq[g_slot], g_take == g_rem};

  // ================================================================ chunk fetch
  // Each queued chunk (in grant order) needs its slot's words up to f_upto read;
  // a slot's words are read in order, once (rs_fetched). A slot that a waiting
  // write or RMW would overwrite is read to its end first (f_force), so a write
  // never waits for a grant.
  logic [RS-1:0]  f_force;
  logic           f_forced, f_valid, f_issue, fq_valid, fq_pop, fq_wr_ready;
  logic [RSW-1:0] f_slot, fq_slot, fq_wr_slot;
  logic [WIW-1:0] f_upto, fq_upto, fq_wr_upto;
  logic [16:0]    fq_wr_end;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [GRANTS_LOG2:0] fq_count;
  /* verilator lint_on UNUSEDSIGNAL */
  assign fq_wr_slot = t_push ? t_slot_q : g_slot;
  assign fq_wr_end  = {14'b0, rs_a[fq_wr_slot]} + {1'b0, jq_wr_data[JOB_W-RSW-1 -: 16]}
                    + {1'b0, jq_wr_data[JOB_W-RSW-17 -: 16]} + 17'd7;   // a + off + size + 7
  assign fq_wr_upto = WIW'(fq_wr_end >> 3);
  edm_fifo #(.WIDTH(RSW + WIW), .DEPTH_LOG2(GRANTS_LOG2)) fetch_q (
      .clk, .rst_n,
      .wr_valid(jq_wr_valid), .wr_ready(fq_wr_ready), .wr_data({fq_wr_slot, fq_wr_upto}),
      .rd_valid(fq_valid), .rd_ready(fq_pop), .rd_data({fq_slot, fq_upto}),
      .count(fq_count)
  );
  always_comb
    for (integer i = 0; i < RS; i++)
      f_force[i] = rmw_war[i] || (w_hazard_rs[i] && rs_reached[i])
                   || (PEER && peer_rd_wait[i] && rs_reached[i] && rs_pend[i]);
  always_comb begin
    f_forced = 1'b0;
    f_slot = fq_slot;
    f_upto = fq_upto;
    f_valid = fq_valid;
    if (!fq_valid) begin   // an empty queue: the chunk being queued, at once
      f_slot = fq_wr_slot;
      f_upto = fq_wr_upto;
      f_valid = jq_wr_valid;
    end
    for (integer i = RS - 1; i >= 0; i--)
      if (f_force[i]) begin
        f_forced = 1'b1;
        f_slot = RSW'(i);
        f_upto = rs_total[i];
        f_valid = 1'b1;
      end
  end
  // The target has words left to read. Reads are fetched only once reached; a
  // queued chunk may outlive its response (its words were read ahead) and then
  // names a reused slot: it is skipped, or reads that read's first words early,
  // which is harmless once that read is reached.
  logic f_more;
  assign f_more  = (rs_reached[f_slot] || (e_push && c_slot == f_slot))
                   && rs_fetched[f_slot] < f_upto && rs_fetched[f_slot] < rs_total[f_slot];
  assign f_issue = f_valid && f_more && !rmw_rd && !(e_state == E_REPLAY && memo_ready);
  assign fq_pop  = fq_valid && !f_forced && (!f_more || (f_fire && rs_fetched[f_slot] + WIW'(1) == f_upto));

  assign dram_rd_valid = (rmw_rd || f_issue) && tq_wr_ready;
  assign dram_rd_addr  = rmw_rd ? {c_addr[63:3], 3'b000} : {rs_w0[f_slot] + 61'(rs_fetched[f_slot]), 3'b000};
  assign dram_fire   = dram_rd_valid && dram_rd_ready;
  assign tq_wr_valid = dram_fire;
  assign tq_wr_data  = rmw_rd ? {1'b1, c_slot, WIW'(0)} : {1'b0, f_slot, rs_fetched[f_slot]};
  logic f_fire;
  assign f_fire = dram_fire && !rmw_rd;

  // ================================================================ RRES generator
  logic [RSW-1:0] j_slot;
  logic [15:0]    j_off, j_size;
  logic [11:0]    j_seq;
  logic           j_last;
  assign {j_slot, j_off, j_size, j_seq, j_last} = jq_data;

  logic [7:0]  u_i;         // block of the unit: 0 /MS/, 1..n_md /MD/, n_md+1 /MT/
  logic [16:0] u, need_end, lo_sum;
  logic [WIW-1:0] need, first_word;
  logic        data_started, block_in;
  logic [63:0] hdr;
  // Buffer byte a + off + k is chunk byte k; T[i] of the unit holds chunk bytes
  // 8i-10 .. 8i-3, i.e. buffer words base+i-2 and base+i-1 shifted by u mod 8.
  assign u        = {14'b0, rs_a[j_slot]} + {1'b0, j_off} + 17'd6;
  assign need_end = {14'b0, rs_a[j_slot]} + {1'b0, j_off} + {1'b0, j_size} + 17'd7;  // + 8 - 1
  assign need     = j_size == 16'd0 ? '0 : WIW'(need_end >> 3);
  assign first_word = WIW'(({14'b0, rs_a[j_slot]} + {1'b0, j_off}) >> 3);
  // Cut-through: the /MS/ leaves once the chunk's first word is in, each later
  // block once the words it carries are (one answer per cycle keeps the unit
  // back to back; a slower memory gets idle fillers inside it).
  assign data_started = j_size == 16'd0 || first_word < rs_arrived[j_slot];
  assign lo_sum   = {3'b0, u[16:3]} + {9'b0, u_i};  // base + i

  logic [WIW-1:0] r_lo, r_hi;
  logic [63:0]    b_lo, b_hi, b_data;
  always_comb begin
    r_lo = lo_sum >= 17'd2 ? WIW'(lo_sum - 17'd2) : '0;
    r_hi = lo_sum >= 17'd1 ? WIW'(lo_sum - 17'd1) : '0;
    if (r_lo > WIW'(SLOT_WORDS - 1)) r_lo = WIW'(SLOT_WORDS - 1);
    if (r_hi > WIW'(SLOT_WORDS - 1)) r_hi = WIW'(SLOT_WORDS - 1);
  end
  // The block's last buffer word (r_hi, but none past the chunk) is in.
  assign block_in = j_size == 16'd0 || u_i == 8'd0
                 || (r_hi < need ? r_hi : need - WIW'(1)) < rs_arrived[j_slot];
  assign b_lo = rbuf[RBW'(j_slot) * RBW'(SLOT_WORDS) + RBW'(r_lo)];
  assign b_hi = rbuf[RBW'(j_slot) * RBW'(SLOT_WORDS) + RBW'(r_hi)];
  assign b_data = 64'({b_hi, b_lo} >> {u[2:0], 3'b000});

  always_comb begin
    hdr = '0;
    hdr[edm_pkg::HDR_KIND_LSB +: edm_pkg::HDR_KIND_W] = 3'(edm_pkg::KIND_RRES);
    hdr[edm_pkg::HDR_SRC_LSB +: edm_pkg::HDR_SRC_W] = rs_port[j_slot];
    hdr[edm_pkg::HDR_DST_LSB +: edm_pkg::HDR_DST_W] = rs_req[j_slot];
    hdr[edm_pkg::HDR_ID_LSB +: edm_pkg::HDR_ID_W] = rs_id[j_slot];
    hdr[edm_pkg::HDR_LEN_LSB +: edm_pkg::HDR_LEN_W] = j_size;
    hdr[edm_pkg::HDR_SEQ_LSB +: edm_pkg::HDR_SEQ_W] = j_seq;
    hdr[edm_pkg::HDR_LAST_LSB] = j_last;
    hdr[edm_pkg::HDR_OP_LSB +: edm_pkg::HDR_OP_W] =
        rs_denied[j_slot] ? 4'(edm_pkg::STATUS_DENIED)
                          : rs_err[j_slot] ? 4'(edm_pkg::STATUS_ERROR) : 4'(edm_pkg::STATUS_OK);
  end

  // The RRES: |M| = 8 + size (header, the chunk); T[u_i] for u_i >= 1 is the
  // buffer (the emitter adds header bytes 6..7 to T[1] and the zero padding).
  edm_unit_emitter #(.IDX_W(8), .LEN_W(17)) emit (
      .clk, .rst_n,
      .unit_valid(jq_valid), .start_ok(data_started), .block_ok(block_in), .hdr, .m_bytes({1'b0, j_size} + 17'd8),
      .idx(u_i), .t_word(b_data),
      .out_valid(u_out_valid), .out_ready(u_out_ready), .out_block(u_out_block), .out_last(u_out_last));
  assign jq_pop = u_out_valid && u_out_ready && u_out_last;

  // ================================================================ write acknowledgements
  logic        u_out_valid, u_out_ready, u_out_last;
  logic [65:0] u_out_block;
  if (ACKS) begin : g_acks
    // Per WREQ slot: its requester, id and whether it completes its message.
    logic [WS-1:0][edm_pkg::PORT_BITS-1:0] ak_src;
    logic [WS-1:0][7:0] ak_id;
    logic [WS-1:0]      ak_last;
    logic        ak_dup, ak_wait, ak_done, ak_valid, ak_drop, a_valid, a_ready, u_open;
    logic [edm_pkg::PORT_BITS-1:0] ak_src_in, ak_wait_src;
    logic [7:0]  ak_id_in, ak_wait_id;
    logic [65:0] a_block;
    logic [15:0] s_dropped;
    always_ff @(posedge clk)
      if (w_commit) begin
        ak_src[rx_wslot] <= rx_src;
        ak_id[rx_wslot] <= rx_id;
        ak_last[rx_wslot] <= nx_mlast && in_whole;
      end
    // A write done now, a second copy of one committed now (or waiting).
    assign ak_done = w_done && ak_last[w_head];
    assign ak_dup  = commit && rx_kind == K_WREQ && in_dup && nx_mlast && in_whole && !(TRANSLATE && xl_deny);
    assign ak_valid = ak_done || ak_dup || ak_wait;
    always_comb begin
      if (ak_done) begin
        ak_src_in = ak_src[w_head];
        ak_id_in = ak_id[w_head];
      end else if (ak_wait) begin
        ak_src_in = ak_wait_src;
        ak_id_in = ak_wait_id;
      end else begin
        ak_src_in = rx_src;
        ak_id_in = rx_id;
      end
    end
    // A second copy that cannot go now (a completion or the waiting one goes
    // first) waits (one entry); if the entry is taken and stays so, it is
    // dropped, counted.
    logic ak_wait_sent, ak_dup_waits;
    logic [15:0] ak_lost;
    assign ak_wait_sent = ak_wait && !ak_done;
    assign ak_dup_waits = ak_dup && (ak_done || ak_wait);
    assign ak_drop = ak_dup_waits && ak_wait && !ak_wait_sent;
    always_ff @(posedge clk)
      if (!rst_n) begin
        ak_wait <= 1'b0;
        ak_lost <= '0;
      end else begin
        if (ak_dup_waits && !ak_drop) begin
          ak_wait <= 1'b1;
          ak_wait_src <= rx_src;
          ak_wait_id <= rx_id;
        end else if (ak_wait_sent) ak_wait <= 1'b0;
        ak_lost <= edm_pkg::sat_add(ak_lost, {1'b0, ak_drop});
      end
    edm_ack_sender #(.SRC_LOG2(ACK_SRC_LOG2)) acks (
        .clk, .rst_n,
        .applied_valid(ak_valid), .applied_src(ak_src_in), .applied_id(ak_id_in), .tick(1'b1),
        .out_valid(a_valid), .out_ready(a_ready), .out_block(a_block),
        .cnt_acks, .cnt_unacked(s_dropped));
    assign cnt_ack_dropped = {1'b0, s_dropped} + {1'b0, ak_lost} > 17'hFFFF ? 16'hFFFF : s_dropped + ak_lost;
    // Between RRES units an /A/ goes first (one block).
    always_ff @(posedge clk)
      if (!rst_n) u_open <= 1'b0;
      else if (u_out_valid && u_out_ready) u_open <= !u_out_last;
    assign a_ready     = !u_open && out_ready;
    assign u_out_ready = !(a_valid && !u_open) && out_ready;
    assign out_valid   = (a_valid && !u_open) || u_out_valid;
    assign out_block   = a_valid && !u_open ? a_block : u_out_block;
    assign out_last    = a_valid && !u_open ? 1'b1 : u_out_last;
  end else begin : g_no_acks
    assign {out_valid, out_block, out_last} = {u_out_valid, u_out_block, u_out_last};
    assign u_out_ready = out_ready;
    assign {cnt_acks, cnt_ack_dropped} = '0;
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_whole;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_whole = in_whole;
  end

  // ================================================================ state
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rx_op <= '0;
      rx_mlast <= 1'b0;
      rx_addr <= '0;
      rx_arg0 <= '0;
      rx_arg1 <= '0;
      rx_wslot <= '0;
      wslots_used <= '0;
      ws_busy <= '0;
      ws_access <= '0;
      ws_addr <= '0;
      ws_len <= '0;
      ws_w0 <= '0;
      ws_wl <= '0;
      ws_after <= '0;
      rs_pend <= '0;
      rs_fetched <= '0;
      rs_total <= '0;
      rs_w0 <= '0;
      rs_wl <= '0;
      rs_after <= '0;
      rs_valid <= '0;
      rs_started <= '0;
      rs_reached <= '0;
      rs_req <= '0;
      rs_port <= '0;
      rs_id <= '0;
      rs_len <= '0;
      rs_granted <= '0;
      rs_seq <= '0;
      rs_a <= '0;
      rs_err <= '0;
      rs_denied <= '0;
      rs_arrived <= '0;
      cnt_rreq <= '0;
      cnt_wreq <= '0;
      cnt_rmw <= '0;
      cnt_dropped <= '0;
      cnt_overflow <= '0;
      cnt_rejected <= '0;
      cnt_stray_grants <= '0;
    end else begin
      // ---- receive
      if (cont) begin
        rx_op <= nx_op;
        rx_mlast <= nx_mlast;
        rx_addr <= nx_addr;
        rx_arg0 <= nx_arg0;
        rx_arg1 <= nx_arg1;
      end
      if (w_commit) begin
        rx_wslot <= rx_wslot + 1'b1;
        ws_busy[rx_wslot] <= 1'b1;
        ws_access[rx_wslot] <= x_access;
        ws_addr[rx_wslot] <= x_addr;
        ws_len[rx_wslot] <= rx_len;
        ws_w0[rx_wslot] <= x_w0;
        ws_wl[rx_wslot] <= x_wl;
      end
      if (w_done) ws_busy[w_head] <= 1'b0;
      // Dependencies: a new command waits for the unfinished earlier ones of the
      // other kind; a finished one is cleared everywhere (its slot may be reused
      // by a later command).
      for (integer k = 0; k < WS; k++) begin
        if (w_commit && WSLOTS_LOG2'(k) == rx_wslot)
          ws_after[k] <= rs_pend & ~rd_finish;
        else ws_after[k] <= ws_after[k] & ~rd_finish;
      end
      for (integer i = 0; i < RS; i++) begin
        if (tok_in && RSW'(i) == free_idx) rs_after[i] <= (ws_busy & ws_access) & ~wr_finish;
        else rs_after[i] <= rs_after[i] & ~wr_finish;
      end
      wslots_used <= wslots_used + (WSLOTS_LOG2 + 1)'(w_commit)
                   - (WSLOTS_LOG2 + 1)'(w_done);

      // ---- response slots
      // A good RREQ/RMWREQ takes its slot as it arrives, so its grants find it.
      if (commit && rx_kind != K_WREQ) begin
        rs_valid[free_idx] <= 1'b1;
        rs_started[free_idx] <= 1'b0;
        rs_reached[free_idx] <= 1'b0;
        rs_req[free_idx] <= rx_src;
        rs_port[free_idx] <= rx_dst;
        rs_id[free_idx] <= rx_id;
        rs_len[free_idx] <= x_len;
        rs_granted[free_idx] <= x_len < CHUNK ? x_len : CHUNK;
        rs_seq[free_idx] <= 12'd1;
        rs_a[free_idx] <= rx_kind == K_RREQ ? nx_addr[2:0] : 3'd0;
        rs_err[free_idx] <= x_err;
        rs_denied[free_idx] <= x_deny;
        rs_arrived[free_idx] <= '0;
        rs_pend[free_idx] <= x_access;
        rs_fetched[free_idx] <= '0;
        rs_total[free_idx] <= rx_kind == K_RREQ && x_access ? WIW'(x_end >> 3) + WIW'(1) : '0;
        rs_w0[free_idx] <= x_w0;
        rs_wl[free_idx] <= x_wl;
      end
      if (e_done && c_kind == K_RMW) rs_pend[c_slot] <= 1'b0;
      if (f_fire) begin
        rs_fetched[f_slot] <= rs_fetched[f_slot] + WIW'(1);
        if (rs_fetched[f_slot] + WIW'(1) == rs_total[f_slot]) rs_pend[f_slot] <= 1'b0;
      end
      if (e_push) rs_reached[c_slot] <= 1'b1;
      if (t_push) rs_started[t_slot_q] <= 1'b1;
      if (g_push) begin
        rs_granted[g_slot] <= rs_granted[g_slot] + g_take;
        rs_seq[g_slot] <= rs_seq[g_slot] + 12'd1;
      end
      if (rsp_fire) rs_arrived[t_slot] <= rs_arrived[t_slot] + WIW'(1);
      if (replay_fill) begin
        rs_arrived[c_slot] <= WIW'(1);
        rs_denied[c_slot] <= !memo_ok;
      end
      if (jq_pop && j_last) rs_valid[j_slot] <= 1'b0;

      // ---- counters
      cnt_rreq <= edm_pkg::sat_add(cnt_rreq, {1'b0, e_done && c_kind == K_RREQ && !a_err});
      cnt_wreq <= edm_pkg::sat_add(cnt_wreq, {1'b0, w_done});
      cnt_rmw <= edm_pkg::sat_add(cnt_rmw, {1'b0, e_done && c_kind == K_RMW && !a_err && !c_replay});
      cnt_rejected <= edm_pkg::sat_add(cnt_rejected, {1'b0, e_done && a_err && !c_deny});
      cnt_dropped <= edm_pkg::sat_add(cnt_dropped, {1'b0, bad_end} + {1'b0, fresh && !ms_supported});
      cnt_overflow <= edm_pkg::sat_add(cnt_overflow, {1'b0, fresh && ms_supported && !ms_room}
                                                   + {1'b0, grant_valid && (!gq_wr_ready || tok_in)}
                                                   + {1'b0, tok_in && !gq_wr_ready}
                                                   + {1'b0, tok_in && !cmd_wr_ready});
      cnt_stray_grants <= edm_pkg::sat_add(cnt_stray_grants, {1'b0, g_stray});
    end
  end

endmodule

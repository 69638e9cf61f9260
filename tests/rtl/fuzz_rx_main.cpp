// The RTL receive-path fuzzer (docs/faults.md §3): reads the records of the
// reference codec's rx_vectors example on stdin (stimulus and the reference
// receiver's results per block), drives them as a bit stream through
// fuzz_rx_top (block lock, descrambler, edm_rx, decoder) and checks, for
// every block of every segment: that block lock found the boundary again
// after the segment's junk bits within the preamble, that edm_rx got the
// block the reference descrambler produced, that it completed exactly the
// reference's events (good unit, /N/ /G/ /A/ with their fields) one cycle later,
// that all eight counters equal the reference's (saturated at 16 bits), and
// that the decoder flags every bad-sync block edm_rx forwards. Prints the
// figures; exits 1 on the first mismatches (at most 10 printed).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>

#include "Vfuzz_rx_top.h"
#include "verilated.h"

namespace {

using u128 = unsigned __int128;
constexpr int kRecord = 56;
constexpr int kPipeline = 3;  // lock, descrambler, edm_rx: one register each
const char* kCounters[8] = {"messages_ok", "corrupted", "unknown", "notifications_ok",
                            "grants_ok", "bad_sync", "control_missed", "control_in_data"};

struct Expect {
  uint64_t index;  // checked block number, from 0
  uint64_t segment;
  uint64_t cycle;  // the cycle after whose edge edm_rx shows this block's results
  bool checked;
  uint8_t sync, events, ctl_id;
  uint16_t ctl_dst, ctl_size;
  uint64_t seen;  // descrambled payload
  uint32_t counters[8];
};

template <typename T>
T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint64_t wide_payload(const VlWide<3>& w) {  // bits 65:2 of a 66-bit port
  u128 v = (u128)w[0] | (u128)w[1] << 32 | (u128)w[2] << 64;
  return (uint64_t)(v >> 2);
}

}  // namespace

int main(int argc, char** argv) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<Vfuzz_rx_top>(ctx.get());
  auto started = std::chrono::steady_clock::now();

  u128 bits = 0;  // the line's bits not yet in a word, bit 0 first
  int nbits = 0;
  uint64_t stream_bits = 0, cycle = 0;
  std::deque<Expect> pending;
  uint64_t checked = 0, segments = 0, mismatches = 0, preamble = 0;
  uint64_t events[3] = {0, 0, 0}, counter_totals[8] = {0};
  uint64_t dec_bad_forwarded = 0, dec_flagged = 0, lock_losses = 0, hi_ber_rises = 0;
  uint64_t lost_at = 0, longest_relock = 0;
  bool was_locked = false, prev_forwarded_bad = false, prev_hi_ber = false;
  uint32_t last_counters[8] = {0};
  uint64_t summed_segment = 0;  // the segment whose counters last_counters holds

  auto fail = [&](const Expect& e, const char* what, uint64_t got, uint64_t want) {
    if (++mismatches <= 10)
      std::fprintf(stderr, "block %llu (segment %llu): %s: RTL %llu, reference %llu\n",
                   (unsigned long long)e.index, (unsigned long long)e.segment, what,
                   (unsigned long long)got, (unsigned long long)want);
  };

  auto tick = [&](uint64_t word_lo, uint64_t word_hi2) {
    // rx_rst_n: edm_rx holds reset while preamble blocks reach it.
    bool rx_run = false;
    for (const Expect& e : pending)
      if (e.cycle == cycle) rx_run = e.checked;
    top->rst_n = 1;
    top->rx_rst_n = rx_run;
    top->in_valid = 1;
    top->in_word[0] = (uint32_t)word_lo;
    top->in_word[1] = (uint32_t)(word_lo >> 32);
    top->in_word[2] = (uint32_t)word_hi2;
    // edm_rx's input this cycle is the block whose results show after this edge.
    for (const Expect& e : pending) {
      if (e.cycle != cycle || !e.checked) continue;
      if (!top->rx_in_valid) fail(e, "edm_rx given no block (block lock lost?)", 0, 1);
      else if (wide_payload(top->rx_in_block) != e.seen || (top->rx_in_block[0] & 3) != e.sync)
        fail(e, "block given to edm_rx differs from the reference descrambler's", wide_payload(top->rx_in_block), e.seen);
    }
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    ctx->timeInc(1);
    if (top->block_lock != was_locked) {
      if (!top->block_lock) {
        lost_at = cycle;
        ++lock_losses;
      } else if (lock_losses > 0 && cycle - lost_at > longest_relock) {
        longest_relock = cycle - lost_at;
      }
      was_locked = top->block_lock;
    }
    hi_ber_rises += top->hi_ber && !prev_hi_ber;
    prev_hi_ber = top->hi_ber;
    // The decoder answers one cycle after edm_rx forwards a block (unless a
    // new segment's reset reached it first).
    if (prev_forwarded_bad && rx_run) {
      ++dec_bad_forwarded;
      dec_flagged += top->dec_valid && top->dec_invalid;
    }
    uint8_t fwd_sync = top->out_block[0] & 3;
    prev_forwarded_bad = top->out_valid && (fwd_sync == 0 || fwd_sync == 3);
    while (!pending.empty() && pending.front().cycle <= cycle) {
      Expect e = pending.front();
      pending.pop_front();
      if (!e.checked) continue;
      bool msg = top->mem_last && !top->mem_error;
      if (msg != bool(e.events & 1)) fail(e, "good unit", msg, e.events & 1);
      if (top->notif_valid != bool(e.events & 2)) fail(e, "/N/", top->notif_valid, e.events & 2);
      if (top->grant_valid != bool(e.events & 4)) fail(e, "/G/", top->grant_valid, e.events & 4);
      if (top->ack_valid != bool(e.events & 8)) fail(e, "/A/", top->ack_valid, e.events & 8);
      if (top->notif_valid && (e.events & 2) &&
          (top->notif_dst != e.ctl_dst || top->notif_msg_id != e.ctl_id || top->notif_size != e.ctl_size))
        fail(e, "/N/ fields (dst)", top->notif_dst, e.ctl_dst);
      if (top->grant_valid && (e.events & 4) &&
          (top->grant_dst != e.ctl_dst || top->grant_msg_id != e.ctl_id || top->grant_size != e.ctl_size))
        fail(e, "/G/ fields (dst)", top->grant_dst, e.ctl_dst);
      if (top->ack_valid && (e.events & 8) &&
          (top->ack_peer != e.ctl_dst || top->ack_base != e.ctl_id || top->ack_map != e.ctl_size))
        fail(e, "/A/ fields (peer)", top->ack_peer, e.ctl_dst);
      events[0] += msg;
      events[1] += top->notif_valid;
      events[2] += top->grant_valid;
      const uint16_t rtl[8] = {top->cnt_msg_ok, top->cnt_corrupted, top->cnt_unknown, top->cnt_notif_ok,
                               top->cnt_grant_ok, top->cnt_bad_sync, top->cnt_ctl_missed, top->cnt_ctl_in_data};
      for (int i = 0; i < 8; ++i) {
        uint32_t want = e.counters[i] > 0xFFFF ? 0xFFFF : e.counters[i];
        if (rtl[i] != want) fail(e, kCounters[i], rtl[i], want);
      }
      if (e.segment != summed_segment) {  // the previous segment's final counters
        for (int i = 0; i < 8; ++i) counter_totals[i] += last_counters[i];
        summed_segment = e.segment;
      }
      std::memcpy(last_counters, e.counters, sizeof last_counters);
    }
    ++cycle;
  };

  // Bits in, 66-bit words out (a block goes in as two halves so that at most
  // 65 + 33 bits wait in `bits`).
  auto push_bits = [&](u128 v, int n) {
    bits |= v << nbits;
    nbits += n;
    stream_bits += n;
    while (nbits >= 66) {
      u128 word = bits & (((u128)1 << 66) - 1);
      bits >>= 66;
      nbits -= 66;
      tick((uint64_t)word, (uint64_t)(word >> 64));
    }
  };

  // Reset, then the records.
  top->rst_n = 0;
  top->rx_rst_n = 0;
  top->in_valid = 0;
  for (int i = 0; i < 4; ++i) {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
  }
  uint8_t rec[kRecord];
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  while (std::fread(rec, kRecord, 1, stdin) == 1) {
    uint8_t kind = rec[0];
    if (kind == 0) {  // junk bits: the block boundary moves
      ++segments;
      for (int i = 0; i < rec[1]; ++i) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        push_bits(rng & 1, 1);
      }
      continue;
    }
    Expect e{};
    e.checked = kind == 2;
    e.index = checked;
    e.sync = rec[1];
    e.events = rec[2];
    e.ctl_id = rec[3];
    e.ctl_dst = get<uint16_t>(rec + 4);
    e.ctl_size = get<uint16_t>(rec + 6);
    uint64_t line = get<uint64_t>(rec + 8);
    e.seen = get<uint64_t>(rec + 16);
    for (int i = 0; i < 8; ++i) e.counters[i] = get<uint32_t>(rec + 24 + 4 * i);
    // Block lock registers a block at the edge of the cycle after the word it
    // starts in (when that word is `previous`), the descrambler one edge later,
    // edm_rx one more.
    e.cycle = stream_bits / 66 + kPipeline;
    e.segment = segments;
    if (e.checked) {
      ++checked;
    } else {
      ++preamble;
    }
    pending.push_back(e);
    u128 block = (u128)e.sync | (u128)line << 2;
    push_bits(block & (((u128)1 << 33) - 1), 33);
    push_bits(block >> 33, 33);
    if (mismatches > 10) break;
  }
  for (int i = 0; i < kPipeline + 2 && mismatches <= 10; ++i) push_bits(0, 66);
  for (int i = 0; i < 8; ++i) counter_totals[i] += last_counters[i];
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::printf("fuzz_rtl_rx: %llu checked blocks in %llu segments (+%llu preamble idles), %llu cycles, %.1f s, "
              "%.2f M blocks/s\n",
              (unsigned long long)checked, (unsigned long long)segments, (unsigned long long)preamble,
              (unsigned long long)cycle, seconds, (checked + preamble) / seconds / 1e6);
  std::printf("  block lock: lost %llu times (once per segment's junk bits), found again within %llu cycles at "
              "most, %llu slips; BER monitor: hi_ber rose %llu times\n",
              (unsigned long long)lock_losses, (unsigned long long)longest_relock,
              (unsigned long long)top->slips, (unsigned long long)hi_ber_rises);
  std::printf("  edm_rx events equal to the reference's: %llu good units, %llu /N/, %llu /G/\n",
              (unsigned long long)events[0], (unsigned long long)events[1], (unsigned long long)events[2]);
  std::printf("  reference counters summed over segments (RTL equal after every block):");
  for (int i = 0; i < 8; ++i) std::printf(" %s %llu", kCounters[i], (unsigned long long)counter_totals[i]);
  std::printf("\n  decoder: %llu of %llu bad-sync blocks forwarded by edm_rx flagged invalid\n",
              (unsigned long long)dec_flagged, (unsigned long long)dec_bad_forwarded);
  std::printf("  mismatches: %llu\n", (unsigned long long)mismatches);
  top->final();
  bool decoder_ok = dec_flagged == dec_bad_forwarded;
  if (!decoder_ok) std::fprintf(stderr, "the decoder missed a bad-sync block\n");
  return mismatches == 0 && decoder_ok && checked > 0 ? 0 : 1;
}

#include "executor/deterministic_random.h"

#include <cmath>

namespace parplan::executor {

namespace {
constexpr uint64_t kSuccessorStream = 0x5ecc'e550'0000'0001ULL;
constexpr uint64_t kDataStream = 0xda7a'0000'0000'0001ULL;
constexpr int kPredictablePercent = 75;
}  // namespace

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_counter(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

double hash_normal(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t h1 = hash_counter(seed, stream, index);
  const uint64_t h2 = mix64(h1 ^ 0x6a09e667f3bcc909ULL);
  const double u1 = (static_cast<double>(h1 >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
  const double u2 = static_cast<double>(h2 >> 11) * 0x1.0p-53;          // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::vector<int32_t> synthetic_sequence(uint64_t seed, int64_t sample_index, int64_t seq_length,
                                        int64_t vocab_size) {
  std::vector<int32_t> out(seq_length + 1);
  const uint64_t base = static_cast<uint64_t>(sample_index) * static_cast<uint64_t>(seq_length + 1);
  const auto vocab = static_cast<uint64_t>(vocab_size);
  out[0] = static_cast<int32_t>(hash_counter(seed, kDataStream, base) % vocab);
  for (int64_t t = 1; t <= seq_length; ++t) {
    const uint64_t h = hash_counter(seed, kDataStream, base + static_cast<uint64_t>(t));
    const bool predictable = static_cast<int>(h % 100) < kPredictablePercent;
    const uint64_t successor =
        hash_counter(seed, kSuccessorStream, static_cast<uint64_t>(out[t - 1])) % vocab;
    out[t] = static_cast<int32_t>(predictable ? successor : (h >> 8) % vocab);
  }
  return out;
}

double synthetic_entropy_nats(int64_t vocab_size) {
  // Next token: the successor with p = 0.75 + 0.25/V, any other with 0.25/V each.
  const double v = static_cast<double>(vocab_size);
  const double p_other = (1.0 - kPredictablePercent / 100.0) / v;
  const double p_succ = kPredictablePercent / 100.0 + p_other;
  return -(p_succ * std::log(p_succ) + (v - 1.0) * p_other * std::log(p_other));
}

MicroBatchTokens synthetic_micro_batch(uint64_t seed, int64_t first_sample, int64_t batch,
                                       int64_t seq_length, int64_t vocab_size) {
  MicroBatchTokens mb;
  mb.tokens.resize(seq_length * batch);
  mb.targets.resize(seq_length * batch);
  for (int64_t b = 0; b < batch; ++b) {
    const auto seq = synthetic_sequence(seed, first_sample + b, seq_length, vocab_size);
    for (int64_t t = 0; t < seq_length; ++t) {
      mb.tokens[t * batch + b] = seq[t];
      mb.targets[t * batch + b] = seq[t + 1];
    }
  }
  return mb;
}

}  // namespace parplan::executor

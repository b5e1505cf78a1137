// Deterministic randomness for the executor, independent of how the model is partitioned:
//   - parameter values from a counter-based hash of (seed, tensor id, global element index)
//     (the idea of Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2, 3"), so a
//     rank computes exactly its own shard and every plan starts from identical weights;
//   - training sequences from (seed, global sample index): a hidden successor table makes
//     the next token predictable 3 times in 4, so the loss can fall well below log(V).
// Tested in tests/executor/deterministic_random_test.cpp.
#pragma once

#include <cstdint>
#include <vector>

namespace parplan::executor {

// SplitMix64's finaliser (Steele et al. 2014): a bijective 64-bit mixer.
uint64_t mix64(uint64_t x);
uint64_t hash_counter(uint64_t seed, uint64_t stream, uint64_t index);
// A standard normal sample from (seed, stream, index) by Box-Muller.
double hash_normal(uint64_t seed, uint64_t stream, uint64_t index);

// Token ids of one training sequence: seq_length + 1 tokens (inputs are [0, T), targets
// [1, T]).
std::vector<int32_t> synthetic_sequence(uint64_t seed, int64_t sample_index, int64_t seq_length,
                                        int64_t vocab_size);

// Entropy (nats) of the generating process: the loss a perfect model approaches.
double synthetic_entropy_nats(int64_t vocab_size);

// A micro-batch of `batch` sequences in the executor's sequence-major layout:
// tokens[t * batch + b] is position t of sequence first_sample + b; targets likewise.
struct MicroBatchTokens {
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;
};
MicroBatchTokens synthetic_micro_batch(uint64_t seed, int64_t first_sample, int64_t batch,
                                       int64_t seq_length, int64_t vocab_size);

}  // namespace parplan::executor

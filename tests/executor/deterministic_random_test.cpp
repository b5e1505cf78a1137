#include "executor/deterministic_random.h"

#include <gtest/gtest.h>

#include <cmath>

namespace parplan::executor {
namespace {

TEST(Synthetic, HashNormalHasUnitMomentsAndIsDeterministic) {
  double sum = 0, sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = hash_normal(3, 9, static_cast<uint64_t>(i));
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.01);
  EXPECT_EQ(hash_normal(3, 9, 17), hash_normal(3, 9, 17));
  EXPECT_NE(hash_normal(3, 9, 17), hash_normal(4, 9, 17));
  EXPECT_NE(hash_normal(3, 9, 17), hash_normal(3, 10, 17));
}

TEST(Synthetic, SequencesFollowTheHiddenSuccessorThreeTimesInFour) {
  const int64_t vocab = 50, seq = 200;
  int64_t agree = 0, total = 0;
  // The successor of a token is whatever follows it most often.
  std::vector<std::vector<int>> follows(vocab, std::vector<int>(vocab, 0));
  for (int64_t s = 0; s < 50; ++s) {
    const auto tokens = synthetic_sequence(1, s, seq, vocab);
    ASSERT_EQ(static_cast<int64_t>(tokens.size()), seq + 1);
    for (int64_t t = 0; t < seq; ++t) {
      ASSERT_GE(tokens[t], 0);
      ASSERT_LT(tokens[t], vocab);
      ++follows[tokens[t]][tokens[t + 1]];
    }
  }
  for (const auto& row : follows) {
    int best = 0, count = 0;
    for (int c : row) {
      best = std::max(best, c);
      count += c;
    }
    agree += best;
    total += count;
  }
  EXPECT_NEAR(static_cast<double>(agree) / total, 0.75 + 0.25 / vocab, 0.03);
  EXPECT_LT(synthetic_entropy_nats(vocab), std::log(static_cast<double>(vocab)) / 2);
}

TEST(Synthetic, MicroBatchIsSequenceMajorAndShiftedByOne) {
  const auto mb = synthetic_micro_batch(2, 10, 3, 5, 40);
  for (int64_t b = 0; b < 3; ++b) {
    const auto seq = synthetic_sequence(2, 10 + b, 5, 40);
    for (int64_t t = 0; t < 5; ++t) {
      EXPECT_EQ(mb.tokens[t * 3 + b], seq[t]);
      EXPECT_EQ(mb.targets[t * 3 + b], seq[t + 1]);
    }
  }
}

}  // namespace
}  // namespace parplan::executor

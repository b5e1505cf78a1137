#include "core/checked_int.h"

#include <gtest/gtest.h>

namespace parplan {
namespace {

TEST(CheckedInt, MultipliesOrReportsOverflow) {
  EXPECT_EQ(checked_mul(1'000'000, 1'000'000), 1'000'000'000'000);
  EXPECT_EQ(checked_mul(-3, 7), -21);
  EXPECT_EQ(checked_mul(1'000'000'000'000, 1'000'000'000'000), std::nullopt);
  EXPECT_EQ(checked_mul(std::numeric_limits<int64_t>::max(), 2), std::nullopt);
  EXPECT_EQ(checked_mul(std::numeric_limits<int64_t>::min(), -1), std::nullopt);
}

TEST(CheckedInt, SaturatingProduct) {
  EXPECT_EQ(saturating_product({8, 12, 4}), 384);
  EXPECT_EQ(saturating_product({}), 1);
  EXPECT_EQ(saturating_product({1'000'000, 1'000'000, 1'000'000, 1'000'000}),
            std::numeric_limits<int64_t>::max());
  // Once saturated it stays saturated (no wrap to a small or negative value).
  EXPECT_EQ(saturating_product({1'000'000'000'000, 1'000'000'000'000, 1}),
            std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace parplan

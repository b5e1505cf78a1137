// core/plural.h: counted nouns in messages ("1 micro-batch", "2 hosts").
#include "core/plural.h"

#include <gtest/gtest.h>

namespace parplan {
namespace {

TEST(Plural, OneIsSingularEverythingElsePlural) {
  EXPECT_EQ(count_of(1, "micro-batch"), "1 micro-batch");
  EXPECT_EQ(count_of(8, "micro-batch"), "8 micro-batches");
  EXPECT_EQ(count_of(0, "rank"), "0 ranks");
  EXPECT_EQ(count_of(1, "host"), "1 host");
  EXPECT_EQ(count_of(2, "GPU"), "2 GPUs");
  EXPECT_EQ(count_of(1, "entry", "entries"), "1 entry");
  EXPECT_EQ(count_of(3, "entry", "entries"), "3 entries");
  EXPECT_EQ(plural_of("pass"), "passes");
}

}  // namespace
}  // namespace parplan

#include "tools/memory_fit.h"

#include <gtest/gtest.h>

#include "core/units.h"

namespace parplan::tools {
namespace {

cost::MemoryEstimate memory(double peak_gib, double capacity_gib) {
  cost::MemoryEstimate m;
  m.peak_bytes = peak_gib * kGiB;
  m.capacity_bytes = capacity_gib * kGiB;
  m.fits = m.peak_bytes <= m.capacity_bytes;
  return m;
}

TEST(MemoryFit, StatesFitAndMargin) {
  EXPECT_EQ(memory_fit_text(memory(72.1, 79.6)),
            "fits: peak 72.1 of 79.6 GiB per GPU (9% headroom)");
  EXPECT_EQ(memory_fit_text(memory(95.0, 79.6)),
            "does not fit: peak 95.0 GiB per GPU, over the 79.6 GiB there is");
}

// The case: a plan crowned at 79.05 of 79.6 GiB gets a headroom note; 70 GiB does not.
TEST(MemoryFit, TightPlansGetAHeadroomNote) {
  EXPECT_EQ(tight_memory_note("the best plan", memory(79.05, 79.6)),
            "the best plan uses 99% of GPU memory; predictions of peak memory are within about 8% "
            "(median), so --max-memory-fraction 0.9 keeps headroom");
  EXPECT_EQ(tight_memory_note("the best plan", memory(70.0, 79.6)), "");
}

}  // namespace
}  // namespace parplan::tools

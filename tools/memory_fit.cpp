#include "tools/memory_fit.h"

#include <cstdio>

#include "core/units.h"

namespace parplan::tools {

std::string memory_fit_text(const cost::MemoryEstimate& memory) {
  char text[200];
  if (memory.fits) {
    std::snprintf(text, sizeof text, "fits: peak %.1f of %.1f GiB per GPU (%.0f%% headroom)",
                  memory.peak_bytes / kGiB, memory.capacity_bytes / kGiB,
                  100.0 * (1.0 - memory.peak_bytes / memory.capacity_bytes));
  } else {
    std::snprintf(text, sizeof text,
                  "does not fit: peak %.1f GiB per GPU, over the %.1f GiB there is",
                  memory.peak_bytes / kGiB, memory.capacity_bytes / kGiB);
  }
  return text;
}

std::string tight_memory_note(const std::string& which, const cost::MemoryEstimate& memory) {
  const double used = memory.peak_bytes / memory.capacity_bytes;
  if (used <= kTightMemoryFraction) return "";
  char text[300];
  std::snprintf(text, sizeof text,
                "%s uses %.0f%% of GPU memory; predictions of peak memory are within about 8%% "
                "(median), so --max-memory-fraction 0.9 keeps headroom",
                which.c_str(), 100 * used);
  return text;
}

}  // namespace parplan::tools

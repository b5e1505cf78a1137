// Fits of collective timings to the cost model's form (core/collective.h):
//   t(S) = latency + S * bus_factor / busbw
// by least squares on the relative error, so that 8-byte and 1-GiB measurements count
// alike. Measured curves have regimes (eager/rendezvous protocols, caches, NCCL's LL / LL128
// / Simple), so the sizes are split into at most a few contiguous ranges, each with its own
// line (segmented least squares by dynamic programming; the fewest ranges whose error is
// within reach of the best). Tested in tests/profiler/fit_test.cpp on synthetic data.
#pragma once

#include <span>
#include <vector>

#include "core/cluster_spec.h"
#include "profiler/records.h"

namespace parplan::profiler {

struct CollectivePoint {
  double size_bytes = 0;
  double time_s = 0;
};

// One line over a size range: t = latency_s + seconds_per_byte * S.
struct LineFit {
  double latency_s = 0;
  double seconds_per_byte = 0;
  double min_size_bytes = 0;  // range the line applies to (0 / 0: unbounded)
  double max_size_bytes = 0;
  double rms_relative_error = 0;
  double max_relative_error = 0;
  int points = 0;
};

// Weighted least squares minimising sum((a + b S_i - t_i) / t_i)^2 with a >= 0 and b > 0.
LineFit fit_line(std::span<const CollectivePoint> points);

// Up to 8 ranges: a CPU's MPI curve alone has a latency floor, an eager and a rendezvous
// protocol, cache-resident and memory-resident sizes. Chosen on held-out sizes (the powers of
// two fitted, the 1.5x sizes between them predicted; three 2-rank Open MPI profiles of this
// project's VM, 201 points): the median error was 10.7 % with at most 4 ranges within 1.25x
// of the best, 8.9 % with these options (p90 35.6 % either way); 2-point ranges lowered the
// median to 7.9 % but raised the p90 to 41 % (lines through two noisy points).
struct SegmentOptions {
  int max_segments = 8;
  int min_points_per_segment = 3;
  double good_enough_rms = 0.05;  // fewer ranges are taken once the rms error is below this
  double tolerance = 1.05;        // ... or within this factor of the best with max_segments
};

// Points sorted by size internally; ranges meet at the geometric mean of neighbouring sizes;
// the first starts at 0 and the last is unbounded.
std::vector<LineFit> fit_segments(std::vector<CollectivePoint> points,
                                  const SegmentOptions& options = {});

// For every (op, span, group size) in the records: the segment fits as CollectiveFit
// entries (busbw_gbps = bus_factor / seconds_per_byte / 1e9). Sizes measured only in
// disturbed samples are left out while enough others remain.
std::vector<CollectiveFit> fit_collectives(const std::vector<CollectiveRecord>& records,
                                           const SegmentOptions& options = {});

// Relative error of a fit list at one record: predicted / measured - 1.
double relative_error(const std::vector<CollectiveFit>& fits, const CollectiveRecord& record);

}  // namespace parplan::profiler

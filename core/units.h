// Unit constants. Sizes are binary (GiB = 2^30 bytes); bandwidths decimal (GB/s = 1e9 B/s);
// times in seconds unless a name says otherwise. Names carry their unit.
#pragma once

#include <cstdint>

namespace parplan {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;      // decimal, for bandwidths
inline constexpr double kTera = 1e12;   // TFLOP/s -> FLOP/s
inline constexpr double kUs = 1e-6;     // microseconds -> seconds
inline constexpr double kKilo = 1e3;    // kHz -> Hz
inline constexpr double kMega = 1e6;    // decimal: bytes -> MB, Hz -> MHz
inline constexpr double kGiga = 1e9;    // decimal: FLOP -> GFLOP, parameters -> billions
inline constexpr double kMs = 1e-3;     // milliseconds -> seconds
inline constexpr double kMsPerS = 1e3;  // seconds -> milliseconds
inline constexpr double kUsPerS = 1e6;  // seconds -> microseconds

inline double bytes_to_gib(double bytes) { return bytes / kGiB; }
inline double gbps_to_bytes_per_s(double gb_per_s) { return gb_per_s * kGB; }
inline double gbit_to_bytes_per_s(double gbit_per_s) { return gbit_per_s * 1e9 / 8.0; }

}  // namespace parplan

// Facts about the host a profile ran on, read from the operating system (Linux /proc and
// /sys): name, CPU model, cores, memory, last-level cache. Tested in
// tests/profiler/cpu_backend_test.cpp (plausible values on the build machine).
#pragma once

#include <cstdint>
#include <string>

namespace parplan::profiler {

std::string host_name();
std::string cpu_model_name();  // "model name" of /proc/cpuinfo, or "unknown CPU"
// The CPU vendor as a node's host_cpu_vendor names it (core/cluster_spec.h): "intel"
// (vendor_id GenuineIntel), "amd" (AuthenticAMD), "arm" (an aarch64 "CPU implementer" line),
// else "other".
std::string cpu_vendor();
int64_t cpu_core_count();         // logical CPUs this process may run on
double host_memory_bytes();       // MemTotal
double available_memory_bytes();  // MemAvailable (MemFree when absent)
// Size of the highest cache level of CPU 0 (sysfs), with where it came from.
double last_level_cache_bytes(std::string* source = nullptr);

// "2025-06-01T12:34:56Z"
std::string utc_timestamp();

}  // namespace parplan::profiler

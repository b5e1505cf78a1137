#include "profiler/host_info.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/units.h"

namespace parplan::profiler {

namespace {

// Value in bytes of a /proc/meminfo line ("MemTotal:  24684096 kB"); 0 when absent.
double meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream fields(line.substr(key.size() + 1));
      double kib = 0;
      fields >> kib;
      return kib * 1024.0;
    }
  }
  return 0.0;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32768K" -> bytes
double parse_cache_size(const std::string& text) {
  if (text.empty()) return 0.0;
  double value = 0;
  std::istringstream in(text);
  in >> value;
  char unit = 0;
  in >> unit;
  if (unit == 'K') value *= 1024.0;
  if (unit == 'M') value *= kMiB;
  if (unit == 'G') value *= kGiB;
  return value;
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        while (!name.empty() && name.front() == ' ') name.erase(name.begin());
        if (!name.empty()) return name;
      }
    }
  }
  return "unknown CPU";
}

std::string cpu_vendor() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("vendor_id", 0) == 0) {
      if (line.find("GenuineIntel") != std::string::npos) return "intel";
      if (line.find("AuthenticAMD") != std::string::npos) return "amd";
      return "other";
    }
    if (line.rfind("CPU implementer", 0) == 0) return "arm";
  }
  return "other";
}

int64_t cpu_core_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
}

double host_memory_bytes() { return meminfo_bytes("MemTotal"); }

double available_memory_bytes() {
  const double available = meminfo_bytes("MemAvailable");
  return available > 0 ? available : meminfo_bytes("MemFree");
}

double last_level_cache_bytes(std::string* source) {
  int best_level = 0;
  double best_bytes = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = read_line(dir + "/level");
    if (level.empty()) break;
    const int l = std::stoi(level);
    const double bytes = parse_cache_size(read_line(dir + "/size"));
    if (l > best_level && bytes > 0) {
      best_level = l;
      best_bytes = bytes;
    }
  }
  if (best_bytes > 0) {
    if (source) *source = "L" + std::to_string(best_level) + " of cpu0, /sys/devices/system/cpu";
    return best_bytes;
  }
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) {
    if (source) *source = "sysconf(_SC_LEVEL3_CACHE_SIZE)";
    return static_cast<double>(l3);
  }
  if (source) *source = "unknown (no cache information)";
  return 0.0;
}

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace parplan::profiler

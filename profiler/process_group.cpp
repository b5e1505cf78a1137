#include "profiler/process_group.h"

#include <algorithm>

#include "core/gpu_assignment.h"

namespace parplan::profiler {

int ProcessGroup::num_hosts() const {
  const auto& hosts = host_of_rank();
  return hosts.empty() ? 1 : *std::max_element(hosts.begin(), hosts.end()) + 1;
}

int ProcessGroup::ranks_on_host(int host) const {
  const auto& hosts = host_of_rank();
  return static_cast<int>(std::count(hosts.begin(), hosts.end(), host));
}

int ProcessGroup::local_rank() const { return node_local_rank(host_of_rank(), rank()); }

namespace {

class SingleProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const std::vector<int>& host_of_rank() const override { return hosts_; }
  void barrier() override {}
  double max_over_ranks(double value) override { return value; }
  double sum_over_ranks(double value) override { return value; }
  void broadcast(void*, std::size_t, int) override {}
  void abort(int) override {}
  std::string mpi_version() const override { return ""; }

 private:
  std::vector<int> hosts_{0};
};

}  // namespace

std::unique_ptr<ProcessGroup> make_single_process_group() {
  return std::make_unique<SingleProcessGroup>();
}

}  // namespace parplan::profiler

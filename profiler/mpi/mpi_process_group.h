// ProcessGroup over MPI: initialises MPI (singleton runs without mpirun work too) unless the
// program already did, finds the hosts with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), and
// finalises MPI on destruction if it initialised it. Tested by the mpi-labelled profile
// runs in tests/profiler.
#pragma once

#include <mpi.h>

#include <memory>

#include "profiler/process_group.h"

namespace parplan::profiler {

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup();
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<int>& host_of_rank() const override { return hosts_; }
  void barrier() override;
  double max_over_ranks(double value) override;
  double sum_over_ranks(double value) override;
  void broadcast(void* data, std::size_t bytes, int root) override;
  void abort(int exit_code) override;
  std::string mpi_version() const override;

  MPI_Comm comm() const { return comm_; }

 private:
  bool owns_mpi_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::vector<int> hosts_;
};

std::unique_ptr<ProcessGroup> make_mpi_process_group();

}  // namespace parplan::profiler

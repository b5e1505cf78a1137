// The ranks of a profiling run, as the measurements need them: who am I, which host am I on,
// a barrier, agreement on a value (max over ranks) and a broadcast (NCCL's unique id).
// Two implementations: one process (no MPI, also what a singleton MPI run looks like) in
// process_group.cpp and MPI in mpi/mpi_process_group.cpp; backends.cpp picks one.
// Tested through tests/profiler (single process) and the mpi-labelled profile run.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace parplan::profiler {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // host_of_rank()[r]: index (0, 1, ...) of the host that rank r runs on, numbered by the
  // lowest rank on each host.
  virtual const std::vector<int>& host_of_rank() const = 0;
  virtual void barrier() = 0;
  virtual double max_over_ranks(double value) = 0;
  virtual double sum_over_ranks(double value) = 0;
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  // Ends every rank's process after an error on one of them (MPI_Abort); a no-op for one
  // process. Never returns when size() > 1.
  virtual void abort(int exit_code) = 0;
  // "Open MPI v4.1.4, ..." or "" without MPI.
  virtual std::string mpi_version() const = 0;

  int num_hosts() const;
  int host() const { return host_of_rank()[static_cast<std::size_t>(rank())]; }
  int ranks_on_host(int host) const;
  int local_rank() const;  // index among the ranks of this host
  int local_size() const { return ranks_on_host(host()); }
  bool is_root() const { return rank() == 0; }
};

// One process, no MPI.
std::unique_ptr<ProcessGroup> make_single_process_group();

}  // namespace parplan::profiler

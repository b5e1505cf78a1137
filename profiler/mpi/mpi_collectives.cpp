#include "profiler/mpi/mpi_collectives.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/mpi/mpi_check.h"
#include "profiler/collective_groups.h"
#include "profiler/cpu_timing.h"
#include "profiler/host_info.h"
#include "profiler/mpi/mpi_process_group.h"

namespace parplan::profiler {

namespace {

// One collective call of fixed counts on a communicator (a no-op on ranks outside it).
std::function<void()> collective_call(Collective op, MPI_Comm comm, const CollectiveCounts& counts,
                                      float* send, float* recv) {
  if (comm == MPI_COMM_NULL) return [] {};
  int r = 0;
  int n = 1;
  PARPLAN_MPI_CHECK(MPI_Comm_rank(comm, &r));
  PARPLAN_MPI_CHECK(MPI_Comm_size(comm, &n));
  const int count = static_cast<int>(counts.per_rank);
  const int next = (r + 1) % n;
  const int prev = (r - 1 + n) % n;
  switch (op) {
    case Collective::AllReduce:
      return [=] { PARPLAN_MPI_CHECK(MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, comm)); };
    case Collective::AllGather:
      return [=] {
        PARPLAN_MPI_CHECK(MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, comm));
      };
    case Collective::ReduceScatter:
      return [=] {
        PARPLAN_MPI_CHECK(MPI_Reduce_scatter_block(send, recv, count, MPI_FLOAT, MPI_SUM, comm));
      };
    case Collective::AllToAll:
      return [=] {
        PARPLAN_MPI_CHECK(MPI_Alltoall(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, comm));
      };
    case Collective::SendRecv:
      return [=] {
        PARPLAN_MPI_CHECK(MPI_Sendrecv(send, count, MPI_FLOAT, next, 0, recv, count, MPI_FLOAT,
                                       prev, 0, comm, MPI_STATUS_IGNORE));
      };
  }
  return [] {};
}

class MpiCollectiveBenchmark final : public CollectiveBenchmark {
 public:
  std::string name() const override { return "MPI"; }

  std::vector<CollectiveRecord> run(ProcessGroup& group, const ProfileOptions& options,
                                    std::vector<std::string>& warnings) override {
    auto* mpi = dynamic_cast<MpiProcessGroup*>(&group);
    PARPLAN_CHECK(mpi != nullptr, "MPI collectives need the MPI process group");
    const std::vector<double> sizes =
        collective_sizes(options, group.local_size(), available_memory_bytes(), 2.0, warnings);
    std::vector<Collective> ops = options.collective_ops;
    if (ops.empty()) {
      for (int i = 0; i < kNumCollectives; ++i) ops.push_back(static_cast<Collective>(i));
    }
    // One buffer pair for the largest size, reused (nccl-tests allocates once as well).
    const double largest = *std::max_element(sizes.begin(), sizes.end());
    const auto capacity = static_cast<int64_t>(largest / sizeof(float)) + 64;
    send_.assign(static_cast<std::size_t>(capacity), 0.0f);
    recv_.assign(static_cast<std::size_t>(capacity), 0.0f);
    std::vector<CollectiveRecord> records;
    for (const GroupLayout& layout : collective_group_layouts(group.host_of_rank())) {
      const auto rank = static_cast<std::size_t>(group.rank());
      const int color = layout.color[rank];
      MPI_Comm comm = MPI_COMM_NULL;
      PARPLAN_MPI_CHECK(
          MPI_Comm_split(mpi->comm(), color >= 0 ? color : MPI_UNDEFINED, layout.key[rank], &comm));
      if (comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      for (Collective op : ops) {
        // The distinct sizes S this op really uses (per-rank blocks are rounded).
        std::vector<CollectiveCounts> all_counts;
        std::set<double> seen;
        for (double nominal : sizes) {
          const CollectiveCounts counts = collective_counts(op, nominal, layout.group_size);
          if (std::max(counts.send, counts.recv) > capacity) continue;
          if (seen.insert(counts.size_bytes).second) all_counts.push_back(counts);
        }
        if (group.is_root() && options.progress) {
          options.progress("  " + std::string(to_string(op)) + " over groups of " +
                           std::to_string(layout.group_size) + " (" + layout.span + "), " +
                           std::to_string(all_counts.size()) + " sizes");
        }
        fill_send(op, comm, layout, all_counts.empty() ? 1 : all_counts.front().per_rank);
        std::vector<Probe> probes;
        for (const auto& counts : all_counts) {
          probes.push_back(cpu_probe(group,
                                     collective_call(op, comm, counts, send_.data(), recv_.data()),
                                     options.stopping, options.target_sample_s));
        }
        const std::vector<Measurement> times = run_interleaved(probes, options.stopping);
        for (std::size_t i = 0; i < all_counts.size(); ++i) {
          check(group, comm, layout, op, all_counts[i]);
          CollectiveRecord record;
          record.op = op;
          record.group_size = layout.group_size;
          record.span = layout.span;
          record.size_bytes = all_counts[i].size_bytes;
          record.time = times[i];
          if (!record.time.converged) {
            warnings.push_back(std::string(to_string(op)) + " group " +
                               std::to_string(layout.group_size) + " " +
                               std::to_string(static_cast<int64_t>(record.size_bytes)) +
                               " B: " + describe(record.time));
          }
          records.push_back(std::move(record));
        }
      }
      if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    }
    send_ = {};
    recv_ = {};
    return records;
  }

 private:
  static void rank_in(MPI_Comm comm, const GroupLayout& layout, int& r, int& n) {
    r = 0;
    n = static_cast<int>(layout.group_size);
    if (comm != MPI_COMM_NULL) {
      PARPLAN_MPI_CHECK(MPI_Comm_rank(comm, &r));
      PARPLAN_MPI_CHECK(MPI_Comm_size(comm, &n));
    }
  }

  void fill_send(Collective op, MPI_Comm comm, const GroupLayout& layout, int64_t per_rank) {
    int r = 0;
    int n = 1;
    rank_in(comm, layout, r, n);
    for (std::size_t i = 0; i < send_.size(); ++i) {
      send_[i] = collective_send_value(op, r, n, per_rank, static_cast<int64_t>(i));
    }
  }

  // Data check (nccl-tests' #wrong column): one more call of this size, then every received
  // element on every member; a wrong element is an error on all ranks.
  void check(ProcessGroup& group, MPI_Comm comm, const GroupLayout& layout, Collective op,
             const CollectiveCounts& counts) {
    int r = 0;
    int n = 1;
    rank_in(comm, layout, r, n);
    double wrong = 0;
    if (comm != MPI_COMM_NULL) {
      for (int64_t i = 0; i < counts.send; ++i)
        send_[static_cast<std::size_t>(i)] = collective_send_value(op, r, n, counts.per_rank, i);
      std::fill(recv_.begin(), recv_.begin() + counts.recv, -1.0f);
      collective_call(op, comm, counts, send_.data(), recv_.data())();
      for (int64_t i = 0; i < counts.recv; ++i) {
        if (recv_[static_cast<std::size_t>(i)] !=
            collective_expected_value(op, r, n, counts.per_rank, i)) {
          ++wrong;
        }
      }
    }
    wrong = group.sum_over_ranks(wrong);
    PARPLAN_CHECK(wrong == 0, to_string(op), " over groups of ", layout.group_size, " at ",
                  counts.size_bytes, " bytes: ", wrong, " received elements are wrong");
  }

  std::vector<float> send_;
  std::vector<float> recv_;
};

}  // namespace

std::unique_ptr<CollectiveBenchmark> make_mpi_collective_benchmark() {
  return std::make_unique<MpiCollectiveBenchmark>();
}

}  // namespace parplan::profiler

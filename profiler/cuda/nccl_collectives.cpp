#include "profiler/cuda/nccl_collectives.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <set>

#include "core/cuda/cuda_check.h"
#include "core/cuda/nccl_check.h"
#include "core/units.h"
#include "profiler/collective_groups.h"
#include "profiler/cpu_timing.h"
#include "profiler/cuda/device_kernels.h"
#include "profiler/sample_stats.h"

namespace parplan::profiler::cuda {

namespace {

// One operation of fixed counts on a communicator (nothing on ranks outside it).
void enqueue(Collective op, ncclComm_t comm, const CollectiveCounts& c, float* send, float* recv,
             cudaStream_t stream) {
  if (comm == nullptr) return;
  int r = 0;
  int n = 1;
  PARPLAN_NCCL_CHECK(ncclCommUserRank(comm, &r));
  PARPLAN_NCCL_CHECK(ncclCommCount(comm, &n));
  const auto count = static_cast<std::size_t>(c.per_rank);
  switch (op) {
    case Collective::AllReduce:
      PARPLAN_NCCL_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
      break;
    case Collective::AllGather:
      PARPLAN_NCCL_CHECK(ncclAllGather(send, recv, count, ncclFloat, comm, stream));
      break;
    case Collective::ReduceScatter:
      PARPLAN_NCCL_CHECK(ncclReduceScatter(send, recv, count, ncclFloat, ncclSum, comm, stream));
      break;
    case Collective::AllToAll:
      PARPLAN_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < n; ++peer) {
        PARPLAN_NCCL_CHECK(ncclSend(send + peer * count, count, ncclFloat, peer, comm, stream));
        PARPLAN_NCCL_CHECK(ncclRecv(recv + peer * count, count, ncclFloat, peer, comm, stream));
      }
      PARPLAN_NCCL_CHECK(ncclGroupEnd());
      break;
    case Collective::SendRecv:
      PARPLAN_NCCL_CHECK(ncclGroupStart());
      PARPLAN_NCCL_CHECK(ncclSend(send, count, ncclFloat, (r + 1) % n, comm, stream));
      PARPLAN_NCCL_CHECK(ncclRecv(recv, count, ncclFloat, (r - 1 + n) % n, comm, stream));
      PARPLAN_NCCL_CHECK(ncclGroupEnd());
      break;
  }
}

class NcclCollectiveBenchmark final : public CollectiveBenchmark {
 public:
  explicit NcclCollectiveBenchmark(KernelTimerFactory timers) : timers_(timers) {}

  std::string name() const override { return "NCCL " + nccl_version(); }

  std::vector<CollectiveRecord> run(ProcessGroup& group, const ProfileOptions& options,
                                    std::vector<std::string>& warnings) override {
    PARPLAN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ncclUniqueId id{};
    if (group.is_root()) PARPLAN_NCCL_CHECK(ncclGetUniqueId(&id));
    group.broadcast(&id, sizeof id, 0);
    PARPLAN_NCCL_CHECK(ncclCommInitRank(&world_, group.size(), id, group.rank()));
    std::size_t free_bytes = 0, total_bytes = 0;
    PARPLAN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    ProfileOptions sized = options;
    if (sized.max_collective_bytes <= 0) sized.max_collective_bytes = kGiB;
    // Two buffers per rank on its own GPU (ranks_on_host 1: the memory is the device's).
    const std::vector<double> sizes =
        collective_sizes(sized, 1, static_cast<double>(free_bytes), 2.0, warnings);
    const double largest = *std::max_element(sizes.begin(), sizes.end());
    capacity_ = static_cast<int64_t>(largest / sizeof(float)) + 64;
    PARPLAN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&send_), sizeof(float) * capacity_));
    PARPLAN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&recv_), sizeof(float) * capacity_));
    std::vector<Collective> ops = options.collective_ops;
    if (ops.empty()) {
      for (int i = 0; i < kNumCollectives; ++i) ops.push_back(static_cast<Collective>(i));
    }
    std::vector<CollectiveRecord> records;
    try {
      for (const GroupLayout& layout : collective_group_layouts(group.host_of_rank())) {
        const auto rank = static_cast<std::size_t>(group.rank());
        ncclComm_t comm = nullptr;
        PARPLAN_NCCL_CHECK(
            ncclCommSplit(world_, layout.color[rank] >= 0 ? layout.color[rank] : NCCL_SPLIT_NOCOLOR,
                          layout.key[rank], &comm, nullptr));
        for (Collective op : ops)
          measure_op(group, comm, layout, op, sizes, options, records, warnings);
        if (comm != nullptr) ncclCommDestroy(comm);
      }
    } catch (...) {
      release();
      throw;
    }
    release();
    return records;
  }

 private:
  void release() {
    if (world_ != nullptr) ncclCommDestroy(world_);
    world_ = nullptr;
    cudaFree(send_);
    cudaFree(recv_);
    send_ = recv_ = nullptr;
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }

  void measure_op(ProcessGroup& group, ncclComm_t comm, const GroupLayout& layout, Collective op,
                  const std::vector<double>& sizes, const ProfileOptions& options,
                  std::vector<CollectiveRecord>& records, std::vector<std::string>& warnings) {
    std::vector<CollectiveCounts> all_counts;
    std::set<double> seen;
    for (double nominal : sizes) {
      const CollectiveCounts c = collective_counts(op, nominal, layout.group_size);
      if (std::max(c.send, c.recv) > capacity_) continue;
      if (seen.insert(c.size_bytes).second) all_counts.push_back(c);
    }
    if (group.is_root() && options.progress) {
      options.progress("  " + std::string(to_string(op)) + " over groups of " +
                       std::to_string(layout.group_size) + " (" + layout.span + "), " +
                       std::to_string(all_counts.size()) + " sizes");
    }
    auto timer = timers_(stream_);
    std::vector<std::vector<double>> kernel_s(all_counts.size());
    std::vector<Probe> probes;
    for (std::size_t i = 0; i < all_counts.size(); ++i) {
      const CollectiveCounts counts = all_counts[i];
      auto reps = std::make_shared<int64_t>(1);
      auto run_once = [op, comm, counts, send = send_, recv = recv_, stream = stream_] {
        enqueue(op, comm, counts, send, recv, stream);
      };
      Probe probe;
      probe.prepare = [&group, reps, run_once, options, stream = stream_] {
        group.barrier();
        CpuTimer t;
        t.start();
        run_once();
        PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));
        *reps = repetitions_for(group.max_over_ranks(t.elapsed_s()), options.target_sample_s);
        for (int w = 0; w < options.stopping.warmup_runs; ++w) run_once();
        PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));
      };
      probe.take = [&group, reps, run_once, stream = stream_, timer = timer.get(),
                    kernels = &kernel_s[i]] {
        timer->start();
        group.barrier();
        CpuTimer t;
        t.start();
        for (int64_t r = 0; r < *reps; ++r) run_once();
        PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));
        const double total = group.max_over_ranks(t.elapsed_s());
        kernels->push_back(group.max_over_ranks(timer->stop()) / static_cast<double>(*reps));
        return Sample{total / static_cast<double>(*reps), total};
      };
      probes.push_back(std::move(probe));
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
      record.kernel_median_s = kernel_s[i].empty() ? -1.0 : median(kernel_s[i]);
      if (!record.time.converged) {
        warnings.push_back(std::string(to_string(op)) + " group " +
                           std::to_string(layout.group_size) + " " +
                           std::to_string(static_cast<int64_t>(record.size_bytes)) +
                           " B: " + describe(record.time));
      }
      records.push_back(std::move(record));
    }
  }

  // nccl-tests' #wrong column, on the device: one more call of this size with the pattern.
  void check(ProcessGroup& group, ncclComm_t comm, const GroupLayout& layout, Collective op,
             const CollectiveCounts& counts) {
    double wrong = 0;
    if (comm != nullptr) {
      int r = 0;
      int n = 1;
      PARPLAN_NCCL_CHECK(ncclCommUserRank(comm, &r));
      PARPLAN_NCCL_CHECK(ncclCommCount(comm, &n));
      fill_collective_pattern(send_, static_cast<int>(op), r, n, counts.per_rank, counts.send,
                              stream_);
      PARPLAN_CUDA_CHECK(cudaMemsetAsync(recv_, 0xff, sizeof(float) * counts.recv, stream_));
      enqueue(op, comm, counts, send_, recv_, stream_);
      wrong = static_cast<double>(count_collective_mismatches(
          recv_, static_cast<int>(op), r, n, counts.per_rank, counts.recv, stream_));
    }
    wrong = group.sum_over_ranks(wrong);
    PARPLAN_CHECK(wrong == 0, to_string(op), " over groups of ", layout.group_size, " at ",
                  counts.size_bytes, " bytes: ", wrong, " received elements are wrong (NCCL)");
  }

  KernelTimerFactory timers_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t world_ = nullptr;
  float* send_ = nullptr;
  float* recv_ = nullptr;
  int64_t capacity_ = 0;
};

}  // namespace

std::unique_ptr<CollectiveBenchmark> make_nccl_collective_benchmark(KernelTimerFactory timers) {
  return std::make_unique<NcclCollectiveBenchmark>(timers);
}

std::string nccl_version() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return "unknown";
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

}  // namespace parplan::profiler::cuda

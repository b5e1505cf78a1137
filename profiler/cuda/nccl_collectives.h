// Collective timings over NCCL on GPU ranks, nccl-tests style: NCCL bootstrapped through the
// process group (ncclGetUniqueId on rank 0, broadcast over MPI), sub-communicators by
// ncclCommSplit per group layout (collective_groups.h); per sample barrier -> steady_clock
// -> a loop of operations on the stream -> stream sync -> steady_clock, max over ranks, under
// the stopping rule, sizes interleaved; NCCL's kernels timed as well by the kernel timer
// (CUPTI), reported as kernel_median_s. all_reduce, all_gather, reduce_scatter, all_to_all
// (grouped ncclSend/ncclRecv) and ring send/recv on float buffers; every size's result is
// checked on the device. Tested on GPU machines by tools/gpu_check.sh (profile --backend cuda).
#pragma once

#include <memory>
#include <string>

#include "profiler/backend.h"
#include "profiler/cuda/kernel_timer.h"

namespace parplan::profiler::cuda {

std::unique_ptr<CollectiveBenchmark> make_nccl_collective_benchmark(KernelTimerFactory timers);
std::string nccl_version();

}  // namespace parplan::profiler::cuda

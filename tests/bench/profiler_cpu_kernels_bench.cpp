// Microbenchmarks (Google Benchmark) of the CPU kernels the profiler times: the memory-bound
// reference kernels, Eigen GEMMs at a few transformer shapes, and the STREAM copy. They give
// a second, independent timing of the same code (benchmark's own iteration control) to
// cross-check the profiler's stopping rule. Not part of ctest:
//   ./build/tests/bench/profiler_cpu_bench --benchmark_filter=gemm
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <vector>

#include "profiler/cpu_reference_kernels.h"

namespace {

using parplan::profiler::make_memory_bound_kernel;

void memory_bound(benchmark::State& state, const char* kernel) {
  auto k = make_memory_bound_kernel(kernel, state.range(0), state.range(1));
  for (auto _ : state) {
    k.run();
    benchmark::DoNotOptimize(k.out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(k.bytes) * state.iterations());
}
BENCHMARK_CAPTURE(memory_bound, layernorm, "layernorm")->Args({512, 512})->Args({8192, 1024});
BENCHMARK_CAPTURE(memory_bound, rmsnorm, "rmsnorm")->Args({512, 512})->Args({8192, 1024});
BENCHMARK_CAPTURE(memory_bound, gelu, "gelu")->Args({512, 2048})->Args({4096, 4096});
BENCHMARK_CAPTURE(memory_bound, swiglu, "swiglu")->Args({512, 2048})->Args({4096, 4096});
BENCHMARK_CAPTURE(memory_bound, softmax, "softmax")->Args({2048, 256})->Args({8192, 1024});

template <typename Scalar>
void gemm(benchmark::State& state) {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  const auto m = state.range(0), n = state.range(1), k = state.range(2);
  const Matrix a = Matrix::Random(m, k);
  const Matrix b = Matrix::Random(k, n);
  Matrix c(m, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["TFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(m * n * k) * static_cast<double>(state.iterations()) / 1e12,
      benchmark::Counter::kIsRate);
}
BENCHMARK(gemm<float>)->Args({512, 768, 256})->Args({512, 2048, 512})->Args({64, 64, 64});
BENCHMARK(gemm<double>)->Args({512, 768, 256})->Args({64, 64, 64});

void stream_copy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0)) / sizeof(double);
  std::vector<double> a(n, 1.0), c(n, 0.0);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(2 * n * sizeof(double)) * state.iterations());
}
BENCHMARK(stream_copy)->Arg(int64_t{128} << 20)->Unit(benchmark::kMillisecond);

}  // namespace

#include "tools/executor_probes.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "executor/backends.h"
#include "executor/compute.h"

namespace parplan::tools {

namespace {

using executor::Compute;

// The executor's Compute and the buffers its probes use, kept alive by the closures; buffers
// live where the backend computes (host memory on CPU, device memory on a GPU).
struct Arena {
  std::unique_ptr<Compute<float>> compute;
  std::vector<void*> buffers;
  ~Arena() {
    for (void* p : buffers) compute->release(p);
  }
  // n floats of value + 0.001 * (i % 97).
  float* buffer(std::size_t n, float value = 0.5f) {
    std::vector<float> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = value + 0.001f * static_cast<float>(i % 97);
    buffers.push_back(compute->allocate(n * sizeof(float)));
    compute->copy_to_device(buffers.back(), host.data(), n * sizeof(float));
    return static_cast<float*>(buffers.back());
  }
};

constexpr double kF = sizeof(float);

struct ProbeSizes {
  int64_t rows = 0;   // rows x width: a memory-resident activation
  int64_t width = 0;  // the hidden size
  executor::AttentionShape attention;
};

using Add =
    std::function<void(const char*, int64_t, int64_t, double, double, std::function<void()>)>;

void add_memory_bound_probes(Arena& arena, const ProbeSizes& sizes, const Add& add) {
  Compute<float>& c = *arena.compute;
  const int64_t rows = sizes.rows;
  const int64_t width = sizes.width;
  const int64_t ffn = 4 * width;
  const int64_t n = rows * width;
  const auto nn = static_cast<std::size_t>(n);
  float* x = arena.buffer(nn);
  float* y = arena.buffer(nn);
  float* dy = arena.buffer(nn);
  float* dx = arena.buffer(nn);
  float* w = arena.buffer(static_cast<std::size_t>(width), 1.0f);
  float* b = arena.buffer(static_cast<std::size_t>(width), 0.0f);
  float* dw = arena.buffer(static_cast<std::size_t>(width));
  float* db = arena.buffer(static_cast<std::size_t>(width));
  float* mean = arena.buffer(static_cast<std::size_t>(rows));
  float* rstd = arena.buffer(static_cast<std::size_t>(rows), 1.0f);
  const int64_t act_rows = rows / 4;  // rows x (2 ffn) fits the same budget
  const auto fc_n = static_cast<std::size_t>(act_rows * 2 * ffn);
  float* fc = arena.buffer(fc_n);
  float* dfc = arena.buffer(fc_n);
  float* act = arena.buffer(fc_n / 2);
  float* dact = arena.buffer(fc_n / 2);

  add("layernorm_forward", rows, width, 2 * kF * n, 0, [&c, y, mean, rstd, x, w, b, rows, width] {
    c.layernorm_forward(y, mean, rstd, x, w, b, rows, width);
  });
  add("layernorm_backward", rows, width, 3 * kF * n, 0,
      [&c, dx, dw, db, dy, x, w, mean, rstd, rows, width] {
        c.layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, width);
      });
  add("rmsnorm_forward", rows, width, 2 * kF * n, 0,
      [&c, y, rstd, x, w, rows, width] { c.rmsnorm_forward(y, rstd, x, w, rows, width); });
  add("rmsnorm_backward", rows, width, 3 * kF * n, 0, [&c, dx, dw, dy, x, w, rstd, rows, width] {
    c.rmsnorm_backward(dx, dw, dy, x, w, rstd, rows, width);
  });
  const int64_t gelu_n = act_rows * ffn;
  add("gelu_forward", act_rows, ffn, 2 * kF * gelu_n, 0,
      [&c, act, fc, gelu_n] { c.gelu_forward(act, fc, gelu_n); });
  add("gelu_backward", act_rows, ffn, 3 * kF * gelu_n, 0,
      [&c, dfc, fc, dact, gelu_n] { c.gelu_backward(dfc, fc, dact, gelu_n); });
  add("swiglu_forward", act_rows, ffn, 3 * kF * gelu_n, 0,
      [&c, act, fc, act_rows, ffn] { c.swiglu_forward(act, fc, act_rows, ffn); });
  add("swiglu_backward", act_rows, ffn, 5 * kF * gelu_n, 0,
      [&c, dfc, fc, dact, act_rows, ffn] { c.swiglu_backward(dfc, fc, dact, act_rows, ffn); });
  add("add", rows, width, 3 * kF * n, 0, [&c, y, x, dx, n] { c.add(y, x, dx, n); });
  add("adamw", rows, width, 7 * kF * n, 0, [&c, x, dy, y, dx, n] {
    executor::AdamWConfig config;
    c.adamw(x, dy, y, dx, n, config, true);
  });
}

// Attention at the shape given: its throughput is counted over the whole score matrix
// (forward: q k^T and p v; backward: five products), 4 b h s^2 d / 10 b h s^2 d FLOPs.
void add_attention_probes(Arena& arena, const executor::AttentionShape& shape, const Add& add) {
  Compute<float>& c = *arena.compute;
  const auto qkv_n = static_cast<std::size_t>(shape.rows() * shape.qkv_width());
  const auto out_n = static_cast<std::size_t>(shape.rows() * shape.heads * shape.head_dim);
  float* qkv = arena.buffer(qkv_n, 0.01f);
  float* dqkv = arena.buffer(qkv_n);
  float* out = arena.buffer(out_n);
  float* dout = arena.buffer(out_n, 0.01f);
  float* lse = arena.buffer(static_cast<std::size_t>(shape.batch * shape.heads * shape.seq));
  float* scratch = arena.buffer(
      static_cast<std::size_t>(std::max<int64_t>(1, c.attention_scratch_elements(shape))));
  const double square = static_cast<double>(shape.batch * shape.heads) *
                        static_cast<double>(shape.seq * shape.seq) *
                        static_cast<double>(shape.head_dim);
  add("attention_forward", shape.seq, shape.head_dim, 0, 4 * square,
      [&c, out, lse, qkv, shape] { c.attention_forward(out, lse, qkv, shape); });
  add("attention_backward", shape.seq, shape.head_dim, 0, 10 * square,
      [&c, dqkv, scratch, dout, qkv, lse, shape] {
        c.attention_backward(dqkv, scratch, dout, qkv, lse, shape);
      });
}

std::vector<profiler::KernelProbe> executor_probes(std::shared_ptr<Arena> arena,
                                                   const ProbeSizes& sizes) {
  std::vector<profiler::KernelProbe> probes;
  const Add add = [&probes, arena](const char* name, int64_t r, int64_t cols, double bytes,
                                   double flops, std::function<void()> run) {
    probes.push_back({name, r, cols, bytes, flops, [arena, run = std::move(run)] { run(); }});
  };
  add_memory_bound_probes(*arena, sizes, add);
  add_attention_probes(*arena, sizes.attention, add);
  return probes;
}

// Row-major (m x k) by (k x n) GEMMs of a transformer layer's projections for hidden sizes
// about 1024 (qkv, output, MLP, logits), over token counts from a short micro-batch to a long
// one, and narrow ones that price the ramps: enough points for the GEMM model's fit.
std::vector<GemmShape> executor_gemm_shapes(bool quick) {
  const std::vector<int64_t> tokens =
      quick ? std::vector<int64_t>{256, 1024, 4096} : std::vector<int64_t>{128, 512, 2048, 8192};
  const std::vector<std::pair<int64_t, int64_t>> n_by_k = {
      {1024, 1024},  {3072, 1024}, {4096, 1024}, {1024, 4096},
      {32768, 1024}, {128, 1024},  {1024, 128}};
  std::vector<GemmShape> shapes;
  for (const int64_t m : tokens) {
    for (const auto& [n, k] : n_by_k) shapes.push_back({m, n, k, 1});
  }
  return shapes;
}

void add_gemm_probes(Arena& arena, bool quick, std::vector<profiler::KernelProbe>& probes,
                     const std::shared_ptr<Arena>& keep) {
  const std::vector<GemmShape> shapes = executor_gemm_shapes(quick);
  int64_t a_n = 0, b_n = 0, c_n = 0;
  for (const auto& s : shapes) {
    a_n = std::max(a_n, s.m * s.k);
    b_n = std::max(b_n, s.k * s.n);
    c_n = std::max(c_n, s.m * s.n);
  }
  float* a = arena.buffer(static_cast<std::size_t>(a_n), 0.01f);
  float* b = arena.buffer(static_cast<std::size_t>(b_n), 0.01f);
  float* c = arena.buffer(static_cast<std::size_t>(c_n), 0.0f);
  Compute<float>& compute = *arena.compute;
  for (const auto& s : shapes) {
    profiler::KernelProbe probe;
    probe.name = "gemm";
    probe.rows = s.m;
    probe.cols = s.n;
    probe.flops = gemm_flops(s);
    probe.gemm = s;
    probe.precision = "fp32";
    probe.run = [keep, &compute, a, b, c, s] {
      compute.gemm(false, false, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c, s.n);
    };
    probes.push_back(std::move(probe));
  }
}

}  // namespace

std::vector<profiler::KernelProbe> executor_cpu_probes(bool quick) {
  auto arena = std::make_shared<Arena>();
  arena->compute = executor::make_compute<float>(executor::Backend::Cpu, 0, 0);
  // Rows x width of a memory-resident activation (about 16 MiB) and of an MLP activation;
  // attention at a shape of the executor's small CPU models.
  ProbeSizes sizes;
  sizes.rows = quick ? 2048 : 4096;
  sizes.width = 1024;
  sizes.attention.seq = quick ? 256 : 512;
  sizes.attention.batch = 2;
  sizes.attention.heads = 4;
  sizes.attention.groups = 4;
  sizes.attention.head_dim = 64;
  return executor_probes(arena, sizes);
}

std::vector<profiler::KernelProbe> executor_cuda_probes(bool quick, int node_local_rank) {
  auto arena = std::make_shared<Arena>();
  arena->compute = executor::make_compute<float>(executor::Backend::Cuda, 0, node_local_rank);
  // Activations of 32-64 MiB (beyond the L2 of current GPUs, as a GPU model's are) and
  // attention at a 350M-class model's shape (tools/examples/gpu_check_job.json).
  ProbeSizes sizes;
  sizes.rows = quick ? 8192 : 16384;
  sizes.width = 1024;
  sizes.attention.seq = quick ? 1024 : 2048;
  sizes.attention.batch = 4;
  sizes.attention.heads = 16;
  sizes.attention.groups = 16;
  sizes.attention.head_dim = 64;
  std::vector<profiler::KernelProbe> probes = executor_probes(arena, sizes);
  add_gemm_probes(*arena, quick, probes, arena);
  return probes;
}

}  // namespace parplan::tools

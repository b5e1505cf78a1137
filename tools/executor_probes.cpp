#include "tools/executor_probes.h"

#include <memory>
#include <numeric>
#include <vector>

#include "executor/backends.h"
#include "executor/compute.h"

namespace parplan::tools {

namespace {

using executor::Compute;

// Buffers shared by the probes of one size, kept alive by the closures.
struct Arena {
  std::unique_ptr<Compute<float>> compute;
  std::vector<std::vector<float>> buffers;
  float* buffer(std::size_t n, float value = 0.5f) {
    buffers.emplace_back(n, value);
    for (std::size_t i = 0; i < n; ++i)
      buffers.back()[i] = value + 0.001f * static_cast<float>(i % 97);
    return buffers.back().data();
  }
};

constexpr double kF = sizeof(float);

}  // namespace

std::vector<profiler::KernelProbe> executor_cpu_probes(bool quick) {
  auto arena = std::make_shared<Arena>();
  arena->compute = executor::make_compute<float>(executor::Backend::Cpu, 0, 0);
  Compute<float>& c = *arena->compute;
  // Rows x width of a memory-resident activation (about 16 MiB) and of an MLP activation.
  const int64_t rows = quick ? 2048 : 4096;
  const int64_t width = 1024;
  const int64_t ffn = 4 * width;
  const int64_t n = rows * width;
  const auto nn = static_cast<std::size_t>(n);
  float* x = arena->buffer(nn);
  float* y = arena->buffer(nn);
  float* dy = arena->buffer(nn);
  float* dx = arena->buffer(nn);
  float* w = arena->buffer(static_cast<std::size_t>(width), 1.0f);
  float* b = arena->buffer(static_cast<std::size_t>(width), 0.0f);
  float* dw = arena->buffer(static_cast<std::size_t>(width));
  float* db = arena->buffer(static_cast<std::size_t>(width));
  float* mean = arena->buffer(static_cast<std::size_t>(rows));
  float* rstd = arena->buffer(static_cast<std::size_t>(rows), 1.0f);
  const int64_t act_rows = rows / 4;  // rows x (2 ffn) fits the same budget
  const auto fc_n = static_cast<std::size_t>(act_rows * 2 * ffn);
  float* fc = arena->buffer(fc_n);
  float* dfc = arena->buffer(fc_n);
  float* act = arena->buffer(fc_n / 2);
  float* dact = arena->buffer(fc_n / 2);

  std::vector<profiler::KernelProbe> probes;
  auto add = [&](const char* name, int64_t r, int64_t cols, double bytes, double flops,
                 std::function<void()> run) {
    probes.push_back({name, r, cols, bytes, flops, [arena, run = std::move(run)] { run(); }});
  };
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

  // Attention at a shape of the executor's small models: the whole score matrix is computed
  // (forward: q k^T and p v; backward: five products), 4 b h s^2 d / 10 b h s^2 d FLOPs.
  executor::AttentionShape shape;
  shape.seq = quick ? 256 : 512;
  shape.batch = 2;
  shape.heads = 4;
  shape.groups = 4;
  shape.head_dim = 64;
  const auto qkv_n = static_cast<std::size_t>(shape.rows() * shape.qkv_width());
  float* qkv = arena->buffer(qkv_n, 0.01f);
  float* dqkv = arena->buffer(qkv_n);
  float* out = arena->buffer(static_cast<std::size_t>(shape.rows() * shape.heads * shape.head_dim));
  float* dout =
      arena->buffer(static_cast<std::size_t>(shape.rows() * shape.heads * shape.head_dim), 0.01f);
  float* lse = arena->buffer(static_cast<std::size_t>(shape.batch * shape.heads * shape.seq));
  float* scratch = arena->buffer(static_cast<std::size_t>(c.attention_scratch_elements(shape)));
  const double square = static_cast<double>(shape.batch * shape.heads) *
                        static_cast<double>(shape.seq * shape.seq) *
                        static_cast<double>(shape.head_dim);
  add("attention_forward", shape.seq, shape.head_dim, 0, 4 * square,
      [&c, out, lse, qkv, shape] { c.attention_forward(out, lse, qkv, shape); });
  add("attention_backward", shape.seq, shape.head_dim, 0, 10 * square,
      [&c, dqkv, scratch, dout, qkv, lse, shape] {
        c.attention_backward(dqkv, scratch, dout, qkv, lse, shape);
      });
  return probes;
}

}  // namespace parplan::tools

// CUDA attention: rotary embedding, and causal grouped-query attention that keeps the
// log-sum-exp of each score row instead of the probabilities (flash attention's recipe,
// Dao et al. 2022, without its tiling: one block per query row). The backward pass writes
// P and dS per (batch, head) to scratch, then a second kernel sums dK and dV per key row over
// the heads of its group, so the result is deterministic. Reference:
// executor/cpu/cpu_attention.cpp.
#include <cmath>

#include "executor/cuda/cuda_common.cuh"
#include "executor/cuda/cuda_kernels.cuh"

namespace parplan::executor::cuda {

namespace {

constexpr double kRopeBase = 10000.0;

struct Geometry {
  int64_t T, B, H, G, d, W;  // W = qkv row width
  __host__ __device__ int64_t q(int64_t t, int64_t b, int64_t h) const {
    return (t * B + b) * W + h * d;
  }
  __host__ __device__ int64_t k(int64_t t, int64_t b, int64_t g) const {
    return (t * B + b) * W + (H + g) * d;
  }
  __host__ __device__ int64_t v(int64_t t, int64_t b, int64_t g) const {
    return (t * B + b) * W + (H + G + g) * d;
  }
  __host__ __device__ int64_t out(int64_t t, int64_t b, int64_t h) const {
    return (t * B + b) * H * d + h * d;
  }
  __host__ __device__ int64_t group(int64_t h) const { return h / (H / G); }
};

Geometry geometry(const AttentionShape& s) {
  return {s.seq, s.batch, s.heads, s.groups, s.head_dim, s.qkv_width()};
}

template <typename T>
__global__ void rope_kernel(T* qkv, Geometry g, bool inverse) {
  const int64_t half = g.d / 2;
  const int64_t n = g.T * g.B * (g.H + g.G) * half;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t pair = i % half;
    const int64_t head = (i / half) % (g.H + g.G);
    const int64_t row = i / (half * (g.H + g.G));
    const int64_t t = row / g.B;
    const double angle = static_cast<double>(t) * pow(kRopeBase, -2.0 * pair / g.d);
    const T c = static_cast<T>(cos(angle));
    const T s = static_cast<T>(inverse ? -sin(angle) : sin(angle));
    T* x = qkv + row * g.W + head * g.d;
    const T x1 = x[pair];
    const T x2 = x[pair + half];
    x[pair] = x1 * c - x2 * s;
    x[pair + half] = x2 * c + x1 * s;
  }
}

// One block per (query row i, head h, batch b); shared memory holds the row's scores.
template <typename T>
__global__ void attention_forward_kernel(T* out, T* lse, const T* qkv, Geometry g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* p = reinterpret_cast<T*>(smem_raw);
  const int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t grp = g.group(h);
  const T scale = T(1) / sqrt(T(g.d));
  const T* q = qkv + g.q(i, b, h);
  T m = T(-INFINITY);
  for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) {
    const T* k = qkv + g.k(j, b, grp);
    T s = 0;
    for (int64_t e = 0; e < g.d; ++e) s += q[e] * k[e];
    p[j] = s * scale;
    m = max(m, p[j]);
  }
  m = block_max(m);
  T sum = 0;
  for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) {
    p[j] = exp(p[j] - m);
    sum += p[j];
  }
  sum = block_sum(sum);  // also a barrier: p is complete
  for (int64_t e = threadIdx.x; e < g.d; e += blockDim.x) {
    T acc = 0;
    for (int64_t j = 0; j <= i; ++j) acc += p[j] * qkv[g.v(j, b, grp) + e];
    out[g.out(i, b, h) + e] = acc / sum;
  }
  if (threadIdx.x == 0) lse[(b * g.H + h) * g.T + i] = m + log(sum);
}

// Per (i, h, b): P row and dS row into scratch, dQ row.
template <typename T>
__global__ void attention_backward_rows_kernel(T* dqkv, T* probs, T* dscores, const T* dout,
                                               const T* qkv, const T* lse, Geometry g) {
  const int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t grp = g.group(h);
  const T scale = T(1) / sqrt(T(g.d));
  const int64_t base = ((b * g.H + h) * g.T + i) * g.T;
  T* p = probs + base;
  T* ds = dscores + base;
  const T* q = qkv + g.q(i, b, h);
  const T* dy = dout + g.out(i, b, h);
  const T row_lse = lse[(b * g.H + h) * g.T + i];
  T dot = 0;
  for (int64_t j = threadIdx.x; j < g.T; j += blockDim.x) {
    if (j > i) {
      p[j] = T(0);
      ds[j] = T(0);
      continue;
    }
    const T* k = qkv + g.k(j, b, grp);
    const T* v = qkv + g.v(j, b, grp);
    T s = 0, dp = 0;
    for (int64_t e = 0; e < g.d; ++e) {
      s += q[e] * k[e];
      dp += dy[e] * v[e];
    }
    p[j] = exp(s * scale - row_lse);
    ds[j] = dp;
    dot += p[j] * dp;
  }
  dot = block_sum(dot);  // barrier: p and ds (holding dP) are complete
  for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) ds[j] = p[j] * (ds[j] - dot) * scale;
  __syncthreads();
  for (int64_t e = threadIdx.x; e < g.d; e += blockDim.x) {
    T acc = 0;
    for (int64_t j = 0; j <= i; ++j) acc += ds[j] * qkv[g.k(j, b, grp) + e];
    dqkv[g.q(i, b, h) + e] = acc;
  }
}

// Per (key row j, group, b): dK and dV summed over the group's heads and the later queries.
template <typename T>
__global__ void attention_backward_keys_kernel(T* dqkv, const T* probs, const T* dscores,
                                               const T* dout, const T* qkv, Geometry g) {
  const int64_t j = blockIdx.x, grp = blockIdx.y, b = blockIdx.z;
  const int64_t heads_per_group = g.H / g.G;
  for (int64_t e = threadIdx.x; e < g.d; e += blockDim.x) {
    T dk = 0, dv = 0;
    for (int64_t h = grp * heads_per_group; h < (grp + 1) * heads_per_group; ++h) {
      const int64_t base = (b * g.H + h) * g.T;
      for (int64_t i = j; i < g.T; ++i) {
        dk += dscores[(base + i) * g.T + j] * qkv[g.q(i, b, h) + e];
        dv += probs[(base + i) * g.T + j] * dout[g.out(i, b, h) + e];
      }
    }
    dqkv[g.k(j, b, grp) + e] = dk;
    dqkv[g.v(j, b, grp) + e] = dv;
  }
}

template <typename T>
void set_shared_memory(const void* kernel, std::size_t bytes) {
  if (bytes > 48 * 1024) {
    PARPLAN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
  }
}

}  // namespace

template <typename T>
void rope(T* qkv, const AttentionShape& s, bool inverse) {
  const Geometry g = geometry(s);
  rope_kernel<<<blocks_for(g.T * g.B * (g.H + g.G) * (g.d / 2)), kThreads>>>(qkv, g, inverse);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void attention_forward(T* out, T* lse, const T* qkv, const AttentionShape& s) {
  const Geometry g = geometry(s);
  const std::size_t smem = static_cast<std::size_t>(g.T) * sizeof(T);
  set_shared_memory<T>(reinterpret_cast<const void*>(&attention_forward_kernel<T>), smem);
  const dim3 grid(static_cast<unsigned>(g.T), static_cast<unsigned>(g.H),
                  static_cast<unsigned>(g.B));
  attention_forward_kernel<<<grid, 128, smem>>>(out, lse, qkv, g);
  PARPLAN_CUDA_LAUNCHED();
}

int64_t attention_scratch_elements(const AttentionShape& s) {
  return 2 * s.batch * s.heads * s.seq * s.seq;
}

template <typename T>
void attention_backward(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* lse,
                        const AttentionShape& s) {
  const Geometry g = geometry(s);
  T* probs = scratch;
  T* dscores = scratch + g.B * g.H * g.T * g.T;
  const dim3 rows(static_cast<unsigned>(g.T), static_cast<unsigned>(g.H),
                  static_cast<unsigned>(g.B));
  attention_backward_rows_kernel<<<rows, 128>>>(dqkv, probs, dscores, dout, qkv, lse, g);
  PARPLAN_CUDA_LAUNCHED();
  const dim3 keys(static_cast<unsigned>(g.T), static_cast<unsigned>(g.G),
                  static_cast<unsigned>(g.B));
  attention_backward_keys_kernel<<<keys, 64>>>(dqkv, probs, dscores, dout, qkv, g);
  PARPLAN_CUDA_LAUNCHED();
}

#define PARPLAN_INSTANTIATE(T)                                                 \
  template void rope<T>(T*, const AttentionShape&, bool);                      \
  template void attention_forward<T>(T*, T*, const T*, const AttentionShape&); \
  template void attention_backward<T>(T*, T*, const T*, const T*, const T*, const AttentionShape&);

PARPLAN_INSTANTIATE(float)
PARPLAN_INSTANTIATE(double)
#undef PARPLAN_INSTANTIATE

}  // namespace parplan::executor::cuda

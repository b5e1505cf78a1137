// CUDA attention: rotary embedding, and causal grouped-query attention that keeps the
// log-sum-exp of each score row instead of the probabilities. Reference:
// executor/cpu/cpu_attention.cpp.
//
// Tiled path (head_dim <= 128, tiles fit the device's shared memory): FlashAttention-2
// (Dao 2023, arXiv 2307.08691, Algorithms 1 and 2). Tiles of kTile = 32 query rows and 32 key rows;
// blocks of 8 warps, each warp owning 4 rows (or keys) of its block's tile, lanes over the 32 keys
// (or queries) of the other tile for the scores and over head_dim for the products with V, K, Q or
// dO.
//   - forward (Algorithm 1): block (query tile, head, batch) streams the key tiles up to the
//     diagonal through shared memory with an online softmax (running max m, sum l, output
//     rescaled by exp(m_old - m_new)); writes out and lse = m + log(l) only.
//   - backward (Algorithm 2, with dQ in its own kernel so nothing needs atomics):
//       D_i = rowsum(dO_i * O_i), where O is recomputed by the forward kernel (the op does
//       not receive out), into scratch (B * heads * T elements);
//       dQ: block (query tile, head, batch) loops over key tiles, recomputing
//           P = exp(S - lse), dS = P * (dP - D) / sqrt(d), dQ = dS K;
//       dK, dV: block (key tile, group, batch) loops over the group's heads and the query
//           tiles at or below the diagonal: dV = P^T dO, dK = dS^T Q.
//     Every sum has a fixed order, so results are deterministic.
// Fallback (larger head_dim): one block per query row; its backward writes P and dS per
// (batch, head) to scratch (2 * B * heads * T^2 elements), then a second kernel sums dK and dV
// per key row over the heads of its group.
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

// ---- tiled (FlashAttention-2) kernels ----
constexpr int kTile = 32;                     // query rows and key rows per tile
constexpr int kWarps = 8;                     // per block
constexpr int kRowsPerWarp = kTile / kWarps;  // rows (or keys) of the tile per warp
constexpr int kMaxHeadDim = 128;              // the tiled kernels' limit
constexpr int kPerLane = kMaxHeadDim / 32;    // head_dim elements per lane
constexpr unsigned kFull = 0xffffffffu;

// Shared tiles are kTile x (d + 1): the padding keeps lane-over-rows reads conflict-free.
__host__ __device__ inline int64_t tile_stride(int64_t d) { return d + 1; }
template <typename T>
std::size_t tiled_shared_bytes(int64_t d) {
  return (4 * kTile * static_cast<std::size_t>(tile_stride(d)) + 2 * kTile) * sizeof(T);
}

// Loads rows [first, first + kTile) of a sequence-major operand (element (t, e) at
// base + (t * B + b) * row_stride + e, already offset to batch b and the head) into a
// shared tile; rows at or past T are zero.
template <typename T>
__device__ void load_tile(T* tile, const T* base, int64_t first, int64_t row_stride, Geometry g) {
  const int64_t ds = tile_stride(g.d);
  for (int64_t idx = threadIdx.x; idx < kTile * g.d; idx += blockDim.x) {
    const int64_t r = idx / g.d, e = idx % g.d;
    const int64_t t = first + r;
    tile[r * ds + e] = t < g.T ? base[t * g.B * row_stride + e] : T(0);
  }
}

template <typename T>
__device__ inline T dot_row(const T* a, const T* b, int64_t d) {
  T s = 0;
  for (int64_t e = 0; e < d; ++e) s += a[e] * b[e];
  return s;
}

// Block (query tile, head h, batch b). Writes out and lse; or, when delta is not null, only
// delta_i = sum_e dout_ie * out_ie (the backward's D) for the recomputed out.
template <typename T>
__global__ void __launch_bounds__(kWarps * 32)
    flash_forward_kernel(T* out, T* lse, T* delta, const T* dout, const T* qkv, Geometry g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int64_t ds = tile_stride(g.d);
  T* qs = reinterpret_cast<T*>(smem_raw);
  T* ks = qs + kTile * ds;
  T* vs = ks + kTile * ds;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t i0 = blockIdx.x * int64_t{kTile}, h = blockIdx.y, b = blockIdx.z;
  const int64_t grp = g.group(h);
  const T scale = T(1) / sqrt(T(g.d));
  load_tile(qs, qkv + b * g.W + h * g.d, i0, g.W, g);
  T m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][kPerLane];
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    m[rr] = T(-INFINITY);
    l[rr] = 0;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) acc[rr][k] = 0;
  }
  const int64_t last = min(i0 + kTile, g.T) - 1;  // the tile's last query row
  for (int64_t j0 = 0; j0 <= last; j0 += kTile) {
    __syncthreads();  // previous K/V tile consumed (and the Q tile loaded)
    load_tile(ks, qkv + b * g.W + (g.H + grp) * g.d, j0, g.W, g);
    load_tile(vs, qkv + b * g.W + (g.H + g.G + grp) * g.d, j0, g.W, g);
    __syncthreads();
#pragma unroll
    for (int rr = 0; rr < kRowsPerWarp; ++rr) {
      const int r = warp * kRowsPerWarp + rr;
      const int64_t i = i0 + r;
      if (i >= g.T || j0 > i) continue;  // warp-uniform; key j0 <= i keeps m finite below
      const int64_t j = j0 + lane;
      const T s = j <= i ? dot_row(qs + r * ds, ks + lane * ds, g.d) * scale : T(-INFINITY);
      const T m_new = max(m[rr], warp_max(s));
      const T p = j <= i ? exp(s - m_new) : T(0);
      const T correction = exp(m[rr] - m_new);  // 0 on the first tile (m = -inf)
      l[rr] = l[rr] * correction + warp_sum(p);
#pragma unroll
      for (int k = 0; k < kPerLane; ++k) acc[rr][k] *= correction;
      for (int jj = 0; jj < kTile; ++jj) {
        const T pj = __shfl_sync(kFull, p, jj);
#pragma unroll
        for (int k = 0; k < kPerLane; ++k) {
          const int64_t e = lane + 32 * k;
          if (e < g.d) acc[rr][k] += pj * vs[jj * ds + e];
        }
      }
      m[rr] = m_new;
    }
  }
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int64_t i = i0 + warp * kRowsPerWarp + rr;
    if (i >= g.T) continue;
    if (delta == nullptr) {
#pragma unroll
      for (int k = 0; k < kPerLane; ++k) {
        const int64_t e = lane + 32 * k;
        if (e < g.d) out[g.out(i, b, h) + e] = acc[rr][k] / l[rr];
      }
      if (lane == 0) lse[(b * g.H + h) * g.T + i] = m[rr] + log(l[rr]);
    } else {
      T dot = 0;
#pragma unroll
      for (int k = 0; k < kPerLane; ++k) {
        const int64_t e = lane + 32 * k;
        if (e < g.d) dot += dout[g.out(i, b, h) + e] * (acc[rr][k] / l[rr]);
      }
      dot = warp_sum(dot);
      if (lane == 0) delta[(b * g.H + h) * g.T + i] = dot;
    }
  }
}

// Block (query tile, head h, batch b): dQ of the tile's rows over the key tiles to the diagonal.
template <typename T>
__global__ void __launch_bounds__(kWarps * 32)
    flash_backward_dq_kernel(T* dqkv, const T* dout, const T* qkv, const T* lse, const T* delta,
                             Geometry g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int64_t ds = tile_stride(g.d);
  T* qs = reinterpret_cast<T*>(smem_raw);
  T* dos = qs + kTile * ds;
  T* ks = dos + kTile * ds;
  T* vs = ks + kTile * ds;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t i0 = blockIdx.x * int64_t{kTile}, h = blockIdx.y, b = blockIdx.z;
  const int64_t grp = g.group(h);
  const T scale = T(1) / sqrt(T(g.d));
  load_tile(qs, qkv + b * g.W + h * g.d, i0, g.W, g);
  load_tile(dos, dout + (b * g.H + h) * g.d, i0, g.H * g.d, g);
  T row_lse[kRowsPerWarp], row_delta[kRowsPerWarp], dq[kRowsPerWarp][kPerLane];
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int64_t i = i0 + warp * kRowsPerWarp + rr;
    row_lse[rr] = i < g.T ? lse[(b * g.H + h) * g.T + i] : T(0);
    row_delta[rr] = i < g.T ? delta[(b * g.H + h) * g.T + i] : T(0);
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) dq[rr][k] = 0;
  }
  const int64_t last = min(i0 + kTile, g.T) - 1;
  for (int64_t j0 = 0; j0 <= last; j0 += kTile) {
    __syncthreads();
    load_tile(ks, qkv + b * g.W + (g.H + grp) * g.d, j0, g.W, g);
    load_tile(vs, qkv + b * g.W + (g.H + g.G + grp) * g.d, j0, g.W, g);
    __syncthreads();
#pragma unroll
    for (int rr = 0; rr < kRowsPerWarp; ++rr) {
      const int r = warp * kRowsPerWarp + rr;
      const int64_t i = i0 + r;
      if (i >= g.T || j0 > i) continue;  // warp-uniform
      const int64_t j = j0 + lane;
      T dscore = 0;
      if (j <= i) {
        const T p = exp(dot_row(qs + r * ds, ks + lane * ds, g.d) * scale - row_lse[rr]);
        const T dp = dot_row(dos + r * ds, vs + lane * ds, g.d);
        dscore = p * (dp - row_delta[rr]) * scale;
      }
      for (int jj = 0; jj < kTile; ++jj) {
        const T dsj = __shfl_sync(kFull, dscore, jj);
#pragma unroll
        for (int k = 0; k < kPerLane; ++k) {
          const int64_t e = lane + 32 * k;
          if (e < g.d) dq[rr][k] += dsj * ks[jj * ds + e];
        }
      }
    }
  }
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int64_t i = i0 + warp * kRowsPerWarp + rr;
    if (i >= g.T) continue;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
      const int64_t e = lane + 32 * k;
      if (e < g.d) dqkv[g.q(i, b, h) + e] = dq[rr][k];
    }
  }
}

// Block (key tile, group grp, batch b): dK and dV of the tile's keys, summed over the group's
// heads (in order) and the query tiles from the diagonal down (in order).
template <typename T>
__global__ void __launch_bounds__(kWarps * 32)
    flash_backward_dkv_kernel(T* dqkv, const T* dout, const T* qkv, const T* lse, const T* delta,
                              Geometry g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int64_t ds = tile_stride(g.d);
  T* ks = reinterpret_cast<T*>(smem_raw);
  T* vs = ks + kTile * ds;
  T* qs = vs + kTile * ds;
  T* dos = qs + kTile * ds;
  T* lse_s = dos + kTile * ds;
  T* delta_s = lse_s + kTile;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t j0 = blockIdx.x * int64_t{kTile}, grp = blockIdx.y, b = blockIdx.z;
  const int64_t heads_per_group = g.H / g.G;
  const T scale = T(1) / sqrt(T(g.d));
  load_tile(ks, qkv + b * g.W + (g.H + grp) * g.d, j0, g.W, g);
  load_tile(vs, qkv + b * g.W + (g.H + g.G + grp) * g.d, j0, g.W, g);
  T dk[kRowsPerWarp][kPerLane], dv[kRowsPerWarp][kPerLane];
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) dk[rr][k] = dv[rr][k] = 0;
  }
  for (int64_t h = grp * heads_per_group; h < (grp + 1) * heads_per_group; ++h) {
    for (int64_t i0 = j0; i0 < g.T; i0 += kTile) {
      __syncthreads();  // previous Q/dO tile consumed (and the K/V tile loaded)
      load_tile(qs, qkv + b * g.W + h * g.d, i0, g.W, g);
      load_tile(dos, dout + (b * g.H + h) * g.d, i0, g.H * g.d, g);
      if (threadIdx.x < kTile) {
        const int64_t i = i0 + threadIdx.x;
        lse_s[threadIdx.x] = i < g.T ? lse[(b * g.H + h) * g.T + i] : T(0);
        delta_s[threadIdx.x] = i < g.T ? delta[(b * g.H + h) * g.T + i] : T(0);
      }
      __syncthreads();
#pragma unroll
      for (int rr = 0; rr < kRowsPerWarp; ++rr) {
        const int r = warp * kRowsPerWarp + rr;
        const int64_t j = j0 + r;
        if (j >= g.T) continue;  // warp-uniform
        const int64_t i = i0 + lane;
        T p = 0, dscore = 0;
        if (i < g.T && i >= j) {
          p = exp(dot_row(qs + lane * ds, ks + r * ds, g.d) * scale - lse_s[lane]);
          const T dp = dot_row(dos + lane * ds, vs + r * ds, g.d);
          dscore = p * (dp - delta_s[lane]) * scale;
        }
        for (int ii = 0; ii < kTile; ++ii) {
          const T pi = __shfl_sync(kFull, p, ii);
          const T dsi = __shfl_sync(kFull, dscore, ii);
#pragma unroll
          for (int k = 0; k < kPerLane; ++k) {
            const int64_t e = lane + 32 * k;
            if (e < g.d) {
              dv[rr][k] += pi * dos[ii * ds + e];
              dk[rr][k] += dsi * qs[ii * ds + e];
            }
          }
        }
      }
    }
  }
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int64_t j = j0 + warp * kRowsPerWarp + rr;
    if (j >= g.T) continue;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
      const int64_t e = lane + 32 * k;
      if (e < g.d) {
        dqkv[g.k(j, b, grp) + e] = dk[rr][k];
        dqkv[g.v(j, b, grp) + e] = dv[rr][k];
      }
    }
  }
}

// Whether the tiled kernels take this shape for element type T on the current device.
template <typename T>
bool use_tiled(const AttentionShape& s) {
  if (s.head_dim > kMaxHeadDim || s.head_dim <= 0) return false;
  int device = 0, optin = 0;
  PARPLAN_CUDA_CHECK(cudaGetDevice(&device));
  PARPLAN_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return tiled_shared_bytes<T>(s.head_dim) <= static_cast<std::size_t>(optin);
}

dim3 tile_grid(int64_t seq, int64_t y, int64_t batch) {
  return dim3(static_cast<unsigned>((seq + kTile - 1) / kTile), static_cast<unsigned>(y),
              static_cast<unsigned>(batch));
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
  if (g.T == 0 || g.B == 0 || g.H == 0) return;
  if (use_tiled<T>(s)) {
    const std::size_t smem = tiled_shared_bytes<T>(g.d);
    set_shared_memory<T>(reinterpret_cast<const void*>(&flash_forward_kernel<T>), smem);
    flash_forward_kernel<T>
        <<<tile_grid(g.T, g.H, g.B), kWarps * 32, smem>>>(out, lse, nullptr, nullptr, qkv, g);
    PARPLAN_CUDA_LAUNCHED();
    return;
  }
  const std::size_t smem = static_cast<std::size_t>(g.T) * sizeof(T);
  set_shared_memory<T>(reinterpret_cast<const void*>(&attention_forward_kernel<T>), smem);
  const dim3 grid(static_cast<unsigned>(g.T), static_cast<unsigned>(g.H),
                  static_cast<unsigned>(g.B));
  attention_forward_kernel<<<grid, 128, smem>>>(out, lse, qkv, g);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
int64_t attention_scratch_elements(const AttentionShape& s) {
  if (use_tiled<T>(s)) return s.batch * s.heads * s.seq;  // D
  return 2 * s.batch * s.heads * s.seq * s.seq;           // P and dS
}

template <typename T>
void attention_backward(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* lse,
                        const AttentionShape& s) {
  const Geometry g = geometry(s);
  if (g.T == 0 || g.B == 0 || g.H == 0) return;
  if (use_tiled<T>(s)) {
    const std::size_t smem = tiled_shared_bytes<T>(g.d);
    T* delta = scratch;
    set_shared_memory<T>(reinterpret_cast<const void*>(&flash_forward_kernel<T>), smem);
    set_shared_memory<T>(reinterpret_cast<const void*>(&flash_backward_dq_kernel<T>), smem);
    set_shared_memory<T>(reinterpret_cast<const void*>(&flash_backward_dkv_kernel<T>), smem);
    flash_forward_kernel<T>
        <<<tile_grid(g.T, g.H, g.B), kWarps * 32, smem>>>(nullptr, nullptr, delta, dout, qkv, g);
    PARPLAN_CUDA_LAUNCHED();
    flash_backward_dq_kernel<T>
        <<<tile_grid(g.T, g.H, g.B), kWarps * 32, smem>>>(dqkv, dout, qkv, lse, delta, g);
    PARPLAN_CUDA_LAUNCHED();
    flash_backward_dkv_kernel<T>
        <<<tile_grid(g.T, g.G, g.B), kWarps * 32, smem>>>(dqkv, dout, qkv, lse, delta, g);
    PARPLAN_CUDA_LAUNCHED();
    return;
  }
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
  template void attention_backward<T>(T*, T*, const T*, const T*, const T*,    \
                                      const AttentionShape&);                  \
  template int64_t attention_scratch_elements<T>(const AttentionShape&);

PARPLAN_INSTANTIATE(float)
PARPLAN_INSTANTIATE(double)
#undef PARPLAN_INSTANTIATE

}  // namespace parplan::executor::cuda

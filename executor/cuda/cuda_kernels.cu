// The executor's CUDA kernels other than attention: elementwise ops, norms (one block per
// row), embeddings, vocabulary-parallel cross-entropy and AdamW. Every reduction has a fixed
// order, so results are deterministic (no floating-point atomics):
//   - norm weight/bias gradients: two stages, blocks over (32 columns, chunk of >= 128 rows)
//     writing per-chunk column sums, then one thread per column adding the chunks in order;
//   - token embedding backward: a stable radix sort (cub) of (local token id, row) pairs, then
//     one block per (run of equal ids, 128 columns) summing that token's rows in row order;
//   - position backward: one thread per (position, column) looping over the batch;
//   - gradient norm (sum_squares_many): per-block partials of all ranges in one device buffer,
//     one copy to the host per call.
// Formulas are the CPU reference's (executor/cpu/cpu_ops.cpp, op_math.h).
#include <climits>
#include <cub/device/device_radix_sort.cuh>
#include <vector>

#include "executor/cuda/cuda_common.cuh"
#include "executor/cuda/cuda_kernels.cuh"
#include "executor/op_math.h"

namespace parplan::executor::cuda {

namespace {

constexpr double kNormEps = 1e-5;

#define PARPLAN_GRID_STRIDE(i, n)                                           \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

template <typename T>
__global__ void add_kernel(T* out, const T* a, const T* b, int64_t n) {
  PARPLAN_GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

template <typename T>
__global__ void accumulate_kernel(T* out, const T* in, int64_t n) {
  PARPLAN_GRID_STRIDE(i, n) out[i] += in[i];
}

template <typename T>
__global__ void sum_squares_kernel(double* partial, const T* x, int64_t n) {
  double s = 0;
  PARPLAN_GRID_STRIDE(i, n) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

template <typename T>
__global__ void layernorm_forward_kernel(T* out, T* mean, T* rstd, const T* inp, const T* w,
                                         const T* b, int64_t width) {
  const int64_t row = blockIdx.x;
  const T* x = inp + row * width;
  T sum = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) sum += x[i];
  const T mu = block_sum(sum) / T(width);
  T var = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) var += (x[i] - mu) * (x[i] - mu);
  const T s = T(1) / sqrt(block_sum(var) / T(width) + T(kNormEps));
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    out[row * width + i] = (x[i] - mu) * s * w[i] + b[i];
  }
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = s;
  }
}

template <typename T>
__global__ void layernorm_backward_input_kernel(T* dinp, const T* dout, const T* inp, const T* w,
                                                const T* mean, const T* rstd, int64_t width) {
  const int64_t row = blockIdx.x;
  const T* x = inp + row * width;
  const T* dy = dout + row * width;
  const T mu = mean[row];
  const T s = rstd[row];
  T a = 0, b = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const T dnorm = w[i] * dy[i];
    a += dnorm;
    b += dnorm * (x[i] - mu) * s;
  }
  const T dnorm_mean = block_sum(a) / T(width);
  const T dnorm_norm_mean = block_sum(b) / T(width);
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const T norm = (x[i] - mu) * s;
    dinp[row * width + i] += (w[i] * dy[i] - dnorm_mean - norm * dnorm_norm_mean) * s;
  }
}

// Norm weight (and bias) gradients, stage 1 of a two-stage column reduction: block
// (column tile, row chunk) of kColTile x kRowLanes threads; each thread sums every
// kRowLanes-th row of the chunk, the kRowLanes partials of a column are added in lane order,
// and the chunk's column sums go to partial[chunk * width + col] (partial + chunks * width for
// the bias). `mean` may be null (RMS norm: no centring, no bias). Fixed order everywhere: the
// result is deterministic.
constexpr int kColTile = 32;
constexpr int kRowLanes = 8;
constexpr int64_t kRowsPerChunk = 128;  // at least; more when rows / 128 exceeds grid.y

template <typename T>
__global__ void norm_weight_partial_kernel(T* partial, const T* dout, const T* inp, const T* mean,
                                           const T* rstd, int64_t rows, int64_t width,
                                           int64_t chunk_rows, int64_t chunks, bool with_bias) {
  __shared__ T dw_lanes[kRowLanes][kColTile];
  __shared__ T db_lanes[kRowLanes][kColTile];
  const int lane_col = threadIdx.x % kColTile;
  const int lane_row = threadIdx.x / kColTile;
  const int64_t col = blockIdx.x * int64_t{kColTile} + lane_col;
  const int64_t chunk = blockIdx.y;
  const int64_t row_end = std::min(rows, (chunk + 1) * chunk_rows);
  T dw = 0, db = 0;
  if (col < width) {
    for (int64_t r = chunk * chunk_rows + lane_row; r < row_end; r += kRowLanes) {
      const T dy = dout[r * width + col];
      const T centred = mean != nullptr ? inp[r * width + col] - mean[r] : inp[r * width + col];
      dw += centred * rstd[r] * dy;
      db += dy;
    }
  }
  dw_lanes[lane_row][lane_col] = dw;
  db_lanes[lane_row][lane_col] = db;
  __syncthreads();
  if (lane_row == 0 && col < width) {
    T sum_w = 0, sum_b = 0;
    for (int l = 0; l < kRowLanes; ++l) {
      sum_w += dw_lanes[l][lane_col];
      sum_b += db_lanes[l][lane_col];
    }
    partial[chunk * width + col] = sum_w;
    if (with_bias) partial[(chunks + chunk) * width + col] = sum_b;
  }
}

// Stage 2: one thread per column adds the chunks' partial sums in chunk order.
template <typename T>
__global__ void norm_weight_finish_kernel(T* dweight, T* dbias, const T* partial, int64_t width,
                                          int64_t chunks) {
  PARPLAN_GRID_STRIDE(col, width) {
    T dw = 0, db = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      dw += partial[c * width + col];
      if (dbias != nullptr) db += partial[(chunks + c) * width + col];
    }
    dweight[col] += dw;
    if (dbias != nullptr) dbias[col] += db;
  }
}

template <typename T>
__global__ void rmsnorm_forward_kernel(T* out, T* rstd, const T* inp, const T* w, int64_t width) {
  const int64_t row = blockIdx.x;
  const T* x = inp + row * width;
  T sum = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) sum += x[i] * x[i];
  const T s = T(1) / sqrt(block_sum(sum) / T(width) + T(kNormEps));
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) out[row * width + i] = x[i] * s * w[i];
  if (threadIdx.x == 0) rstd[row] = s;
}

template <typename T>
__global__ void rmsnorm_backward_input_kernel(T* dinp, const T* dout, const T* inp, const T* w,
                                              const T* rstd, int64_t width) {
  const int64_t row = blockIdx.x;
  const T* x = inp + row * width;
  const T* dy = dout + row * width;
  const T s = rstd[row];
  T b = 0;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) b += w[i] * dy[i] * x[i] * s;
  const T dnorm_norm_mean = block_sum(b) / T(width);
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    dinp[row * width + i] += (w[i] * dy[i] - x[i] * s * dnorm_norm_mean) * s;
  }
}

template <typename T>
__global__ void gelu_forward_kernel(T* out, const T* inp, int64_t n) {
  PARPLAN_GRID_STRIDE(i, n) out[i] = math::gelu(inp[i]);
}

template <typename T>
__global__ void gelu_backward_kernel(T* dinp, const T* inp, const T* dout, int64_t n) {
  PARPLAN_GRID_STRIDE(i, n) dinp[i] = math::gelu_grad(inp[i]) * dout[i];
}

template <typename T>
__global__ void swiglu_forward_kernel(T* out, const T* inp, int64_t rows, int64_t ffn) {
  PARPLAN_GRID_STRIDE(i, rows * ffn) {
    const int64_t r = i / ffn, c = i % ffn;
    const T gate = inp[r * 2 * ffn + c];
    out[i] = gate * math::sigmoid(gate) * inp[r * 2 * ffn + ffn + c];
  }
}

template <typename T>
__global__ void swiglu_backward_kernel(T* dinp, const T* inp, const T* dout, int64_t rows,
                                       int64_t ffn) {
  PARPLAN_GRID_STRIDE(i, rows * ffn) {
    const int64_t r = i / ffn, c = i % ffn;
    const T gate = inp[r * 2 * ffn + c];
    const T up = inp[r * 2 * ffn + ffn + c];
    const T sig = math::sigmoid(gate);
    const T silu = gate * sig;
    dinp[r * 2 * ffn + ffn + c] = dout[i] * silu;
    dinp[r * 2 * ffn + c] = dout[i] * up * (sig + silu * (T(1) - sig));
  }
}

template <typename T>
__global__ void embedding_forward_kernel(T* out, const int32_t* tokens, const T* wte,
                                         int64_t vocab_start, int64_t vocab_local, int64_t rows,
                                         int64_t width) {
  PARPLAN_GRID_STRIDE(i, rows * width) {
    const int64_t r = i / width, c = i % width;
    const int64_t local = static_cast<int64_t>(tokens[r]) - vocab_start;
    out[i] = local >= 0 && local < vocab_local ? wte[local * width + c] : T(0);
  }
}

// Embedding backward, deterministic and parallel: the rows are stably sorted by local token
// id (cub radix sort of (key, row) pairs; key vocab_local marks a token of another rank),
// then block (sorted position p, column tile) starts work only where a run of equal keys
// begins and sums that token's rows of dout in row order before adding to its dwte row.
__global__ void embedding_keys_kernel(int32_t* keys, int32_t* rows_of, const int32_t* tokens,
                                      int64_t vocab_start, int64_t vocab_local, int64_t rows) {
  PARPLAN_GRID_STRIDE(r, rows) {
    const int64_t local = static_cast<int64_t>(tokens[r]) - vocab_start;
    keys[r] = static_cast<int32_t>(local >= 0 && local < vocab_local ? local : vocab_local);
    rows_of[r] = static_cast<int32_t>(r);
  }
}

template <typename T>
__global__ void embedding_backward_kernel(T* dwte, const T* dout, const int32_t* keys,
                                          const int32_t* rows_of, int64_t vocab_local, int64_t rows,
                                          int64_t width) {
  const int64_t p = blockIdx.x;
  const int32_t key = keys[p];
  if (key >= vocab_local || (p > 0 && keys[p - 1] == key)) return;
  const int64_t c = blockIdx.y * int64_t{blockDim.x} + threadIdx.x;
  if (c >= width) return;
  T sum = 0;
  for (int64_t q = p; q < rows && keys[q] == key; ++q) sum += dout[rows_of[q] * width + c];
  dwte[static_cast<int64_t>(key) * width + c] += sum;
}

template <typename T>
__global__ void position_forward_kernel(T* out, const T* wpe, int64_t first, int64_t seq_local,
                                        int64_t batch, int64_t width) {
  PARPLAN_GRID_STRIDE(i, seq_local * batch * width) {
    const int64_t t = i / (batch * width), c = i % width;
    out[i] += wpe[(first + t) * width + c];
  }
}

template <typename T>
__global__ void position_backward_kernel(T* dwpe, const T* dout, int64_t first, int64_t seq_local,
                                         int64_t batch, int64_t width) {
  PARPLAN_GRID_STRIDE(i, seq_local * width) {
    const int64_t t = i / width, c = i % width;
    T sum = 0;
    for (int64_t b = 0; b < batch; ++b) sum += dout[(t * batch + b) * width + c];
    dwpe[(first + t) * width + c] += sum;
  }
}

template <typename T>
__global__ void xent_row_max_kernel(T* row_max, const T* logits, int64_t vocab_local,
                                    int64_t vocab_valid) {
  const int64_t r = blockIdx.x;
  T m = T(-INFINITY);
  for (int64_t j = threadIdx.x; j < vocab_valid; j += blockDim.x)
    m = max(m, logits[r * vocab_local + j]);
  m = block_max(m);
  if (threadIdx.x == 0) row_max[r] = m;
}

template <typename T>
__global__ void xent_sum_exp_kernel(T* stats, const T* logits, const T* row_max,
                                    const int32_t* targets, int64_t vocab_start, int64_t rows,
                                    int64_t vocab_local, int64_t vocab_valid) {
  const int64_t r = blockIdx.x;
  T sum = 0;
  for (int64_t j = threadIdx.x; j < vocab_valid; j += blockDim.x) {
    sum += exp(logits[r * vocab_local + j] - row_max[r]);
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) {
    stats[r] = sum;
    const int64_t local = static_cast<int64_t>(targets[r]) - vocab_start;
    stats[rows + r] = local >= 0 && local < vocab_valid ? logits[r * vocab_local + local] : T(0);
  }
}

template <typename T>
__global__ void xent_loss_kernel(T* losses, const T* row_max, const T* stats, int64_t rows) {
  PARPLAN_GRID_STRIDE(r, rows) losses[r] = log(stats[r]) + row_max[r] - stats[rows + r];
}

template <typename T>
__global__ void xent_backward_kernel(T* logits, const T* row_max, const T* stats,
                                     const int32_t* targets, int64_t vocab_start, int64_t rows,
                                     int64_t vocab_local, int64_t vocab_valid, T dloss) {
  PARPLAN_GRID_STRIDE(i, rows * vocab_local) {
    const int64_t r = i / vocab_local, j = i % vocab_local;
    if (j >= vocab_valid) {
      logits[i] = T(0);
      continue;
    }
    T g = dloss * exp(logits[i] - row_max[r]) / stats[r];
    if (static_cast<int64_t>(targets[r]) - vocab_start == j) g -= dloss;
    logits[i] = g;
  }
}

template <typename T>
__global__ void adamw_kernel(T* param, const T* grad, T* m, T* v, int64_t n, T lr, T beta1, T beta2,
                             T eps, T decay, T bias1, T bias2) {
  PARPLAN_GRID_STRIDE(i, n) {
    math::adamw_update(param[i], grad[i], m[i], v[i], lr, beta1, beta2, eps, decay, bias1, bias2);
  }
}

// dweight (and dbias unless null) += the column sums over rows; two deterministic stages.
template <typename T>
void norm_weight_gradients(T* dweight, T* dbias, const T* dout, const T* inp, const T* mean,
                           const T* rstd, int64_t rows, int64_t width) {
  if (width == 0) return;
  constexpr int64_t kMaxChunks = 65535;  // grid.y
  const int64_t chunk_rows = std::max(kRowsPerChunk, (rows + kMaxChunks - 1) / kMaxChunks);
  const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  const int64_t copies = dbias != nullptr ? 2 : 1;
  T* partial = nullptr;
  PARPLAN_CUDA_CHECK(
      cudaMallocAsync(&partial, static_cast<std::size_t>(copies * chunks * width) * sizeof(T), 0));
  const dim3 grid(static_cast<unsigned>((width + kColTile - 1) / kColTile),
                  static_cast<unsigned>(chunks));
  norm_weight_partial_kernel<<<grid, kColTile * kRowLanes>>>(
      partial, dout, inp, mean, rstd, rows, width, chunk_rows, chunks, dbias != nullptr);
  PARPLAN_CUDA_LAUNCHED();
  norm_weight_finish_kernel<<<blocks_for(width), kThreads>>>(dweight, dbias, partial, width,
                                                             chunks);
  PARPLAN_CUDA_LAUNCHED();
  PARPLAN_CUDA_CHECK(cudaFreeAsync(partial, 0));
}

}  // namespace

template <typename T>
void add(T* out, const T* a, const T* b, int64_t n) {
  add_kernel<<<blocks_for(n), kThreads>>>(out, a, b, n);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void accumulate(T* out, const T* in, int64_t n) {
  accumulate_kernel<<<blocks_for(n), kThreads>>>(out, in, n);
  PARPLAN_CUDA_LAUNCHED();
}

// Per-range partial sums (one per block, min(blocks_for(n), 1024) blocks as before) of all the
// ranges go to one device buffer, copied back with one synchronous copy; the host adds each
// range's partials in block order, then the ranges in order: the same value as calling
// sum_squares range by range.
template <typename T>
double sum_squares_many(const T* const* data, const int64_t* n, int64_t count) {
  std::vector<unsigned> blocks(static_cast<std::size_t>(count));
  std::size_t total = 0;
  for (int64_t t = 0; t < count; ++t) {
    blocks[t] = n[t] > 0 ? std::min(blocks_for(n[t]), 1024u) : 0u;
    total += blocks[t];
  }
  if (total == 0) return 0;
  double* partial = nullptr;
  PARPLAN_CUDA_CHECK(cudaMallocAsync(&partial, total * sizeof(double), 0));
  std::size_t at = 0;
  for (int64_t t = 0; t < count; ++t) {
    if (blocks[t] == 0) continue;
    sum_squares_kernel<<<blocks[t], kThreads>>>(partial + at, data[t], n[t]);
    PARPLAN_CUDA_LAUNCHED();
    at += blocks[t];
  }
  std::vector<double> host(total);
  PARPLAN_CUDA_CHECK(
      cudaMemcpy(host.data(), partial, total * sizeof(double), cudaMemcpyDeviceToHost));
  PARPLAN_CUDA_CHECK(cudaFreeAsync(partial, 0));
  double sum = 0;
  at = 0;
  for (int64_t t = 0; t < count; ++t) {
    double range = 0;
    for (unsigned b = 0; b < blocks[t]; ++b) range += host[at + b];
    at += blocks[t];
    sum += range;
  }
  return sum;
}

template <typename T>
double sum_squares(const T* data, int64_t n) {
  return sum_squares_many(&data, &n, 1);
}

template <typename T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* weight, const T* bias,
                       int64_t rows, int64_t width) {
  if (rows == 0) return;
  layernorm_forward_kernel<<<rows, kThreads>>>(out, mean, rstd, inp, weight, bias, width);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void layernorm_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp, const T* weight,
                        const T* mean, const T* rstd, int64_t rows, int64_t width) {
  if (rows == 0) return;
  layernorm_backward_input_kernel<<<rows, kThreads>>>(dinp, dout, inp, weight, mean, rstd, width);
  PARPLAN_CUDA_LAUNCHED();
  norm_weight_gradients(dweight, dbias, dout, inp, mean, rstd, rows, width);
}

template <typename T>
void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* weight, int64_t rows, int64_t width) {
  if (rows == 0) return;
  rmsnorm_forward_kernel<<<rows, kThreads>>>(out, rstd, inp, weight, width);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void rmsnorm_backward(T* dinp, T* dweight, const T* dout, const T* inp, const T* weight,
                      const T* rstd, int64_t rows, int64_t width) {
  if (rows == 0) return;
  rmsnorm_backward_input_kernel<<<rows, kThreads>>>(dinp, dout, inp, weight, rstd, width);
  PARPLAN_CUDA_LAUNCHED();
  norm_weight_gradients<T>(dweight, nullptr, dout, inp, nullptr, rstd, rows, width);
}

template <typename T>
void gelu_forward(T* out, const T* inp, int64_t n) {
  gelu_forward_kernel<<<blocks_for(n), kThreads>>>(out, inp, n);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void gelu_backward(T* dinp, const T* inp, const T* dout, int64_t n) {
  gelu_backward_kernel<<<blocks_for(n), kThreads>>>(dinp, inp, dout, n);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void swiglu_forward(T* out, const T* inp, int64_t rows, int64_t ffn) {
  swiglu_forward_kernel<<<blocks_for(rows * ffn), kThreads>>>(out, inp, rows, ffn);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void swiglu_backward(T* dinp, const T* inp, const T* dout, int64_t rows, int64_t ffn) {
  swiglu_backward_kernel<<<blocks_for(rows * ffn), kThreads>>>(dinp, inp, dout, rows, ffn);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void embedding_forward(T* out, const int32_t* tokens, const T* wte, int64_t vocab_start,
                       int64_t vocab_local, int64_t rows, int64_t width) {
  embedding_forward_kernel<<<blocks_for(rows * width), kThreads>>>(out, tokens, wte, vocab_start,
                                                                   vocab_local, rows, width);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void embedding_backward(T* dwte, const T* dout, const int32_t* tokens, int64_t vocab_start,
                        int64_t vocab_local, int64_t rows, int64_t width) {
  if (rows == 0 || width == 0) return;
  PARPLAN_CHECK(rows <= INT_MAX && vocab_local < INT_MAX,
                "embedding_backward: rows and vocabulary must fit in int32");
  const int n = static_cast<int>(rows);
  int end_bit = 1;  // keys are in [0, vocab_local]
  while (end_bit < 31 && (int64_t{1} << end_bit) <= vocab_local) ++end_bit;
  std::size_t temp_bytes = 0;
  PARPLAN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, temp_bytes, static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr),
      static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr), n, 0, end_bit));
  // One allocation: keys, rows, sorted keys, sorted rows (int32 each), then cub's temporary.
  const std::size_t ints = 4 * static_cast<std::size_t>(n) * sizeof(int32_t);
  unsigned char* work = nullptr;
  PARPLAN_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&work), ints + temp_bytes + 16, 0));
  int32_t* keys = reinterpret_cast<int32_t*>(work);
  int32_t* rows_of = keys + n;
  int32_t* sorted_keys = rows_of + n;
  int32_t* sorted_rows = sorted_keys + n;
  void* temp = work + ((ints + 15) / 16) * 16;
  embedding_keys_kernel<<<blocks_for(rows), kThreads>>>(keys, rows_of, tokens, vocab_start,
                                                        vocab_local, rows);
  PARPLAN_CUDA_LAUNCHED();
  PARPLAN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, sorted_keys, rows_of,
                                                     sorted_rows, n, 0, end_bit));
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>((width + 127) / 128));
  embedding_backward_kernel<<<grid, 128>>>(dwte, dout, sorted_keys, sorted_rows, vocab_local, rows,
                                           width);
  PARPLAN_CUDA_LAUNCHED();
  PARPLAN_CUDA_CHECK(cudaFreeAsync(work, 0));
}

template <typename T>
void position_forward(T* out, const T* wpe, int64_t first_position, int64_t seq_local,
                      int64_t batch, int64_t width) {
  position_forward_kernel<<<blocks_for(seq_local * batch * width), kThreads>>>(
      out, wpe, first_position, seq_local, batch, width);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void position_backward(T* dwpe, const T* dout, int64_t first_position, int64_t seq_local,
                       int64_t batch, int64_t width) {
  position_backward_kernel<<<blocks_for(seq_local * width), kThreads>>>(dwpe, dout, first_position,
                                                                        seq_local, batch, width);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void xent_row_max(T* row_max, const T* logits, int64_t rows, int64_t vocab_local,
                  int64_t vocab_valid) {
  if (rows == 0) return;
  xent_row_max_kernel<<<rows, kThreads>>>(row_max, logits, vocab_local, vocab_valid);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void xent_sum_exp(T* stats, const T* logits, const T* row_max, const int32_t* targets,
                  int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid) {
  if (rows == 0) return;
  xent_sum_exp_kernel<<<rows, kThreads>>>(stats, logits, row_max, targets, vocab_start, rows,
                                          vocab_local, vocab_valid);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void xent_loss(T* losses, const T* row_max, const T* stats, int64_t rows) {
  xent_loss_kernel<<<blocks_for(rows), kThreads>>>(losses, row_max, stats, rows);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void xent_backward(T* logits, const T* row_max, const T* stats, const int32_t* targets,
                   int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid,
                   T dloss) {
  xent_backward_kernel<<<blocks_for(rows * vocab_local), kThreads>>>(
      logits, row_max, stats, targets, vocab_start, rows, vocab_local, vocab_valid, dloss);
  PARPLAN_CUDA_LAUNCHED();
}

template <typename T>
void adamw(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWConfig& c, bool decay) {
  const T bias1 = T(1) - static_cast<T>(std::pow(c.beta1, static_cast<double>(c.step)));
  const T bias2 = T(1) - static_cast<T>(std::pow(c.beta2, static_cast<double>(c.step)));
  adamw_kernel<<<blocks_for(n), kThreads>>>(param, grad, m, v, n, T(c.lr), T(c.beta1), T(c.beta2),
                                            T(c.eps), decay ? T(c.weight_decay) : T(0), bias1,
                                            bias2);
  PARPLAN_CUDA_LAUNCHED();
}

#define PARPLAN_INSTANTIATE(T)                                                                     \
  template void add<T>(T*, const T*, const T*, int64_t);                                           \
  template void accumulate<T>(T*, const T*, int64_t);                                              \
  template double sum_squares<T>(const T*, int64_t);                                               \
  template double sum_squares_many<T>(const T* const*, const int64_t*, int64_t);                   \
  template void layernorm_forward<T>(T*, T*, T*, const T*, const T*, const T*, int64_t, int64_t);  \
  template void layernorm_backward<T>(T*, T*, T*, const T*, const T*, const T*, const T*,          \
                                      const T*, int64_t, int64_t);                                 \
  template void rmsnorm_forward<T>(T*, T*, const T*, const T*, int64_t, int64_t);                  \
  template void rmsnorm_backward<T>(T*, T*, const T*, const T*, const T*, const T*, int64_t,       \
                                    int64_t);                                                      \
  template void gelu_forward<T>(T*, const T*, int64_t);                                            \
  template void gelu_backward<T>(T*, const T*, const T*, int64_t);                                 \
  template void swiglu_forward<T>(T*, const T*, int64_t, int64_t);                                 \
  template void swiglu_backward<T>(T*, const T*, const T*, int64_t, int64_t);                      \
  template void embedding_forward<T>(T*, const int32_t*, const T*, int64_t, int64_t, int64_t,      \
                                     int64_t);                                                     \
  template void embedding_backward<T>(T*, const T*, const int32_t*, int64_t, int64_t, int64_t,     \
                                      int64_t);                                                    \
  template void position_forward<T>(T*, const T*, int64_t, int64_t, int64_t, int64_t);             \
  template void position_backward<T>(T*, const T*, int64_t, int64_t, int64_t, int64_t);            \
  template void xent_row_max<T>(T*, const T*, int64_t, int64_t, int64_t);                          \
  template void xent_sum_exp<T>(T*, const T*, const T*, const int32_t*, int64_t, int64_t, int64_t, \
                                int64_t);                                                          \
  template void xent_loss<T>(T*, const T*, const T*, int64_t);                                     \
  template void xent_backward<T>(T*, const T*, const T*, const int32_t*, int64_t, int64_t,         \
                                 int64_t, int64_t, T);                                             \
  template void adamw<T>(T*, const T*, T*, T*, int64_t, const AdamWConfig&, bool);

PARPLAN_INSTANTIATE(float)
PARPLAN_INSTANTIATE(double)
#undef PARPLAN_INSTANTIATE

}  // namespace parplan::executor::cuda

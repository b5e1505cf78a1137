#include "profiler/cuda/cublaslt_gemm.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "core/cuda/cuda_check.h"
#include "profiler/cuda/device_kernels.h"
#include "profiler/gemm_shapes.h"

namespace parplan::profiler::cuda {

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

struct Types {
  cudaDataType_t ab;
  cudaDataType_t cd;
  DeviceType ab_device;
  DeviceType cd_device;
};

Types types_for(const std::string& precision) {
  if (precision == "bf16") return {CUDA_R_16BF, CUDA_R_16BF, DeviceType::BF16, DeviceType::BF16};
  if (precision == "fp16") return {CUDA_R_16F, CUDA_R_16F, DeviceType::F16, DeviceType::F16};
  if (precision == "fp8")
    return {CUDA_R_8F_E4M3, CUDA_R_16BF, DeviceType::Fp8E4M3, DeviceType::BF16};
  throw InputError("", "--gemm-precisions", "\"" + precision + "\"",
                   "bf16, fp16 or fp8 (sm >= 89) for the cuda backend");
}

std::vector<float> download_as_float(const void* data, DeviceType type, int64_t count,
                                     cudaStream_t stream) {
  float* device = nullptr;
  PARPLAN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&device), sizeof(float) * count));
  convert_to_float(data, type, count, device, stream);
  std::vector<float> host(static_cast<std::size_t>(count));
  PARPLAN_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), device, sizeof(float) * count, cudaMemcpyDeviceToHost, stream));
  PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));
  PARPLAN_CUDA_CHECK(cudaFree(device));
  return host;
}

}  // namespace

bool gemm_precision_supported(const std::string& precision, int compute_capability) {
  if (precision == "fp8") return compute_capability >= 89;
  return precision == "bf16" || precision == "fp16";
}

struct CublasLtGemm::Impl {
  GemmShape shape;
  Types types{};
  cudaStream_t stream = nullptr;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, c_layout = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void* a = nullptr;
  void* b = nullptr;
  void* d = nullptr;
  void* workspace = nullptr;
  float alpha = 1.0f;
  float beta = 0.0f;

  int64_t a_count() const { return shape.k * shape.m * shape.batch; }
  int64_t b_count() const { return shape.k * shape.n * shape.batch; }
  int64_t d_count() const { return shape.m * shape.n * shape.batch; }

  void make_layout(cublasLtMatrixLayout_t* layout, cudaDataType_t type, int64_t rows,
                   int64_t cols) {
    PARPLAN_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(layout, type, static_cast<uint64_t>(rows),
                                                      static_cast<uint64_t>(cols), rows));
    if (shape.batch > 1) {
      const int32_t batch = static_cast<int32_t>(shape.batch);
      const int64_t stride = rows * cols;
      PARPLAN_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(
          *layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
      PARPLAN_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(
          *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }

  ~Impl() {
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (b_layout) cublasLtMatrixLayoutDestroy(b_layout);
    if (c_layout) cublasLtMatrixLayoutDestroy(c_layout);
    if (op) cublasLtMatmulDescDestroy(op);
    if (handle) cublasLtDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
    cudaFree(workspace);
  }
};

CublasLtGemm::CublasLtGemm(const GemmShape& shape, const std::string& precision, void* stream,
                           uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  Impl& g = *impl_;
  g.shape = shape;
  g.types = types_for(precision);
  g.stream = static_cast<cudaStream_t>(stream);
  const int64_t ab_bytes = device_type_bytes(g.types.ab_device);
  const int64_t cd_bytes = device_type_bytes(g.types.cd_device);
  PARPLAN_CUDA_CHECK(cudaMalloc(&g.a, static_cast<std::size_t>(g.a_count() * ab_bytes)));
  PARPLAN_CUDA_CHECK(cudaMalloc(&g.b, static_cast<std::size_t>(g.b_count() * ab_bytes)));
  PARPLAN_CUDA_CHECK(cudaMalloc(&g.d, static_cast<std::size_t>(g.d_count() * cd_bytes)));
  PARPLAN_CUDA_CHECK(cudaMalloc(&g.workspace, kWorkspaceBytes));
  fill_random(g.a, g.types.ab_device, g.a_count(), seed, g.stream);
  fill_random(g.b, g.types.ab_device, g.b_count(), seed + 1, g.stream);

  PARPLAN_CUBLASLT_CHECK(cublasLtCreate(&g.handle));
  PARPLAN_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasOperation_t keep = CUBLAS_OP_N;
  PARPLAN_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                        &transpose, sizeof transpose));
  PARPLAN_CUBLASLT_CHECK(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
  g.make_layout(&g.a_layout, g.types.ab, shape.k, shape.m);  // A^T stored K x M
  g.make_layout(&g.b_layout, g.types.ab, shape.k, shape.n);
  g.make_layout(&g.c_layout, g.types.cd, shape.m, shape.n);

  cublasLtMatmulPreference_t preference = nullptr;
  PARPLAN_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const std::size_t workspace = kWorkspaceBytes;
  PARPLAN_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(g.handle, g.op, g.a_layout, g.b_layout, g.c_layout, g.c_layout,
                                     preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  PARPLAN_CHECK(status == CUBLAS_STATUS_SUCCESS && found > 0, "cuBLASLt has no algorithm for GEMM ",
                to_string(shape), " at ", precision, " (", cublasLtGetStatusString(status), ")");
  g.algo = result.algo;
  PARPLAN_CUDA_CHECK(cudaStreamSynchronize(g.stream));
}

CublasLtGemm::~CublasLtGemm() = default;

void CublasLtGemm::run() {
  Impl& g = *impl_;
  PARPLAN_CUBLASLT_CHECK(cublasLtMatmul(g.handle, g.op, &g.alpha, g.a, g.a_layout, g.b, g.b_layout,
                                        &g.beta, g.d, g.c_layout, g.d, g.c_layout, &g.algo,
                                        g.workspace, kWorkspaceBytes, g.stream));
}

double CublasLtGemm::operand_bytes() const {
  const Impl& g = *impl_;
  return static_cast<double>((g.a_count() + g.b_count()) * device_type_bytes(g.types.ab_device) +
                             g.d_count() * device_type_bytes(g.types.cd_device));
}

std::vector<float> CublasLtGemm::a_as_float() const {
  return download_as_float(impl_->a, impl_->types.ab_device, impl_->a_count(), impl_->stream);
}
std::vector<float> CublasLtGemm::b_as_float() const {
  return download_as_float(impl_->b, impl_->types.ab_device, impl_->b_count(), impl_->stream);
}
std::vector<float> CublasLtGemm::d_as_float() const {
  return download_as_float(impl_->d, impl_->types.cd_device, impl_->d_count(), impl_->stream);
}

std::string cublaslt_version() { return std::to_string(cublasLtGetVersion()); }

}  // namespace parplan::profiler::cuda

#include "fallback/cublaslt.h"

#include <dlfcn.h>

#include <cublasLt.h>
#include <fmt/format.h>

namespace fusedgemm::fallback {
namespace {

// The entry points used, resolved by name from the opened library.
struct Api {
  void* library = nullptr;
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

Status lt_error(std::string_view call, cublasStatus_t s, std::string_view what) {
  return Status(ErrorCode::kDriver, fmt::format("fallback_cublaslt: {} failed with status {} ({})",
                                                call, static_cast<int>(s), what));
}

template <class F>
Status resolve(void* library, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(library, name));
  FG_CHECK(f != nullptr, ErrorCode::kUnavailable,
           fmt::format("fallback_cublaslt: the opened libcublasLt has no {}; legal: the CUDA 13 "
                       "toolkit's libcublasLt.so.13",
                       name));
  return Status::ok();
}

class LtGemm final : public Gemm {
 public:
  LtGemm(std::shared_ptr<const Api> api, cublasLtHandle_t handle)
      : api_(std::move(api)), handle_(handle) {}
  ~LtGemm() override {
    for (auto* l : layouts_) {
      if (l != nullptr) api_->layout_destroy(l);
    }
    if (desc_ != nullptr) api_->desc_destroy(desc_);
  }

  // cuBLASLt is column-major: row-major D = A @ B is column-major D^T = B^T @ A^T, where
  // B's row-major storage is column-major B^T and likewise A; so cuBLASLt's "A" is our B.
  Status plan(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, bool a_bcast,
              bool b_bcast) {
    if (auto s = api_->desc_create(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F);
        s != CUBLAS_STATUS_SUCCESS) {
      return lt_error("cublasLtMatmulDescCreate", s, "CUBLAS_COMPUTE_32F");
    }
    const std::int64_t rows[3] = {n, k, n};
    const std::int64_t cols[3] = {k, m, m};
    const std::int64_t batch_stride[3] = {b_bcast ? 0 : k * n, a_bcast ? 0 : m * k, m * n};
    const auto count = static_cast<std::int32_t>(batch);
    for (int i = 0; i < 3; ++i) {
      if (auto s =
              api_->layout_create(&layouts_[i], CUDA_R_32F, static_cast<std::uint64_t>(rows[i]),
                                  static_cast<std::uint64_t>(cols[i]), rows[i]);
          s != CUBLAS_STATUS_SUCCESS) {
        return lt_error("cublasLtMatrixLayoutCreate", s, fmt::format("{}x{}", rows[i], cols[i]));
      }
      auto s1 =
          api_->layout_set(layouts_[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
      auto s2 = api_->layout_set(layouts_[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                 &batch_stride[i], sizeof(batch_stride[i]));
      if (s1 != CUBLAS_STATUS_SUCCESS || s2 != CUBLAS_STATUS_SUCCESS) {
        return lt_error("cublasLtMatrixLayoutSetAttribute", s1 != CUBLAS_STATUS_SUCCESS ? s1 : s2,
                        fmt::format("batch {}", batch));
      }
    }
    cublasLtMatmulPreference_t pref = nullptr;
    if (auto s = api_->pref_create(&pref); s != CUBLAS_STATUS_SUCCESS) {
      return lt_error("cublasLtMatmulPreferenceCreate", s, "");
    }
    const std::uint64_t no_workspace = 0;
    api_->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &no_workspace,
                   sizeof(no_workspace));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const auto s = api_->heuristic(handle_, desc_, layouts_[0], layouts_[1], layouts_[2],
                                   layouts_[2], pref, 1, &result, &found);
    api_->pref_destroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0) {
      return lt_error("cublasLtMatmulAlgoGetHeuristic", s,
                      fmt::format("no fp32 algorithm for batch {} M {} N {} K {}", batch, m, n, k));
    }
    algo_ = result.algo;
    return Status::ok();
  }

  Status run(const void* a, const void* b, void* d, void* stream) const noexcept override {
    const float one = 1.0f;
    const float zero = 0.0f;
    const auto s =
        api_->matmul(handle_, desc_, &one, b, layouts_[0], a, layouts_[1], &zero, d, layouts_[2], d,
                     layouts_[2], &algo_, nullptr, 0, static_cast<cudaStream_t>(stream));
    if (s != CUBLAS_STATUS_SUCCESS) return lt_error("cublasLtMatmul", s, "fallback matmul");
    return Status::ok();
  }

 private:
  std::shared_ptr<const Api> api_;
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layouts_[3] = {nullptr, nullptr, nullptr};  // our B, our A, D
  cublasLtMatmulAlgo_t algo_{};
};

class Lt final : public CublasLt {
 public:
  Lt(std::shared_ptr<const Api> api, cublasLtHandle_t handle)
      : api_(std::move(api)), handle_(handle) {}
  ~Lt() override { api_->destroy(handle_); }

  Result<std::unique_ptr<const Gemm>> plan_gemm(std::int64_t batch, std::int64_t m, std::int64_t n,
                                                std::int64_t k, bool a_broadcast,
                                                bool b_broadcast) const override {
    auto gemm = std::make_unique<LtGemm>(api_, handle_);
    FG_TRY(gemm->plan(batch, m, n, k, a_broadcast, b_broadcast));
    return std::unique_ptr<const Gemm>(std::move(gemm));
  }

 private:
  std::shared_ptr<const Api> api_;
  cublasLtHandle_t handle_;
};

}  // namespace

Result<std::shared_ptr<const CublasLt>> CublasLt::open() {
  void* library = nullptr;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so"}) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
  }
  FG_CHECK(library != nullptr, ErrorCode::kUnavailable,
           fmt::format("fallback_cublaslt: cannot open libcublasLt.so.13 ({}); legal: the CUDA "
                       "toolkit's lib64 on LD_LIBRARY_PATH, which the fallback engine needs for "
                       "its matmuls",
                       dlerror()));
  auto api = std::make_shared<Api>();
  api->library = library;
  FG_TRY(resolve(library, "cublasLtCreate", api->create));
  FG_TRY(resolve(library, "cublasLtDestroy", api->destroy));
  FG_TRY(resolve(library, "cublasLtMatmulDescCreate", api->desc_create));
  FG_TRY(resolve(library, "cublasLtMatmulDescDestroy", api->desc_destroy));
  FG_TRY(resolve(library, "cublasLtMatrixLayoutCreate", api->layout_create));
  FG_TRY(resolve(library, "cublasLtMatrixLayoutDestroy", api->layout_destroy));
  FG_TRY(resolve(library, "cublasLtMatrixLayoutSetAttribute", api->layout_set));
  FG_TRY(resolve(library, "cublasLtMatmulPreferenceCreate", api->pref_create));
  FG_TRY(resolve(library, "cublasLtMatmulPreferenceDestroy", api->pref_destroy));
  FG_TRY(resolve(library, "cublasLtMatmulPreferenceSetAttribute", api->pref_set));
  FG_TRY(resolve(library, "cublasLtMatmulAlgoGetHeuristic", api->heuristic));
  FG_TRY(resolve(library, "cublasLtMatmul", api->matmul));
  cublasLtHandle_t handle = nullptr;
  if (auto s = api->create(&handle); s != CUBLAS_STATUS_SUCCESS) {
    return lt_error("cublasLtCreate", s, "no CUDA device or context");
  }
  return std::shared_ptr<const CublasLt>(std::make_shared<Lt>(std::move(api), handle));
}

}  // namespace fusedgemm::fallback

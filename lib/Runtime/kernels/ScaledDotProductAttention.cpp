//===- ScaledDotProductAttention.cpp - F.scaled_dot_product_attention -----===//
//
// Per leading index (batch and head): scores S = Q Kᵀ · scale (one sgemm),
// the mask added (bool: -inf where false; float: added; is_causal: -inf
// above the diagonal), each row's softmax, then O = S V (a second sgemm).
// The leading indices share the threads, each with its own scores buffer.
// fuse-attention makes these calls from the matmul, softmax, matmul chains
// pnnx leaves when a model writes attention by hand.
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "Operands.h"
#include "Parallel.h"
#include "SoftmaxRow.h"

#include <cmath>

namespace kc::rt {
namespace {

struct SdpaDims {
  int64_t B = 1;       ///< leading indices (batch times heads)
  int64_t kvGroup = 1; ///< query heads per key/value head (enable_gqa)
  int64_t L = 0, S = 0, E = 0, Ev = 0;
  float scale = 1.f;
  bool causal = false;
  /// attn_mask: none, bool or float, and its element strides over the
  /// leading index, L and S (0 where it broadcasts).
  enum class Mask { None, Bool, Float } mask = Mask::None;
  std::vector<int64_t> lead, maskLeadStride;
  int64_t maskRowStride = 0, maskColStride = 0;
};

class SdpaKernel final : public OpKernel {
public:
  SdpaKernel(SdpaDims d, int threads) : d_(std::move(d)), threads_(threads) {}

  size_t workspaceBytes() const override {
    return size_t(threads_) * size_t(d_.L * d_.S) * sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const SdpaDims &d = d_;
    const float *q = in[0]->data<float>(), *k = in[1]->data<float>(), *v = in[2]->data<float>();
    const Tensor *mask = d.mask == SdpaDims::Mask::None ? nullptr : in[3];
    float *o = out[0]->data<float>();
    auto *scratch = static_cast<float *>(ctx.workspace);
    bool worthIt = d.B * d.L * d.S * (d.E + d.Ev) > 65536;
    parallelFor(
        d.B, worthIt,
        [&](int64_t b) {
          float *s = scratch + int64_t(omp_get_thread_num()) * d.L * d.S;
          // Heads are the fastest leading dim, and kvGroup divides them.
          int64_t kvb = b / d.kvGroup;
          // Leading dims at least 1, as BLAS requires, for empty keys or
          // embeddings (the products are then zeros, as in PyTorch).
          const int64_t ldE = std::max<int64_t>(d.E, 1), ldS = std::max<int64_t>(d.S, 1),
                        ldEv = std::max<int64_t>(d.Ev, 1);
          sgemm(false, true, d.L, d.S, d.E, d.scale, q + b * d.L * d.E, ldE, k + kvb * d.S * d.E,
                ldE, 0.f, s, ldS);
          if (mask)
            applyMask(*mask, b, s);
          for (int64_t i = 0; i < d.L; ++i) {
            float *row = s + i * d.S;
            if (d.causal)
              std::fill(row + std::min(i + 1, d.S), row + d.S, -INFINITY);
            softmaxRow(row, row, d.S);
          }
          sgemm(false, false, d.L, d.Ev, d.S, 1.f, s, ldS, v + kvb * d.S * d.Ev, ldEv, 0.f,
                o + b * d.L * d.Ev, ldEv);
        },
        threads_);
  }

private:
  void applyMask(const Tensor &mask, int64_t b, float *s) const {
    const SdpaDims &d = d_;
    int64_t base = 0;
    for (size_t i = d.lead.size(); i-- > 0; b /= d.lead[i])
      base += (b % d.lead[i]) * d.maskLeadStride[i];
    for (int64_t i = 0; i < d.L; ++i) {
      float *row = s + i * d.S;
      int64_t at = base + i * d.maskRowStride;
      if (d.mask == SdpaDims::Mask::Bool) {
        const uint8_t *m = mask.data<uint8_t>() + at;
        for (int64_t j = 0; j < d.S; ++j)
          if (!m[j * d.maskColStride])
            row[j] = -INFINITY;
      } else {
        const float *m = mask.data<float>() + at;
        for (int64_t j = 0; j < d.S; ++j)
          row[j] += m[j * d.maskColStride];
      }
    }
  }

  SdpaDims d_;
  int threads_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeSdpa(const CallNode &c,
                                                   const KernelBuildContext &ctx) {
  if (llvm::Error e = requireF32(c, {0, 1, 2}))
    return std::move(e);
  auto shapes = inputShapes(c, 3);
  if (!shapes)
    return shapes.takeError();
  const std::vector<int64_t> &q = (*shapes)[0], &k = (*shapes)[1], &v = (*shapes)[2];
  size_t r = q.size();
  if (r < 2 || k.size() != r || v.size() != r)
    return kernelError(c, "expects query, key and value of the same rank, at least 2");
  SdpaDims d;
  d.L = q[r - 2], d.E = q[r - 1], d.S = k[r - 2], d.Ev = v[r - 1];
  d.lead.assign(q.begin(), q.end() - 2);
  d.B = numElements(d.lead);
  if (r >= 3) { // the type rule checked that the key's heads divide the query's
    d.kvGroup = k[r - 3] > 0 && q[r - 3] % k[r - 3] == 0 ? q[r - 3] / k[r - 3] : 1;
  }
  const AttrValue *sv = c.attrs().find("scale");
  d.scale = sv && sv->isNumber() ? float(sv->getNumber())
                                 : float(1.0 / std::sqrt(double(std::max<int64_t>(d.E, 1))));
  d.causal = c.attrs().getBool("is_causal", false);
  if (shapes->size() > 3) {
    const std::vector<int64_t> &m = (*shapes)[3];
    DType t = operandDType(c, 3);
    if (t != DType::Bool && t != DType::F32)
      return kernelError(c, "attn_mask must be bool or f32, got " + dtypeName(t).str());
    d.mask = t == DType::Bool ? SdpaDims::Mask::Bool : SdpaDims::Mask::Float;
    // Strides of the mask right-aligned against (lead..., L, S), 0 where
    // it broadcasts.
    std::vector<int64_t> full(d.lead);
    full.push_back(d.L), full.push_back(d.S);
    if (m.size() > full.size())
      return kernelError(c, "attn_mask has more dims than the scores");
    std::vector<int64_t> stride(full.size(), 0);
    int64_t st = 1;
    for (size_t i = 0; i < m.size(); ++i) {
      size_t mi = m.size() - 1 - i, fi = full.size() - 1 - i;
      if (m[mi] != 1 && m[mi] != full[fi])
        return kernelError(c, "attn_mask " + shapeToString(m) + " does not broadcast to " +
                                  shapeToString(full));
      stride[fi] = m[mi] == 1 ? 0 : st;
      st *= m[mi];
    }
    d.maskLeadStride.assign(stride.begin(), stride.end() - 2);
    d.maskRowStride = stride[full.size() - 2], d.maskColStride = stride[full.size() - 1];
  }
  int threads = std::max(1, ctx.numThreads > 0 ? ctx.numThreads : omp_get_max_threads());
  return std::unique_ptr<OpKernel>(new SdpaKernel(std::move(d), threads));
}

} // namespace

KC_REGISTER_KERNEL_DTYPES(sdpa, "F.scaled_dot_product_attention", makeSdpa,
                          (DTypeSet{DType::F32, DType::Bool}), (DTypeSet{DType::F32}));

} // namespace kc::rt

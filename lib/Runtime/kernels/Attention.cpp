//===- Attention.cpp - nn.MultiheadAttention ------------------------------===//
//
// Inference-mode multi-head attention: input projections, per-head scaled
// dot-product attention with a stable softmax, output projection. The
// projections run on kc's panel kernel over weights packed on the first run
// (sgemm for long sequences); a small head's two products are plain loops,
// a large head's are sgemm calls on strided head slices.
//
//===----------------------------------------------------------------------===//
#include "AttentionVariants.h"
#include "Blas.h"
#include "CallInfo.h"
#include "Epilogue.h"
#include "PackedProjection.h"
#include "PreparedWeight.h"

#include <cblas.h>
#include <cstring>

namespace kc::rt {
namespace {

class MhaKernel final : public OpKernel {
public:
  MhaKernel(int64_t B, int64_t L, int64_t S, int64_t E, int64_t heads, bool batchFirst,
            int numInputs, bool needWeights, Tensor wq, Tensor wk, Tensor wv, Tensor bin, Tensor wo,
            Tensor bo)
      : B_(B), L_(L), S_(S), E_(E), H_(heads), batchFirst_(batchFirst), numInputs_(numInputs),
        needWeights_(needWeights), bin_(std::move(bin)) {
    // The bias views keep bin_ alive through this kernel.
    auto biasOf = [&](int i) {
      return bin_.numel() ? Tensor::view(DType::F32, {E_}, bin_.data<float>() + i * E_)
                          : Tensor();
    };
    proj_[0] = PackedProjection(std::move(wq), biasOf(0));
    proj_[1] = PackedProjection(std::move(wk), biasOf(1));
    proj_[2] = PackedProjection(std::move(wv), biasOf(2));
    proj_[3] = PackedProjection(std::move(wo), std::move(bo));
  }

  /// Q, K, V, O, the scores, a head of K transposed, then the rows of a
  /// projection's input as strips for the panel kernel.
  size_t workspaceBytes() const override {
    return (size_t(2 * L_ * E_ + 2 * S_ * E_ + L_ * S_ + 3 * std::max(L_, S_) * E_) +
            projectionScratch()) *
           sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *q = in[0]->data<float>();
    const float *k = numInputs_ > 1 ? in[1]->data<float>() : q;
    const float *v = numInputs_ > 2 ? in[2]->data<float>() : k;
    float *ws = static_cast<float *>(ctx.workspace);
    float *Q = ws, *K = Q + L_ * E_, *V = K + S_ * E_, *O = V + S_ * E_, *P = O + L_ * E_;
    float *gather = P + L_ * S_; // a head of K, transposed (small heads)
    float *strips = ws + (2 * L_ * E_ + 2 * S_ * E_ + L_ * S_ + 3 * std::max(L_, S_) * E_);
    int64_t d = E_ / H_;
    float scale = 1.f / std::sqrt(float(d));
    float *y = out[0]->data<float>();
    float *attnW = needWeights_ ? out[1]->data<float>() : nullptr;
    if (attnW)
      std::memset(attnW, 0, out[1]->nbytes());
    for (int64_t b = 0; b < B_; ++b) {
      // Row r of batch b: batch-first rows are contiguous; seq-first rows
      // are B apart, which sgemm reads through its leading dimension.
      auto rows = [&](const float *base) { return batchFirst_ ? base + b * 0 : base + b * E_; };
      int64_t ld = batchFirst_ ? E_ : B_ * E_;
      const float *qb = batchFirst_ ? q + b * L_ * E_ : rows(q);
      const float *kb = batchFirst_ ? k + b * S_ * E_ : rows(k);
      const float *vb = batchFirst_ ? v + b * S_ * E_ : rows(v);
      proj_[0].apply(qb, ld, L_, Q, E_, strips);
      proj_[1].apply(kb, ld, S_, K, E_, strips);
      proj_[2].apply(vb, ld, S_, V, E_, strips);
      bool small = L_ * S_ * d <= kSmallHead;
      for (int64_t h = 0; h < H_; ++h) {
        if (small)
          scores(Q + h * d, K + h * d, d, scale, gather, P);
        else
          sgemm(false, true, int(L_), int(S_), int(d), scale, Q + h * d, int(E_), K + h * d,
                int(E_), 0.f, P, int(S_));
        for (int64_t i = 0; i < L_; ++i)
          attentionWeights(P + i * S_, S_, attnW ? attnW + (b * L_ + i) * S_ : nullptr, H_);
        if (small)
          weighted(P, V + h * d, d, O + h * d);
        else
          sgemm(false, false, int(L_), int(d), int(S_), 1.f, P, int(S_), V + h * d, int(E_), 0.f,
                O + h * d, int(E_));
      }
      // Output projection, written straight into the result's rows.
      float *yb = batchFirst_ ? y + b * L_ * E_ : y + b * E_;
      proj_[3].apply(O, E_, L_, yb, ld, strips);
    }
  }

private:
  /// Heads of at most this many multiply-adds per product (L·S·d) are
  /// computed by loops: an sgemm call costs more than the product of a
  /// 16-token, 16-wide head.
  static constexpr int64_t kSmallHead = 16384;

  size_t projectionScratch() const { return proj_[0].scratchFloats(std::max(L_, S_)); }

  /// P (L × S) = scale · Q Kᵀ for one head (d columns of Q and K, rows E
  /// apart), with K's head copied transposed into kt (d × S) so that the
  /// inner loop runs along contiguous rows and vectorizes.
  void scores(const float *Q, const float *K, int64_t d, float scale, float *kt, float *P) const {
    for (int64_t j = 0; j < S_; ++j)
      for (int64_t c = 0; c < d; ++c)
        kt[c * S_ + j] = K[j * E_ + c];
    for (int64_t i = 0; i < L_; ++i) {
      float *row = P + i * S_;
      std::fill(row, row + S_, 0.f);
      for (int64_t c = 0; c < d; ++c) {
        float q = Q[i * E_ + c] * scale;
        const float *k = kt + c * S_;
        for (int64_t j = 0; j < S_; ++j)
          row[j] += q * k[j];
      }
    }
  }

  /// O (L × d, rows E apart) = P V for one head (d columns of V).
  void weighted(const float *P, const float *V, int64_t d, float *O) const {
    for (int64_t i = 0; i < L_; ++i) {
      float *o = O + i * E_;
      std::fill(o, o + d, 0.f);
      for (int64_t j = 0; j < S_; ++j) {
        float p = P[i * S_ + j];
        const float *v = V + j * E_;
        for (int64_t c = 0; c < d; ++c)
          o[c] += p * v[c];
      }
    }
  }

  int64_t B_, L_, S_, E_, H_;
  bool batchFirst_;
  int numInputs_;
  bool needWeights_;
  Tensor bin_;
  PackedProjection proj_[4]; ///< query, key, value, output
};

llvm::Expected<std::unique_ptr<OpKernel>> makeMha(const CallNode &c,
                                                  const KernelBuildContext &ctx) {
  if (isAttentionVariant(c))
    return makeAttentionVariant(c, ctx);
  auto args = c.dataArgs();
  if (args.empty() || args.size() > 3)
    return kernelError(c, "expects query[, key[, value]] (attention masks are not supported)");
  auto q = inputShape(c, 0);
  if (!q)
    return q.takeError();
  auto kv = inputShape(c, args.size() > 1 ? 1 : 0);
  if (!kv)
    return kv.takeError();
  if (q->size() != 3 || kv->size() != 3)
    return kernelError(c, "expects 3-d query/key/value, got " + shapeToString(*q));
  bool bf = c.attrs().getBool("batch_first", false);
  int64_t E = c.attrs().getInt("embed_dim", q->back());
  int64_t H = c.attrs().getInt("num_heads", 1);
  if (H <= 0 || E % H || q->back() != E || kv->back() != E)
    return kernelError(c, "embed_dim/num_heads/kdim combinations other than kdim=vdim=embed_dim "
                          "with heads dividing embed_dim are not supported");
  if (c.attrs().getBool("add_bias_kv", false) || c.attrs().getBool("add_zero_attn", false))
    return kernelError(c, "add_bias_kv/add_zero_attn are not supported");
  int64_t B = bf ? (*q)[0] : (*q)[1], L = bf ? (*q)[1] : (*q)[0];
  int64_t S = bf ? (*kv)[1] : (*kv)[0];
  Tensor winT, binT, woT, boT;
  if (llvm::Error e = takeWeights(c, {{"in_proj_weight", &winT, true},
                                      {"in_proj_bias", &binT},
                                      {"out_proj.weight", &woT, true},
                                      {"out_proj.bias", &boT}}))
    return std::move(e);
  Tensor *win = &winT, *bin = &binT, *wo = &woT, *bo = &boT;
  if (win->numel() != 3 * E * E || wo->numel() != E * E)
    return kernelError(c, "projection weights do not match embed_dim=" + llvm::Twine(E));
  auto slice = [&](int i) {
    return Tensor::view(DType::F32, {E, E}, win->data<float>() + i * E * E,
                        std::shared_ptr<void>(std::shared_ptr<void>(), nullptr));
  };
  // The three views share the packed in_proj_weight kept alive by `keep`.
  Tensor keep = *win;
  Tensor wq = slice(0), wk = slice(1), wv = slice(2);
  bool needWeights = llvm::isa_and_nonnull<TupleTypeNode>(c.type().get());
  auto k = std::make_unique<MhaKernel>(B, L, S, E, H, bf, int(args.size()), needWeights, wq, wk, wv,
                                       std::move(*bin), std::move(*wo), std::move(*bo));
  struct Holder final : OpKernel {
    std::unique_ptr<MhaKernel> k;
    Tensor keep;
    void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
      k->run(in, out, ctx);
    }
    size_t workspaceBytes() const override { return k->workspaceBytes(); }
  };
  auto h = std::make_unique<Holder>();
  h->k = std::move(k);
  h->keep = keep;
  return std::unique_ptr<OpKernel>(std::move(h));
}

} // namespace

KC_REGISTER_KERNEL_DTYPES(mha, "nn.MultiheadAttention", makeMha,
                          (DTypeSet{DType::F32, DType::Bool}), (DTypeSet{DType::F32}));

} // namespace kc::rt

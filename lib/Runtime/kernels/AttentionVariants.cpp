//===- AttentionVariants.cpp - The general nn.MultiheadAttention ----------===//
//
// nn.MultiheadAttention with what the fast kernel leaves out: separate
// query/key/value projections (kdim, vdim), bias_k/bias_v appended to the
// keys and values (add_bias_kv), a zero key and value appended
// (add_zero_attn), a float attn_mask added to the scores or a bool one
// (True: -inf), 2-d or per head, a key_padding_mask, and unbatched (L, E)
// inputs. As PyTorch: the appended keys get a mask of 0, the attention
// weights (when the model uses them) are averaged over the heads. Per
// batch entry: three projections (PackedProjection.h), per head two sgemms
// on strided head slices, and the output projection.
//
//===----------------------------------------------------------------------===//
#include "AttentionVariants.h"
#include "Blas.h"
#include "Operands.h"
#include "PackedProjection.h"

#include <cstring>

namespace kc::rt {

bool isAttentionVariant(const CallNode &c) {
  for (const ArgKey &k : c.keys())
    if (k.role == ArgRole::Named && (k.name == "attn_mask" || k.name == "key_padding_mask"))
      return true;
  int64_t E = c.attrs().getInt("embed_dim", 0);
  auto q = inputShape(c, 0);
  if (!q) {
    llvm::consumeError(q.takeError());
    return false;
  }
  auto differs = [&](const char *key) {
    int64_t v = c.attrs().getInt(key, E);
    return v > 0 && v != E;
  };
  return c.attrs().getBool("add_bias_kv", false) || c.attrs().getBool("add_zero_attn", false) ||
         differs("kdim") || differs("vdim") || !c.weight("in_proj_weight") || q->size() != 3;
}

namespace {

struct MhaShape {
  int64_t N, L, S, E, H, kdim, vdim;
  int64_t extra; ///< keys appended: bias_k and/or the zero key
  bool batchFirst, unbatched;
};

class MhaVariantKernel final : public OpKernel {
public:
  struct Operands {
    int query = 0, key = 0, value = 0, mask = -1, padding = -1;
    bool maskPerHead = false, maskBool = false, paddingBool = false;
  };
  struct Weights {
    Tensor wq, wk, wv, bin, wo, bo, biasK, biasV;
  };
  MhaVariantKernel(MhaShape s, Operands o, Weights w, bool needWeights)
      : s_(s), o_(o), w_(std::move(w)), needWeights_(needWeights) {
    const int64_t E = s.E;
    auto biasOf = [&](int i) {
      return w_.bin.raw() ? Tensor::view(DType::F32, {E}, w_.bin.data<float>() + i * E) : Tensor();
    };
    proj_[0] = PackedProjection(w_.wq, biasOf(0));
    proj_[1] = PackedProjection(w_.wk, biasOf(1));
    proj_[2] = PackedProjection(w_.wv, biasOf(2));
    proj_[3] = PackedProjection(w_.wo, w_.bo);
  }

  /// Q, K, V, O, the scores, then a projection's input rows as strips.
  size_t workspaceBytes() const override {
    const MhaShape &s = s_;
    int64_t S2 = s.S + s.extra;
    return (size_t(2 * s.L * s.E + 2 * S2 * s.E + s.L * S2) + stripsFloats()) * sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const MhaShape &s = s_;
    const int64_t E = s.E, d = E / s.H, S2 = s.S + s.extra;
    float *Q = static_cast<float *>(ctx.workspace), *K = Q + s.L * E, *V = K + S2 * E,
          *O = V + S2 * E, *P = O + s.L * E, *strips = P + s.L * S2;
    const float *q = in[o_.query]->data<float>(), *k = in[o_.key]->data<float>(),
                *v = in[o_.value]->data<float>();
    float *y = out[0]->data<float>();
    float *attnW = needWeights_ ? out[1]->data<float>() : nullptr;
    if (attnW)
      std::memset(attnW, 0, out[1]->nbytes());
    const float scale = 1.f / std::sqrt(float(d));
    for (int64_t n = 0; n < s.N; ++n) {
      // Rows of batch entry n: contiguous when batch first, N apart else.
      auto rows = [&](const float *base, int64_t len, int64_t width) {
        return s.batchFirst ? base + n * len * width : base + n * width;
      };
      auto ld = [&](int64_t width) { return s.batchFirst || s.unbatched ? width : s.N * width; };
      proj_[0].apply(rows(q, s.L, E), ld(E), s.L, Q, E, strips);
      proj_[1].apply(rows(k, s.S, s.kdim), ld(s.kdim), s.S, K, E, strips);
      proj_[2].apply(rows(v, s.S, s.vdim), ld(s.vdim), s.S, V, E, strips);
      int64_t S = s.S;
      if (w_.biasK.raw()) {
        std::memcpy(K + S * E, w_.biasK.data<float>(), size_t(E) * sizeof(float));
        std::memcpy(V + S * E, w_.biasV.data<float>(), size_t(E) * sizeof(float));
        ++S;
      }
      if (S < S2) { // add_zero_attn
        std::fill(K + S * E, K + S2 * E, 0.f);
        std::fill(V + S * E, V + S2 * E, 0.f);
      }
      for (int64_t h = 0; h < s.H; ++h) {
        sgemm(false, true, s.L, S2, d, scale, Q + h * d, E, K + h * d, E, 0.f, P, S2);
        addMasks(in, n, h, P);
        for (int64_t i = 0; i < s.L; ++i)
          attentionWeights(P + i * S2, S2, attnW ? attnW + (n * s.L + i) * S2 : nullptr, s.H);
        sgemm(false, false, s.L, d, S2, 1.f, P, S2, V + h * d, E, 0.f, O + h * d, E);
      }
      float *yn = s.batchFirst ? y + n * s.L * E : y + n * E;
      proj_[3].apply(O, E, s.L, yn, ld(E), strips);
    }
  }

private:
  size_t stripsFloats() const {
    return std::max({proj_[0].scratchFloats(s_.L), proj_[1].scratchFloats(s_.S),
                     proj_[2].scratchFloats(s_.S), proj_[3].scratchFloats(s_.L)});
  }

  /// Adds attn_mask and key_padding_mask to the scores of (n, h); the
  /// appended keys are not masked.
  void addMasks(llvm::ArrayRef<const Tensor *> in, int64_t n, int64_t h, float *P) const {
    const MhaShape &s = s_;
    const int64_t S2 = s.S + s.extra;
    if (o_.mask >= 0) {
      const Tensor &m = *in[o_.mask];
      int64_t base = o_.maskPerHead ? (n * s.H + h) * s.L * s.S : 0;
      for (int64_t i = 0; i < s.L; ++i)
        for (int64_t j = 0; j < s.S; ++j) {
          int64_t at = base + i * s.S + j;
          P[i * S2 + j] +=
              o_.maskBool ? (m.data<uint8_t>()[at] ? -INFINITY : 0.f) : m.data<float>()[at];
        }
    }
    if (o_.padding >= 0) {
      const Tensor &m = *in[o_.padding];
      for (int64_t j = 0; j < s.S; ++j) {
        bool masked = o_.paddingBool ? m.data<uint8_t>()[n * s.S + j] != 0
                                     : m.data<float>()[n * s.S + j] != 0;
        float add = o_.paddingBool ? (masked ? -INFINITY : 0.f) : m.data<float>()[n * s.S + j];
        for (int64_t i = 0; i < s.L; ++i)
          P[i * S2 + j] += add;
      }
    }
  }

  MhaShape s_;
  Operands o_;
  Weights w_;
  bool needWeights_;
  PackedProjection proj_[4]; ///< query, key, value, output
};

} // namespace

llvm::Expected<std::unique_ptr<OpKernel>> makeAttentionVariant(const CallNode &c,
                                                               const KernelBuildContext &) {
  MhaShape s;
  MhaVariantKernel::Operands o;
  s.E = c.attrs().getInt("embed_dim", 0);
  s.H = c.attrs().getInt("num_heads", 1);
  s.kdim = c.attrs().getInt("kdim", s.E);
  s.vdim = c.attrs().getInt("vdim", s.E);
  if (s.kdim <= 0)
    s.kdim = s.E;
  if (s.vdim <= 0)
    s.vdim = s.E;
  if (s.E <= 0 || s.H <= 0 || s.E % s.H)
    return kernelError(c, "num_heads must divide embed_dim");
  // Operands by position: query, key, value (positional), the masks named.
  std::vector<int> positional;
  int data = 0;
  for (size_t i = 0; i < c.numArgs(); ++i) {
    const ArgKey &k = c.keys()[i];
    if (k.role == ArgRole::Weight)
      continue;
    if (k.role == ArgRole::Named && k.name == "attn_mask")
      o.mask = data;
    else if (k.role == ArgRole::Named && k.name == "key_padding_mask")
      o.padding = data;
    else if (k.role == ArgRole::Named && k.name != "query" && k.name != "key" && k.name != "value")
      return kernelError(c, "operand $" + k.name + " is not supported");
    else
      positional.push_back(data);
    ++data;
  }
  if (positional.empty() || positional.size() > 3)
    return kernelError(c, "expects query[, key[, value]]");
  o.query = positional[0];
  o.key = positional.size() > 1 ? positional[1] : o.query;
  o.value = positional.size() > 2 ? positional[2] : o.key;
  auto q = inputShape(c, size_t(o.query));
  if (!q)
    return q.takeError();
  auto k = inputShape(c, size_t(o.key));
  if (!k)
    return k.takeError();
  auto v = inputShape(c, size_t(o.value));
  if (!v)
    return v.takeError();
  for (int i : {o.query, o.key, o.value})
    if (auto e = requireF32(c, {size_t(i)}))
      return e;
  s.unbatched = q->size() == 2;
  s.batchFirst = !s.unbatched && c.attrs().getBool("batch_first", false);
  if ((q->size() != 2 && q->size() != 3) || k->size() != q->size() || v->size() != q->size())
    return kernelError(c, "expects 3-d (or unbatched 2-d) query, key and value");
  s.N = s.unbatched ? 1 : (*q)[s.batchFirst ? 0 : 1];
  s.L = (*q)[s.batchFirst ? 1 : 0];
  s.S = (*k)[s.batchFirst ? 1 : 0];
  if (q->back() != s.E || k->back() != s.kdim || v->back() != s.vdim ||
      (*v)[s.batchFirst ? 1 : 0] != s.S)
    return kernelError(c, "query, key and value do not match embed_dim, kdim and vdim");
  bool biasKv = c.attrs().getBool("add_bias_kv", false);
  s.extra = (biasKv ? 1 : 0) + (c.attrs().getBool("add_zero_attn", false) ? 1 : 0);
  auto checkMask = [&](int i, bool &isBool, bool padding) -> llvm::Error {
    if (i < 0)
      return llvm::Error::success();
    auto m = inputShape(c, size_t(i));
    if (!m)
      return m.takeError();
    DType t = operandDType(c, size_t(i));
    if (t != DType::F32 && t != DType::Bool)
      return kernelError(c, "masks must be f32 or bool, got " + dtypeName(t).str());
    isBool = t == DType::Bool;
    std::vector<int64_t> want2 =
        padding ? std::vector<int64_t>{s.N, s.S} : std::vector<int64_t>{s.L, s.S};
    std::vector<int64_t> want3 = {s.N * s.H, s.L, s.S};
    if (*m == want2)
      return llvm::Error::success();
    if (!padding && *m == want3) {
      o.maskPerHead = true;
      return llvm::Error::success();
    }
    return kernelError(c, "mask " + shapeToString(*m) + " should be " + shapeToString(want2) +
                              (padding ? "" : " or " + shapeToString(want3)));
  };
  if (auto e = checkMask(o.mask, o.maskBool, false))
    return e;
  if (auto e = checkMask(o.padding, o.paddingBool, true))
    return e;
  MhaVariantKernel::Weights w;
  auto get = [&](llvm::StringRef key, bool required, Tensor &dst, int64_t numel) -> llvm::Error {
    auto t = weightTensor(c, key, required, WeightUse::ReadOnly);
    if (!t)
      return t.takeError();
    if (t->raw() && t->numel() != numel)
      return kernelError(c, "weight " + key + " " + shapeToString(t->shape()) + " should have " +
                                llvm::Twine(numel) + " elements");
    dst = std::move(*t);
    return llvm::Error::success();
  };
  const int64_t E = s.E;
  if (c.weight("in_proj_weight")) {
    Tensor win;
    if (auto e = get("in_proj_weight", true, win, 3 * E * E))
      return e;
    // Views into the one tensor, which they keep alive.
    auto slice = [&](int i) {
      std::shared_ptr<void> keep(std::make_shared<Tensor>(win), win.data<float>() + i * E * E);
      return Tensor::view(DType::F32, {E, E}, keep.get(), keep);
    };
    w.wq = slice(0), w.wk = slice(1), w.wv = slice(2);
  } else {
    if (auto e = get("q_proj_weight", true, w.wq, E * E))
      return e;
    if (auto e = get("k_proj_weight", true, w.wk, E * s.kdim))
      return e;
    if (auto e = get("v_proj_weight", true, w.wv, E * s.vdim))
      return e;
  }
  if (auto e = get("in_proj_bias", false, w.bin, 3 * E))
    return e;
  if (auto e = get("out_proj.weight", true, w.wo, E * E))
    return e;
  if (auto e = get("out_proj.bias", false, w.bo, E))
    return e;
  if (biasKv) {
    if (auto e = get("bias_k", true, w.biasK, E))
      return e;
    if (auto e = get("bias_v", true, w.biasV, E))
      return e;
  }
  bool needWeights = false;
  if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get())) {
    needWeights = tt->size() > 1;
    auto ws = outputShape(c, 1);
    if (!ws)
      return ws.takeError();
    std::vector<int64_t> want = {s.N, s.L, s.S + s.extra};
    if (s.unbatched)
      want.erase(want.begin());
    if (*ws != want)
      return kernelError(c, "attention weights " + shapeToString(*ws) + " should be " +
                                shapeToString(want));
  }
  return std::unique_ptr<OpKernel>(new MhaVariantKernel(s, o, std::move(w), needWeights));
}

} // namespace kc::rt

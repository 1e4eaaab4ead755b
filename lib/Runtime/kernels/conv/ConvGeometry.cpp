//===- ConvGeometry.cpp - What every convolution algorithm reads ----------===//
#include "ConvGeometry.h"
#include "../PackedGemm.h"
#include "../StripGemm.h"
#include "kc/IR/WindowAttrs.h"

#include <omp.h>

namespace kc::rt {

llvm::Expected<ConvGeometry> convGeometry(const CallNode &c, bool transposed) {
  auto io = callShapes(c);
  if (!io)
    return io.takeError();
  std::vector<int64_t> *in = &io->in, *out = &io->out;
  std::vector<int64_t> i = *in, o = *out;
  size_t spatial = i.size() - 2;
  if ((i.size() != 3 && i.size() != 4) || o.size() != i.size())
    return kernelError(c, "expects a 3-d or 4-d input, got " + shapeToString(i));
  auto w = WindowAttrs::from(c, spatial, transposed ? WindowOp::ConvTranspose : WindowOp::Conv);
  if (!w)
    return kernelError(c, llvm::toString(w.takeError()));
  if (w->paddingMode != "zeros")
    return kernelError(c, "padding_mode '" + w->paddingMode + "' is not supported (only zeros)");
  // The kernels pad by padBefore and read the output size from the type,
  // which covers the padding after.
  std::vector<int64_t> &k = w->kernel, &s = w->stride, &d = w->dilation, &p = w->padBefore;
  if (spatial == 1) { // (N,C,L) as (N,C,1,L)
    i.insert(i.begin() + 2, 1), o.insert(o.begin() + 2, 1);
    k.insert(k.begin(), 1), s.insert(s.begin(), 1), d.insert(d.begin(), 1), p.insert(p.begin(), 0);
  }
  ConvGeometry g{i[0], i[1], i[2], i[3], o[1], o[2], o[3], k[0],
                 k[1], s[0], s[1], p[0], p[1], d[0], d[1], w->groups};
  if (g.C % g.G || g.OC % g.G) // WindowAttrs refused groups <= 0
    return kernelError(c, "groups=" + llvm::Twine(g.G) + " does not divide the channels");
  return g;
}

llvm::Expected<ConvWeights> convWeights(const CallNode &c, int64_t expectedWeights,
                                        bool transposed) {
  ConvWeights r;
  const ConstantNode *weight = c.weight("weight");
  auto *tt = weight ? llvm::dyn_cast_or_null<TensorTypeNode>(weight->type().get()) : nullptr;
  Shape shape;
  if (weight && tt && ((tt->dtype() == DType::F32 && needsAlignedCopy(*weight)) ||
                       (isHalfWeight(*weight) && weight->hasData()))) {
    // Copied when a kernel prepares it, if no other plan has (WeightSource).
    shape.assign(tt->dims().begin(), tt->dims().end());
    r.pending = WeightSource(weight->data(), tt->dtype(), shape);
    if (llvm::Error e = takeWeights(c, {{"bias", &r.b}}))
      return e;
  } else {
    if (llvm::Error e =
            takeWeights(c, {{"weight", &r.w, true, WeightUse::ReadOnly}, {"bias", &r.b}}))
      return e;
    shape.assign(r.w.shape().begin(), r.w.shape().end());
  }
  if (numElements(shape) != expectedWeights)
    return kernelError(c, "weight shape " + shapeToString(shape) + " does not match the " +
                              (transposed ? "transposed convolution" : "convolution"));
  r.mapped = weight->data();
  return r;
}

ConvKernel::ConvKernel(const ConvGeometry &g, ConvWeights w)
    : g_(g), w_(std::move(w)), threads_(omp_get_max_threads()) {}

Tensor packConvWeights(const Tensor &w, const TensorDataPtr &mapped, const ConvGeometry &g,
                       bool strips) {
  const int64_t OCg = g.OCg(), K = g.K();
  size_t per = strips ? stripPackedSize(OCg, K) : packedSize(OCg, K);
  Tensor packed = Tensor::empty(DType::F32, {g.G, int64_t(per)});
  constexpr int64_t kRows = 48; // whole panels of 16 and strips of 6
  for (int64_t grp = 0; grp < g.G; ++grp)
    for (int64_t r0 = 0; r0 < OCg; r0 += kRows) {
      int64_t rows = std::min(kRows, OCg - r0);
      size_t offset = size_t((grp * OCg + r0) * K) * sizeof(float);
      size_t length = size_t(rows * K) * sizeof(float);
      if (mapped)
        mapped->prefault(offset, length);
      const float *src = w.data<float>() + (grp * OCg + r0) * K;
      float *dst = packed.data<float>() + grp * per + size_t(r0 * K);
      if (strips)
        packStrips(src, K, rows, K, dst);
      else
        packRows(src, K, rows, K, dst);
      if (mapped)
        mapped->releasePages(offset, length);
    }
  return packed;
}

std::pair<int64_t, int64_t> insideRange(int64_t off, int64_t stride, int64_t count, int64_t bound) {
  int64_t lo = std::min(count, off >= 0 ? 0 : (-off + stride - 1) / stride);
  int64_t hi = off >= bound ? lo : std::clamp((bound - 1 - off) / stride + 1, lo, count);
  return {lo, hi};
}

} // namespace kc::rt

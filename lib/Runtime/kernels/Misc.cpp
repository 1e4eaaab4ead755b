//===- Misc.cpp - pad, clamp, pixel shuffle, dtype conversion -------------===//
#include "CallInfo.h"
#include "Parallel.h"

#include "kc/IR/Padding.h"
#include "kc/Support/FloatToInt.h"
#include "kc/Support/Half.h"

#include <cstring>

namespace kc::rt {
namespace {

/// F.pad over the trailing dims: constant, reflect, replicate and circular.
/// Every output element reads the input at padSourceIndex along each dim,
/// a closed form: no padding, however large, makes it loop. Row by row of
/// the last dim: its source indices are a table made once, the run of them
/// that reads the input row in order is one copy.
class PadKernel final : public OpKernel {
public:
  PadKernel(std::vector<int64_t> in, std::vector<int64_t> out, std::vector<int64_t> before,
            PadMode mode, float value)
      : in_(std::move(in)), out_(std::move(out)), before_(std::move(before)), mode_(mode),
        value_(value) {
    int64_t W = out_.empty() ? 1 : out_.back(), IW = in_.empty() ? 1 : in_.back();
    int64_t b = out_.empty() ? 0 : before_.back();
    for (int64_t j = 0; j < W; ++j)
      lastDim_.push_back(out_.empty() ? 0 : padSourceIndex(j - b, IW, mode_));
    // The output columns that read input column j - b, in order.
    copyBegin_ = std::clamp<int64_t>(b, 0, W);
    copyEnd_ = std::clamp<int64_t>(b + IW, copyBegin_, W);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const size_t r = out_.size();
    const int64_t W = r ? out_.back() : 1;
    const int64_t rows = W ? numElements(out_) / W : 0;
    std::vector<int64_t> inStride(r);
    int64_t st = 1;
    for (size_t i = r; i-- > 0;)
      inStride[i] = st, st *= in_[i];
    parallelFor(rows, rows * W > 65536, [&](int64_t row) {
      float *d = y + row * W;
      int64_t rem = row, off = 0;
      for (size_t k = r - (r ? 1 : 0); k-- > 0;) {
        int64_t i = padSourceIndex(rem % out_[k] - before_[k], in_[k], mode_);
        rem /= out_[k];
        if (i < 0) {
          std::fill(d, d + W, value_);
          return;
        }
        off += i * inStride[k];
      }
      const float *s = x + off;
      auto gather = [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j)
          d[j] = lastDim_[size_t(j)] < 0 ? value_ : s[lastDim_[size_t(j)]];
      };
      gather(0, copyBegin_);
      if (copyEnd_ > copyBegin_)
        std::memcpy(d + copyBegin_, s + (copyBegin_ - (r ? before_.back() : 0)),
                    size_t(copyEnd_ - copyBegin_) * sizeof(float));
      gather(copyEnd_, W);
    });
  }

private:
  std::vector<int64_t> in_, out_, before_;
  PadMode mode_;
  float value_;
  std::vector<int64_t> lastDim_;       ///< source index of each output column, -1: value
  int64_t copyBegin_ = 0, copyEnd_ = 0; ///< the columns copied in order
};

/// The shapes come from the call's types; they are checked once more
/// against kc/IR/Padding.h, the rules the type rule applied, because a
/// kernel may be built for a call made inside kc (kernelAs).
llvm::Expected<std::unique_ptr<OpKernel>> makePad(const CallNode &c, const CallShapes &io) {
  auto p = readPadding(c);
  if (!p)
    return kernelError(c, llvm::toString(p.takeError()));
  auto padded = paddedShape(io.in, *p, shapeToString(io.in));
  if (!padded)
    return kernelError(c, llvm::toString(padded.takeError()));
  if (*padded != io.out)
    return kernelError(c, "the result " + shapeToString(io.out) + " is not the padded shape " +
                              shapeToString(*padded));
  std::vector<int64_t> before(io.in.size(), 0);
  // pad lists (before, after) pairs from the last dim backwards.
  for (size_t i = 0; i < p->pairs.size() / 2; ++i)
    before[io.in.size() - 1 - i] = p->pairs[2 * i];
  double value = c.attrs().getFloat("value", 0.0);
  return std::unique_ptr<OpKernel>(new PadKernel(io.in, io.out, before, p->mode, float(value)));
}
KC_REGISTER_KERNEL(pad, "F.pad", withShapes<makePad>);

class ClampKernel final : public OpKernel {
public:
  ClampKernel(float lo, float hi) : lo_(lo), hi_(hi) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t n = in[0]->numel();
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::isnan(x[i]) ? x[i] : std::min(std::max(x[i], lo_), hi_);
  }

private:
  float lo_, hi_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeClamp(const CallNode &c, const KernelBuildContext &) {
  if (c.dataArgs().size() != 1)
    return kernelError(c, "clamp bounds given as tensors are not supported");
  const AttrValue *lo = c.attrs().find("min"), *hi = c.attrs().find("max");
  return std::unique_ptr<OpKernel>(
      new ClampKernel(lo && lo->isNumber() ? float(lo->getNumber()) : -INFINITY,
                      hi && hi->isNumber() ? float(hi->getNumber()) : INFINITY));
}
KC_REGISTER_KERNEL(clamp, "torch.clamp", makeClamp);

/// PixelShuffle (r > 0) and PixelUnshuffle as one index map.
class PixelShuffleKernel final : public OpKernel {
public:
  PixelShuffleKernel(std::vector<int64_t> out, int64_t r, bool shuffle)
      : out_(std::move(out)), r_(r), shuffle_(shuffle) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t N = out_[0], C = out_[1], H = out_[2], W = out_[3], r = r_;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) {
            int64_t src;
            if (shuffle_) { // in: (N, C*r*r, H/r, W/r)
              int64_t ic = c * r * r + (h % r) * r + (w % r);
              src = ((n * C * r * r + ic) * (H / r) + h / r) * (W / r) + w / r;
            } else { // in: (N, C/(r*r), H*r, W*r)
              int64_t ic = c / (r * r), off = c % (r * r);
              src = ((n * (C / (r * r)) + ic) * (H * r) + h * r + off / r) * (W * r) + w * r +
                    off % r;
            }
            y[((n * C + c) * H + h) * W + w] = x[src];
          }
  }

private:
  std::vector<int64_t> out_;
  int64_t r_;
  bool shuffle_;
};

template <bool Shuffle>
llvm::Expected<std::unique_ptr<OpKernel>> makePixelShuffle(const CallNode &c,
                                                           const CallShapes &io) {
  int64_t r = c.attrs().getInt(Shuffle ? "upscale_factor" : "downscale_factor", 1);
  if (io.out.size() != 4 || r <= 0)
    return kernelError(c, "expects a 4-d result and a positive factor");
  return std::unique_ptr<OpKernel>(new PixelShuffleKernel(io.out, r, Shuffle));
}
KC_REGISTER_KERNEL(pixelshuffle, "nn.PixelShuffle", withShapes<makePixelShuffle<true>>);
KC_REGISTER_KERNEL(pixelunshuffle, "nn.PixelUnshuffle", withShapes<makePixelShuffle<false>>);

/// Tensor.to: element type conversion between f32, f64, f16, i64, i32 and
/// bool, with PyTorch's results: floating to integer through torchCast
/// (defined for NaN, infinities and out-of-range values), integer to integer
/// keeping the low bits, integers to floating never through a narrower type
/// (to f16 through f32, as c10::Half converts).
constexpr DTypeSet kCastTypes{DType::F32, DType::F64, DType::F16,
                              DType::I64, DType::I32, DType::Bool};

class CastKernel final : public OpKernel {
public:
  CastKernel(DType from, DType to) : from_(from), to_(to) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    int64_t n = in[0]->numel();
    const void *src = in[0]->raw();
    void *dst = out[0]->raw();
    // The common pairs as loops of their own (the generic one switches on
    // the result type per element): f32 <-> i64, f32 <-> i32.
    if (from_ == DType::F32 && to_ == DType::I64)
      return convert<float, int64_t>(src, dst, n);
    if (from_ == DType::I64 && to_ == DType::F32)
      return convert<int64_t, float>(src, dst, n);
    if (from_ == DType::F32 && to_ == DType::I32)
      return convert<float, int32_t>(src, dst, n);
    if (from_ == DType::I32 && to_ == DType::F32)
      return convert<int32_t, float>(src, dst, n);
    if (isFloating(from_)) {
      for (int64_t i = 0; i < n; ++i)
        store(dst, i,
              from_ == DType::F32   ? double(static_cast<const float *>(src)[i])
              : from_ == DType::F16 ? double(halfToFloat(static_cast<const uint16_t *>(src)[i]))
                                    : static_cast<const double *>(src)[i]);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      store(dst, i, loadInteger(src, i));
  }

private:
  template <class S, class D> static void convert(const void *src, void *dst, int64_t n) {
    const S *s = static_cast<const S *>(src);
    D *d = static_cast<D *>(dst);
    for (int64_t i = 0; i < n; ++i)
      d[i] = toResult<D>(s[i]);
  }
  template <class D, class S> static D toResult(S v) {
    if constexpr (std::is_floating_point_v<D>)
      return D(v);
    else
      return toInteger<D>(double(v));
  }

  int64_t loadInteger(const void *p, int64_t i) const {
    switch (from_) {
    case DType::I64:
      return static_cast<const int64_t *>(p)[i];
    case DType::I32:
      return static_cast<const int32_t *>(p)[i];
    default:
      return static_cast<const uint8_t *>(p)[i] != 0;
    }
  }
  /// An integer result from `v`: through torchCast from floating, keeping
  /// the low bits from an integer, nonzero-ness for bool.
  template <class I, class T> static I toInteger(T v) {
    if constexpr (std::is_floating_point_v<T>)
      return torchCast<I>(v);
    else if constexpr (std::is_same_v<I, bool>)
      return v != 0;
    else
      return I(std::make_unsigned_t<I>(uint64_t(v)));
  }
  /// Stores element `i` of the result: `v` is a double from a floating
  /// source, an int64_t from an integer one.
  template <class T> void store(void *p, int64_t i, T v) const {
    switch (to_) {
    case DType::F32:
      static_cast<float *>(p)[i] = float(v);
      break;
    case DType::F64:
      static_cast<double *>(p)[i] = double(v);
      break;
    case DType::F16:
      static_cast<uint16_t *>(p)[i] = floatToHalf(float(v));
      break;
    case DType::I64:
      static_cast<int64_t *>(p)[i] = toInteger<int64_t>(v);
      break;
    case DType::I32:
      static_cast<int32_t *>(p)[i] = toInteger<int32_t>(v);
      break;
    default:
      static_cast<uint8_t *>(p)[i] = toInteger<bool>(v);
      break;
    }
  }
  DType from_, to_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeCast(const CallNode &c, const KernelBuildContext &) {
  auto args = c.dataArgs();
  auto *it = args.empty() ? nullptr : llvm::dyn_cast_or_null<TensorTypeNode>(args[0]->type().get());
  if (!it)
    return kernelError(c, "needs a typed input");
  DType from = it->dtype(), to = outputDType(c);
  if (!kCastTypes.contains(from) || !kCastTypes.contains(to))
    return kernelError(c, "conversion from " + dtypeName(from) + " to " + dtypeName(to) +
                              " is not supported");
  return std::unique_ptr<OpKernel>(new CastKernel(from, to));
}
KC_REGISTER_KERNEL_DTYPES(to, "Tensor.to", makeCast, kCastTypes, kCastTypes);

} // namespace
} // namespace kc::rt

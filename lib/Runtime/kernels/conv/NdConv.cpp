//===- NdConv.cpp - Convolutions over 1 to 3 spatial dims, any weights ----===//
//
// nn.Conv3d and nn.ConvTranspose3d (weights from the archive), and the
// F.conv{1,2,3}d and F.conv_transpose{1,2,3}d forms whose weight and bias
// are operands read at each run. Fewer spatial dims are padded to three of
// size 1. A convolution is im2col into scratch and one sgemm per batch
// entry and group (a 1x1x1 kernel of stride 1 without padding reads the
// input directly); a transposed one is an sgemm with the transposed
// weights, giving each input position's contribution to a window, and a
// col2im that adds them up. Rows of the patch matrix along the last dim
// are contiguous copies when the stride there is 1. Ungrouped 3-d
// convolutions without depth dilation run as 2-d ones per output slice
// instead (SlicedConv3d.cpp).
//
//===----------------------------------------------------------------------===//
#include "../Operands.h"
#include "../Parallel.h"
#include "ConvAlgorithms.h"
#include "kc/IR/WindowAttrs.h"

#include <cstring>

namespace kc::rt {
namespace {

struct ConvDims {
  int64_t N = 1, C = 1, OC = 1, G = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
          p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int64_t inPlane() const { return in[0] * in[1] * in[2]; }
  int64_t outPlane() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
};

/// Where the weight and bias come from: constants bound at load, or the
/// kernel's inputs (operand positions; -1 for no bias).
struct OperandWeights {
  Tensor weight, bias;
  int weightInput = -1, biasInput = -1;
};

class NdConvKernel final : public OpKernel {
public:
  NdConvKernel(ConvDims g, bool transposed, OperandWeights w)
      : g_(g), transposed_(transposed), w_(std::move(w)) {}

  size_t workspaceBytes() const override {
    const ConvDims &g = g_;
    if (transposed_)
      return size_t(g.OC / g.G * g.taps() * g.inPlane()) * sizeof(float);
    if (direct())
      return 0;
    return size_t(g.C / g.G * g.taps() * g.outPlane()) * sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    const float *w =
        w_.weightInput >= 0 ? in[w_.weightInput]->data<float>() : w_.weight.data<float>();
    const float *b = w_.biasInput >= 0 ? in[w_.biasInput]->data<float>()
                     : w_.bias.raw()   ? w_.bias.data<float>()
                                       : nullptr;
    float *y = out[0]->data<float>();
    float *col = static_cast<float *>(ctx.workspace);
    if (transposed_)
      runTransposed(x, w, b, y, col);
    else
      runForward(x, w, b, y, col);
  }

private:
  bool direct() const {
    const ConvDims &g = g_;
    for (int i = 0; i < 3; ++i)
      if (g.k[i] != 1 || g.s[i] != 1 || g.p[i] != 0)
        return false;
    return true;
  }

  void runForward(const float *x, const float *w, const float *b, float *y, float *col) const {
    const ConvDims &g = g_;
    const int64_t Cg = g.C / g.G, OCg = g.OC / g.G, K = Cg * g.taps(), P = g.outPlane();
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t grp = 0; grp < g.G; ++grp) {
        const float *xg = x + (n * g.C + grp * Cg) * g.inPlane();
        const float *patches = xg;
        if (!direct()) {
          im2col(xg, Cg, col);
          patches = col;
        }
        float *yg = y + (n * g.OC + grp * OCg) * P;
        sgemm(false, false, OCg, P, K, 1.f, w + grp * OCg * K, K, patches, P, 0.f, yg, P);
        if (b)
          addBias(yg, b + grp * OCg, OCg, P);
      }
  }

  /// col[(c, kd, kh, kw), (od, oh, ow)] = x[c, od*s - p + kd*d, ...] or 0.
  void im2col(const float *x, int64_t channels, float *col) const {
    const ConvDims &g = g_;
    const int64_t P = g.outPlane(), T = g.taps();
    parallelFor(channels * T, channels * T * P > 65536, [&](int64_t row) {
      int64_t c = row / T, t = row % T;
      int64_t kd = t / (g.k[1] * g.k[2]), kh = t / g.k[2] % g.k[1], kw = t % g.k[2];
      const float *xc = x + c * g.inPlane();
      float *dst = col + row * P;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
          float *r = dst + (od * g.out[1] + oh) * g.out[2];
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
            std::fill(r, r + g.out[2], 0.f);
            continue;
          }
          const float *src = xc + (id * g.in[1] + ih) * g.in[2];
          // Output columns whose input column ow*s - p + kw*d is inside.
          int64_t off = kw * g.d[2] - g.p[2], st = g.s[2];
          int64_t lo = off >= 0 ? 0 : (-off + st - 1) / st;
          int64_t hi = off >= g.in[2] ? 0 : (g.in[2] - 1 - off) / st + 1;
          lo = std::min(lo, g.out[2]);
          hi = std::clamp(hi, lo, g.out[2]);
          std::fill(r, r + lo, 0.f);
          if (st == 1)
            std::memcpy(r + lo, src + lo + off, size_t(hi - lo) * sizeof(float));
          else
            for (int64_t ow = lo; ow < hi; ++ow)
              r[ow] = src[ow * st + off];
          std::fill(r + hi, r + g.out[2], 0.f);
        }
      }
    });
  }

  void runTransposed(const float *x, const float *w, const float *b, float *y, float *col) const {
    const ConvDims &g = g_;
    const int64_t Cg = g.C / g.G, OCg = g.OC / g.G, T = g.taps(), Pin = g.inPlane(),
                  P = g.outPlane();
    std::memset(y, 0, size_t(g.N * g.OC * P) * sizeof(float));
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t grp = 0; grp < g.G; ++grp) {
        const float *xg = x + (n * g.C + grp * Cg) * Pin;
        // col[(oc, kd, kh, kw), input position] = Σ_c w[c, oc, k] x[c, position]
        sgemm(true, false, OCg * T, Pin, Cg, 1.f, w + grp * Cg * OCg * T, OCg * T, xg, Pin, 0.f,
              col, Pin);
        float *yg = y + (n * g.OC + grp * OCg) * P;
        parallelFor(OCg, OCg * T * Pin > 65536, [&](int64_t oc) {
          for (int64_t t = 0; t < T; ++t) {
            int64_t kd = t / (g.k[1] * g.k[2]), kh = t / g.k[2] % g.k[1], kw = t % g.k[2];
            const float *src = col + (oc * T + t) * Pin;
            float *dst = yg + oc * P;
            for (int64_t id = 0; id < g.in[0]; ++id) {
              int64_t od = id * g.s[0] - g.p[0] + kd * g.d[0];
              if (od < 0 || od >= g.out[0])
                continue;
              for (int64_t ih = 0; ih < g.in[1]; ++ih) {
                int64_t oh = ih * g.s[1] - g.p[1] + kh * g.d[1];
                if (oh < 0 || oh >= g.out[1])
                  continue;
                const float *s = src + (id * g.in[1] + ih) * g.in[2];
                float *r = dst + (od * g.out[1] + oh) * g.out[2];
                for (int64_t iw = 0; iw < g.in[2]; ++iw) {
                  int64_t ow = iw * g.s[2] - g.p[2] + kw * g.d[2];
                  if (ow >= 0 && ow < g.out[2])
                    r[ow] += s[iw];
                }
              }
            }
          }
        });
        if (b)
          addBias(yg, b + grp * OCg, OCg, P);
      }
  }

  static void addBias(float *y, const float *b, int64_t channels, int64_t plane) {
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < plane; ++i)
        y[c * plane + i] += b[c];
  }

  ConvDims g_;
  bool transposed_;
  OperandWeights w_;
};

} // namespace

llvm::Expected<std::unique_ptr<OpKernel>> makeNdConv(const CallNode &c) {
  const OpDef *def = c.opDef();
  if (!def || !def->window())
    return kernelError(c, "is not a convolution");
  bool transposed = def->window()->op == WindowOp::ConvTranspose;
  bool functional = def->weights().empty(); // F.conv*: weight and bias are operands
  auto io = callShapes(c);
  if (!io)
    return io.takeError();
  const std::vector<int64_t> &in = io->in, &out = io->out;
  size_t n = size_t(def->window()->rank);
  if (in.size() != n + 2 || out.size() != n + 2)
    return kernelError(c, "expects a batched input of " + llvm::Twine(n + 2) + " dims, got " +
                              shapeToString(in));
  OperandWeights w;
  std::vector<int64_t> wshape;
  if (functional) {
    w.weightInput = namedOperand(c, "weight");
    if (w.weightInput < 0)
      w.weightInput = 1;
    w.biasInput = namedOperand(c, "bias");
    if (w.biasInput < 0 && c.dataArgs().size() > 2)
      w.biasInput = 2;
    auto ws = inputShape(c, size_t(w.weightInput));
    if (!ws)
      return ws.takeError();
    wshape = *ws;
  } else {
    auto wt = weightTensor(c, "weight", true, WeightUse::ReadOnly);
    if (!wt)
      return wt.takeError();
    auto bt = weightTensor(c, "bias", false, WeightUse::ReadOnly);
    if (!bt)
      return bt.takeError();
    wshape.assign(wt->shape().begin(), wt->shape().end());
    w.weight = std::move(*wt);
    w.bias = std::move(*bt);
  }
  if (wshape.size() != n + 2)
    return kernelError(c,
                       "weight " + shapeToString(wshape) + " is not " + llvm::Twine(n + 2) + "-d");
  std::vector<int64_t> k(wshape.begin() + 2, wshape.end());
  auto win = WindowAttrs::from(c, n, transposed ? WindowOp::ConvTranspose : WindowOp::Conv, k);
  if (!win)
    return kernelError(c, llvm::toString(win.takeError()));
  ConvDims g;
  g.N = in[0], g.C = in[1], g.OC = out[1], g.G = win->groups;
  if (g.C % g.G || g.OC % g.G)
    return kernelError(c, "groups=" + llvm::Twine(g.G) + " does not divide the channels");
  // The im2col loops pad by padBefore and take the output size from the
  // type, which covers the padding after.
  const std::vector<int64_t> &s = win->stride, &d = win->dilation, &p = win->padBefore;
  int64_t wantW0 = transposed ? g.C : g.OC, wantW1 = transposed ? g.OC / g.G : g.C / g.G;
  if (wshape[0] != wantW0 || wshape[1] != wantW1)
    return kernelError(c, "weight " + shapeToString(wshape) + " does not match the channels");
  size_t lead = 3 - n;
  for (size_t i = 0; i < n; ++i) {
    g.in[lead + i] = in[2 + i], g.out[lead + i] = out[2 + i];
    g.k[lead + i] = k[i], g.s[lead + i] = s[i], g.p[lead + i] = p[i], g.d[lead + i] = d[i];
  }
  if (functional && w.biasInput >= 0) {
    auto bs = inputShape(c, size_t(w.biasInput));
    if (!bs)
      return bs.takeError();
    if (numElements(*bs) != g.OC)
      return kernelError(c, "bias " + shapeToString(*bs) + " does not have " + llvm::Twine(g.OC) +
                                " elements");
  } else if (w.bias.raw() && w.bias.numel() != g.OC) {
    return kernelError(c, "bias does not have " + llvm::Twine(g.OC) + " elements");
  }
  // The sliced kernel pads depth the same on both sides.
  if (n == 3 && !transposed && !functional && g.G == 1 && g.d[0] == 1 &&
      win->padBefore[0] == win->padAfter[0]) {
    SlicedConv3d sc{g.N,    g.C,    g.in[0], g.in[1], g.in[2], g.OC,   g.out[0],
                    g.out[1], g.out[2], g.k[0], g.k[1], g.k[2], g.s[0], g.s[1],
                    g.s[2], g.p[0], g.p[1], g.p[2], g.d[1], g.d[2]};
    return makeSlicedConv3d(sc, w.weight, std::move(w.bias));
  }
  return std::unique_ptr<OpKernel>(new NdConvKernel(g, transposed, std::move(w)));
}

} // namespace kc::rt

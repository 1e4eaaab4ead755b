//===- Recurrent.cpp - nn.LSTM, nn.GRU, nn.RNN ----------------------------===//
//
// Time-major: the input is laid out (T, N, F) once (batch_first and
// unbatched inputs are viewed or copied so). For each layer and direction,
// the input projection of every time step is one sgemm, (T·N, F) x
// (F, G·H) plus bias_ih; each step then adds h W_hhᵀ + bias_hh (one small
// sgemm) and applies the cell. The reverse direction walks the steps
// backwards; the directions' outputs are concatenated along the features,
// and feed the next layer. PyTorch's gate orders: LSTM i, f, g, o (with
// proj_size, h = W_hr (o · tanh c)); GRU r, z, n, with
// n = tanh(x_n + r · (h_n + b_hn)); RNN tanh or relu.
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "Operands.h"

#include <cstring>

namespace kc::rt {
namespace {

enum class Cell { Lstm, Gru, RnnTanh, RnnRelu };

struct Direction {
  Tensor wih, whh, bih, bhh, whr;
};

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

class RecurrentKernel final : public OpKernel {
public:
  struct Shape {
    Cell cell;
    int64_t L, D, H, P, F, T, N;
    bool batchFirst;
    int h0 = -1, c0 = -1; ///< operand positions of the initial state
    size_t results = 1;
  };
  RecurrentKernel(Shape s, std::vector<Direction> dirs) : s_(s), dirs_(std::move(dirs)) {}

  int gates() const { return s_.cell == Cell::Lstm ? 4 : s_.cell == Cell::Gru ? 3 : 1; }

  size_t workspaceBytes() const override {
    const Shape &s = s_;
    int64_t seq = s.T * s.N * std::max(s.F, s.D * s.P);
    int64_t floats = 3 * seq                     // input, two layer outputs
                     + s.T * s.N * gates() * s.H // input projections
                     + s.N * gates() * s.H       // hidden projection
                     + 3 * s.N * std::max(s.H, s.P) + 64;
    return size_t(floats) * sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const Shape &s = s_;
    const int64_t T = s.T, N = s.N, H = s.H, P = s.P, G = gates() * H;
    float *ws = static_cast<float *>(ctx.workspace);
    int64_t seq = T * N * std::max(s.F, s.D * s.P);
    float *x0 = ws, *bufA = x0 + seq, *bufB = bufA + seq, *gx = bufB + seq, *gh = gx + T * N * G;
    float *h = gh + N * G, *c = h + N * std::max(H, P), *tmp = c + N * std::max(H, P);
    relayout(in[0]->data<float>(), x0, s.F, true);
    const float *layerIn = x0;
    int64_t inF = s.F;
    float *hn = s.results > 1 ? out[1]->data<float>() : nullptr;
    float *cn = s.results > 2 ? out[2]->data<float>() : nullptr;
    for (int64_t l = 0; l < s.L; ++l) {
      float *layerOut = l % 2 ? bufB : bufA;
      for (int64_t d = 0; d < s.D; ++d) {
        const Direction &w = dirs_[l * s.D + d];
        // The input projection of every step at once.
        sgemm(false, true, T * N, G, inF, 1.f, layerIn, inF, w.wih.data<float>(), inF, 0.f, gx, G);
        if (w.bih.raw())
          addRows(gx, T * N, G, w.bih.data<float>());
        int64_t slot = l * s.D + d;
        if (s.h0 >= 0)
          std::memcpy(h, in[s.h0]->data<float>() + slot * N * P, size_t(N * P) * sizeof(float));
        else
          std::fill(h, h + N * P, 0.f);
        if (s.cell == Cell::Lstm) {
          if (s.c0 >= 0)
            std::memcpy(c, in[s.c0]->data<float>() + slot * N * H, size_t(N * H) * sizeof(float));
          else
            std::fill(c, c + N * H, 0.f);
        }
        for (int64_t step = 0; step < T; ++step) {
          int64_t t = d == 0 ? step : T - 1 - step;
          sgemm(false, true, N, G, P, 1.f, h, P, w.whh.data<float>(), P, 0.f, gh, G);
          if (w.bhh.raw())
            addRows(gh, N, G, w.bhh.data<float>());
          cellStep(gx + t * N * G, gh, h, c, tmp, w);
          for (int64_t n = 0; n < N; ++n)
            std::memcpy(layerOut + (t * N + n) * s.D * P + d * P, h + n * P,
                        size_t(P) * sizeof(float));
        }
        if (hn)
          std::memcpy(hn + slot * N * P, h, size_t(N * P) * sizeof(float));
        if (cn)
          std::memcpy(cn + slot * N * H, c, size_t(N * H) * sizeof(float));
      }
      layerIn = layerOut;
      inF = s.D * P;
    }
    relayout(layerIn, out[0]->data<float>(), s.D * P, false);
  }

private:
  static void addRows(float *m, int64_t rows, int64_t cols, const float *b) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j)
        m[r * cols + j] += b[j];
  }

  /// One step for all N sequences: gx the input projection (bias_ih in),
  /// gh the hidden one (bias_hh in); h (and c) updated in place.
  void cellStep(const float *gx, const float *gh, float *h, float *c, float *tmp,
                const Direction &w) const {
    const Shape &s = s_;
    const int64_t N = s.N, H = s.H, G = gates() * H;
    for (int64_t n = 0; n < N; ++n) {
      const float *x = gx + n * G, *r = gh + n * G;
      switch (s.cell) {
      case Cell::Lstm: {
        float *cc = c + n * H, *out = s.P == H ? h + n * H : tmp + n * H;
        for (int64_t j = 0; j < H; ++j) {
          float i = sigmoid(x[j] + r[j]), f = sigmoid(x[H + j] + r[H + j]);
          float g = std::tanh(x[2 * H + j] + r[2 * H + j]);
          float o = sigmoid(x[3 * H + j] + r[3 * H + j]);
          cc[j] = f * cc[j] + i * g;
          out[j] = o * std::tanh(cc[j]);
        }
        break;
      }
      case Cell::Gru: {
        float *hh = h + n * H;
        for (int64_t j = 0; j < H; ++j) {
          float rr = sigmoid(x[j] + r[j]), z = sigmoid(x[H + j] + r[H + j]);
          float nn = std::tanh(x[2 * H + j] + rr * r[2 * H + j]);
          hh[j] = (1 - z) * nn + z * hh[j];
        }
        break;
      }
      case Cell::RnnTanh:
      case Cell::RnnRelu: {
        float *hh = h + n * H;
        for (int64_t j = 0; j < H; ++j) {
          float v = x[j] + r[j];
          hh[j] = s.cell == Cell::RnnTanh ? std::tanh(v) : std::max(v, 0.f);
        }
        break;
      }
      }
    }
    if (s.cell == Cell::Lstm && s.P != H) // the projection to proj_size
      sgemm(false, true, N, s.P, H, 1.f, tmp, H, w.whr.data<float>(), H, 0.f, h, s.P);
  }

  /// Copies (T, N, F) from the input's layout (toTimeMajor), or back.
  void relayout(const float *src, float *dst, int64_t F, bool toTimeMajor) const {
    const Shape &s = s_;
    if (!s.batchFirst) {
      std::memcpy(dst, src, size_t(s.T * s.N * F) * sizeof(float));
      return;
    }
    for (int64_t t = 0; t < s.T; ++t)
      for (int64_t n = 0; n < s.N; ++n) {
        int64_t tm = (t * s.N + n) * F, bm = (n * s.T + t) * F;
        std::memcpy(dst + (toTimeMajor ? tm : bm), src + (toTimeMajor ? bm : tm),
                    size_t(F) * sizeof(float));
      }
  }

  Shape s_;
  std::vector<Direction> dirs_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeRecurrent(const CallNode &c,
                                                        const KernelBuildContext &) {
  llvm::StringRef op = c.calleeName();
  RecurrentKernel::Shape s;
  if (op == "nn.LSTM") {
    s.cell = Cell::Lstm;
  } else if (op == "nn.GRU") {
    s.cell = Cell::Gru;
  } else {
    std::string nl = c.attrs().getString("nonlinearity", "tanh");
    if (nl != "tanh" && nl != "relu")
      return kernelError(c, "nonlinearity '" + nl + "' is not supported");
    s.cell = nl == "tanh" ? Cell::RnnTanh : Cell::RnnRelu;
  }
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  size_t numInputs = c.dataArgs().size();
  bool unbatched = in->size() == 2;
  if (in->size() != 2 && in->size() != 3)
    return kernelError(c, "expects a 2-d or 3-d input, got " + shapeToString(*in));
  s.batchFirst = !unbatched && c.attrs().getBool("batch_first", false);
  s.T = (*in)[s.batchFirst ? 1 : 0];
  s.N = unbatched ? 1 : (*in)[s.batchFirst ? 0 : 1];
  s.F = in->back();
  s.H = c.attrs().getInt("hidden_size", 0);
  s.L = c.attrs().getInt("num_layers", 1);
  s.D = c.attrs().getBool("bidirectional", false) ? 2 : 1;
  int64_t proj = s.cell == Cell::Lstm ? c.attrs().getInt("proj_size", 0) : 0;
  s.P = proj > 0 ? proj : s.H;
  if (s.H <= 0 || s.L <= 0 || s.T <= 0 || proj < 0 || (proj > 0 && proj >= s.H))
    return kernelError(c, "bad hidden_size, num_layers, proj_size or an empty sequence");
  size_t states = s.cell == Cell::Lstm ? 2 : 1;
  if (numInputs != 1 && numInputs != 1 + states)
    return kernelError(c, "expects the input and " + llvm::Twine(states) +
                              " initial state(s), or the input alone");
  if (numInputs > 1) {
    s.h0 = 1;
    s.c0 = s.cell == Cell::Lstm ? 2 : -1;
    std::vector<int64_t> want = {s.L * s.D, s.N, s.P};
    if (unbatched)
      want.erase(want.begin() + 1);
    for (int i : {s.h0, s.c0}) {
      if (i < 0)
        continue;
      auto hs = inputShape(c, size_t(i));
      if (!hs)
        return hs.takeError();
      if (i == s.c0)
        want.back() = s.H;
      if (*hs != want)
        return kernelError(c, "initial state " + shapeToString(*hs) + " should be " +
                                  shapeToString(want));
    }
  }
  auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get());
  s.results = tt ? tt->size() : 1;
  int64_t G = (s.cell == Cell::Lstm ? 4 : s.cell == Cell::Gru ? 3 : 1) * s.H;
  std::vector<Direction> dirs;
  for (int64_t l = 0; l < s.L; ++l)
    for (int64_t d = 0; d < s.D; ++d) {
      std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      Direction w;
      int64_t inF = l == 0 ? s.F : s.D * s.P;
      struct Want {
        const char *name;
        Tensor *dst;
        int64_t rows, cols;
        bool required;
      };
      for (Want x :
           {Want{"weight_ih", &w.wih, G, inF, true}, Want{"weight_hh", &w.whh, G, s.P, true},
            Want{"bias_ih", &w.bih, G, 1, false}, Want{"bias_hh", &w.bhh, G, 1, false},
            Want{"weight_hr", &w.whr, s.P, s.H, proj > 0}}) {
        if (!x.required && std::string(x.name) == "weight_hr")
          continue;
        auto t = weightTensor(c, x.name + sfx, x.required, WeightUse::ReadOnly);
        if (!t)
          return t.takeError();
        if (t->raw() && t->numel() != x.rows * x.cols)
          return kernelError(c, llvm::Twine("weight ") + x.name + sfx + " " +
                                    shapeToString(t->shape()) + " should have " +
                                    llvm::Twine(x.rows * x.cols) + " elements");
        *x.dst = std::move(*t);
      }
      dirs.push_back(std::move(w));
    }
  return std::unique_ptr<OpKernel>(new RecurrentKernel(s, std::move(dirs)));
}

KC_REGISTER_KERNEL(lstm, "nn.LSTM", makeRecurrent);
KC_REGISTER_KERNEL(gru, "nn.GRU", makeRecurrent);
KC_REGISTER_KERNEL(rnn, "nn.RNN", makeRecurrent);

} // namespace
} // namespace kc::rt

//===- Statistics.cpp - logsumexp, std, var, norm -------------------------===//
//
// Reductions over any set of dims (ReduceLayout), accumulated in double:
// logsumexp subtracts the maximum first; std and var take the mean first
// and then the squared deviations (two passes, as PyTorch); norm is
// Σ|x|^p to the 1/p, with 'fro' and 2 as the square root of Σx², inf as
// max |x|. Over no element they give PyTorch's values: logsumexp -inf (the
// log of an empty sum), std and var NaN (0/0), norm 0 for every p.
//
//===----------------------------------------------------------------------===//
#include "Operands.h"
#include "Parallel.h"
#include "ReduceLayout.h"

namespace kc::rt {
namespace {

enum class Stat { LogSumExp, Std, Var, Norm };

class StatKernel final : public OpKernel {
public:
  StatKernel(Stat s, ReduceLayout l, double p, bool unbiased)
      : s_(s), l_(std::move(l)), p_(p), unbiased_(unbiased) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t nOut = int64_t(l_.kept.size()), nRed = int64_t(l_.reduced.size());
    const int64_t *red = l_.reduced.data();
    parallelFor(nOut, nOut * nRed > 32768, [&](int64_t o) {
      const float *b = x + l_.kept[o];
      y[o] = float(reduce(b, red, nRed));
    });
  }

private:
  double reduce(const float *b, const int64_t *red, int64_t n) const {
    switch (s_) {
    case Stat::LogSumExp: {
      double m = -INFINITY;
      for (int64_t r = 0; r < n; ++r)
        m = std::max(m, double(b[red[r]]));
      if (std::isinf(m))
        m = 0; // all -inf (or one +inf): the plain sum gives PyTorch's answer
      double sum = 0;
      for (int64_t r = 0; r < n; ++r)
        sum += std::exp(double(b[red[r]]) - m);
      return std::log(sum) + m;
    }
    case Stat::Std:
    case Stat::Var: {
      if (n == 0)
        return NAN; // unbiased, Σ of nothing over n - 1 = -1 would give -0
      double mean = 0;
      for (int64_t r = 0; r < n; ++r)
        mean += b[red[r]];
      mean /= double(n);
      double sq = 0;
      for (int64_t r = 0; r < n; ++r)
        sq += (b[red[r]] - mean) * (b[red[r]] - mean);
      double var = sq / double(unbiased_ ? n - 1 : n);
      return s_ == Stat::Std ? std::sqrt(var) : var;
    }
    case Stat::Norm: {
      double acc = 0;
      if (n == 0)
        return 0; // every p, inf and -inf included (PyTorch 1.13)
      if (std::isinf(p_)) {
        acc = p_ > 0 ? 0 : INFINITY;
        for (int64_t r = 0; r < n; ++r) {
          double v = std::fabs(double(b[red[r]]));
          acc = p_ > 0 ? std::max(acc, v) : std::min(acc, v);
        }
        return acc;
      }
      if (p_ == 2) {
        for (int64_t r = 0; r < n; ++r)
          acc += double(b[red[r]]) * b[red[r]];
        return std::sqrt(acc);
      }
      if (p_ == 0) {
        for (int64_t r = 0; r < n; ++r)
          acc += b[red[r]] != 0;
        return acc;
      }
      for (int64_t r = 0; r < n; ++r)
        acc += std::pow(std::fabs(double(b[red[r]])), p_);
      return p_ == 1 ? acc : std::pow(acc, 1.0 / p_);
    }
    }
    return 0;
  }

  Stat s_;
  ReduceLayout l_;
  double p_;
  bool unbiased_;
};

template <Stat S>
llvm::Expected<std::unique_ptr<OpKernel>> makeStat(const CallNode &c, const CallShapes &io) {
  std::vector<int64_t> dims = dimList(c);
  double p = 2;
  if (S == Stat::Norm) {
    const AttrValue *pv = c.attrs().find("p");
    if (pv && pv->isString()) {
      if (pv->getString() == "inf")
        p = INFINITY;
      else if (pv->getString() == "-inf")
        p = -INFINITY;
      else if (pv->getString() != "fro")
        return kernelError(c, "p='" + pv->getString() + "' is not supported (a number, fro, inf)");
    } else if (pv && pv->isNumber()) {
      p = pv->getNumber();
    }
    if (p < 0 && !std::isinf(p))
      return kernelError(c, "negative p is not supported");
  }
  auto l = ReduceLayout::make(c, io.in, dims);
  if (!l)
    return l.takeError();
  if (numElements(io.out) != int64_t(l->kept.size()))
    return kernelError(c, "the result type does not match the reduced dims");
  return std::unique_ptr<OpKernel>(
      new StatKernel(S, std::move(*l), p, c.attrs().getBool("unbiased", true)));
}

KC_REGISTER_KERNEL(logsumexp, "torch.logsumexp", withShapes<makeStat<Stat::LogSumExp>>);
KC_REGISTER_KERNEL(std_, "torch.std", withShapes<makeStat<Stat::Std>>);
KC_REGISTER_KERNEL(var, "torch.var", withShapes<makeStat<Stat::Var>>);
KC_REGISTER_KERNEL(norm, "torch.norm", withShapes<makeStat<Stat::Norm>>);

} // namespace
} // namespace kc::rt

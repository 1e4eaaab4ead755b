//===- WindowAttrs.cpp - Convolution and pooling attributes ---------------===//
#include "kc/IR/WindowAttrs.h"
#include "ops/TypeRuleUtils.h" // CheckedInt

#include "llvm/ADT/Twine.h"

namespace kc {

using typerules::CheckedInt;

namespace {

llvm::Error bad(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Attribute `key` as n values: absent, None or empty gives `dflt`; a
/// single value applies to every dim; any other length is an error.
llvm::Expected<std::vector<int64_t>> perDim(const CallNode &c, llvm::StringRef key, size_t n,
                                            std::vector<int64_t> dflt) {
  std::vector<int64_t> v = c.attrs().getInts(key);
  if (v.empty())
    return dflt;
  if (v.size() == 1)
    v.assign(n, v[0]);
  if (v.size() != n)
    return bad(key + " has " + llvm::Twine(v.size()) + " entries for " + llvm::Twine(n) +
               " spatial dim(s)");
  return v;
}

} // namespace

llvm::Expected<WindowAttrs> WindowAttrs::from(const CallNode &c, size_t n, WindowOp op,
                                              llvm::ArrayRef<int64_t> weightKernel) {
  WindowAttrs w;
  w.op = op;
  std::vector<int64_t> ones(n, 1), zeros(n, 0);
  auto k =
      perDim(c, "kernel_size", n, std::vector<int64_t>(weightKernel.begin(), weightKernel.end()));
  if (!k)
    return k.takeError();
  if (k->size() != n)
    return bad("missing or malformed kernel_size");
  if (!weightKernel.empty() && llvm::ArrayRef<int64_t>(*k) != weightKernel)
    return bad("kernel_size does not match the weight's spatial dims");
  w.kernel = std::move(*k);
  auto s = perDim(c, "stride", n, op == WindowOp::Pool ? w.kernel : ones);
  if (!s)
    return s.takeError();
  auto d = perDim(c, "dilation", n, ones);
  if (!d)
    return d.takeError();
  auto o = perDim(c, "output_padding", n, zeros);
  if (!o)
    return o.takeError();
  w.stride = std::move(*s), w.dilation = std::move(*d), w.outputPadding = std::move(*o);
  // Kernels divide by strides and step by dilations: zero or negative
  // ones are refused here rather than reaching them.
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] <= 0 || w.stride[i] <= 0 || w.dilation[i] <= 0)
      return bad("kernel_size, stride and dilation must be positive");

  const AttrValue *pv = c.attrs().find("padding");
  if (pv && pv->isString()) {
    w.padBefore = w.padAfter = zeros;
    if (pv->getString() == "same") {
      if (op != WindowOp::Conv)
        return bad("padding='same' is only for convolutions");
      for (size_t i = 0; i < n; ++i) {
        if (w.stride[i] != 1)
          return bad("padding='same' is not supported for strided convolutions");
        CheckedInt total = CheckedInt(w.dilation[i]) * (CheckedInt(w.kernel[i]) - 1);
        if (total.overflowed())
          return bad("kernel_size and dilation give a padding outside int64");
        w.padBefore[i] = total.value() / 2, w.padAfter[i] = total.value() - total.value() / 2;
      }
    } else if (pv->getString() != "valid") {
      return bad("unknown padding '" + pv->getString() + "'");
    }
  } else {
    std::vector<int64_t> p = c.attrs().getInts("padding");
    if (op == WindowOp::Conv && n > 0 && p.size() == 2 * n) {
      // F.pad's (before, after) pairs, last dim first: pnnx writes the
      // padding of a padding_mode so, fold-pad an uneven zero padding.
      w.padBefore = w.padAfter = zeros;
      for (size_t i = 0; i < n; ++i)
        w.padBefore[i] = p[2 * (n - 1 - i)], w.padAfter[i] = p[2 * (n - 1 - i) + 1];
    } else {
      auto sym = perDim(c, "padding", n, zeros);
      if (!sym)
        return sym.takeError();
      w.padBefore = w.padAfter = std::move(*sym);
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (w.padBefore[i] < 0 || w.padAfter[i] < 0 || w.outputPadding[i] < 0)
      return bad("padding must not be negative");

  if (op == WindowOp::Pool) {
    // PyTorch's pools refuse a padding over half the (dilated) window.
    for (size_t i = 0; i < n; ++i) {
      CheckedInt span = CheckedInt(w.dilation[i]) * (CheckedInt(w.kernel[i]) - 1) + 1;
      if (span.overflowed() || w.padBefore[i] > span.value() / 2)
        return bad("padding " + llvm::Twine(w.padBefore[i]) + " is more than half of the window " +
                   llvm::Twine(span.value()));
    }
    w.ceilMode = c.attrs().getBool("ceil_mode", false);
    return w;
  }
  w.groups = c.attrs().getInt("groups", 1);
  if (w.groups <= 0)
    return bad("groups must be positive, got " + llvm::Twine(w.groups));
  if (op == WindowOp::ConvTranspose) {
    for (size_t i = 0; i < n; ++i)
      if (w.outputPadding[i] >= std::max(w.stride[i], w.dilation[i]))
        return bad("output_padding must be smaller than either stride or dilation");
    return w;
  }
  w.paddingMode = c.attrs().getString("padding_mode", "zeros");
  if (w.paddingMode != "zeros" && w.paddingMode != "reflect" && w.paddingMode != "replicate" &&
      w.paddingMode != "circular")
    return bad("unknown padding_mode '" + w.paddingMode + "'");
  return w;
}

bool WindowAttrs::zeroPadding() const {
  for (size_t i = 0; i < rank(); ++i)
    if (padBefore[i] || padAfter[i])
      return false;
  return true;
}

std::vector<int64_t> WindowAttrs::padPairs() const {
  std::vector<int64_t> pairs;
  for (size_t i = rank(); i-- > 0;)
    pairs.push_back(padBefore[i]), pairs.push_back(padAfter[i]);
  return pairs;
}

std::optional<int64_t> WindowAttrs::outputSize(size_t i, int64_t in) const {
  int64_t s = stride[i];
  CheckedInt reach = CheckedInt(dilation[i]) * (CheckedInt(kernel[i]) - 1);
  if (op == WindowOp::ConvTranspose) {
    // (in - 1) s - (before + after) + d (k - 1) + output_padding + 1
    CheckedInt out =
        (CheckedInt(in) - 1) * s - padBefore[i] - padAfter[i] + reach + outputPadding[i] + 1;
    return out.overflowed() ? std::nullopt : std::optional<int64_t>(out.value());
  }
  // floor((in + before + after - d (k - 1) - 1) / s) + 1, or ceil with
  // ceil_mode, where a last window starting in the right padding is
  // dropped.
  CheckedInt span = CheckedInt(in) + padBefore[i] + padAfter[i] - reach - 1;
  if (span.overflowed())
    return std::nullopt;
  if (span.value() < 0)
    return 0;
  bool ceil = op == WindowOp::Pool && ceilMode;
  int64_t out = (ceil ? span.value() / s + (span.value() % s != 0) : span.value() / s) + 1;
  if (ceil) {
    CheckedInt lastStart = CheckedInt(out - 1) * s, end = CheckedInt(in) + padBefore[i];
    if (lastStart.overflowed() || end.overflowed())
      return std::nullopt;
    if (lastStart.value() >= end.value())
      --out;
  }
  return out;
}

} // namespace kc

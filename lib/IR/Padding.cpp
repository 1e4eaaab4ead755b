//===- Padding.cpp - F.pad and the padding modules ------------------------===//
//
// PyTorch 1.13's rules, as measured on F.pad and the modules (which call
// it): constant_pad_nd for mode 'constant', reflection_pad{1,2,3}d,
// replication_pad{1,2,3}d and _pad_circular for the others.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Padding.h"
#include "kc/IR/Op.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

namespace kc {
namespace {

llvm::Error err(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.str());
}

/// A padding module's mode and the number of trailing dims it pads.
struct ModuleKind {
  PadMode mode;
  size_t dims;
};

std::optional<ModuleKind> moduleKind(llvm::StringRef op) {
  using M = std::optional<ModuleKind>;
  return llvm::StringSwitch<M>(op)
      .Case("nn.ZeroPad2d", ModuleKind{PadMode::Constant, 2})
      .Case("nn.ConstantPad1d", ModuleKind{PadMode::Constant, 1})
      .Case("nn.ConstantPad2d", ModuleKind{PadMode::Constant, 2})
      .Case("nn.ConstantPad3d", ModuleKind{PadMode::Constant, 3})
      .Case("nn.ReflectionPad1d", ModuleKind{PadMode::Reflect, 1})
      .Case("nn.ReflectionPad2d", ModuleKind{PadMode::Reflect, 2})
      .Case("nn.ReplicationPad1d", ModuleKind{PadMode::Replicate, 1})
      .Case("nn.ReplicationPad2d", ModuleKind{PadMode::Replicate, 2})
      .Case("nn.ReplicationPad3d", ModuleKind{PadMode::Replicate, 3})
      .Default(std::nullopt);
}

std::string pairText(int64_t before, int64_t after) {
  return "(" + std::to_string(before) + ", " + std::to_string(after) + ")";
}

/// PyTorch's reflection and replication kernels want every dim they read
/// non-empty but an optional batch; 1-d and 2-d reflection also let the
/// channels of an unbatched input be empty.
llvm::Error checkNonEmpty(llvm::ArrayRef<int64_t> in, size_t padded, const Padding &p,
                          llvm::StringRef shown) {
  size_t r = in.size();
  bool batched = r == padded + 2;
  size_t first = p.mode == PadMode::Reflect && padded < 3 ? r - padded : (batched ? 1 : 0);
  for (size_t d = 0; d < r; ++d) {
    bool checked = d >= first || (batched && d == 1);
    if (checked && in[d] == 0)
      return err("cannot pad the empty dim " + llvm::Twine(d) + " of " + shown + " in mode " +
                 quoteInput(padModeName(p.mode)));
  }
  return llvm::Error::success();
}

/// The rules on one padded dim of size `s` (known) that PyTorch checks
/// before computing its size.
llvm::Error checkPads(int64_t s, int64_t before, int64_t after, size_t d, const Padding &p,
                      llvm::StringRef shown) {
  std::string where = " of dim " + std::to_string(d) + " of " + shown.str();
  switch (p.mode) {
  case PadMode::Reflect:
    if (before >= s || after >= s)
      return err("mode 'reflect' needs pads below the size" + where + ", got " +
                 pairText(before, after));
    break;
  case PadMode::Circular:
    if (before > s || after > s)
      return err("mode 'circular' needs pads no larger than the size" + where + ", got " +
                 pairText(before, after));
    break;
  case PadMode::Constant:
    // Crops come first, the left one before the right one.
    if (s + std::min<int64_t>(before, 0) < 0 ||
        s + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0) < 0)
      return err("padding " + pairText(before, after) + " crops more than the " + llvm::Twine(s) +
                 " elements" + where);
    break;
  case PadMode::Replicate:
    break;
  }
  return llvm::Error::success();
}

} // namespace

std::optional<PadMode> parsePadMode(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<PadMode>>(name)
      .Case("constant", PadMode::Constant)
      .Case("reflect", PadMode::Reflect)
      .Case("replicate", PadMode::Replicate)
      .Case("circular", PadMode::Circular)
      .Default(std::nullopt);
}

llvm::StringRef padModeName(PadMode mode) {
  switch (mode) {
  case PadMode::Constant:
    return "constant";
  case PadMode::Reflect:
    return "reflect";
  case PadMode::Replicate:
    return "replicate";
  case PadMode::Circular:
    return "circular";
  }
  return "?";
}

llvm::Expected<Padding> readPadding(const CallNode &c) {
  Padding p;
  std::optional<ModuleKind> module =
      moduleKind(c.opDef() ? llvm::StringRef(c.opDef()->name()) : c.calleeName());
  if (module) {
    p.mode = module->mode;
    p.pairs = c.attrs().getInts("padding");
    if (p.pairs.size() == 1)
      p.pairs.assign(2 * module->dims, p.pairs[0]);
  } else {
    std::string mode = c.attrs().getString("mode", "constant");
    std::optional<PadMode> m = parsePadMode(mode);
    if (!m)
      return err("unknown pad mode " + quoteInput(mode) +
                 " (expected constant, reflect, replicate or circular)");
    p.mode = *m;
    p.pairs = c.attrs().getInts(c.attrs().has("pad") ? "pad" : "padding");
  }
  if (p.pairs.empty() || p.pairs.size() % 2)
    return err("the padding must hold (before, after) pairs, got " + llvm::Twine(p.pairs.size()) +
               " value(s)");
  return p;
}

llvm::Expected<std::vector<int64_t>> paddedShape(llvm::ArrayRef<int64_t> in, const Padding &p,
                                                 llvm::StringRef shown) {
  size_t k = p.pairs.size() / 2, r = in.size();
  if (p.pairs.size() % 2 || k > r)
    return err(llvm::Twine(p.pairs.size()) + " pads for " + shown +
               ": at most two (before, after) per dim");
  if (p.mode != PadMode::Constant && (k < 1 || k > 3 || (r != k + 1 && r != k + 2)))
    return err("mode " + quoteInput(padModeName(p.mode)) +
               " pads 1 to 3 trailing dims of an input with one or two more dims, got " +
               llvm::Twine(k) + " padded dim(s) of " + shown);
  if (p.mode == PadMode::Circular && r != k + 2)
    return err("mode 'circular' pads every dim but the first two, got " + llvm::Twine(k) +
               " padded dim(s) of " + shown);
  if (p.mode == PadMode::Reflect || p.mode == PadMode::Replicate)
    if (auto e = checkNonEmpty(in, k, p, shown))
      return std::move(e);
  std::vector<int64_t> out(in.begin(), in.end());
  for (size_t i = 0; i < k; ++i) {
    size_t d = r - 1 - i;
    int64_t before = p.pairs[2 * i], after = p.pairs[2 * i + 1], s = in[d];
    if (s < 0)
      continue; // unknown until run time
    if (auto e = checkPads(s, before, after, d, p, shown))
      return std::move(e);
    int64_t sum;
    if (llvm::AddOverflow(s, before, sum) || llvm::AddOverflow(sum, after, sum))
      return err("the paddings give a size outside int64");
    int64_t least = p.mode == PadMode::Reflect || p.mode == PadMode::Replicate ? 1 : 0;
    if (sum < least)
      return err("padding " + pairText(before, after) + " leaves dim " + llvm::Twine(d) + " of " +
                 shown + " with " + llvm::Twine(sum) + " elements (mode " +
                 quoteInput(padModeName(p.mode)) + " needs at least " + llvm::Twine(least) + ")");
    out[d] = sum;
  }
  return out;
}

} // namespace kc

//===- FoldPad.cpp - A constant pad taken into the window that reads it ---===//
//
//   %1 = F.pad(%0) {pad=[1,1,1,1]}                %2 = nn.Conv3d(%0) {padding=[1,1,1], ...}
//   %2 = nn.Conv3d(%1) {padding=[0,0,0], ...}  ⇒
//
// pnnx folds a symmetric pad into the 1-d and 2-d convolution after it,
// but leaves it before a 3-d convolution, before pools, and wherever it
// pads one side more (TensorFlow's "same" at a stride: F.pad(x, (0,1,0,1))
// before a stride-2 convolution). A convolution (padding_mode zeros) and
// an average pool that counts the padding take a pad of zeros; a max pool
// takes a pad of -inf (what it pads with). The pad must be read by nothing
// else and pad only the window's spatial dims. A convolution takes any
// amounts, written as (before, after) pairs where they differ (the kernels
// pad before and take the output size from the type, which covers the
// padding after; the exporter writes such a pad back as F.pad). A pool
// takes the same amount on both sides of each dim, and must not use
// ceil_mode (its last window would then differ) nor return indices (they
// would count the pad). The padding must stay within what PyTorch allows
// the op (kc/IR/WindowAttrs.h).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Padding.h"
#include "kc/IR/WindowAttrs.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"
#include "kc/Pass/PatternMatch.h"

#include <cmath>

using namespace kc;

namespace {

/// How a window op pads, if it can take a constant pad.
struct Window {
  WindowOp op;
  size_t rank;
  double fill; ///< the pad value it can take
};

std::optional<Window> windowOf(const CallNode &c) {
  const OpDef *d = c.opDef();
  const std::optional<WindowSpec> &w = d ? d->window() : std::nullopt;
  if (!w)
    return std::nullopt;
  size_t rank = size_t(w->rank);
  if (w->op == WindowOp::Conv && !d->weights().empty()) // not F.conv*: weights as operands
    return Window{WindowOp::Conv, rank, 0.0};
  if (w->pool == PoolKind::Average && c.attrs().getBool("count_include_pad", true))
    return Window{WindowOp::Pool, rank, 0.0};
  if (w->pool == PoolKind::Max && !c.attrs().getBool("return_indices", false))
    return Window{WindowOp::Pool, rank, -INFINITY};
  return std::nullopt;
}

class FoldPad final : public Pass {
public:
  llvm::StringRef name() const override { return "fold-pad"; }
  llvm::StringRef description() const override {
    return "Take a constant pad into the padding of the convolution or pool that reads it";
  }
  llvm::Error run(Module &m) override {
    Function main = m.main();
    if (!main)
      return llvm::Error::success();
    auto uses = countUses(main);
    numFolded += rewriteCalls(m, [&](const CallNode &pre, auto rewritten) -> Expr {
      std::optional<Window> w = windowOf(pre);
      if (!w || hasAttrOperands(pre) || pre.numDataArgs() != 1)
        return nullptr;
      size_t at = pre.dataArgIndex(0);
      auto *pad = llvm::dyn_cast<CallNode>(pre.arg(at).get());
      const OpDef *pd = pad ? pad->opDef() : nullptr;
      if (!pd || !pd->is(OpFlags::Pad) || hasAttrOperands(*pad) || pad->numDataArgs() != 1 ||
          uses.lookup(pad) != 1)
        return nullptr;
      auto p = readPadding(*pad);
      if (!p) {
        llvm::consumeError(p.takeError());
        return nullptr;
      }
      double fill = pad->attrs().getFloat("value", 0.0);
      if (p->mode != PadMode::Constant || fill != w->fill || p->pairs.size() > 2 * w->rank)
        return nullptr;
      auto window = WindowAttrs::from(pre, w->rank, w->op);
      if (!window) {
        llvm::consumeError(window.takeError());
        return nullptr;
      }
      if (window->paddingMode != "zeros" ||
          (w->op == WindowOp::Pool && (window->ceilMode || !window->zeroPadding())))
        return nullptr;
      // F.pad's pairs run from the last dim backwards.
      std::vector<int64_t> before = window->padBefore, after = window->padAfter;
      for (size_t i = 0; i < p->pairs.size() / 2; ++i) {
        if (p->pairs[2 * i] < 0 || p->pairs[2 * i + 1] < 0)
          return nullptr;
        before[w->rank - 1 - i] += p->pairs[2 * i], after[w->rank - 1 - i] += p->pairs[2 * i + 1];
      }
      std::vector<int64_t> padding = before;
      if (before != after) {
        if (w->op != WindowOp::Conv)
          return nullptr;
        padding.clear();
        for (size_t i = w->rank; i-- > 0;)
          padding.push_back(before[i]), padding.push_back(after[i]);
      }
      Attrs attrs = pre.attrs();
      attrs.set("padding", AttrValue::intList(padding));
      std::vector<Expr> args(pre.args().begin(), pre.args().end());
      for (Expr &a : args)
        a = rewritten(a.get());
      args[at] = rewritten(pad->dataArg(0));
      Call n = call(pre.callee(), args, std::move(attrs), pre.keys(), pre.name());
      // Within what PyTorch allows the op (a pool's padding at most half
      // its window).
      if (auto ok = WindowAttrs::from(*n, w->rank, w->op); !ok) {
        llvm::consumeError(ok.takeError());
        return nullptr;
      }
      n->setLoc(pre.loc());
      return n;
    });
    return llvm::Error::success();
  }

private:
  Statistic numFolded{this, "num-folded", "Pads taken into a convolution or pool"};
};

} // namespace

KC_REGISTER_PASS(FoldPad);

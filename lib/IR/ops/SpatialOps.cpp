//===- SpatialOps.cpp - grid_sample, affine_grid, fold, unfold ------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/WindowAttrs.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// (N, C, *in) sampled at the grid's (N, *out, k) points: (N, C, *out).
llvm::Expected<Type> gridSample(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0), *g = dataType(c, 1);
  if (!in || !g)
    return Type();
  if ((in->rank() != 4 && in->rank() != 5) || g->rank() != in->rank() ||
      g->dim(-1) != int64_t(in->rank()) - 2 || g->dim(0) != in->dim(0))
    return fail(c, "expects (N, C, H, W) with an (N, H', W', 2) grid, or (N, C, D, H, W) with "
                   "an (N, D', H', W', 3) grid");
  for (size_t k = 2; k < in->rank(); ++k)
    if (in->dims()[k] == 0)
      return fail(c, "dim " + llvm::Twine(k) + " of the input " + shown(c.dataArg(0)->type()) +
                         " is empty (PyTorch samples only non-empty spatial dims)");
  std::vector<int64_t> d = {in->dim(0), in->dim(1)};
  d.insert(d.end(), g->dims().begin() + 1, g->dims().end() - 1);
  return tensorType(in->dtype(), d);
}

/// theta (N, 2, 3) → grid (N, H, W, 2); (N, 3, 4) → (N, D, H, W, 3).
llvm::Expected<Type> affineGrid(const CallNode &c) {
  const TensorTypeNode *t = dataType(c, 0);
  if (!t)
    return Type();
  std::vector<int64_t> size = c.attrs().getInts("size");
  if (size.size() != 4 && size.size() != 5)
    return fail(c, "size must have 4 or 5 entries");
  int64_t k = int64_t(size.size()) - 2;
  if (t->rank() != 3 || t->dim(1) != k || t->dim(2) != k + 1 || t->dim(0) != size[0])
    return fail(c, "theta must be (N, " + llvm::Twine(k) + ", " + llvm::Twine(k + 1) + ")");
  std::vector<int64_t> d = {size[0]};
  d.insert(d.end(), size.begin() + 2, size.end());
  d.push_back(k);
  return tensorType(t->dtype(), d);
}

/// The number of sliding-window positions along each of the 2 dims, and
/// the window.
llvm::Expected<std::pair<std::vector<int64_t>, WindowAttrs>> blocks(const CallNode &c,
                                                                    std::vector<int64_t> spatial) {
  auto w = WindowAttrs::from(c, 2, WindowOp::Conv);
  if (!w)
    return fail(c, llvm::toString(w.takeError()));
  std::vector<int64_t> n;
  for (size_t i = 0; i < 2; ++i) {
    std::optional<int64_t> out = w->outputSize(i, spatial[i]);
    if (!out)
      return fail(c, "the attributes give a block count outside int64");
    if (*out <= 0)
      return fail(c, "the window does not fit the padded input");
    n.push_back(*out);
  }
  return std::make_pair(std::move(n), std::move(*w));
}

/// unfold: (N, C, H, W) → (N, C·kh·kw, L).
llvm::Expected<Type> unfold(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in || !in->isStatic())
    return Type();
  if (in->rank() != 4)
    return fail(c, "expects (N, C, H, W)");
  auto b = blocks(c, {in->dim(2), in->dim(3)});
  if (!b)
    return b.takeError();
  const std::vector<int64_t> &n = b->first, &k = b->second.kernel;
  CheckedInt rows = CheckedInt(in->dim(1)) * k[0] * k[1], cols = CheckedInt(n[0]) * n[1];
  if (rows.overflowed() || cols.overflowed())
    return fail(c, "the window gives a shape outside int64");
  return tensorType(in->dtype(), {in->dim(0), rows.value(), cols.value()});
}

/// fold: (N, C·kh·kw, L) → (N, C, *output_size).
llvm::Expected<Type> fold(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in || !in->isStatic())
    return Type();
  std::vector<int64_t> o = intsN(c, "output_size", 2, {});
  if (in->rank() != 3 || o.size() != 2)
    return fail(c, "expects (N, C·kh·kw, L) and a 2-d output_size");
  auto b = blocks(c, o);
  if (!b)
    return b.takeError();
  const std::vector<int64_t> &n = b->first, &k = b->second.kernel;
  CheckedInt taps = CheckedInt(k[0]) * k[1], blocksIn = CheckedInt(n[0]) * n[1];
  if (taps.overflowed() || blocksIn.overflowed() || in->dim(1) % taps.value())
    return fail(c, "the input's " + llvm::Twine(in->dim(1)) +
                       " rows are not channels times the kernel's taps");
  if (blocksIn.value() != in->dim(2))
    return fail(c, "the input has " + llvm::Twine(in->dim(2)) + " blocks, output_size gives " +
                       llvm::Twine(blocksIn.value()));
  return tensorType(in->dtype(), {in->dim(0), in->dim(1) / taps.value(), o[0], o[1]});
}

const OpFlags kPure = OpFlags::Pure;

KC_REGISTER_OP(grid_sample_, "F.grid_sample")
    .describe("sample the input at grid points (bilinear, nearest, bicubic)")
    .input("input")
    .input("grid")
    .attr("mode", AttrValue::string("bilinear"))
    .attr("padding_mode", AttrValue::string("zeros"))
    .attr("align_corners", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(gridSample);
KC_REGISTER_OP(affine_grid_, "F.affine_grid")
    .describe("the sampling grid of affine transforms theta")
    .input("theta")
    .attr("size", AttrValue(), true)
    .attr("align_corners", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(affineGrid);
#define KC_WINDOWS(ID, NAME, ALIAS, RULE, DOC)                                                     \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .alias(ALIAS)                                                                                \
      .input("input")                                                                              \
      .attr("kernel_size", AttrValue(), true)                                                      \
      .attr("dilation", AttrValue())                                                               \
      .attr("padding", AttrValue())                                                                \
      .attr("stride", AttrValue())                                                                 \
      .flags(kPure)                                                                                \
      .typeRule(RULE)
KC_WINDOWS(unfold_, "nn.Unfold", "F.unfold", unfold, "sliding windows as columns (im2col)");
KC_WINDOWS(fold_, "nn.Fold", "F.fold", fold, "columns summed back into windows (col2im)")
    .attr("output_size", AttrValue(), true);

} // namespace

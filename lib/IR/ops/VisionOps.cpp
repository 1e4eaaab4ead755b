//===- VisionOps.cpp - torchvision.ops.RoIAlign and DeformConv2d ----------===//
#include "TypeRuleUtils.h"

#include "kc/IR/WindowAttrs.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// (N, C, H, W) and (K, 5) boxes → (K, C, oh, ow). An image without pixels
/// is refused: torchvision's sampler reads outside it.
llvm::Expected<Type> roiAlign(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0), *rois = dataType(c, 1);
  if (!in || !rois)
    return Type();
  std::vector<int64_t> o = intsN(c, "output_size", 2, {});
  if (in->rank() != 4 || rois->rank() != 2 || rois->dim(1) != 5 || o.size() != 2)
    return fail(c, "expects (N, C, H, W), (K, 5) boxes and a 2-d output_size");
  for (int k : {2, 3})
    if (in->dim(k) == 0)
      return fail(c, "dim " + llvm::Twine(k) + " of the input " + shown(c.dataArg(0)->type()) +
                         " is empty: torchvision would sample outside it");
  return tensorType(in->dtype(), {rois->dim(0), in->dim(1), o[0], o[1]});
}

/// Whether two dims disagree, both being known.
bool differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

/// torchvision's checks of the offset (N, 2·G·kh·kw, oh, ow) and of the
/// mask (N, G·kh·kw, oh, ow), G offset groups dividing the channels.
llvm::Error checkDeformOperands(const CallNode &c, const TensorTypeNode *in,
                                const TensorTypeNode *wt, llvm::ArrayRef<int64_t> out) {
  const TensorTypeNode *off = dataType(c, 1), *mask = dataType(c, 2);
  int64_t taps = wt->dim(2) * wt->dim(3);
  if (!off || taps < 0)
    return llvm::Error::success();
  std::string shapes = ": offset " + shown(c.dataArg(1)->type()) + ", input " +
                       shown(c.dataArg(0)->type()) + ", weight " +
                       shown(c.weight("weight")->type());
  if (off->rank() != 4)
    return fail(c, "the offset must be (N, 2·groups·kh·kw, oh, ow)" + shapes);
  if (differ(off->dim(0), in->dim(0)))
    return fail(c, "the offset's batch " + llvm::Twine(off->dim(0)) + " is not the input's " +
                       llvm::Twine(in->dim(0)) + shapes);
  int64_t groups = off->dim(1) >= 0 && taps > 0 ? off->dim(1) / (2 * taps) : -1;
  if (groups == 0 || (groups > 0 && off->dim(1) != 2 * groups * taps) ||
      (groups > 0 && in->dim(1) > 0 && in->dim(1) % groups))
    return fail(c, "the offset's channels are not 2·kh·kw per offset group, the groups "
                   "dividing the input's channels" +
                       shapes);
  if (differ(off->dim(2), out[2]) || differ(off->dim(3), out[3]))
    return fail(c, "the offset's spatial dims are not the result's" + shapes);
  if (!mask)
    return llvm::Error::success();
  if (mask->rank() == 4 && differ(mask->dim(0), in->dim(0)))
    return fail(c, "the mask's batch " + llvm::Twine(mask->dim(0)) + " is not the input's " +
                       llvm::Twine(in->dim(0)) + ": mask " + shown(c.dataArg(2)->type()) + shapes);
  if (mask->rank() != 4 || (groups > 0 && differ(mask->dim(1), groups * taps)) ||
      differ(mask->dim(2), out[2]) || differ(mask->dim(3), out[3]))
    return fail(c, "the mask " + shown(c.dataArg(2)->type()) +
                       " must be (N, groups·kh·kw, oh, ow) matching the offset" + shapes);
  return llvm::Error::success();
}

/// A convolution whose taps are displaced by the offset operand, with
/// torchvision's shape checks.
llvm::Expected<Type> deformConv(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  const ConstantNode *w = c.weight("weight");
  auto *wt = w ? llvm::dyn_cast_or_null<TensorTypeNode>(w->type().get()) : nullptr;
  if (!in || !wt)
    return Type();
  if (in->rank() != 4 || wt->rank() != 4)
    return fail(c, "expects (N, C, H, W) and a 4-d weight");
  std::vector<int64_t> kernel{wt->dim(2), wt->dim(3)};
  if (kernel[0] < 0 || kernel[1] < 0)
    return Type(); // the window is not known yet
  auto win = WindowAttrs::from(c, 2, WindowOp::Conv, kernel);
  if (!win)
    return fail(c, llvm::toString(win.takeError()));
  int64_t groups = win->groups;
  if (in->dim(1) == 0)
    return fail(c, "the input " + shown(c.dataArg(0)->type()) +
                       " has no channels (torchvision divides by them)");
  if (groups <= 0 || (in->dim(1) > 0 && wt->dim(1) >= 0 && in->dim(1) != wt->dim(1) * groups) ||
      (wt->dim(0) >= 0 && wt->dim(0) % groups))
    return fail(c, "the weight " + shown(w->type()) + " does not match the input " +
                       shown(c.dataArg(0)->type()) + " in " + llvm::Twine(groups) + " group(s)");
  std::vector<int64_t> out = {in->dim(0), wt->dim(0), -1, -1};
  for (size_t i = 0; i < 2; ++i) {
    if (in->dim(2 + i) < 0)
      continue;
    std::optional<int64_t> o = win->outputSize(i, in->dim(2 + i));
    if (!o)
      return fail(c, "stride, padding and dilation give an output size outside int64");
    if (*o <= 0)
      return fail(c, "the kernel does not fit the padded input");
    out[2 + i] = *o;
  }
  if (auto e = checkDeformOperands(c, in, wt, out))
    return std::move(e);
  return tensorType(in->dtype(), out);
}

KC_REGISTER_OP(roi_align_, "torchvision.ops.RoIAlign")
    .describe("bilinear average of each box's bins")
    .input("input")
    .input("rois")
    .attr("output_size", AttrValue(), true)
    .attr("spatial_scale", AttrValue::real(1.0))
    .attr("sampling_ratio", AttrValue::integer(-1))
    .attr("aligned", AttrValue::boolean(false))
    .flags(OpFlags::Pure)
    .typeRule(roiAlign);
KC_REGISTER_OP(deform_conv2d_, "torchvision.ops.DeformConv2d")
    .describe("deformable convolution (offsets, optional modulation mask)")
    .input("input")
    .input("offset")
    .input("mask")
    .weight("weight")
    .weight("bias", true)
    .attr("in_channels", AttrValue::integer(0))
    .attr("out_channels", AttrValue::integer(0))
    .attr("kernel_size", AttrValue())
    .attr("stride", AttrValue())
    .attr("padding", AttrValue())
    .attr("dilation", AttrValue())
    .attr("groups", AttrValue::integer(1))
    .attr("bias", AttrValue::boolean(true))
    .flags(OpFlags::Pure | OpFlags::Variadic)
    .typeRule(deformConv);

} // namespace

//===- VisionOps.cpp - torchvision.ops.RoIAlign and DeformConv2d ----------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// (N, C, H, W) and (K, 5) boxes → (K, C, oh, ow).
llvm::Expected<Type> roiAlign(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0), *rois = dataType(c, 1);
  if (!in || !rois)
    return Type();
  std::vector<int64_t> o = intsN(c, "output_size", 2, {});
  if (in->rank() != 4 || rois->rank() != 2 || rois->dim(1) != 5 || o.size() != 2)
    return fail(c, "expects (N, C, H, W), (K, 5) boxes and a 2-d output_size");
  return tensorType(in->dtype(), {rois->dim(0), in->dim(1), o[0], o[1]});
}

/// A convolution whose taps are displaced by the offset operand.
llvm::Expected<Type> deformConv(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  const ConstantNode *w = c.weight("weight");
  auto *wt = w ? llvm::dyn_cast_or_null<TensorTypeNode>(w->type().get()) : nullptr;
  if (!in || !wt)
    return Type();
  if (in->rank() != 4 || wt->rank() != 4)
    return fail(c, "expects (N, C, H, W) and a 4-d weight");
  std::vector<int64_t> s = intsN(c, "stride", 2, {1, 1}), p = intsN(c, "padding", 2, {0, 0}),
                       d = intsN(c, "dilation", 2, {1, 1});
  if (s.size() != 2 || p.size() != 2 || d.size() != 2)
    return fail(c, "malformed stride, padding or dilation");
  std::vector<int64_t> out = {in->dim(0), wt->dim(0), 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (s[i] <= 0 || d[i] <= 0 || p[i] < 0)
      return fail(c, "stride and dilation must be positive, padding not negative");
    int64_t span = in->dim(2 + i) + 2 * p[i] - d[i] * (wt->dim(2 + i) - 1) - 1;
    if (span < 0)
      return fail(c, "the kernel does not fit the padded input");
    out[2 + i] = span / s[i] + 1;
  }
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

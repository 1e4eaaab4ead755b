//===- Presets.cpp - Ops that run as another op with fixed attributes -----===//
//
// See Rebind.h. Each factory here names the op it runs as and the
// attributes the op type implies.
//
//===----------------------------------------------------------------------===//
#include "Rebind.h"

#include "kc/IR/Padding.h"

namespace kc::rt {
namespace {

/// nn.ZeroPad2d, nn.ConstantPad*d, nn.ReflectionPad*d, nn.ReplicationPad*d:
/// F.pad with the mode and pairs kc/IR/Padding.h reads from the op type.
llvm::Expected<std::unique_ptr<OpKernel>> makePadModule(const CallNode &c,
                                                        const KernelBuildContext &ctx) {
  auto p = readPadding(c);
  if (!p)
    return kernelError(c, llvm::toString(p.takeError()));
  return kernelAs(c, "F.pad",
                  {{"pad", AttrValue::intList(p->pairs)},
                   {"mode", AttrValue::string(padModeName(p->mode).str())},
                   {"value", AttrValue::real(c.attrs().getFloat("value", 0.0))}},
                  ctx);
}
KC_REGISTER_KERNEL(zeropad2d, "nn.ZeroPad2d", makePadModule);
KC_REGISTER_KERNEL(constantpad1d, "nn.ConstantPad1d", makePadModule);
KC_REGISTER_KERNEL(constantpad2d, "nn.ConstantPad2d", makePadModule);
KC_REGISTER_KERNEL(constantpad3d, "nn.ConstantPad3d", makePadModule);
KC_REGISTER_KERNEL(reflectionpad1d, "nn.ReflectionPad1d", makePadModule);
KC_REGISTER_KERNEL(reflectionpad2d, "nn.ReflectionPad2d", makePadModule);
KC_REGISTER_KERNEL(replicationpad1d, "nn.ReplicationPad1d", makePadModule);
KC_REGISTER_KERNEL(replicationpad2d, "nn.ReplicationPad2d", makePadModule);
KC_REGISTER_KERNEL(replicationpad3d, "nn.ReplicationPad3d", makePadModule);

/// nn.UpsamplingNearest2d and F.upsample_nearest; nn.UpsamplingBilinear2d
/// and F.upsample_bilinear, which align corners.
template <bool Bilinear>
llvm::Expected<std::unique_ptr<OpKernel>> makeUpsamplePreset(const CallNode &c,
                                                             const KernelBuildContext &ctx) {
  Attrs a;
  for (const char *key : {"size", "scale_factor"})
    if (const AttrValue *v = c.attrs().find(key))
      a.set(key, *v);
  a.set("mode", AttrValue::string(Bilinear ? "bilinear" : "nearest"));
  if (Bilinear)
    a.set("align_corners", AttrValue::boolean(true));
  return kernelAs(c, "nn.Upsample", std::move(a), ctx);
}
KC_REGISTER_KERNEL(upsamplingnearest2d, "nn.UpsamplingNearest2d", makeUpsamplePreset<false>);
KC_REGISTER_KERNEL(upsamplenearest, "F.upsample_nearest", makeUpsamplePreset<false>);
KC_REGISTER_KERNEL(upsamplingbilinear2d, "nn.UpsamplingBilinear2d", makeUpsamplePreset<true>);
KC_REGISTER_KERNEL(upsamplebilinear, "F.upsample_bilinear", makeUpsamplePreset<true>);

/// nn.Softmax2d: softmax over the channels.
llvm::Expected<std::unique_ptr<OpKernel>> makeSoftmax2d(const CallNode &c,
                                                        const KernelBuildContext &ctx) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  if (s->size() != 3 && s->size() != 4)
    return kernelError(c, "expects (C, H, W) or (N, C, H, W), got " + shapeToString(*s));
  return kernelAs(c, "nn.Softmax", {{"dim", AttrValue::integer(-3)}}, ctx);
}
KC_REGISTER_KERNEL(softmax2d, "nn.Softmax2d", makeSoftmax2d);

/// nn.RReLU in inference: a leaky ReLU of the mean slope.
llvm::Expected<std::unique_ptr<OpKernel>> makeRRelu(const CallNode &c,
                                                    const KernelBuildContext &ctx) {
  double slope = (c.attrs().getFloat("lower", 1.0 / 8) + c.attrs().getFloat("upper", 1.0 / 3)) / 2;
  return kernelAs(c, "nn.LeakyReLU", {{"negative_slope", AttrValue::real(slope)}}, ctx);
}
KC_REGISTER_KERNEL(rrelu, "nn.RReLU", makeRRelu);

/// nn.InstanceNorm1d and 3d: the 2-d kernel on a 4-d view of the same
/// bytes, (N, C, L) as (N, C, 1, L), (N, C, D, H, W) as (N, C, D, H·W);
/// an unbatched input as a batch of one.
template <size_t Spatial>
llvm::Expected<std::unique_ptr<OpKernel>> makeInstanceNormNd(const CallNode &c,
                                                             const KernelBuildContext &ctx) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  if (s->size() != Spatial + 1 && s->size() != Spatial + 2)
    return kernelError(c, "expects " + llvm::Twine(Spatial + 2) + " dims (or " +
                              llvm::Twine(Spatial + 1) + " unbatched), got " + shapeToString(*s));
  std::vector<int64_t> v = *s;
  if (v.size() == Spatial + 1)
    v.insert(v.begin(), 1);
  std::vector<int64_t> view = {v[0], v[1], Spatial == 3 ? v[2] : 1, v.back()};
  if (Spatial == 3)
    view[3] = v[3] * v[4];
  Type t = tensorType(DType::F32, view);
  std::vector<Expr> args(c.args().begin(), c.args().end());
  for (size_t i = 0; i < args.size(); ++i)
    if (c.keys()[i].role != ArgRole::Weight) {
      args[i] = var("input", t);
      break;
    }
  return kernelAs(c, "nn.InstanceNorm2d", args, c.keys(), c.attrs(), ctx, t);
}
KC_REGISTER_KERNEL(instnorm1d, "nn.InstanceNorm1d", makeInstanceNormNd<1>);
KC_REGISTER_KERNEL(instnorm3d, "nn.InstanceNorm3d", makeInstanceNormNd<3>);

} // namespace
} // namespace kc::rt

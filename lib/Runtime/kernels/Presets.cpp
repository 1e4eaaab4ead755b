//===- Presets.cpp - Ops that run as another op with fixed attributes -----===//
//
// See Rebind.h. Each factory here names the op it runs as and the
// attributes the op type implies.
//
//===----------------------------------------------------------------------===//
#include "Rebind.h"

namespace kc::rt {
namespace {

/// nn.ZeroPad2d, nn.ConstantPad*d, nn.ReflectionPad*d, nn.ReplicationPad*d.
template <const char *Mode>
llvm::Expected<std::unique_ptr<OpKernel>> makePadModule(const CallNode &c,
                                                        const KernelBuildContext &ctx) {
  const AttrValue *p = c.attrs().find("padding");
  if (!p || p->isNone())
    return kernelError(c, "needs padding");
  return kernelAs(c, "F.pad",
                  {{"pad", *p},
                   {"mode", AttrValue::string(Mode)},
                   {"value", AttrValue::real(c.attrs().getFloat("value", 0.0))}},
                  ctx);
}
constexpr char kConstant[] = "constant", kReflect[] = "reflect", kReplicate[] = "replicate";
KC_REGISTER_KERNEL(zeropad2d, "nn.ZeroPad2d", makePadModule<kConstant>);
KC_REGISTER_KERNEL(constantpad1d, "nn.ConstantPad1d", makePadModule<kConstant>);
KC_REGISTER_KERNEL(constantpad2d, "nn.ConstantPad2d", makePadModule<kConstant>);
KC_REGISTER_KERNEL(constantpad3d, "nn.ConstantPad3d", makePadModule<kConstant>);
KC_REGISTER_KERNEL(reflectionpad1d, "nn.ReflectionPad1d", makePadModule<kReflect>);
KC_REGISTER_KERNEL(reflectionpad2d, "nn.ReflectionPad2d", makePadModule<kReflect>);
KC_REGISTER_KERNEL(replicationpad1d, "nn.ReplicationPad1d", makePadModule<kReplicate>);
KC_REGISTER_KERNEL(replicationpad2d, "nn.ReplicationPad2d", makePadModule<kReplicate>);
KC_REGISTER_KERNEL(replicationpad3d, "nn.ReplicationPad3d", makePadModule<kReplicate>);

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

} // namespace
} // namespace kc::rt

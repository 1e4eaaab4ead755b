//===- ActivationOps.cpp - Shrinking, gating and normalizing activations --===//
//
// The activations beyond NnOps.cpp's: thresholds and shrinks, GLU, RReLU
// (its eval-mode form), Softmax2d, and the per-position normalizations
// F.normalize and local response normalization.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// GLU halves `dim`.
llvm::Expected<Type> glu(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t d = normDim(c.attrs().getInt("dim", -1), in->rank());
  if (d < 0)
    return fail(c, "dim out of range for rank " + llvm::Twine(in->rank()));
  std::vector<int64_t> dims(in->dims().begin(), in->dims().end());
  if (dims[d] >= 0) {
    if (dims[d] % 2)
      return fail(c, "dim " + llvm::Twine(d) + " has an odd size, " + llvm::Twine(dims[d]));
    dims[d] /= 2;
  }
  return tensorType(in->dtype(), dims);
}

const OpFlags kAct = OpFlags::Pure | OpFlags::Elementwise;

KC_REGISTER_OP(hardshrink_, "nn.Hardshrink")
    .describe("x if |x| > lambd else 0")
    .alias("F.hardshrink")
    .input("input")
    .attr("lambd", AttrValue::real(0.5))
    .flags(kAct)
    .typeRule(sameAsInput);
KC_REGISTER_OP(softshrink_, "nn.Softshrink")
    .describe("x - lambd if x > lambd, x + lambd if x < -lambd, else 0")
    .alias("F.softshrink")
    .input("input")
    .attr("lambd", AttrValue::real(0.5))
    .flags(kAct)
    .typeRule(sameAsInput);
KC_REGISTER_OP(threshold_, "nn.Threshold")
    .describe("x if x > threshold else value")
    .alias("F.threshold")
    .input("input")
    .attr("threshold", AttrValue::real(0.0), true)
    .attr("value", AttrValue::real(0.0), true)
    .flags(kAct)
    .typeRule(sameAsInput);
KC_REGISTER_OP(rrelu_, "nn.RReLU")
    .describe("leaky ReLU with slope (lower + upper) / 2 (inference)")
    .alias("F.rrelu")
    .input("input")
    .attr("lower", AttrValue::real(1.0 / 8))
    .attr("upper", AttrValue::real(1.0 / 3))
    .flags(kAct)
    .typeRule(sameAsInput);
KC_REGISTER_OP(glu_, "nn.GLU")
    .describe("a * sigmoid(b) for the halves a, b of dim")
    .alias("F.glu")
    .input("input")
    .attr("dim", AttrValue::integer(-1))
    .flags(OpFlags::Pure)
    .typeRule(glu);
KC_REGISTER_OP(softmax2d_, "nn.Softmax2d")
    .describe("softmax over the channels (dim -3)")
    .input("input")
    .flags(OpFlags::Pure)
    .typeRule(sameAsInput);
KC_REGISTER_OP(normalize_, "F.normalize")
    .describe("x / max(‖x‖_p along dim, eps)")
    .input("input")
    .attr("p", AttrValue::real(2.0))
    .attr("dim", AttrValue::integer(1))
    .attr("eps", AttrValue::real(1e-12))
    .flags(OpFlags::Pure)
    .typeRule(sameAsInput);
KC_REGISTER_OP(lrn_, "nn.LocalResponseNorm")
    .describe("x / (k + alpha/size · Σ x² over `size` neighbouring channels)^beta")
    .alias("F.local_response_norm")
    .input("input")
    .attr("size", AttrValue::integer(1), true)
    .attr("alpha", AttrValue::real(1e-4))
    .attr("beta", AttrValue::real(0.75))
    .attr("k", AttrValue::real(1.0))
    .flags(OpFlags::Pure)
    .typeRule(sameAsInput);

} // namespace

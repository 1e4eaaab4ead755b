//===- DegenerateShapeTest.cpp - Empty dims and edge-sized windows --------===//
//
// "Hostile input, round two", point 1: a zero-size dim anywhere, or a
// padding as large as its dim, runs and gives PyTorch's answer, or is
// refused by type inference, naming the op, where PyTorch refuses it. The
// expected values and messages' causes were printed by PyTorch 1.13.1
// (torchvision 0.14.1); values compare exactly.
//
//===----------------------------------------------------------------------===//
#include "TextModel.h"

#include "kc/IR/Padding.h"
#include "kc/Import/Importer.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

using namespace kc;
using namespace kc::test;

namespace {

/// `mode` and `pad` for F.pad, or a module call: its type error, or "".
std::string padError(const std::string &call, const std::string &shape) {
  return typeError(oneOp("%x: f32[" + shape + "]", call));
}

std::string fpad(const char *mode, const std::string &pads) {
  return "F.pad(%x) {mode=\"" + std::string(mode) + "\", pad=[" + pads + "]}";
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Type inference of a PNNX model (weights need no .bin for it).
std::string pnnxTypeError(const std::string &lines, int n) {
  std::string text = "7767517\n" + std::to_string(n) + " " + std::to_string(n) + "\n" + lines;
  auto m = importPnnxFromBuffer(text, "m.param", nullptr);
  if (!m)
    return llvm::toString(m.takeError());
  llvm::Error e = inferTypes(**m);
  return e ? llvm::toString(std::move(e)) : "";
}

} // namespace

TEST_CASE("padding: what PyTorch refuses, F.pad and the padding modules refuse alike") {
  struct Case {
    std::string call, shape, error; // "" when PyTorch pads it
  };
  const char *refl = "mode 'reflect' needs pads below the size of dim 2 of f32[";
  const Case cases[] = {
      // The hangs and the wrong result of the report: a reflection as large
      // as its dim, or of an empty dim.
      {"nn.ReflectionPad1d(%x) {padding=[3,1]}", "2,3,2", std::string(refl) + "2,3,2], got (3, 1)"},
      {"nn.ReflectionPad1d(%x) {padding=[1,1]}", "2,3,1", std::string(refl) + "2,3,1], got (1, 1)"},
      {fpad("reflect", "1,1"), "1,2,1", std::string(refl) + "1,2,1], got (1, 1)"},
      {"nn.ReflectionPad1d(%x) {padding=[0,0]}", "2,3,0",
       "cannot pad the empty dim 2 of f32[2,3,0] in mode 'reflect'"},
      {"nn.ReflectionPad2d(%x) {padding=[1]}", "1,2,4,0", "cannot pad the empty dim 3"},
      {"nn.ReflectionPad2d(%x) {padding=[1,1,2,0]}", "1,1,2,5", "got (2, 0)"},
      {fpad("reflect", "-1,-1"), "1,2,2", "leaves dim 2 of f32[1,2,2] with 0 elements"},
      {fpad("reflect", "-1,0"), "1,2,2", ""},
      {fpad("reflect", "2,2"), "1,2,3", ""},
      // Reflection lets an unbatched input's channels be empty, not a
      // batched one's; 3-d reflection, like replication, neither.
      {fpad("reflect", "1,1"), "0,3", ""},
      {fpad("reflect", "1,1"), "2,0,3", "cannot pad the empty dim 1 of f32[2,0,3]"},
      {fpad("reflect", "1,1,1,1"), "0,3,3", ""},
      {fpad("reflect", "1,1,1,1,1,1"), "0,3,3,3", "cannot pad the empty dim 0"},
      {fpad("reflect", "1,1"), "0,2,3", ""},
      // Replication: empty dims but the batch, and empty results.
      {"nn.ReplicationPad1d(%x) {padding=[0,4]}", "2,3,0",
       "cannot pad the empty dim 2 of f32[2,3,0] in mode 'replicate'"},
      {"nn.ReplicationPad2d(%x) {padding=[1,1,1,1]}", "1,0,3,3", "cannot pad the empty dim 1"},
      {"nn.ReplicationPad3d(%x) {padding=[1,1,1,1,1,1]}", "1,1,3,3,0", "empty dim 4"},
      {fpad("replicate", "1,1"), "0,3", "cannot pad the empty dim 0"},
      {fpad("replicate", "1,1"), "0,2,3", ""},
      {fpad("replicate", "3,1"), "1,2,1", ""},
      {fpad("replicate", "-1,0"), "1,2,1", "leaves dim 2 of f32[1,2,1] with 0 elements"},
      // Circular: at most one wrap, the batch and channels unpadded.
      {fpad("circular", "2,2"), "1,2,2", ""},
      {fpad("circular", "3,1"), "1,2,2", "mode 'circular' needs pads no larger than the size"},
      {fpad("circular", "-1,-1"), "1,2,1", "leaves dim 2 of f32[1,2,1] with -1 elements"},
      {fpad("circular", "1,1"), "2,3", "mode 'circular' pads every dim but the first two"},
      {fpad("circular", "0,0"), "1,2,0", ""},
      // Non-constant modes pad 1 to 3 trailing dims of 1 or 2 more.
      {fpad("reflect", "1,1"), "3", "pads 1 to 3 trailing dims"},
      {fpad("replicate", "1,1"), "1,2,3,3", "pads 1 to 3 trailing dims"},
      // Constant: crops may not remove more than a dim holds.
      {fpad("constant", "-3,1"), "1,2,3", ""},
      {fpad("constant", "-1,2"), "1,2,0", "padding (-1, 2) crops more than the 0 elements"},
      {fpad("constant", "-1,-1"), "1,2,1", "crops more than the 1 elements of dim 2"},
      {fpad("constant", "1,1,1,1,1,1,1,1"), "2,3", "8 pads for f32[2,3]"},
      {fpad("reflect", "1"), "2,3", "(before, after) pairs, got 1 value(s)"},
      {fpad("wrap", "1,1"), "2,3", "unknown pad mode 'wrap'"},
  };
  for (const Case &c : cases) {
    INFO(c.call << " on f32[" << c.shape << "]");
    std::string e = padError(c.call, c.shape);
    if (c.error.empty())
      CHECK(e == "");
    else
      CHECK_MESSAGE(has(e, c.error), e);
  }
}

TEST_CASE("padding: every mode reads PyTorch's elements, crops and whole folds included") {
  struct Case {
    const char *mode;
    int64_t before, after;
    std::vector<int64_t> shape;
    std::vector<float> want;
  };
  // F.pad(torch.arange(1., 7.).reshape(1, 2, 3), (before, after), mode).
  const Case cases[] = {
      {"reflect", 2, 2, {1, 2, 7}, {3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4}},
      {"reflect", -1, 2, {1, 2, 4}, {2, 3, 2, 1, 5, 6, 5, 4}},
      {"reflect", 2, -2, {1, 2, 3}, {3, 2, 1, 6, 5, 4}},
      {"replicate", 4, -1, {1, 2, 6}, {1, 1, 1, 1, 1, 2, 4, 4, 4, 4, 4, 5}},
      {"replicate", -2, 3, {1, 2, 4}, {3, 3, 3, 3, 6, 6, 6, 6}},
      {"circular", 3, 3, {1, 2, 9}, {1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6}},
      {"constant", -3, 1, {1, 2, 1}, {0, 0}},
      {"constant", 2, -1, {1, 2, 4}, {0, 0, 1, 2, 0, 0, 4, 5}},
  };
  rt::Tensor x = f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  for (const Case &c : cases) {
    INFO(c.mode << " (" << c.before << ", " << c.after << ")");
    std::string pads = std::to_string(c.before) + "," + std::to_string(c.after);
    TextRun r = runText(oneOp("%x: f32[1,2,3]", fpad(c.mode, pads)), {x});
    REQUIRE_MESSAGE(r.error == "", r.error);
    CHECK(r.outputs[0].shape() == llvm::ArrayRef<int64_t>(c.shape));
    CHECK(values(r.outputs[0]) == c.want);
  }
  // nn.ReflectionPad2d((2, 1, 1, -1)) and nn.ReplicationPad2d((1, 2, 1, 1))
  // of arange(1., 7.).reshape(1, 1, 2, 3).
  rt::Tensor x2 = f32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  TextRun r =
      runText(oneOp("%x: f32[1,1,2,3]", "nn.ReflectionPad2d(%x) {padding=[2,1,1,-1]}"), {x2});
  REQUIRE_MESSAGE(r.error == "", r.error);
  CHECK(values(r.outputs[0]) == std::vector<float>{6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2});
  r = runText(oneOp("%x: f32[1,1,2,3]", "nn.ReplicationPad2d(%x) {padding=[1,2,1,1]}"), {x2});
  REQUIRE_MESSAGE(r.error == "", r.error);
  CHECK(values(r.outputs[0]) ==
        std::vector<float>{1, 1, 2, 3, 3, 3, 1, 1, 2, 3, 3, 3, 4, 4, 5, 6, 6, 6, 4, 4, 5, 6, 6, 6});
}

TEST_CASE("padding: the source index is a closed form, in range for any position") {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  for (int64_t i : {INT64_MIN / 4, -(int64_t(1) << 40), int64_t(-7), int64_t(9), INT64_MAX / 4}) {
    INFO(i);
    for (int64_t size : {1, 2, 3, 1000}) {
      for (PadMode m : {PadMode::Reflect, PadMode::Replicate, PadMode::Circular}) {
        int64_t j = padSourceIndex(i, size, m);
        CHECK((j >= 0 && j < size));
      }
      CHECK(padSourceIndex(i, size, PadMode::Constant) == (i >= 0 && i < size ? i : -1));
    }
  }
  // The old kernel folded one period at a time: minutes for these.
  CHECK(clock::now() - t0 < std::chrono::seconds(1));
  CHECK(padSourceIndex(-1, 3, PadMode::Reflect) == 1);
  CHECK(padSourceIndex(5, 3, PadMode::Reflect) == 1);
  CHECK(padSourceIndex(-4, 3, PadMode::Circular) == 2);
}

TEST_CASE("empty dims: std and var give NaN, logsumexp -inf, norm 0 for every p") {
  struct Case {
    std::string call;
    float want;
  };
  const Case cases[] = {
      {"torch.var(%x) {dim=[1], unbiased=true, keepdim=false}", NAN},
      {"torch.var(%x) {dim=[1], unbiased=false, keepdim=false}", NAN},
      {"torch.std(%x) {dim=[1], unbiased=true, keepdim=false}", NAN},
      {"torch.logsumexp(%x) {dim=[1], keepdim=false}", -INFINITY},
      {"torch.norm(%x) {dim=[1], p=2, keepdim=false}", 0},
      {"torch.norm(%x) {dim=[1], p=1, keepdim=false}", 0},
      {"torch.norm(%x) {dim=[1], p=\"fro\", keepdim=false}", 0},
      {"torch.norm(%x) {dim=[1], p=\"inf\", keepdim=false}", 0},
      {"torch.norm(%x) {dim=[1], p=\"-inf\", keepdim=false}", 0},
      {"torch.norm(%x) {dim=[1], p=0.5, keepdim=false}", 0},
  };
  for (const Case &c : cases) {
    INFO(c.call);
    TextRun r = runText(oneOp("%x: f32[2,0]", c.call), {f32({2, 0}, {})});
    REQUIRE_MESSAGE(r.error == "", r.error);
    REQUIRE(r.outputs[0].numel() == 2);
    for (float v : values(r.outputs[0]))
      CHECK((std::isnan(c.want) ? std::isnan(v) : v == c.want));
  }
  // One element, unbiased: 0/0 too.
  TextRun r = runText(oneOp("%x: f32[2,1]", "torch.var(%x) {dim=[1], unbiased=true}"),
                      {f32({2, 1}, {3, 4})});
  REQUIRE_MESSAGE(r.error == "", r.error);
  CHECK(std::isnan(values(r.outputs[0])[0]));
}

TEST_CASE("empty dims: a maximum, minimum or arg of nothing is refused by type inference") {
  CHECK(has(typeError(oneOp("%x: f32[2,0]", "torch.max(%x) {dim=1}")),
            "t.kc:2:3: error: @main: torch.max: cannot reduce dim 1 of f32[2,0], which is empty"));
  CHECK(has(typeError(oneOp("%x: f32[2,0]", "torch.argmin(%x) {dim=-1}")), "cannot reduce dim 1"));
  CHECK(has(typeError(oneOp("%x: f32[2,0]", "torch.min(%x)")),
            "cannot reduce f32[2,0], which is empty"));
  CHECK(has(typeError(oneOp("%x: f32[2,0]", "torch.argmax(%x)")), "which is empty"));
  // A non-empty dim of an empty tensor: an empty result.
  CHECK(typeError(oneOp("%x: f32[2,0]", "torch.argmax(%x) {dim=0}")) == "");
}

TEST_CASE("empty dims: torchvision's and attention's shape contracts hold at type inference") {
  // RoIAlign samples outside an image without rows or columns.
  std::string roi = "pnnx.Input in 0 1 0 #0=(1,3,0,8)f32\npnnx.Input b 0 1 1 #1=(2,5)f32\n"
                    "torchvision.ops.RoIAlign r 2 1 0 1 2 aligned=True output_size=(2,3) "
                    "sampling_ratio=2 spatial_scale=0.5\npnnx.Output out 1 0 2\n";
  CHECK(has(pnnxTypeError(roi, 4),
            "m.param:5:1: error: @main: torchvision.ops.RoIAlign 'r': dim 2 of the input "
            "f32[1,3,0,8] is empty: torchvision would sample outside it"));
  // DeformConv2d: the offset's batch is the input's (torchvision: "invalid
  // batch size of offset"), the mask's too.
  std::string deform = "pnnx.Input in 0 1 0 #0=(1,2,5,5)f32\npnnx.Input o 0 1 1 #1=(0,18,5,5)f32\n"
                       "torchvision.ops.DeformConv2d d 2 1 0 1 2 bias=False dilation=(1,1) "
                       "groups=1 in_channels=2 kernel_size=(3,3) out_channels=3 padding=(1,1) "
                       "stride=(1,1) @weight=(3,2,3,3)f32\npnnx.Output out 1 0 2\n";
  CHECK(has(pnnxTypeError(deform, 4),
            "DeformConv2d 'd': the offset's batch 0 is not the input's 1: offset f32[0,18,5,5], "
            "input f32[1,2,5,5], weight f32[3,2,3,3]"));
  std::string masked = "pnnx.Input in 0 1 0 #0=(1,2,5,5)f32\npnnx.Input o 0 1 1 #1=(1,18,5,5)f32\n"
                       "pnnx.Input m 0 1 2 #2=(0,9,5,5)f32\n"
                       "torchvision.ops.DeformConv2d d 3 1 0 1 2 3 bias=False dilation=(1,1) "
                       "groups=1 in_channels=2 kernel_size=(3,3) out_channels=3 padding=(1,1) "
                       "stride=(1,1) @weight=(3,2,3,3)f32\npnnx.Output out 1 0 3\n";
  CHECK(has(pnnxTypeError(masked, 5), "the mask's batch 0 is not the input's 1"));
  std::string offsetSize = "pnnx.Input in 0 1 0 #0=(1,2,5,5)f32\n"
                           "pnnx.Input o 0 1 1 #1=(1,16,5,5)f32\n"
                           "torchvision.ops.DeformConv2d d 2 1 0 1 2 bias=False dilation=(1,1) "
                           "groups=1 in_channels=2 kernel_size=(3,3) out_channels=3 "
                           "padding=(1,1) stride=(1,1) @weight=(3,2,3,3)f32\n"
                           "pnnx.Output out 1 0 2\n";
  CHECK(has(pnnxTypeError(offsetSize, 4), "the offset's channels are not 2·kh·kw"));
  // MultiheadAttention: keys of another batch than the queries' ...
  std::string mha = "pnnx.Input q 0 1 0 #0=(2,4,8)f32\npnnx.Input k 0 1 1 #1=(0,3,8)f32\n"
                    "nn.MultiheadAttention a 2 1 0 1 2 add_bias_kv=False add_zero_attn=False "
                    "batch_first=True bias=True embed_dim=8 kdim=8 num_heads=4 vdim=8 "
                    "@in_proj_bias=(24)f32 @in_proj_weight=(24,8)f32 @out_proj.bias=(8)f32 "
                    "@out_proj.weight=(8,8)f32\npnnx.Output out 1 0 2\n";
  CHECK(has(pnnxTypeError(mha, 4),
            "nn.MultiheadAttention 'a': key's batch 0 is not the query's 2: query f32[2,4,8], key "
            "f32[0,3,8], value f32[0,3,8]"));
  // ... unless there are no keys at all, which PyTorch accepts.
  std::string noKeys = mha;
  noKeys.replace(noKeys.find("(0,3,8)"), 7, "(1,0,8)");
  CHECK(pnnxTypeError(noKeys, 4) == "");
  // grid_sample of an input with an empty spatial dim.
  CHECK(has(typeError(oneOp("%x: f32[1,1,0,4], %g: f32[1,2,2,2]",
                            "F.grid_sample(%x, %g) {mode=\"bilinear\", padding_mode=\"zeros\", "
                            "align_corners=false}")),
            "dim 2 of the input f32[1,1,0,4] is empty"));
}

TEST_CASE("reshape: an inferred -1 must divide the elements exactly, as in PyTorch") {
  CHECK(has(typeError(oneOp("%x: f32[2,3]", "Tensor.reshape(%x) {shape=[9223372036854775807,-1]}")),
            "Tensor.reshape: cannot reshape f32[2,3] into shape [9223372036854775807,-1]"));
  CHECK(has(typeError(oneOp("%x: f32[6]", "Tensor.reshape(%x) {shape=[4,-1]}")),
            "cannot reshape f32[6] into shape [4,-1]"));
  CHECK(has(typeError(oneOp("%x: f32[0]", "Tensor.reshape(%x) {shape=[3,0,-1]}")),
            "with a 0, the -1 could be any size"));
  CHECK(typeError("fn @main(%x: f32[6]) -> ? {\n  %0 = Tensor.reshape(%x) {shape=[3,-1]} : "
                  "f32[3,2]\n  return %0\n}\n") == "");
  CHECK(typeError("fn @main(%x: f32[0]) -> ? {\n  %0 = Tensor.reshape(%x) {shape=[5,-1]} : "
                  "f32[5,0]\n  return %0\n}\n") == "");
}

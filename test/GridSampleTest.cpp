//===- GridSampleTest.cpp - grid_sample at NaN, infinite and huge points -===//
//
// F.grid_sample converts sample positions to indices; kc does so without
// undefined behaviour (kc/Support/FloatToInt.h) and, where PyTorch 1.13's
// CPU samplers define a sample at a NaN, infinite or huge grid point, gives
// theirs (lib/Runtime/kernels/GridCoords.h). The table below was printed by
// PyTorch 1.13.1; samples compare within 1e-5 + 1e-5·|b|, NaN with NaN.
//
//===----------------------------------------------------------------------===//
#include "TextModel.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace kc;

namespace {

struct GridCase {
  int rank;
  const char *mode, *padding;
  bool align;
  std::vector<float> want;
};

// F.grid_sample of arange(1., 13.).reshape(1, 1, 3, 4) at kGrid2 (x, y
// pairs, as a (1, 1, 24, 2) grid) and of arange(1., 25.).reshape(1, 1, 2,
// 3, 4) at kGrid3 (x, y, z triples, as a (1, 1, 1, 24, 3) grid): each of
// NaN, +-inf, +-1e30, 3e9 and two ordinary values in one coordinate, then
// in another, then in all.
// clang-format off
const float kGrid2[] = {
    NAN, 0.3f, 0.2f, NAN, NAN, NAN, INFINITY, 0.3f, 0.2f, INFINITY, INFINITY, INFINITY, -INFINITY,
    0.3f, 0.2f, -INFINITY, -INFINITY, -INFINITY, 1e+30f, 0.3f, 0.2f, 1e+30f, 1e+30f, 1e+30f,
    -1e+30f, 0.3f, 0.2f, -1e+30f, -1e+30f, -1e+30f, 3e+09f, 0.3f, 0.2f, 3e+09f, 3e+09f, 3e+09f,
    -0.4f, 0.3f, 0.2f, -0.4f, -0.4f, -0.4f, 0.95f, 0.3f, 0.2f, 0.95f, 0.95f, 0.95f};
const float kGrid3[] = {
    NAN, 0.3f, 0.1f, 0.2f, NAN, -0.6f, 0.5f, 0.4f, NAN, INFINITY, 0.3f, 0.1f, 0.2f, INFINITY,
    -0.6f, 0.5f, 0.4f, INFINITY, -INFINITY, 0.3f, 0.1f, 0.2f, -INFINITY, -0.6f, 0.5f, 0.4f,
    -INFINITY, 1e+30f, 0.3f, 0.1f, 0.2f, 1e+30f, -0.6f, 0.5f, 0.4f, 1e+30f, -1e+30f, 0.3f, 0.1f,
    0.2f, -1e+30f, -0.6f, 0.5f, 0.4f, -1e+30f, 3e+09f, 0.3f, 0.1f, 0.2f, 3e+09f, -0.6f, 0.5f,
    0.4f, 3e+09f, -0.4f, 0.3f, 0.1f, 0.2f, -0.4f, -0.6f, 0.5f, 0.4f, -0.4f, 0.95f, 0.3f, 0.1f,
    0.2f, 0.95f, -0.6f, 0.5f, 0.4f, 0.95f};
const GridCase kGridCases[] = {
    {4, "bilinear", "zeros", false,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 7.49999952f, 4.5f, 3.30000019f, 5.87999916f, 6.26749802f, 4.13999796f}},
    {4, "bilinear", "zeros", true,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 7.0999999f, 5.20000029f, 4.30000019f, 9.125f, 10.6000004f, 11.7250004f}},
    {4, "bilinear", "border", false,
     {6.79999971f, 2.9000001f, 1.0f, 9.79999924f, 10.8999996f, 12.0f, 6.79999971f, 2.9000001f,
      1.0f, 9.79999924f, 10.8999996f, 12.0f, 6.79999971f, 2.9000001f, 1.0f, 9.79999924f,
      10.8999996f, 12.0f, 7.49999952f, 4.5f, 3.30000019f, 9.79999924f, 10.8999996f, 12.0f}},
    {4, "bilinear", "border", true,
     {6.19999981f, 2.80000019f, 1.0f, 9.19999981f, 10.8000002f, 12.0f, 6.19999981f, 2.80000019f,
      1.0f, 9.19999981f, 10.8000002f, 12.0f, 6.19999981f, 2.80000019f, 1.0f, 9.19999981f,
      10.8000002f, 12.0f, 7.0999999f, 5.20000029f, 4.30000019f, 9.125f, 10.6000004f, 11.7250004f}},
    {4, "bilinear", "reflection", false,
     {6.79999971f, 2.9000001f, 1.0f, 6.79999971f, 2.9000001f, 1.0f, 6.79999971f, 2.9000001f, 1.0f,
      6.79999971f, 2.9000001f, 1.0f, 6.79999971f, 2.9000001f, 1.0f, 6.79999971f, 2.9000001f, 1.0f,
      7.49999952f, 4.5f, 3.30000019f, 9.79999924f, 10.8999996f, 12.0f}},
    {4, "bilinear", "reflection", true,
     {6.19999981f, 2.80000019f, 1.0f, 6.19999981f, 2.80000019f, 1.0f, 6.19999981f, 2.80000019f,
      1.0f, 6.19999981f, 2.80000019f, 1.0f, 6.19999981f, 2.80000019f, 1.0f, 6.19999981f,
      2.80000019f, 1.0f, 7.0999999f, 5.20000029f, 4.30000019f, 9.125f, 10.6000004f, 11.7250004f}},
    {4, "nearest", "zeros", false,
     {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 0.0f, 0.0f, 6.0f, 3.0f, 2.0f, 8.0f, 11.0f, 12.0f}},
    {4, "nearest", "zeros", true,
     {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 0.0f, 0.0f, 6.0f, 7.0f, 6.0f, 8.0f, 11.0f, 12.0f}},
    {4, "nearest", "border", false,
     {5.0f, 3.0f, 1.0f, 8.0f, 11.0f, 12.0f, 5.0f, 3.0f, 1.0f, 8.0f, 11.0f, 12.0f, 5.0f, 3.0f,
      1.0f, 8.0f, 11.0f, 12.0f, 6.0f, 3.0f, 2.0f, 8.0f, 11.0f, 12.0f}},
    {4, "nearest", "border", true,
     {5.0f, 3.0f, 1.0f, 8.0f, 11.0f, 12.0f, 5.0f, 3.0f, 1.0f, 8.0f, 11.0f, 12.0f, 5.0f, 3.0f,
      1.0f, 8.0f, 11.0f, 12.0f, 6.0f, 7.0f, 6.0f, 8.0f, 11.0f, 12.0f}},
    {4, "nearest", "reflection", false,
     {5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f,
      5.0f, 3.0f, 1.0f, 6.0f, 3.0f, 2.0f, 8.0f, 11.0f, 12.0f}},
    {4, "nearest", "reflection", true,
     {5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f, 5.0f, 3.0f, 1.0f,
      5.0f, 3.0f, 1.0f, 6.0f, 7.0f, 6.0f, 8.0f, 11.0f, 12.0f}},
    {4, "bicubic", "zeros", false,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 8.97212124f, 4.4373126f, 3.16078877f, 6.96284866f, 6.76790333f, 4.61117315f}},
    {4, "bicubic", "zeros", true,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 7.92713642f, 4.96614265f, 4.0278163f, 10.5522366f, 10.9657593f, 12.7875986f}},
    {4, "bicubic", "border", false,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 10.1836281f, 10.8640013f, 12.0f, 7.18362713f,
      2.8640008f, 1.0f, 10.1836281f, 10.8640013f, 12.0f, 7.79437876f, 4.12799978f, 2.87475038f,
      10.291626f, 11.2855492f, 12.5295458f}},
    {4, "bicubic", "border", true,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 9.55700016f, 10.7519989f, 12.0f, 6.55699921f,
      2.75199938f, 1.0f, 9.55700016f, 10.7519989f, 12.0f, 7.4142499f, 4.76799822f, 3.87324929f,
      9.50064278f, 10.6018734f, 11.7935171f}},
    {4, "bicubic", "reflection", false,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 7.18362713f, 2.8640008f, 1.0f, 7.18362713f,
      2.8640008f, 1.0f, 7.18362713f, 2.8640008f, 1.0f, 7.79437876f, 4.12799978f, 2.87475038f,
      10.3636255f, 11.597127f, 12.9131241f}},
    {4, "bicubic", "reflection", true,
     {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 6.74599934f, 2.75199938f, 1.0f, 6.74599934f,
      2.75199938f, 1.0f, 6.74599934f, 2.75199938f, 1.0f, 7.5965004f, 4.47999716f, 3.57849813f,
      9.73777294f, 10.7372475f, 11.9770203f}},
    {5, "bilinear", "zeros", false,
     {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 0.0f, 0.0f, 14.6999998f, 4.05000019f, 11.1000013f, 10.1999989f, 5.64074802f,
      12.0449982f}},
    {5, "bilinear", "zeros", true,
     {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 0.0f, 0.0f, 13.6999998f, 7.59999943f, 12.4499998f, 15.7249994f, 13.0f, 20.5499992f}},
    {5, "bilinear", "border", false,
     {17.0f, 10.9000006f, 21.8999996f, 17.0f, 10.9000006f, 21.8999996f, 14.0f, 2.9000001f,
      9.89999962f, 17.0f, 10.9000006f, 21.8999996f, 14.0f, 2.9000001f, 9.89999962f, 17.0f,
      10.9000006f, 21.8999996f, 14.6999998f, 4.5f, 11.1000013f, 17.0f, 10.9000006f, 21.8999996f}},
    {5, "bilinear", "border", true,
     {15.7999992f, 13.2000008f, 20.8500004f, 15.7999992f, 13.2000008f, 20.8500004f, 12.8000002f,
      5.19999981f, 8.85000038f, 15.7999992f, 13.2000008f, 20.8500004f, 12.8000002f, 5.19999981f,
      8.85000038f, 15.7999992f, 13.2000008f, 20.8500004f, 13.6999998f, 7.59999943f, 12.4499998f,
      15.7249994f, 13.0f, 20.5499992f}},
    {5, "bilinear", "reflection", false,
     {17.0f, 10.9000006f, 21.8999996f, 17.0f, 10.9000006f, 21.8999996f, 17.0f, 10.9000006f,
      21.8999996f, 14.0f, 4.9000001f, 9.89999962f, 14.0f, 4.9000001f, 9.89999962f, 14.0f,
      8.90000057f, 9.89999962f, 14.6999998f, 4.5f, 11.1000013f, 17.0f, 10.9000006f, 21.8999996f}},
    {5, "bilinear", "reflection", true,
     {15.7999992f, 13.2000008f, 20.8500004f, 15.7999992f, 13.2000008f, 20.8500004f, 15.7999992f,
      13.2000008f, 20.8500004f, 13.7999992f, 5.19999981f, 8.85000038f, 13.7999992f, 5.19999981f,
      8.85000038f, 14.8000002f, 5.19999981f, 8.85000038f, 13.6999998f, 7.59999943f, 12.4499998f,
      15.7249994f, 13.0f, 20.5499992f}},
    {5, "nearest", "zeros", false,
     {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 0.0f, 0.0f, 18.0f, 3.0f, 12.0f, 20.0f, 11.0f, 24.0f}},
    {5, "nearest", "zeros", true,
     {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
      0.0f, 0.0f, 0.0f, 18.0f, 7.0f, 7.0f, 20.0f, 11.0f, 19.0f}},
    {5, "nearest", "border", false,
     {20.0f, 11.0f, 24.0f, 20.0f, 11.0f, 24.0f, 17.0f, 3.0f, 12.0f, 20.0f, 11.0f, 24.0f, 17.0f,
      3.0f, 12.0f, 20.0f, 11.0f, 24.0f, 18.0f, 3.0f, 12.0f, 20.0f, 11.0f, 24.0f}},
    {5, "nearest", "border", true,
     {20.0f, 11.0f, 19.0f, 20.0f, 11.0f, 19.0f, 17.0f, 3.0f, 7.0f, 20.0f, 11.0f, 19.0f, 17.0f,
      3.0f, 7.0f, 20.0f, 11.0f, 19.0f, 18.0f, 7.0f, 7.0f, 20.0f, 11.0f, 19.0f}},
    {5, "nearest", "reflection", false,
     {20.0f, 11.0f, 24.0f, 20.0f, 11.0f, 24.0f, 20.0f, 11.0f, 24.0f, 17.0f, 7.0f, 12.0f, 17.0f,
      7.0f, 12.0f, 17.0f, 11.0f, 12.0f, 18.0f, 3.0f, 12.0f, 20.0f, 11.0f, 24.0f}},
    {5, "nearest", "reflection", true,
     {20.0f, 11.0f, 19.0f, 20.0f, 11.0f, 19.0f, 20.0f, 11.0f, 19.0f, 18.0f, 3.0f, 7.0f, 18.0f,
      3.0f, 7.0f, 19.0f, 3.0f, 7.0f, 18.0f, 7.0f, 7.0f, 20.0f, 11.0f, 19.0f}},
};

// clang-format on

/// |a - b| <= 1e-5 + 1e-5·|b|, NaN matching NaN only.
bool close(float a, float b) {
  if (std::isnan(b) || std::isnan(a))
    return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= 1e-5f + 1e-5f * std::fabs(b);
}

} // namespace

TEST_CASE("grid_sample: gives PyTorch's samples at NaN, infinite and huge points") {
  rt::Tensor x4 = rt::Tensor::empty(DType::F32, {1, 1, 3, 4});
  rt::Tensor x5 = rt::Tensor::empty(DType::F32, {1, 1, 2, 3, 4});
  for (int i = 0; i < 24; ++i)
    x5.data<float>()[i] = float(i + 1), x4.data<float>()[i % 12] = float(i % 12 + 1);
  for (const GridCase &c : kGridCases) {
    INFO(c.rank << "-d " << std::string(c.mode) << " " << std::string(c.padding)
                << " align_corners=" << c.align);
    bool v = c.rank == 5;
    rt::Tensor g = rt::Tensor::empty(DType::F32, v ? std::vector<int64_t>{1, 1, 1, 24, 3}
                                                   : std::vector<int64_t>{1, 1, 24, 2});
    std::memcpy(g.raw(), v ? kGrid3 : kGrid2, g.nbytes());
    std::string text =
        std::string("fn @main(%x: f32[") + (v ? "1,1,2,3,4" : "1,1,3,4") + "], %g: f32[" +
        (v ? "1,1,1,24,3" : "1,1,24,2") + "]) -> ? {\n  %0 = F.grid_sample(%x, %g) {mode=\"" +
        c.mode + "\", padding_mode=\"" + c.padding +
        "\", align_corners=" + (c.align ? "true" : "false") + "} : ?\n  return %0\n}\n";
    test::TextRun r = test::runText(text, {v ? x5 : x4, g});
    REQUIRE_MESSAGE(r.error == "", r.error);
    std::vector<float> got = test::values(r.outputs[0]);
    REQUIRE(got.size() == c.want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("point " << i << ": " << got[i] << " vs " << c.want[i]);
      // 5-d reflection of +-1e30 and 3e9 (points 9 to 17) lands where the
      // rounding of the unnormalization puts it (GridCoords.h): some input
      // element, here between 1 and 24.
      if (v && std::string(c.padding) == "reflection" && i >= 9 && i < 18)
        CHECK((got[i] >= 1 && got[i] <= 24));
      else
        CHECK(close(got[i], c.want[i]));
    }
  }
}

//===- ArmadilloTest.cpp - kc tensors as Armadillo cubes and matrices -----===//
//
// kc/Runtime/Armadillo.h: the memory-order views share the tensor's bytes
// and place each element where the layout rule says; the shape-order
// conversions copy and transpose the planes; and a 1x1 convolution run by
// kc agrees with the same product computed by Armadillo on views of kc's
// own tensors.
//
//===----------------------------------------------------------------------===//
#include "kc/Runtime/Armadillo.h"
#include "kc/IR/Expr.h"
#include "kc/IR/Module.h"
#include "kc/IR/TensorData.h"
#include "kc/IR/TypeInference.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>

#include <cstring>
#include <random>

using namespace kc;
using namespace kc::rt;
namespace ai = kc::rt::arma_interop;

namespace {

/// A [dims] f32 tensor holding 0, 1, 2, ... in row-major order.
Tensor iota(llvm::ArrayRef<int64_t> dims) {
  Tensor t = Tensor::empty(DType::F32, dims);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = float(i);
  return t;
}

} // namespace

TEST_CASE("armadillo: a [C,H,W] tensor is a W x H x C cube, sharing its bytes") {
  const int64_t C = 2, H = 3, W = 4;
  Tensor t = iota({C, H, W});
  auto cube = ai::cubeView(t);
  REQUIRE(bool(cube));
  CHECK(cube->n_rows == W);
  CHECK(cube->n_cols == H);
  CHECK(cube->n_slices == C);
  CHECK(cube->memptr() == t.data<float>());
  for (int64_t c = 0; c < C; ++c)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        CHECK((*cube)(w, h, c) == float((c * H + h) * W + w));
  // Writes go to the tensor.
  (*cube)(3, 2, 1) = -5.f;
  CHECK(t.data<float>()[(1 * H + 2) * W + 3] == -5.f);

  // A batch of one is a cube too; a batch of two, or another dtype, is not.
  CHECK(bool(ai::cubeView(t.reshaped({1, C, H, W}))));
  auto batch = ai::cubeView(iota({2, 1, 2, 2}));
  REQUIRE_FALSE(bool(batch));
  CHECK(llvm::toString(batch.takeError()) ==
        "a cube holds a [C, H, W] or [1, C, H, W] tensor, got [2,1,2,2]");
  auto ints = ai::cubeView(Tensor::empty(DType::I64, {1, 2, 2}));
  REQUIRE_FALSE(bool(ints));
  CHECK(llvm::toString(ints.takeError()) == "Armadillo conversions take f32 tensors, got i64");
}

TEST_CASE("armadillo: a [H,W] tensor is the W x H matrix, a [N] tensor an N x 1 column") {
  Tensor t = iota({3, 5});
  auto m = ai::matView(t);
  REQUIRE(bool(m));
  CHECK(m->n_rows == 5);
  CHECK(m->n_cols == 3);
  CHECK(m->memptr() == t.data<float>());
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t w = 0; w < 5; ++w)
      CHECK((*m)(w, h) == float(h * 5 + w));
  Tensor v = iota({7});
  auto col = ai::matView(v);
  REQUIRE(bool(col));
  CHECK(col->n_rows == 7);
  CHECK(col->n_cols == 1);
  CHECK((*col)(6, 0) == 6.f);
  CHECK_FALSE(bool(ai::matView(iota({1, 2, 3}))));
}

TEST_CASE("armadillo: cubes and matrices as tensors, viewed or taken over") {
  arma::Cube<float> cube(4, 5, 6); // 120 elements: held on the heap
  for (arma::uword i = 0; i < cube.n_elem; ++i)
    cube[i] = float(i) * 0.5f;
  Tensor view = ai::tensorView(cube);
  CHECK(view.shape() == llvm::ArrayRef<int64_t>({6, 5, 4}));
  CHECK(view.data<float>() == cube.memptr());

  const float *bytes = cube.memptr();
  Tensor owned = ai::adoptCube(std::move(cube));
  CHECK(owned.data<float>() == bytes); // the same allocation, moved
  cube.reset();                        // the moved-from cube no longer holds it
  for (int64_t i = 0; i < owned.numel(); ++i)
    CHECK(owned.data<float>()[i] == float(i) * 0.5f);

  arma::Mat<float> mat(2, 3, arma::fill::ones);
  mat(1, 2) = 9.f;
  Tensor fromMat = ai::adoptMat(std::move(mat));
  CHECK(fromMat.shape() == llvm::ArrayRef<int64_t>({3, 2}));
  CHECK(fromMat.data<float>()[2 * 2 + 1] == 9.f); // element (1, 2) is t[2, 1]
}

TEST_CASE("armadillo: shape-order copies transpose each plane, and round-trip") {
  const int64_t C = 3, H = 2, W = 5;
  Tensor t = iota({C, H, W});
  auto cube = ai::toCube(t);
  REQUIRE(bool(cube));
  CHECK(cube->n_rows == H);
  CHECK(cube->n_cols == W);
  CHECK(cube->n_slices == C);
  CHECK(cube->memptr() != t.data<float>());
  for (int64_t c = 0; c < C; ++c)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        CHECK((*cube)(h, w, c) == float((c * H + h) * W + w));
  Tensor back = ai::fromCube(*cube);
  CHECK(back.shape() == t.shape());
  CHECK(std::memcmp(back.raw(), t.raw(), t.nbytes()) == 0);

  Tensor m = iota({4, 3});
  auto mat = ai::toMat(m);
  REQUIRE(bool(mat));
  CHECK(mat->n_rows == 4);
  CHECK(mat->n_cols == 3);
  CHECK((*mat)(3, 1) == float(3 * 3 + 1));
  Tensor mback = ai::fromMat(*mat);
  CHECK(std::memcmp(mback.raw(), m.raw(), m.nbytes()) == 0);
}

TEST_CASE("armadillo: a 1x1 convolution by kc equals Armadillo's product on shared views") {
  // y[o, p] = sum_c w[o, c] x[c, p] + b[o] over the H*W positions p. In
  // memory order x [C, HW] is the HW x C matrix xᵀ and w [O, C] is wᵀ, so
  // xᵀ·wᵀ = (w·x)ᵀ is, in memory order, the [O, HW] result.
  const int64_t C = 6, O = 5, H = 4, W = 7;
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Tensor x = Tensor::empty(DType::F32, {1, C, H, W});
  Tensor w = Tensor::empty(DType::F32, {O, C, 1, 1});
  Tensor b = Tensor::empty(DType::F32, {O});
  for (Tensor *t : {&x, &w, &b})
    for (int64_t i = 0; i < t->numel(); ++i)
      t->data<float>()[i] = u(rng);

  auto constant = [](const std::string &name, const Tensor &t) {
    std::vector<uint8_t> bytes(t.nbytes());
    std::memcpy(bytes.data(), t.raw(), bytes.size());
    return tensorConstant(name, tensorType(DType::F32, t.shape()),
                          TensorData::owned(std::move(bytes)));
  };
  Var in = var("x", tensorType(DType::F32, x.shape()));
  Attrs attrs{{"in_channels", AttrValue::integer(C)},
              {"out_channels", AttrValue::integer(O)},
              {"kernel_size", AttrValue::intList({1, 1})}};
  Call conv =
      call("nn.Conv2d", {in, constant("c.weight", w), constant("c.bias", b)}, std::move(attrs),
           {ArgKey{}, {ArgRole::Weight, "weight"}, {ArgRole::Weight, "bias"}}, "c");
  auto m = std::make_shared<Module>();
  m->add(make<const FunctionNode>("main", std::vector<Var>{in}, Expr(conv), Type(), false));
  llvm::Error e = inferTypes(*m);
  REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  auto cm = CompiledModel::compile(*m);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  auto y = (*cm)->run({x});
  REQUIRE_MESSAGE(bool(y), (y ? "" : llvm::toString(y.takeError())));

  auto xt = ai::matView(x.reshaped({C, H * W})); // HW x C, x's bytes
  auto wt = ai::matView(w.reshaped({O, C}));     // C x O, w's bytes
  auto bias = ai::matView(b);                    // O x 1, b's bytes
  REQUIRE((xt && wt && bias));
  CHECK(xt->memptr() == x.data<float>());
  arma::Mat<float> product = *xt * *wt;
  product.each_row() += bias->t();
  Tensor ref = ai::adoptMat(std::move(product));
  REQUIRE(ref.shape() == llvm::ArrayRef<int64_t>({O, H * W}));
  const Tensor &got = (*y)[0];
  REQUIRE(got.numel() == ref.numel());
  for (int64_t i = 0; i < got.numel(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(got.data<float>()[i] - ref.data<float>()[i]) <=
          1e-5 + 1e-5 * std::abs(ref.data<float>()[i]));
  }
}

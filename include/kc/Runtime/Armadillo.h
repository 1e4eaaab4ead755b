//===- kc/Runtime/Armadillo.h - kc tensors as Armadillo objects -*- C++ -*-===//
///
/// \file
/// Conversions between kc's f32 tensors and Armadillo's `Cube<float>` and
/// `Mat<float>`, for code that holds tensors the way KuiperInfer does (one
/// `arma::fcube` of rows × cols × channels per feature map).
///
/// Armadillo stores columns contiguously, kc rows: a kc `[H, W]` tensor has
/// the bytes of the W × H matrix that is its transpose, and a `[C, H, W]`
/// tensor those of a W × H × C cube whose slices are its planes transposed.
/// In that *memory order* the conversions share the bytes, no copy:
///
/// | kc tensor            | Armadillo, memory order (shared bytes)     |
/// |----------------------|--------------------------------------------|
/// | `[N]`                | `Mat` N × 1                                |
/// | `[H, W]`             | `Mat` W × H (element (w, h) is t[h, w])     |
/// | `[C, H, W]`, `[1, C, H, W]` | `Cube` W × H × C (element (w, h, c) is t[c, h, w]) |
///
/// In *shape order*, KuiperInfer's, element (h, w, c) of an H × W × C cube is
/// t[c, h, w]: each plane must be transposed, so those conversions copy.
///
/// The views follow Tensor::view's rule: the bytes belong to the tensor (or
/// to the Armadillo object) and must outlive the view; `adoptCube`/`adoptMat`
/// take the Armadillo object over instead (a move; Armadillo keeps objects of
/// up to 64 elements inside the object, and those few bytes are copied).
///
/// Header-only, so Armadillo is needed only by code that includes it, built
/// with that code's Armadillo configuration; kc itself does not link it.
/// The functions throw nothing: shapes and dtypes they cannot map are errors.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/Tensor.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <armadillo>

#include <array>
#include <memory>
#include <utility>

namespace kc::rt::arma_interop {

namespace detail {

inline llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// The dims of `t` as [C, H, W]: rank 3, or rank 4 with a batch of 1.
inline llvm::Expected<std::array<int64_t, 3>> planes(const Tensor &t) {
  if (t.dtype() != DType::F32)
    return error("Armadillo conversions take f32 tensors, got " + dtypeName(t.dtype()));
  if (t.rank() == 3)
    return std::array<int64_t, 3>{t.dim(0), t.dim(1), t.dim(2)};
  if (t.rank() == 4 && t.dim(0) == 1)
    return std::array<int64_t, 3>{t.dim(1), t.dim(2), t.dim(3)};
  return error("a cube holds a [C, H, W] or [1, C, H, W] tensor, got " + shapeToString(t.shape()));
}

/// The dims of `t` as [H, W]: rank 2, or rank 1 as [N] → N × 1.
inline llvm::Expected<std::array<int64_t, 2>> matrix(const Tensor &t) {
  if (t.dtype() != DType::F32)
    return error("Armadillo conversions take f32 tensors, got " + dtypeName(t.dtype()));
  if (t.rank() == 2)
    return std::array<int64_t, 2>{t.dim(0), t.dim(1)};
  if (t.rank() == 1)
    return std::array<int64_t, 2>{1, t.dim(0)};
  return error("a matrix holds a [H, W] or [N] tensor, got " + shapeToString(t.shape()));
}

} // namespace detail

/// The bytes of a [C, H, W] (or [1, C, H, W]) tensor as a W × H × C cube,
/// no copy; the cube is bound to them (it cannot be resized).
inline llvm::Expected<arma::Cube<float>> cubeView(const Tensor &t) {
  auto d = detail::planes(t);
  if (!d)
    return d.takeError();
  auto [C, H, W] = *d;
  return arma::Cube<float>(t.data<float>(), arma::uword(W), arma::uword(H), arma::uword(C),
                           /*copy_aux_mem=*/false, /*strict=*/true);
}

/// The bytes of a [H, W] tensor as a W × H matrix ([N]: N × 1), no copy.
inline llvm::Expected<arma::Mat<float>> matView(const Tensor &t) {
  auto d = detail::matrix(t);
  if (!d)
    return d.takeError();
  auto [H, W] = *d;
  return arma::Mat<float>(t.data<float>(), arma::uword(W), arma::uword(H),
                          /*copy_aux_mem=*/false, /*strict=*/true);
}

/// The bytes of a rows × cols × slices cube as a [slices, cols, rows]
/// tensor, no copy; `cube` must outlive the tensor and keep its size.
inline Tensor tensorView(const arma::Cube<float> &cube) {
  return Tensor::view(DType::F32,
                      {int64_t(cube.n_slices), int64_t(cube.n_cols), int64_t(cube.n_rows)},
                      const_cast<float *>(cube.memptr()));
}

/// The bytes of a rows × cols matrix as a [cols, rows] tensor, no copy.
inline Tensor tensorView(const arma::Mat<float> &mat) {
  return Tensor::view(DType::F32, {int64_t(mat.n_cols), int64_t(mat.n_rows)},
                      const_cast<float *>(mat.memptr()));
}

/// Takes `cube` over: a [slices, cols, rows] tensor that owns it.
inline Tensor adoptCube(arma::Cube<float> &&cube) {
  auto owner = std::make_shared<arma::Cube<float>>(std::move(cube));
  Tensor t = tensorView(*owner);
  return Tensor::view(DType::F32, t.shape(), t.raw(), owner);
}

/// Takes `mat` over: a [cols, rows] tensor that owns it.
inline Tensor adoptMat(arma::Mat<float> &&mat) {
  auto owner = std::make_shared<arma::Mat<float>>(std::move(mat));
  Tensor t = tensorView(*owner);
  return Tensor::view(DType::F32, t.shape(), t.raw(), owner);
}

/// A copy in shape order: element (h, w, c) of the H × W × C cube is t[c, h, w].
inline llvm::Expected<arma::Cube<float>> toCube(const Tensor &t) {
  auto view = cubeView(t);
  if (!view)
    return view.takeError();
  arma::Cube<float> cube(view->n_cols, view->n_rows, view->n_slices);
  for (arma::uword c = 0; c < view->n_slices; ++c)
    cube.slice(c) = view->slice(c).t();
  return cube;
}

/// A copy in shape order: element (h, w) of the H × W matrix is t[h, w]
/// ([N]: a 1 × N row).
inline llvm::Expected<arma::Mat<float>> toMat(const Tensor &t) {
  auto view = matView(t);
  if (!view)
    return view.takeError();
  return arma::Mat<float>(view->t());
}

/// A [C, H, W] tensor from an H × W × C cube in shape order (a copy).
inline Tensor fromCube(const arma::Cube<float> &cube) {
  Tensor t = Tensor::empty(DType::F32,
                           {int64_t(cube.n_slices), int64_t(cube.n_rows), int64_t(cube.n_cols)});
  arma::Cube<float> out(t.data<float>(), cube.n_cols, cube.n_rows, cube.n_slices,
                        /*copy_aux_mem=*/false, /*strict=*/true);
  for (arma::uword c = 0; c < cube.n_slices; ++c)
    out.slice(c) = cube.slice(c).t();
  return t;
}

/// A [H, W] tensor from an H × W matrix in shape order (a copy).
inline Tensor fromMat(const arma::Mat<float> &mat) {
  Tensor t = Tensor::empty(DType::F32, {int64_t(mat.n_rows), int64_t(mat.n_cols)});
  arma::Mat<float> out(t.data<float>(), mat.n_cols, mat.n_rows, /*copy_aux_mem=*/false,
                       /*strict=*/true);
  out = mat.t();
  return t;
}

} // namespace kc::rt::arma_interop

//===- kc/Support/Npy.h - NumPy .npy files ----------------------*- C++ -*-===//
///
/// \file
/// Reading and writing NumPy's `.npy` format: the reference inputs and
/// outputs of the models are stored this way. Supported are format versions
/// 1.0, 2.0 and 3.0, C order, little-endian (or byte-order-free) numeric and
/// bool descriptors. Anything else (Fortran order, big-endian, object or
/// structured dtypes, a size that disagrees with the file) is an error that
/// names the file.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Support/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace kc {

/// A dense C-order array with little-endian element bytes.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape; ///< Empty for a 0-d (scalar) array.
  std::vector<uint8_t> data;  ///< product(shape) * dtypeSize(dtype) bytes.

  /// product(shape); 1 for a scalar. Meaningful only for a consistent array.
  int64_t numElements() const;
};

/// Reads the .npy file at `path`.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);
/// Reads a .npy image from memory; `nameForErrors` names it in errors.
llvm::Expected<NpyArray> readNpyBuffer(llvm::ArrayRef<uint8_t> bytes,
                                       llvm::StringRef nameForErrors);

/// Encodes `array` as a version 1.0 .npy image (2.0 if the header needs more
/// than 65535 bytes), header padded to 64 bytes as NumPy writes it. Fails if
/// the dtype has no .npy descriptor (bf16, c32, null) or the data size does
/// not match the shape.
llvm::Expected<std::vector<uint8_t>> writeNpyBuffer(const NpyArray &array);
/// writeNpyBuffer, then writes the bytes to `path`.
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

} // namespace kc

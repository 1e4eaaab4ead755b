//===- kc/Support/DType.h - Element types -----------------------*- C++ -*-===//
///
/// \file
/// Element types of tensors, shared by the IR and the runtime. The set and
/// the textual suffixes follow PNNX's type codes (f32, i64, bool, ...).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include <cstddef>
#include <cstdint>
#include <optional>

namespace kc {

enum class DType : uint8_t {
  Unknown = 0, ///< PNNX `null`: not known.
  F32,
  F64,
  F16,
  I32,
  I64,
  I16,
  I8,
  U8,
  Bool,
  C64,
  C128,
  C32,
  BF16,
};

/// Bytes per element; 0 for Unknown.
size_t dtypeSize(DType t);
/// The PNNX suffix: "f32", "i64", "bool", "null", ...
llvm::StringRef dtypeName(DType t);
/// Parses a PNNX suffix (accepting the old `cp64` spellings); nullopt if unknown.
std::optional<DType> parseDType(llvm::StringRef s);
/// Parses a torch dtype name such as `torch.float` or `torch.long`.
std::optional<DType> parseTorchDType(llvm::StringRef s);
bool isFloating(DType t);
bool isInteger(DType t);

} // namespace kc

//===- InputShape.h - The --input-shape option's text -----------*- C++ -*-===//
#pragma once

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace kc::tools {

/// "2x3x224x224" as dims; an error quoting the text for anything else, or
/// for a shape of more than 2^40 elements (no input kc could hold).
llvm::Expected<llvm::SmallVector<int64_t, 6>> parseInputShape(llvm::StringRef text);

} // namespace kc::tools

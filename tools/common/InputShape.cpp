//===- InputShape.cpp - The --input-shape option's text -------------------===//
#include "InputShape.h"

#include "kc/Support/Quote.h"

namespace kc::tools {

llvm::Expected<llvm::SmallVector<int64_t, 6>> parseInputShape(llvm::StringRef text) {
  llvm::SmallVector<int64_t, 6> shape;
  llvm::SmallVector<llvm::StringRef, 8> parts;
  text.split(parts, 'x');
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0 || d > (int64_t(1) << 40))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--input-shape " + clipInput(text) +
                                         ": expected sizes joined by 'x', e.g. 1x3x224x224");
    shape.push_back(d);
  }
  double elements = 1;
  for (int64_t d : shape)
    elements *= double(d);
  if (elements > double(int64_t(1) << 40))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--input-shape " + clipInput(text) + ": too many elements");
  return shape;
}

} // namespace kc::tools

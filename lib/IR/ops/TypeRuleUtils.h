//===- TypeRuleUtils.h - Helpers for op type rules --------------*- C++ -*-===//
///
/// \file
/// Shared pieces of the type rules registered in lib/IR/ops: reading data
/// inputs and attributes of a call, broadcasting, normalizing dims.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Op.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <vector>

namespace kc::typerules {

/// An int64 that remembers whether computing it overflowed, for output sizes
/// computed from attribute values, which a hostile file can set to anything.
class CheckedInt {
public:
  CheckedInt(int64_t v) : v_(v) {}

  bool overflowed() const { return overflow_; }
  int64_t value() const { return v_; }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    return a.combine(b, llvm::AddOverflow(a.v_, b.v_, a.v_));
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    return a.combine(b, llvm::SubOverflow(a.v_, b.v_, a.v_));
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    return a.combine(b, llvm::MulOverflow(a.v_, b.v_, a.v_));
  }
  /// Truncating division; division by zero counts as an overflow.
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) {
    bool bad = b.v_ == 0 || (a.v_ == INT64_MIN && b.v_ == -1);
    a.v_ = bad ? 0 : a.v_ / b.v_;
    return a.combine(b, bad);
  }

private:
  CheckedInt combine(CheckedInt other, bool overflowed) {
    overflow_ = overflow_ || other.overflow_ || overflowed;
    return *this;
  }

  int64_t v_;
  bool overflow_ = false;
};

/// The most outputs a splitting op (unbind, chunk, split, tensor_split) may
/// produce; each one is an operand of the model.
constexpr int64_t kMaxPieces = int64_t(1) << 16;

/// The tensor type of the i-th data argument, or null when unknown.
const TensorTypeNode *dataType(const CallNode &c, size_t i);

/// An error naming the op: `nn.Conv2d 'conv1': <msg>`.
llvm::Error fail(const CallNode &c, const llvm::Twine &msg);
/// A type as an error message shows it, bounded (kc/Support/Quote.h).
std::string shown(const Type &t);

/// Normalizes a possibly negative dim against `rank`; -1 when out of range.
int64_t normDim(int64_t d, int64_t rank);

/// NumPy broadcasting of two dim lists; nullopt if incompatible.
std::optional<std::vector<int64_t>> broadcast(llvm::ArrayRef<int64_t> a,
                                              llvm::ArrayRef<int64_t> b);

/// An int-list attribute with `n` entries (a scalar is repeated).
std::vector<int64_t> intsN(const CallNode &c, llvm::StringRef key, size_t n,
                           std::vector<int64_t> dflt);

/// PyTorch refuses a scalar attribute `key` (fill_'s and masked_fill's
/// value) that its tensor's element type cannot hold (kc::scalarFits):
/// an error naming the attribute, or success when it fits or is absent.
llvm::Error checkScalarFits(const CallNode &c, llvm::StringRef key, DType dtype);

/// Type rule: the result has the type of the first data input.
llvm::Expected<Type> sameAsInput(const CallNode &c);

} // namespace kc::typerules

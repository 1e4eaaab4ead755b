//===- kc/IR/TensorData.h - Bytes of a constant tensor ----------*- C++ -*-===//
///
/// \file
/// The payload of a Constant: raw little-endian C-order bytes, either owned
/// (a folded constant) or a slice of a memory-mapped weight archive (an
/// imported weight, not copied until a kernel packs it). Data may be
/// unaligned: PNNX archives place entries at arbitrary offsets.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Support/MappedFile.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace kc {

class TensorData {
public:
  /// Owns a copy of `bytes`.
  static std::shared_ptr<const TensorData> owned(std::vector<uint8_t> bytes);
  /// Refers to `bytes` inside memory kept alive by `owner` (e.g. a mapped file).
  static std::shared_ptr<const TensorData> borrowed(std::shared_ptr<const MappedFile> owner,
                                                    llvm::ArrayRef<uint8_t> bytes);

  llvm::ArrayRef<uint8_t> bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  /// True when the bytes live in a mapped file rather than in this object.
  bool isMapped() const { return owner_ != nullptr; }
  /// For mapped bytes that have been copied elsewhere: lets the OS reclaim
  /// their pages (see MappedFile::releasePages).
  void releasePages() const { releasePages(0, bytes_.size()); }
  /// The same for `length` bytes from `offset`.
  void releasePages(size_t offset, size_t length) const {
    if (owner_)
      owner_->releasePages(bytes_.slice(offset, length));
  }
  /// For mapped bytes about to be read whole (see MappedFile::prefault).
  void prefault() const { prefault(0, bytes_.size()); }
  void prefault(size_t offset, size_t length) const {
    if (owner_)
      owner_->prefault(bytes_.slice(offset, length));
  }

private:
  TensorData() = default;
  std::vector<uint8_t> storage_;
  std::shared_ptr<const MappedFile> owner_;
  llvm::ArrayRef<uint8_t> bytes_;
};

using TensorDataPtr = std::shared_ptr<const TensorData>;

} // namespace kc

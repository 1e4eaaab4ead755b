//===- TensorData.cpp - Bytes of a constant tensor ------------------------===//
#include "kc/IR/TensorData.h"

namespace kc {

std::shared_ptr<const TensorData> TensorData::owned(std::vector<uint8_t> bytes) {
  std::shared_ptr<TensorData> d(new TensorData());
  d->storage_ = std::move(bytes);
  d->bytes_ = d->storage_;
  return d;
}

std::shared_ptr<const TensorData> TensorData::borrowed(std::shared_ptr<const MappedFile> owner,
                                                       llvm::ArrayRef<uint8_t> bytes) {
  std::shared_ptr<TensorData> d(new TensorData());
  d->owner_ = std::move(owner);
  d->bytes_ = bytes;
  return d;
}

} // namespace kc

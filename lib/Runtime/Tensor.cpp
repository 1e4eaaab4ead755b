//===- Tensor.cpp - Run-time tensors --------------------------------------===//
#include "kc/Runtime/Tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/mman.h>

namespace kc::rt {

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeToString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// A zeroed anonymous mapping of `bytes`, all pages mapped before return.
/// From 2 MiB up the region is 2 MiB aligned and asks for transparent huge
/// pages: on a virtual machine every first touch of a 4 KiB page is costly,
/// and big weights and arenas are read in streams that the TLB then covers
/// (resnet18 load+compile at 1 thread: 129 ms with 4 KiB pages, 69 ms).
std::shared_ptr<void> mappedAlloc(size_t bytes) {
  constexpr size_t kHuge = size_t(2) << 20;
  if (bytes < kHuge) {
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
      return nullptr;
    return std::shared_ptr<void>(p, [bytes](void *q) { ::munmap(q, bytes); });
  }
  size_t span = bytes + kHuge;
  void *base = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return nullptr;
  auto *p = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(base) + kHuge - 1) & ~(kHuge - 1));
#ifdef MADV_HUGEPAGE
  ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
  if (::madvise(p, bytes, MADV_POPULATE_WRITE) != 0)
#endif
    std::memset(p, 0, bytes); // older kernels: fault the pages in by hand
  return std::shared_ptr<void>(p, [base, span](void *) { ::munmap(base, span); });
}

namespace {
/// 64-byte aligned heap memory of at least `bytes` (whole cache lines),
/// uninitialized. Throws std::bad_alloc.
std::shared_ptr<void> heapAlloc(size_t bytes, size_t *rounded) {
  *rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, *rounded);
  if (!p)
    throw std::bad_alloc();
  return std::shared_ptr<void>(p, [](void *q) { std::free(q); });
}
} // namespace

std::shared_ptr<void> alignedAlloc(size_t bytes) {
  // Large buffers (weights, the activation arena) come from mmap with every
  // page mapped up front: touching fresh heap pages one fault at a time
  // costs ~15x more (46 MiB: 12 ms against 180 ms).
  if (bytes >= (size_t(1) << 20))
    if (auto p = mappedAlloc(bytes))
      return p;
  size_t rounded = 0;
  std::shared_ptr<void> p = heapAlloc(bytes, &rounded);
  std::memset(p.get(), 0, rounded);
  return p;
}

Tensor Tensor::copyOf(const Tensor &t) {
  // From the heap, not mappedAlloc: a run's outputs are freed and made again
  // on every run, and malloc hands the same pages back (after the first
  // free it serves sizes up to 32 MiB from the heap), where a fresh mapping
  // faults every page in again (docs/performance.md, "Memory plan").
  size_t rounded = 0;
  std::shared_ptr<void> p = heapAlloc(t.nbytes(), &rounded);
  if (t.nbytes())
    std::memcpy(p.get(), t.raw(), t.nbytes());
  return view(t.dtype(), t.shape(), p.get(), p);
}

Tensor Tensor::uninitialized(DType dtype, llvm::ArrayRef<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  size_t rounded = 0;
  t.owner_ = heapAlloc(t.nbytes(), &rounded);
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::empty(DType dtype, llvm::ArrayRef<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  t.owner_ = alignedAlloc(t.nbytes());
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::view(DType dtype, llvm::ArrayRef<int64_t> shape, void *data,
                    std::shared_ptr<void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  t.data_ = data;
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::reshaped(llvm::ArrayRef<int64_t> shape) const {
  Tensor t = *this;
  t.shape_.assign(shape.begin(), shape.end());
  return t;
}

} // namespace kc::rt

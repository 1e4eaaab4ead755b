//===- kc/Support/MappedFile.h - Read-only mapped files ---------*- C++ -*-===//
///
/// \file
/// A whole file mapped read-only into memory. Weight archives are opened this
/// way so that tensor bytes are paged in only when a kernel reads them; the
/// mapping is shared (std::shared_ptr) so a weight slice can keep it alive
/// after the archive reader is gone.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kc {

class MappedFile {
public:
  /// Maps the whole file at `path` read-only. An empty file gives an empty
  /// byte range (nothing is mapped). Errors name the path and the OS reason.
  static llvm::Expected<std::shared_ptr<MappedFile>> open(llvm::StringRef path);

  /// Wraps an in-memory copy of `bytes` under the name `name`, which stands in
  /// for the path in error messages. For tests and fuzzing.
  static std::shared_ptr<MappedFile> fromBytes(llvm::ArrayRef<uint8_t> bytes, llvm::StringRef name);

  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// The file's contents; valid as long as this object lives.
  llvm::ArrayRef<uint8_t> bytes() const { return {data_, size_}; }
  /// Lets the OS drop the resident pages under `range` (a part of bytes()):
  /// once a weight has been copied into a kernel, its mapped copy need not
  /// count in the process's memory. The bytes stay readable; they are paged
  /// in again from the file if read. No-op for fromBytes files.
  void releasePages(llvm::ArrayRef<uint8_t> range) const;
  /// Maps the pages under `range` in one call before they are read whole:
  /// one system call instead of a page fault per 4 KiB. A hint only: a
  /// kernel without MADV_POPULATE_READ faults the pages in as usual.
  void prefault(llvm::ArrayRef<uint8_t> range) const;
  /// The path the file was opened with (or the name given to fromBytes).
  llvm::StringRef path() const { return path_; }

private:
  MappedFile() = default;
  /// The page-aligned span madvise needs to cover `range`; false when the
  /// file is not mapped or `range` is not inside it.
  bool pageSpan(llvm::ArrayRef<uint8_t> range, void **start, size_t *length) const;

  std::string path_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  void *mapBase_ = nullptr;    ///< Non-null when data_ is an mmap region.
  std::vector<uint8_t> owned_; ///< Backing store for fromBytes.
};

} // namespace kc

//===- MappedFile.cpp - Read-only mapped files ----------------------------===//
#include "kc/Support/MappedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kc {

static llvm::Error osError(llvm::StringRef path, llvm::StringRef what, int err) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s: %s", path.str().c_str(),
                                 what.str().c_str(), std::strerror(err));
}

llvm::Expected<std::shared_ptr<MappedFile>> MappedFile::open(llvm::StringRef path) {
  std::string pathStr = path.str();
  int fd;
  do {
    fd = ::open(pathStr.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return osError(path, "cannot open", errno);

  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return osError(path, "cannot stat", err);
  }
  // mmap of a directory or a pipe fails or means nothing; say so plainly.
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: not a regular file",
                                   pathStr.c_str());
  }

  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = std::move(pathStr);
  if (st.st_size > 0) {
    size_t size = static_cast<size_t>(st.st_size);
    void *base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return osError(path, "cannot map", err);
    }
    file->mapBase_ = base;
    file->data_ = static_cast<const uint8_t *>(base);
    file->size_ = size;
  }
  // The mapping stays valid after the descriptor is closed.
  ::close(fd);
  return file;
}

std::shared_ptr<MappedFile> MappedFile::fromBytes(llvm::ArrayRef<uint8_t> bytes,
                                                  llvm::StringRef name) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = name.str();
  file->owned_.assign(bytes.begin(), bytes.end());
  file->data_ = file->owned_.data();
  file->size_ = file->owned_.size();
  return file;
}

bool MappedFile::pageSpan(llvm::ArrayRef<uint8_t> range, void **start, size_t *length) const {
  if (!mapBase_ || range.empty() || range.begin() < data_ || range.end() > data_ + size_)
    return false;
  // madvise wants a page-aligned start; the length may end mid-page.
  uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  uintptr_t lo = uintptr_t(range.begin()) & ~(page - 1);
  *start = reinterpret_cast<void *>(lo);
  *length = uintptr_t(range.end()) - lo;
  return true;
}

void MappedFile::releasePages(llvm::ArrayRef<uint8_t> range) const {
  // The mapping is private and never written, so dropped pages read back
  // the file's bytes; widening the range to whole pages is harmless.
  void *start;
  size_t length;
  if (pageSpan(range, &start, &length))
    ::madvise(start, length, MADV_DONTNEED);
}

void MappedFile::prefault(llvm::ArrayRef<uint8_t> range) const {
#ifdef MADV_POPULATE_READ
  void *start;
  size_t length;
  if (pageSpan(range, &start, &length))
    ::madvise(start, length, MADV_POPULATE_READ);
#else
  (void)range;
#endif
}

MappedFile::~MappedFile() {
  if (mapBase_)
    ::munmap(mapBase_, size_);
}

} // namespace kc

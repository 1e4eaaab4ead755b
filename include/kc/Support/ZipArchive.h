//===- kc/Support/ZipArchive.h - Stored-only ZIP archives -------*- C++ -*-===//
///
/// \file
/// Reading and writing the ZIP container of `.pnnx.bin` weight files: stored
/// (uncompressed) entries only, in both layouts pnnx has written — plain ZIP
/// (before 2024-01-11) and ZIP64 records for everything (since then). See
/// ../shared/docs/pnnx-format.md section 3; docs/errors.md lists every
/// check the reader makes.
///
/// The reader follows the central directory rather than scanning local
/// headers the way pnnx does, and validates every offset and size against
/// the file before using it, so a corrupt or hostile file gives an
/// llvm::Error naming the file, the entry and the offset, never a crash or
/// an allocation sized by an unchecked field. Entry data is not copied: it
/// is a slice of the mapped file.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Support/MappedFile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kc {

/// One stored entry of an archive.
struct ZipEntry {
  std::string name;    ///< Raw name bytes, as in the central directory.
  uint64_t offset = 0; ///< Absolute file offset of the entry's data.
  uint64_t size = 0;   ///< Data size in bytes (stored, so both sizes agree).
  uint32_t crc = 0;    ///< CRC-32 recorded in the central directory.
};

/// The standard ZIP CRC-32 (reflected polynomial 0xEDB88320) of `data`.
uint32_t zipCrc32(llvm::ArrayRef<uint8_t> data);

class ZipReader {
public:
  /// Maps the file at `path` and reads its central directory.
  static llvm::Expected<std::unique_ptr<ZipReader>> open(llvm::StringRef path);
  /// Reads an archive already in memory; `file->path()` names it in errors.
  static llvm::Expected<std::unique_ptr<ZipReader>> fromBuffer(std::shared_ptr<MappedFile> file);
  /// Reads a copy of `bytes`, calling it `name` in errors. For tests/fuzzing.
  static llvm::Expected<std::unique_ptr<ZipReader>> fromBuffer(llvm::ArrayRef<uint8_t> bytes,
                                                               llvm::StringRef name);

  /// The entry called `name`, or null if there is none.
  const ZipEntry *find(llvm::StringRef name) const;
  /// All entries, in central-directory order.
  llvm::ArrayRef<ZipEntry> entries() const { return entries_; }
  /// The data of `entry` (an entry of this reader), a slice of the mapped
  /// file. Possibly unaligned: copy with memcpy rather than casting.
  llvm::ArrayRef<uint8_t> data(const ZipEntry &entry) const;
  /// The mapped file; holding it keeps every data() slice valid.
  std::shared_ptr<MappedFile> file() const { return file_; }
  /// The name used in error messages (the path).
  llvm::StringRef name() const { return file_->path(); }

  /// Checks the CRC-32 of `entry` against its data. pnnx never checks it;
  /// this reads (pages in) the whole entry.
  llvm::Error verifyCrc(const ZipEntry &entry) const;
  /// verifyCrc for the entry called `name`; an error too if there is none.
  llvm::Error verifyCrc(llvm::StringRef name) const;

private:
  explicit ZipReader(std::shared_ptr<MappedFile> file) : file_(std::move(file)) {}
  llvm::Error parse();

  std::shared_ptr<MappedFile> file_;
  std::vector<ZipEntry> entries_;
  llvm::StringMap<size_t> index_; ///< Name -> position in entries_.
};

/// The two archive layouts pnnx has written.
enum class ZipLayout {
  /// pnnx before 2024-01-11: no ZIP64 records; every size, offset and count
  /// must fit the classic 32/16-bit fields.
  Plain,
  /// Current pnnx: ZIP64 extras on every entry and ZIP64 end records on
  /// every archive, however small.
  Zip64,
};

/// Builds an archive of stored entries, byte for byte as pnnx writes it in
/// the chosen layout.
class ZipWriter {
public:
  explicit ZipWriter(ZipLayout layout = ZipLayout::Zip64) : layout_(layout) {}

  /// Appends an entry; the bytes are copied. Problems (a duplicate name, a
  /// name longer than 65535 bytes, a size the layout cannot express) are
  /// reported by finish() / writeTo().
  void add(std::string name, llvm::ArrayRef<uint8_t> data);

  /// Completes the archive and returns its bytes. The writer is then empty
  /// and can build another archive.
  llvm::Expected<std::vector<uint8_t>> finish();
  /// finish(), then writes the archive to `path`.
  llvm::Error writeTo(llvm::StringRef path);

private:
  llvm::Expected<std::vector<uint8_t>> build(llvm::StringRef nameForErrors);

  struct Record {
    std::string name;
    uint64_t headerOffset;
    uint64_t size;
    uint32_t crc;
  };

  ZipLayout layout_;
  std::vector<uint8_t> out_; ///< Local headers and data written so far.
  std::vector<Record> records_;
  llvm::StringMap<size_t> names_;
  std::string problem_; ///< First problem seen by add(), reported by finish().
};

} // namespace kc

//===- ZipArchive.cpp - Stored-only ZIP archives --------------------------===//
//
// Record layouts follow PKWARE's APPNOTE and docs/pnnx-format.md section 3.
// Every read from the file goes through an offset that was first checked
// against the file size, so a corrupt archive yields an error and nothing
// is allocated from a count that was not bounded by the file size.
//
//===----------------------------------------------------------------------===//
#include "kc/Support/ZipArchive.h"
#include "kc/Support/OutputFile.h"
#include "kc/Support/Quote.h"

#include "llvm/Support/CRC.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace kc {

namespace {

constexpr uint32_t LocalHeaderSig = 0x04034b50;
constexpr uint32_t CentralHeaderSig = 0x02014b50;
constexpr uint32_t Zip64EndSig = 0x06064b50;
constexpr uint32_t Zip64LocatorSig = 0x07064b50;
constexpr uint32_t EndSig = 0x06054b50;

constexpr uint64_t LocalHeaderSize = 30;
constexpr uint64_t CentralHeaderSize = 46;
constexpr uint64_t Zip64EndSize = 56;
constexpr uint64_t Zip64LocatorSize = 20;
constexpr uint64_t EndSize = 22;
constexpr uint64_t MaxCommentSize = 0xFFFF;

constexpr uint16_t Sat16 = 0xFFFF;
constexpr uint32_t Sat32 = 0xFFFFFFFF;
constexpr uint16_t Zip64ExtraId = 0x0001;
/// pnnx's ZIP64 extra: u64 uncompressed, u64 compressed, u64 offset, u32 disk.
constexpr uint16_t PnnxZip64ExtraSize = 28;

// General-purpose flag bits.
constexpr uint16_t FlagEncrypted = 1u << 0;
constexpr uint16_t FlagDataDescriptor = 1u << 3;
constexpr uint16_t FlagStrongEncryption = 1u << 6;
constexpr uint16_t FlagMaskedHeaders = 1u << 13;
constexpr uint16_t EncryptionFlags = FlagEncrypted | FlagStrongEncryption | FlagMaskedHeaders;

uint16_t read16(const uint8_t *p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t read32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t read64(const uint8_t *p) { return uint64_t(read32(p)) | uint64_t(read32(p + 4)) << 32; }

/// a + b, or UINT64_MAX if that overflows; only used to print ranges.
uint64_t saturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/// `name` quoted so that a hostile name cannot garble an error message.
std::string quoted(llvm::StringRef name) { return quoteInput(name); }

const char *methodName(uint16_t method) {
  switch (method) {
  case 0:
    return "stored";
  case 8:
    return "deflate";
  case 9:
    return "deflate64";
  case 12:
    return "bzip2";
  case 14:
    return "lzma";
  case 93:
    return "zstd";
  case 95:
    return "xz";
  default:
    return "unknown";
  }
}

/// Builds "<file>: <formatted message>".
template <typename... Args>
llvm::Error zipError(llvm::StringRef file, fmt::format_string<Args...> format, Args &&...args) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 file + llvm::Twine(": ") +
                                     fmt::format(format, std::forward<Args>(args)...));
}

/// The payload of the ZIP64 extended-information block (header id 1) in an
/// extra field, or std::nullopt if there is none. `malformed` is set when a
/// block's length runs past the field.
std::optional<llvm::ArrayRef<uint8_t>> findZip64Extra(llvm::ArrayRef<uint8_t> extra,
                                                      bool &malformed) {
  malformed = false;
  while (extra.size() >= 4) {
    uint16_t id = read16(extra.data());
    uint16_t len = read16(extra.data() + 2);
    if (len > extra.size() - 4) {
      malformed = true;
      return std::nullopt;
    }
    if (id == Zip64ExtraId)
      return extra.slice(4, len);
    extra = extra.drop_front(4 + len);
  }
  // Fewer than 4 bytes left is padding (zipalign leaves some); ignore it.
  return std::nullopt;
}

/// Takes a little-endian u64 or u32 off the front of a ZIP64 extra payload.
bool take64(llvm::ArrayRef<uint8_t> &field, uint64_t &value) {
  if (field.size() < 8)
    return false;
  value = read64(field.data());
  field = field.drop_front(8);
  return true;
}
bool take32(llvm::ArrayRef<uint8_t> &field, uint64_t &value) {
  if (field.size() < 4)
    return false;
  value = read32(field.data());
  field = field.drop_front(4);
  return true;
}

} // namespace

uint32_t zipCrc32(llvm::ArrayRef<uint8_t> data) { return llvm::crc32(data); }

//===----------------------------------------------------------------------===//
// ZipReader
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<ZipReader>> ZipReader::open(llvm::StringRef path) {
  auto file = MappedFile::open(path);
  if (!file)
    return file.takeError();
  return fromBuffer(std::move(*file));
}

llvm::Expected<std::unique_ptr<ZipReader>> ZipReader::fromBuffer(std::shared_ptr<MappedFile> file) {
  std::unique_ptr<ZipReader> reader(new ZipReader(std::move(file)));
  if (llvm::Error err = reader->parse())
    return err;
  return reader;
}

llvm::Expected<std::unique_ptr<ZipReader>> ZipReader::fromBuffer(llvm::ArrayRef<uint8_t> bytes,
                                                                 llvm::StringRef name) {
  return fromBuffer(MappedFile::fromBytes(bytes, name));
}

const ZipEntry *ZipReader::find(llvm::StringRef name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

llvm::ArrayRef<uint8_t> ZipReader::data(const ZipEntry &entry) const {
  llvm::ArrayRef<uint8_t> bytes = file_->bytes();
  // Entries of this reader were checked in parse(); this guards foreign ones.
  if (entry.offset > bytes.size() || entry.size > bytes.size() - entry.offset)
    return {};
  return bytes.slice(entry.offset, entry.size);
}

llvm::Error ZipReader::verifyCrc(const ZipEntry &entry) const {
  uint32_t actual = zipCrc32(data(entry));
  if (actual != entry.crc)
    return zipError(name(), "entry {}: CRC-32 of data [{}, {}) is 0x{:08x}, expected 0x{:08x}",
                    quoted(entry.name), entry.offset, entry.offset + entry.size, actual, entry.crc);
  return llvm::Error::success();
}

llvm::Error ZipReader::verifyCrc(llvm::StringRef entryName) const {
  const ZipEntry *entry = find(entryName);
  if (!entry)
    return zipError(name(), "no entry {}", quoted(entryName));
  return verifyCrc(*entry);
}

llvm::Error ZipReader::parse() {
  const llvm::StringRef file = name();
  const uint8_t *base = file_->bytes().data();
  const uint64_t size = file_->bytes().size();

  // 1. The end-of-central-directory record: the last signature from which a
  // 22-byte record plus its comment reaches exactly the end of the file.
  if (size < EndSize)
    return zipError(file,
                    "file is {} bytes, too small for a zip archive (the end-of-central-"
                    "directory record alone is 22 bytes)",
                    size);
  const uint64_t lowest = size - EndSize > MaxCommentSize ? size - EndSize - MaxCommentSize : 0;
  uint64_t end = 0;
  bool foundEnd = false;
  for (uint64_t pos = size - EndSize + 1; pos-- > lowest;) {
    if (base[pos] == 0x50 && read32(base + pos) == EndSig &&
        pos + EndSize + read16(base + pos + 20) == size) {
      end = pos;
      foundEnd = true;
      break;
    }
  }
  if (!foundEnd)
    return zipError(file,
                    "no end-of-central-directory record (signature 0x06054b50) in the "
                    "last {} bytes; not a zip archive, or truncated",
                    size - lowest);

  const uint8_t *eocd = base + end;
  const uint16_t disk = read16(eocd + 4);
  const uint16_t cdDisk = read16(eocd + 6);
  const uint16_t diskEntries = read16(eocd + 8);
  const uint16_t totalEntries = read16(eocd + 10);
  const uint32_t cdSize32 = read32(eocd + 12);
  const uint32_t cdOffset32 = read32(eocd + 16);
  uint64_t entryCount = totalEntries;
  uint64_t cdSize = cdSize32;
  uint64_t cdOffset = cdOffset32;
  uint64_t endRecords = end; // The central directory must end before this.

  // 2. ZIP64: current pnnx saturates every field of the classic record.
  const bool saturated = disk == Sat16 || cdDisk == Sat16 || diskEntries == Sat16 ||
                         totalEntries == Sat16 || cdSize32 == Sat32 || cdOffset32 == Sat32;
  const bool hasLocator =
      end >= Zip64LocatorSize && read32(base + end - Zip64LocatorSize) == Zip64LocatorSig;
  if (hasLocator) {
    const uint64_t locator = end - Zip64LocatorSize;
    const uint32_t locatorDisk = read32(base + locator + 4);
    const uint64_t z64 = read64(base + locator + 8);
    const uint32_t diskCount = read32(base + locator + 16);
    if (locatorDisk != 0 || diskCount > 1)
      return zipError(file,
                      "ZIP64 locator at offset {}: multi-disk archives are not supported "
                      "(record on disk {}, {} disks)",
                      locator, locatorDisk, diskCount);
    if (z64 >= size)
      return zipError(file,
                      "ZIP64 locator at offset {} points to a ZIP64 end-of-central-directory "
                      "record at offset {}, past end of file ({} bytes)",
                      locator, z64, size);
    if (z64 > locator || locator - z64 < Zip64EndSize)
      return zipError(file,
                      "ZIP64 locator at offset {} points to a ZIP64 end-of-central-directory "
                      "record at offset {}, which does not fit (56 bytes) before the locator",
                      locator, z64);
    const uint8_t *rec = base + z64;
    if (read32(rec) != Zip64EndSig)
      return zipError(file,
                      "ZIP64 end-of-central-directory record at offset {} (from the locator "
                      "at offset {}): bad signature 0x{:08x}, expected 0x06064b50",
                      z64, locator, read32(rec));
    const uint64_t recordSize = read64(rec + 4);
    if (recordSize < Zip64EndSize - 12 || recordSize > locator - z64 - 12)
      return zipError(file,
                      "ZIP64 end-of-central-directory record at offset {}: record size {} "
                      "is out of range (44 to {})",
                      z64, recordSize, locator - z64 - 12);
    const uint32_t z64Disk = read32(rec + 16);
    const uint32_t z64CdDisk = read32(rec + 20);
    const uint64_t z64DiskEntries = read64(rec + 24);
    const uint64_t z64Entries = read64(rec + 32);
    const uint64_t z64CdSize = read64(rec + 40);
    const uint64_t z64CdOffset = read64(rec + 48);
    if (z64Disk != 0 || z64CdDisk != 0 || z64DiskEntries != z64Entries)
      return zipError(file,
                      "ZIP64 end-of-central-directory record at offset {}: multi-disk "
                      "archives are not supported (disk {}, central directory on disk {}, "
                      "{} of {} entries on this disk)",
                      z64, z64Disk, z64CdDisk, z64DiskEntries, z64Entries);
    // A classic field that is not saturated must say the same as ZIP64.
    if ((totalEntries != Sat16 && totalEntries != z64Entries) ||
        (cdSize32 != Sat32 && cdSize32 != z64CdSize) ||
        (cdOffset32 != Sat32 && cdOffset32 != z64CdOffset))
      return zipError(file,
                      "end-of-central-directory record at offset {} (entries {}, central "
                      "directory size {}, offset {}) contradicts the ZIP64 record at offset "
                      "{} (entries {}, size {}, offset {})",
                      end, totalEntries, cdSize32, cdOffset32, z64, z64Entries, z64CdSize,
                      z64CdOffset);
    entryCount = z64Entries;
    cdSize = z64CdSize;
    cdOffset = z64CdOffset;
    endRecords = z64;
  } else if (saturated) {
    return zipError(file,
                    "end-of-central-directory record at offset {} has saturated (ZIP64) "
                    "fields but no ZIP64 locator (signature 0x07064b50) precedes it",
                    end);
  } else if (disk != 0 || cdDisk != 0 || diskEntries != totalEntries) {
    return zipError(file,
                    "end-of-central-directory record at offset {}: multi-disk archives are "
                    "not supported (disk {}, central directory on disk {}, {} of {} entries "
                    "on this disk)",
                    end, disk, cdDisk, diskEntries, totalEntries);
  }

  // The central directory lies before the end records, and the entry count
  // is bounded by it before anything is sized by that count.
  if (cdOffset > endRecords) {
    if (cdOffset > size)
      return zipError(file, "central directory offset {} is past end of file ({} bytes)", cdOffset,
                      size);
    return zipError(file,
                    "central directory offset {} is past the end-of-central-directory "
                    "records at offset {}",
                    cdOffset, endRecords);
  }
  if (cdSize > endRecords - cdOffset)
    return zipError(file,
                    "central directory [{}, {}) runs past the end-of-central-directory "
                    "records at offset {}",
                    cdOffset, saturatingAdd(cdOffset, cdSize), endRecords);
  if (entryCount > cdSize / CentralHeaderSize)
    return zipError(file,
                    "archive claims {} entries, but its central directory of {} bytes holds "
                    "at most {} (46 bytes or more each)",
                    entryCount, cdSize, cdSize / CentralHeaderSize);

  // 3./4. Walk the central directory; find each entry's data through its
  // local header, whose name and extra lengths may differ from the central ones.
  const uint64_t cdEnd = cdOffset + cdSize;
  entries_.reserve(entryCount);
  // Each entry's bytes, from its local header to the end of its data.
  struct Span {
    uint64_t begin, end;
    size_t entry;
  };
  std::vector<Span> spans;
  spans.reserve(entryCount);
  uint64_t pos = cdOffset;
  for (uint64_t i = 0; i < entryCount; ++i) {
    if (cdEnd - pos < CentralHeaderSize)
      return zipError(file,
                      "central directory record {} at offset {} runs past the end of the "
                      "central directory at offset {}",
                      i, pos, cdEnd);
    const uint8_t *rec = base + pos;
    if (read32(rec) != CentralHeaderSig)
      return zipError(file,
                      "central directory record {} at offset {}: bad signature 0x{:08x}, "
                      "expected 0x02014b50",
                      i, pos, read32(rec));
    const uint16_t flags = read16(rec + 8);
    const uint16_t method = read16(rec + 10);
    const uint32_t crc = read32(rec + 16);
    const uint32_t compressed32 = read32(rec + 20);
    const uint32_t uncompressed32 = read32(rec + 24);
    const uint16_t nameLen = read16(rec + 28);
    const uint16_t extraLen = read16(rec + 30);
    const uint16_t commentLen = read16(rec + 32);
    const uint16_t diskStart = read16(rec + 34);
    const uint32_t localOffset32 = read32(rec + 42);
    const uint64_t recordLen = CentralHeaderSize + nameLen + extraLen + commentLen;
    if (recordLen > cdEnd - pos)
      return zipError(file,
                      "central directory record {} at offset {}: its {} bytes run past the "
                      "end of the central directory at offset {}",
                      i, pos, recordLen, cdEnd);
    std::string entryName(reinterpret_cast<const char *>(rec + CentralHeaderSize), nameLen);
    const std::string shown = quoted(entryName);

    uint64_t compressed = compressed32;
    uint64_t uncompressed = uncompressed32;
    uint64_t localOffset = localOffset32;
    uint64_t entryDisk = diskStart;
    if (uncompressed32 == Sat32 || compressed32 == Sat32 || localOffset32 == Sat32 ||
        diskStart == Sat16) {
      bool malformed;
      auto z64 = findZip64Extra({rec + CentralHeaderSize + nameLen, extraLen}, malformed);
      if (malformed)
        return zipError(file,
                        "entry {}: malformed extra field in the central directory record at "
                        "offset {}",
                        shown, pos);
      if (!z64)
        return zipError(file,
                        "entry {}: central directory record at offset {} has saturated "
                        "fields but no ZIP64 extra field (id 1)",
                        shown, pos);
      // Each field is present only if its classic field is saturated.
      llvm::ArrayRef<uint8_t> field = *z64;
      bool ok = (uncompressed32 != Sat32 || take64(field, uncompressed)) &&
                (compressed32 != Sat32 || take64(field, compressed)) &&
                (localOffset32 != Sat32 || take64(field, localOffset)) &&
                (diskStart != Sat16 || take32(field, entryDisk));
      if (!ok)
        return zipError(file,
                        "entry {}: ZIP64 extra field of {} bytes in the central directory "
                        "record at offset {} is too short for its saturated fields",
                        shown, z64->size(), pos);
    }

    // 5. What pnnx archives never contain, and this reader does not handle.
    if (entryDisk != 0)
      return zipError(file, "entry {}: on disk {}; multi-disk archives are not supported", shown,
                      entryDisk);
    if (flags & EncryptionFlags)
      return zipError(file, "entry {}: encrypted (flags 0x{:04x}); encryption is not supported",
                      shown, flags);
    if (flags & FlagDataDescriptor)
      return zipError(file,
                      "entry {}: uses a data descriptor (flag bit 3); expected sizes in the "
                      "headers",
                      shown);
    if (method != 0)
      return zipError(file,
                      "entry {}: compression method {} ({}); only stored entries (method 0) "
                      "are supported",
                      shown, method, methodName(method));
    if (compressed != uncompressed)
      return zipError(file,
                      "entry {}: compressed size {} differs from uncompressed size {}; a "
                      "stored entry has equal sizes",
                      shown, compressed, uncompressed);

    // The local header.
    if (localOffset > size || size - localOffset < LocalHeaderSize)
      return zipError(file, "entry {}: local header at offset {} runs past end of file ({} bytes)",
                      shown, localOffset, size);
    const uint8_t *local = base + localOffset;
    if (read32(local) != LocalHeaderSig)
      return zipError(file,
                      "entry {}: local header at offset {}: bad signature 0x{:08x}, expected "
                      "0x04034b50",
                      shown, localOffset, read32(local));
    const uint16_t localFlags = read16(local + 6);
    const uint16_t localMethod = read16(local + 8);
    const uint32_t localCrc = read32(local + 14);
    const uint32_t localCompressed32 = read32(local + 18);
    const uint32_t localUncompressed32 = read32(local + 22);
    const uint16_t localNameLen = read16(local + 26);
    const uint16_t localExtraLen = read16(local + 28);
    const uint64_t dataOffset = localOffset + LocalHeaderSize + localNameLen + localExtraLen;
    if (dataOffset > size)
      return zipError(file,
                      "entry {}: local header at offset {} with its name and extra field "
                      "runs past end of file ({} bytes)",
                      shown, localOffset, size);
    if (llvm::StringRef(reinterpret_cast<const char *>(local + LocalHeaderSize), localNameLen) !=
        entryName)
      return zipError(
          file, "entry {}: local header at offset {} names a different entry, {}", shown,
          localOffset,
          quoted({reinterpret_cast<const char *>(local + LocalHeaderSize), localNameLen}));
    if (localMethod != method || (localFlags & (EncryptionFlags | FlagDataDescriptor)) ||
        localCrc != crc)
      return zipError(file,
                      "entry {}: local header at offset {} (method {}, flags 0x{:04x}, "
                      "CRC-32 0x{:08x}) disagrees with the central directory (method {}, "
                      "flags 0x{:04x}, CRC-32 0x{:08x})",
                      shown, localOffset, localMethod, localFlags, localCrc, method, flags, crc);
    // pnnx's own reader takes sizes from the local header; make sure it would
    // read the same bytes as we do.
    uint64_t localCompressed = localCompressed32;
    uint64_t localUncompressed = localUncompressed32;
    if (localCompressed32 == Sat32 || localUncompressed32 == Sat32) {
      bool malformed;
      auto z64 = findZip64Extra({local + LocalHeaderSize + localNameLen, localExtraLen}, malformed);
      llvm::ArrayRef<uint8_t> field = z64 ? *z64 : llvm::ArrayRef<uint8_t>();
      // The local ZIP64 field holds both sizes, uncompressed first.
      if (malformed || !take64(field, localUncompressed) || !take64(field, localCompressed))
        return zipError(file,
                        "entry {}: local header at offset {} has saturated sizes but no "
                        "valid ZIP64 extra field with both sizes",
                        shown, localOffset);
    }
    if (localCompressed != compressed || localUncompressed != uncompressed)
      return zipError(file,
                      "entry {}: local header at offset {} gives size {} (compressed {}), but "
                      "the central directory gives {}",
                      shown, localOffset, localUncompressed, localCompressed, uncompressed);

    const uint64_t dataEnd = saturatingAdd(dataOffset, uncompressed);
    if (uncompressed > size - dataOffset)
      return zipError(file, "entry {}: data [{}, {}) runs past end of file ({} bytes)", shown,
                      dataOffset, dataEnd, size);
    if (dataEnd > cdOffset)
      return zipError(file, "entry {}: data [{}, {}) runs into the central directory at offset {}",
                      shown, dataOffset, dataEnd, cdOffset);

    auto inserted = index_.try_emplace(entryName, entries_.size());
    if (!inserted.second)
      return zipError(file,
                      "duplicate entry {} (central directory records {} and {}); entry names "
                      "must be unique",
                      shown, inserted.first->second, i);
    spans.push_back({localOffset, dataEnd, entries_.size()});
    entries_.push_back({std::move(entryName), dataOffset, uncompressed, crc});
    pos += recordLen;
  }
  if (pos != cdEnd)
    return zipError(file,
                    "central directory [{}, {}) has {} bytes after its {} records; the entry "
                    "count is wrong",
                    cdOffset, cdEnd, cdEnd - pos, entryCount);

  // 6. No byte belongs to two entries: one entry's data must not hold
  // another's header or data (the same bytes would then be two weights, and
  // pnnx's front-to-back scan would read something else than we do).
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.begin < b.begin; });
  for (size_t k = 1; k < spans.size(); ++k) {
    // Sorted and disjoint so far, so the previous span ends last.
    const Span &a = spans[k - 1], &b = spans[k];
    if (b.begin < a.end)
      return zipError(file,
                      "entry {}: local header and data [{}, {}) overlap entry {} [{}, {}); "
                      "entries must not share bytes",
                      quoted(entries_[b.entry].name), b.begin, b.end,
                      quoted(entries_[a.entry].name), a.begin, a.end);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// ZipWriter
//===----------------------------------------------------------------------===//

namespace {

void put16(std::vector<uint8_t> &out, uint16_t v) {
  out.push_back(uint8_t(v));
  out.push_back(uint8_t(v >> 8));
}
void put32(std::vector<uint8_t> &out, uint32_t v) {
  put16(out, uint16_t(v));
  put16(out, uint16_t(v >> 16));
}
void put64(std::vector<uint8_t> &out, uint64_t v) {
  put32(out, uint32_t(v));
  put32(out, uint32_t(v >> 32));
}
void putBytes(std::vector<uint8_t> &out, llvm::StringRef s) {
  out.insert(out.end(), s.begin(), s.end());
}

} // namespace

void ZipWriter::add(std::string name, llvm::ArrayRef<uint8_t> data) {
  // Once the archive is known to be bad, nothing more is written.
  if (!problem_.empty())
    return;
  const uint64_t headerOffset = out_.size();
  if (name.size() > Sat16) {
    problem_ =
        fmt::format("entry {}: name is {} bytes; at most 65535 fit", quoted(name), name.size());
    return;
  }
  // The plain layout has only 32-bit fields, and Sat32 would mean ZIP64.
  if (layout_ == ZipLayout::Plain && (data.size() >= Sat32 || headerOffset >= Sat32)) {
    problem_ = fmt::format("entry {}: size {} at offset {} does not fit the plain layout's "
                           "32-bit fields; use the ZIP64 layout",
                           quoted(name), data.size(), headerOffset);
    return;
  }
  if (!names_.try_emplace(name, records_.size()).second) {
    problem_ = fmt::format("duplicate entry {}; entry names must be unique", quoted(name));
    return;
  }

  const bool zip64 = layout_ == ZipLayout::Zip64;
  const uint32_t crc = zipCrc32(data);
  put32(out_, LocalHeaderSig);
  put16(out_, 0); // version needed
  put16(out_, 0); // flags
  put16(out_, 0); // method: stored
  put16(out_, 0); // mod time
  put16(out_, 0); // mod date
  put32(out_, crc);
  put32(out_, zip64 ? Sat32 : uint32_t(data.size())); // compressed
  put32(out_, zip64 ? Sat32 : uint32_t(data.size())); // uncompressed
  put16(out_, uint16_t(name.size()));
  put16(out_, zip64 ? 4 + PnnxZip64ExtraSize : 0);
  putBytes(out_, name);
  if (zip64) {
    // pnnx writes all four ZIP64 fields here, the offset as 0.
    put16(out_, Zip64ExtraId);
    put16(out_, PnnxZip64ExtraSize);
    put64(out_, data.size());
    put64(out_, data.size());
    put64(out_, 0);
    put32(out_, 0);
  }
  out_.insert(out_.end(), data.begin(), data.end());
  records_.push_back({std::move(name), headerOffset, data.size(), crc});
}

llvm::Expected<std::vector<uint8_t>> ZipWriter::build(llvm::StringRef nameForErrors) {
  std::vector<uint8_t> out = std::move(out_);
  std::vector<Record> records = std::move(records_);
  std::string problem = std::move(problem_);
  out_.clear();
  records_.clear();
  names_.clear();
  problem_.clear();
  if (!problem.empty())
    return zipError(nameForErrors, "{}", problem);

  const bool zip64 = layout_ == ZipLayout::Zip64;
  const uint64_t cdOffset = out.size();
  for (const Record &rec : records) {
    put32(out, CentralHeaderSig);
    put16(out, 0); // version made by
    put16(out, 0); // version needed
    put16(out, 0); // flags
    put16(out, 0); // method: stored
    put16(out, 0); // mod time
    put16(out, 0); // mod date
    put32(out, rec.crc);
    put32(out, zip64 ? Sat32 : uint32_t(rec.size)); // compressed
    put32(out, zip64 ? Sat32 : uint32_t(rec.size)); // uncompressed
    put16(out, uint16_t(rec.name.size()));
    put16(out, zip64 ? 4 + PnnxZip64ExtraSize : 0);
    put16(out, 0);                 // comment length
    put16(out, zip64 ? Sat16 : 0); // disk number start
    put16(out, 0);                 // internal attributes
    put32(out, 0);                 // external attributes
    put32(out, zip64 ? Sat32 : uint32_t(rec.headerOffset));
    putBytes(out, rec.name);
    if (zip64) {
      put16(out, Zip64ExtraId);
      put16(out, PnnxZip64ExtraSize);
      put64(out, rec.size);
      put64(out, rec.size);
      put64(out, rec.headerOffset);
      put32(out, 0);
    }
  }
  const uint64_t cdSize = out.size() - cdOffset;
  const uint64_t count = records.size();

  if (zip64) {
    const uint64_t z64 = out.size();
    put32(out, Zip64EndSig);
    put64(out, Zip64EndSize - 12); // size of the rest of the record
    put16(out, 0);                 // version made by
    put16(out, 0);                 // version needed
    put32(out, 0);                 // this disk
    put32(out, 0);                 // disk of the central directory
    put64(out, count);
    put64(out, count);
    put64(out, cdSize);
    put64(out, cdOffset);

    put32(out, Zip64LocatorSig);
    put32(out, 0); // disk of the ZIP64 record
    put64(out, z64);
    put32(out, 1); // total disks

    put32(out, EndSig);
    for (int i = 0; i < 4; ++i)
      put16(out, Sat16); // disks and entry counts
    put32(out, Sat32);   // central directory size
    put32(out, Sat32);   // central directory offset
    put16(out, 0);       // comment length
    return out;
  }

  if (count >= Sat16 || cdSize >= Sat32 || cdOffset >= Sat32)
    return zipError(nameForErrors,
                    "{} entries, central directory of {} bytes at offset {}: too large for the "
                    "plain layout's 16/32-bit fields; use the ZIP64 layout",
                    count, cdSize, cdOffset);
  put32(out, EndSig);
  put16(out, 0); // this disk
  put16(out, 0); // disk of the central directory
  put16(out, uint16_t(count));
  put16(out, uint16_t(count));
  put32(out, uint32_t(cdSize));
  put32(out, uint32_t(cdOffset));
  put16(out, 0); // comment length
  return out;
}

llvm::Expected<std::vector<uint8_t>> ZipWriter::finish() { return build("zip archive"); }

llvm::Error ZipWriter::writeTo(llvm::StringRef path) {
  auto bytes = build(path);
  if (!bytes)
    return bytes.takeError();
  return writeOutputFile(path, *bytes);
}

} // namespace kc

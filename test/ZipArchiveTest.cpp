//===- ZipArchiveTest.cpp - Tests of the .pnnx.bin ZIP reader and writer --===//
//
// Byte layouts are the ones of docs/pnnx-format.md section 3. The real files
// come from $KC_MODELS_DIR (current pnnx, ZIP64) and $KC_CORPUS_DIR (old
// pnnx, plain ZIP).
//
//===----------------------------------------------------------------------===//
#include "TestPaths.h"

#include "kc/Support/DType.h"
#include "kc/Support/MappedFile.h"
#include "kc/Support/ZipArchive.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace kc;

namespace {

using Bytes = std::vector<uint8_t>;

/// Fails the current check with the message if `msg` lacks `needle`.
#define CHECK_ERROR_CONTAINS(msg, needle)                                                          \
  CHECK_MESSAGE((msg).find(needle) != std::string::npos,                                           \
                "error \"" << (msg) << "\" does not mention \"" << (needle) << "\"")

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i)
    b[i] = uint8_t(seed + i * 7 + (i >> 8));
  return b;
}

/// The message of `err`, or "" for success.
std::string errorText(llvm::Error err) { return err ? llvm::toString(std::move(err)) : ""; }

Bytes finishOk(ZipWriter &w) {
  auto bytes = w.finish();
  REQUIRE_MESSAGE(!!bytes, llvm::toString(bytes.takeError()));
  return std::move(*bytes);
}

Bytes oneEntry(ZipLayout layout) {
  ZipWriter w(layout);
  w.add("conv2d_0.weight", pattern(1944, 3));
  return finishOk(w);
}

/// The error the reader gives for `bytes`; "" if it reads them.
std::string readError(llvm::ArrayRef<uint8_t> bytes, llvm::StringRef name = "test.pnnx.bin") {
  auto reader = ZipReader::fromBuffer(bytes, name);
  if (reader)
    return "";
  return llvm::toString(reader.takeError());
}

std::unique_ptr<ZipReader> readOk(llvm::ArrayRef<uint8_t> bytes) {
  auto reader = ZipReader::fromBuffer(bytes, "test.pnnx.bin");
  REQUIRE_MESSAGE(!!reader, llvm::toString(reader.takeError()));
  return std::move(*reader);
}

uint32_t get32(const Bytes &b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
         uint32_t(b[at + 3]) << 24;
}
void set16(Bytes &b, size_t at, uint16_t v) {
  b[at] = uint8_t(v);
  b[at + 1] = uint8_t(v >> 8);
}
void set32(Bytes &b, size_t at, uint32_t v) {
  set16(b, at, uint16_t(v));
  set16(b, at + 2, uint16_t(v >> 16));
}
void set64(Bytes &b, size_t at, uint64_t v) {
  set32(b, at, uint32_t(v));
  set32(b, at + 4, uint32_t(v >> 32));
}

Bytes readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  REQUIRE_MESSAGE(!!buf, path << ": " << buf.getError().message());
  return Bytes((*buf)->getBufferStart(), (*buf)->getBufferEnd());
}

/// Every file under `dir` whose name ends with `suffix`, sorted.
std::vector<std::string> filesUnder(const std::string &dir, llvm::StringRef suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(suffix))
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

/// One `@` attribute of a .pnnx.param file: its entry name and byte size.
struct ParamAttr {
  std::string entry;
  uint64_t bytes;
};

/// The `@` attributes of a .param file in file order: `@weight=(16,3,3,3)f32`
/// of op `conv` is entry `conv.weight` of 16*3*3*3*4 bytes.
std::vector<ParamAttr> paramAttrs(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::vector<ParamAttr> attrs;
  for (int lineNo = 0; std::getline(in, line); ++lineNo) {
    if (lineNo < 2)
      continue; // magic and counts
    llvm::SmallVector<llvm::StringRef, 16> tokens;
    llvm::StringRef(line).split(tokens, ' ', -1, /*KeepEmpty=*/false);
    if (tokens.size() < 2)
      continue;
    for (llvm::StringRef tok : tokens) {
      if (!tok.consume_front("@"))
        continue;
      auto [key, value] = tok.split('=');
      size_t close = value.rfind(')');
      REQUIRE(close != llvm::StringRef::npos);
      std::optional<DType> type = parseDType(value.drop_front(close + 1));
      REQUIRE_MESSAGE(type.has_value(), tok.str());
      uint64_t bytes = dtypeSize(*type);
      llvm::SmallVector<llvm::StringRef, 4> dims;
      value.slice(1, close).split(dims, ',', -1, false);
      for (llvm::StringRef d : dims)
        bytes *= std::stoull(d.str());
      attrs.push_back({tokens[1].str() + "." + key.str(), bytes});
    }
  }
  return attrs;
}

/// The bytes a writer in `layout` gives for the entries of `reader`.
Bytes rewrite(const ZipReader &reader, ZipLayout layout) {
  ZipWriter w(layout);
  for (const ZipEntry &e : reader.entries())
    w.add(e.name, reader.data(e));
  return finishOk(w);
}

} // namespace

//===----------------------------------------------------------------------===//
// Writer layouts
//===----------------------------------------------------------------------===//

TEST_CASE("ZipWriter: ZIP64 layout matches the worked example byte for byte") {
  Bytes b = oneEntry(ZipLayout::Zip64);
  REQUIRE(b.size() == 2212);
  CHECK(get32(b, 0) == 0x04034b50);
  CHECK(get32(b, 18) == 0xFFFFFFFF); // sizes saturated in the local header
  CHECK(get32(b, 22) == 0xFFFFFFFF);
  CHECK(b[28] == 32); // local extra length
  CHECK(std::equal(b.begin() + 77, b.begin() + 2021, pattern(1944, 3).begin()));
  CHECK(get32(b, 2021) == 0x02014b50);
  CHECK(get32(b, 2021 + 42) == 0xFFFFFFFF); // local offset saturated
  CHECK(get32(b, 2114) == 0x06064b50);
  CHECK(get32(b, 2170) == 0x07064b50);
  CHECK(get32(b, 2170 + 8) == 2114);
  CHECK(get32(b, 2190) == 0x06054b50);

  auto reader = readOk(b);
  REQUIRE(reader->entries().size() == 1);
  const ZipEntry &e = reader->entries()[0];
  CHECK(e.name == "conv2d_0.weight");
  CHECK(e.offset == 77);
  CHECK(e.size == 1944);
  CHECK(e.crc == zipCrc32(pattern(1944, 3)));
  CHECK(errorText(reader->verifyCrc("conv2d_0.weight")) == "");
}

TEST_CASE("ZipWriter: plain layout matches the old pnnx layout") {
  Bytes b = oneEntry(ZipLayout::Plain);
  REQUIRE(b.size() == 45 + 1944 + 61 + 22);
  CHECK(get32(b, 18) == 1944);
  CHECK(get32(b, 22) == 1944);
  CHECK(get32(b, 1989) == 0x02014b50);
  CHECK(get32(b, 2050) == 0x06054b50);
  CHECK(get32(b, 2050 + 12) == 61);   // central directory size
  CHECK(get32(b, 2050 + 16) == 1989); // central directory offset
  auto reader = readOk(b);
  REQUIRE(reader->entries().size() == 1);
  CHECK(reader->entries()[0].offset == 45);
  CHECK(reader->entries()[0].size == 1944);
}

TEST_CASE("ZipWriter: empty archives are 98 (ZIP64) and 22 (plain) bytes") {
  ZipWriter z64(ZipLayout::Zip64), plain(ZipLayout::Plain);
  Bytes a = finishOk(z64), b = finishOk(plain);
  CHECK(a.size() == 98);
  CHECK(b.size() == 22);
  CHECK(readOk(a)->entries().empty());
  CHECK(readOk(b)->entries().empty());
  // The writer is reusable after finish().
  z64.add("x", pattern(3, 1));
  CHECK(readOk(finishOk(z64))->entries().size() == 1);
}

TEST_CASE("ZipWriter: round trip in both layouts") {
  for (ZipLayout layout : {ZipLayout::Plain, ZipLayout::Zip64}) {
    CAPTURE(int(layout));
    std::vector<std::pair<std::string, Bytes>> items = {
        {"conv1.weight", pattern(1000, 1)},
        {"conv1.bias", pattern(7, 2)}, // odd size: later data is unaligned
        {"empty.data", {}},
        {"/model.0/Conv.weight", pattern(300, 4)},
        {"layer1.0.conv1.weight", pattern(65536 + 3, 5)},
    };
    ZipWriter w(layout);
    for (auto &[name, data] : items)
      w.add(name, data);
    Bytes b = finishOk(w);
    auto reader = readOk(b);
    REQUIRE(reader->entries().size() == items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const ZipEntry &e = reader->entries()[i];
      CHECK(e.name == items[i].first); // order kept
      CHECK(reader->find(items[i].first) == &e);
      llvm::ArrayRef<uint8_t> data = reader->data(e);
      CHECK(Bytes(data.begin(), data.end()) == items[i].second);
      CHECK(errorText(reader->verifyCrc(e)) == "");
    }
    CHECK(reader->find("conv1") == nullptr);
    CHECK(reader->find("missing") == nullptr);
  }
}

TEST_CASE("ZipWriter: writeTo writes a file ZipReader::open reads") {
  llvm::SmallString<128> path;
  REQUIRE(!llvm::sys::fs::createTemporaryFile("kc-zip-test", "pnnx.bin", path));
  ZipWriter w;
  w.add("a.weight", pattern(123, 9));
  REQUIRE(errorText(w.writeTo(path)) == "");
  auto reader = ZipReader::open(path);
  REQUIRE_MESSAGE(!!reader, llvm::toString(reader.takeError()));
  CHECK((*reader)->name() == path);
  const ZipEntry *e = (*reader)->find("a.weight");
  REQUIRE(e);
  CHECK(e->size == 123);
  // The mapping outlives the reader for whoever holds file().
  std::shared_ptr<MappedFile> file = (*reader)->file();
  llvm::ArrayRef<uint8_t> data = (*reader)->data(*e);
  reader->reset();
  CHECK(Bytes(data.begin(), data.end()) == pattern(123, 9));
  llvm::sys::fs::remove(path);
}

TEST_CASE("ZipWriter: errors") {
  SUBCASE("duplicate names") {
    ZipWriter w;
    w.add("a.b", pattern(4, 1));
    w.add("a.b", pattern(4, 2));
    auto b = w.finish();
    REQUIRE(!b);
    std::string msg = llvm::toString(b.takeError());
    CHECK_ERROR_CONTAINS(msg, "duplicate entry 'a.b'");
  }
  SUBCASE("name too long") {
    ZipWriter w;
    w.add(std::string(70000, 'n'), {});
    auto b = w.finish();
    REQUIRE(!b);
    CHECK_ERROR_CONTAINS(llvm::toString(b.takeError()), "at most 65535");
  }
  SUBCASE("too many entries for the plain layout") {
    ZipWriter w(ZipLayout::Plain);
    for (unsigned i = 0; i < 0xFFFF; ++i)
      w.add(std::to_string(i), {});
    auto b = w.finish();
    REQUIRE(!b);
    CHECK_ERROR_CONTAINS(llvm::toString(b.takeError()), "65535 entries");
  }
  SUBCASE("unwritable path") {
    ZipWriter w;
    llvm::Error err = w.writeTo("/nonexistent-dir/x.pnnx.bin");
    REQUIRE(!!err);
    std::string msg = llvm::toString(std::move(err));
    CHECK_ERROR_CONTAINS(msg, "/nonexistent-dir/x.pnnx.bin: error: cannot open for writing");
  }
}

//===----------------------------------------------------------------------===//
// Real files
//===----------------------------------------------------------------------===//

/// Checks a real archive against its .param: the `@` items are exactly the
/// entries, in the same order, with the sizes the shapes give, and every
/// CRC holds. Then rewrites it in `layout` and expects the same bytes.
static void checkRealArchive(const std::string &binPath, ZipLayout layout) {
  CAPTURE(binPath);
  auto reader = ZipReader::open(binPath);
  REQUIRE_MESSAGE(!!reader, llvm::toString(reader.takeError()));
  const ZipReader &r = **reader;

  std::string paramPath = binPath.substr(0, binPath.size() - 4) + ".param";
  std::vector<ParamAttr> attrs = paramAttrs(paramPath);
  REQUIRE(attrs.size() == r.entries().size());
  for (size_t i = 0; i < attrs.size(); ++i) {
    CAPTURE(attrs[i].entry);
    CHECK(r.entries()[i].name == attrs[i].entry);
    CHECK(r.entries()[i].size == attrs[i].bytes);
  }
  for (const ZipEntry &e : r.entries())
    CHECK(errorText(r.verifyCrc(e)) == "");

  // pnnx writes entries in the same order as the writer, so rewriting gives
  // back the file byte for byte.
  Bytes original = readFile(binPath);
  Bytes rewritten = rewrite(r, layout);
  CHECK(rewritten.size() == original.size());
  CHECK(rewritten == original);
}

TEST_CASE("ZipReader: current pnnx models (ZIP64)") {
  KC_SKIP_UNLESS_DIR(kc::test::modelsDir(), "KC_MODELS_DIR");
  std::vector<std::string> bins = filesUnder(kc::test::modelsDir(), ".pnnx.bin");
  REQUIRE(!bins.empty());
  for (const std::string &bin : bins)
    checkRealArchive(bin, ZipLayout::Zip64);

  // Spot checks of known entries.
  std::string cnn = kc::test::modelsDir() + "/cnn_basic/model.pnnx.bin";
  auto reader = ZipReader::open(cnn);
  REQUIRE_MESSAGE(!!reader, llvm::toString(reader.takeError()));
  CHECK((*reader)->entries().size() == 24);
  const ZipEntry *w = (*reader)->find("convbn2d_0.weight");
  REQUIRE(w);
  CHECK(w->size == 16 * 3 * 3 * 3 * 4);
  const ZipEntry *b = (*reader)->find("convbn2d_0.bias");
  REQUIRE(b);
  CHECK(b->offset == 30 + 15 + 32); // first entry
  CHECK(b->size == 16 * 4);
  CHECK(w->offset == b->offset + b->size + 30 + 17 + 32);

  // A model without attributes: just the three end records.
  auto empty = ZipReader::open(kc::test::modelsDir() + "/expr_zoo/model.pnnx.bin");
  REQUIRE_MESSAGE(!!empty, llvm::toString(empty.takeError()));
  CHECK((*empty)->entries().empty());
  CHECK((*empty)->file()->bytes().size() == 98);
}

TEST_CASE("ZipReader: old pnnx corpus (plain ZIP)") {
  KC_SKIP_UNLESS_DIR(kc::test::corpusDir(), "KC_CORPUS_DIR");
  std::vector<std::string> bins = filesUnder(kc::test::corpusDir(), ".pnnx.bin");
  REQUIRE(!bins.empty());
  for (const std::string &bin : bins)
    checkRealArchive(bin, ZipLayout::Plain);

  auto conv1 = ZipReader::open(kc::test::corpusDir() + "/resnet/conv1.pnnx.bin");
  REQUIRE_MESSAGE(!!conv1, llvm::toString(conv1.takeError()));
  REQUIRE((*conv1)->entries().size() == 1);
  CHECK((*conv1)->entries()[0].name == "conv2d_0.weight");
  CHECK((*conv1)->entries()[0].offset == 45);
  CHECK((*conv1)->entries()[0].size == 1944);

  auto softmax = ZipReader::open(kc::test::corpusDir() + "/softmax/softmax_dim1.pnnx.bin");
  REQUIRE_MESSAGE(!!softmax, llvm::toString(softmax.takeError()));
  CHECK((*softmax)->entries().empty());
  CHECK((*softmax)->file()->bytes().size() == 22);
}

/// Reads `bytes` and, if that succeeds, checks every entry lies inside them.
/// Returns true if the read failed (with an error message, as it must).
static bool readsCleanly(llvm::ArrayRef<uint8_t> bytes) {
  auto reader = ZipReader::fromBuffer(bytes, "mutated.pnnx.bin");
  if (!reader) {
    std::string msg = llvm::toString(reader.takeError());
    CHECK(llvm::StringRef(msg).startswith("mutated.pnnx.bin: "));
    return true;
  }
  for (const ZipEntry &e : (*reader)->entries()) {
    CHECK(e.offset <= bytes.size());
    CHECK(e.size <= bytes.size() - e.offset);
    CHECK((*reader)->data(e).size() == e.size);
  }
  return false;
}

TEST_CASE("ZipReader: every truncation of a real file fails cleanly") {
  KC_SKIP_UNLESS_DIR(kc::test::corpusDir(), "KC_CORPUS_DIR");
  // Plain layout: every length.
  Bytes plain = readFile(kc::test::corpusDir() + "/resnet/conv1.pnnx.bin");
  size_t failures = 0;
  for (size_t len = 0; len < plain.size(); ++len)
    failures += readsCleanly(llvm::ArrayRef<uint8_t>(plain).take_front(len));
  CHECK(failures == plain.size());
}

TEST_CASE("ZipReader: truncations of a real ZIP64 file fail cleanly") {
  KC_SKIP_UNLESS_DIR(kc::test::modelsDir(), "KC_MODELS_DIR");
  Bytes z64 = readFile(kc::test::modelsDir() + "/batch4_resnet_block/model.pnnx.bin");
  // Every length cutting into the directory and end records (the last 4 KiB),
  // a sample of those cutting into entry data (each costs a 64 KiB scan).
  size_t tried = 0, failures = 0;
  for (size_t len = 0; len < z64.size(); len += len + 4096 < z64.size() ? 61 : 1) {
    failures += readsCleanly(llvm::ArrayRef<uint8_t>(z64).take_front(len));
    ++tried;
  }
  CHECK(failures == tried);
}

TEST_CASE("ZipReader: corrupting any byte of the headers fails cleanly") {
  // Archives with three entries; every header byte set to 0x00, 0xFF and
  // 0x7F in turn. Data bytes are not interpreted, so they are skipped.
  for (ZipLayout layout : {ZipLayout::Plain, ZipLayout::Zip64}) {
    ZipWriter w(layout);
    w.add("a.weight", pattern(10, 1));
    w.add("b.bias", pattern(3, 2));
    w.add("c", {});
    Bytes good = finishOk(w);
    auto reader = readOk(good);
    std::vector<bool> isData(good.size(), false);
    for (const ZipEntry &e : reader->entries())
      std::fill(isData.begin() + e.offset, isData.begin() + e.offset + e.size, true);
    for (size_t at = 0; at < good.size(); ++at) {
      if (isData[at])
        continue;
      for (uint8_t v : {uint8_t(0x00), uint8_t(0xFF), uint8_t(0x7F)}) {
        Bytes bad = good;
        bad[at] = v;
        readsCleanly(bad);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Reader errors, from mutated archives
//===----------------------------------------------------------------------===//

TEST_CASE("ZipReader: errors") {
  // Offsets in the one-entry archives (name of 15 bytes, 1944 data bytes).
  const size_t plainCd = 1989, plainEnd = 2050;
  const size_t z64Cd = 2021, z64End = 2114, z64Locator = 2170, z64Eocd = 2190;
  Bytes plain = oneEntry(ZipLayout::Plain);
  Bytes z64 = oneEntry(ZipLayout::Zip64);

  SUBCASE("file too small") {
    std::string msg = readError(Bytes(10, 0));
    CHECK_ERROR_CONTAINS(msg, "test.pnnx.bin: file is 10 bytes, too small");
  }
  SUBCASE("truncated: no end record") {
    Bytes b(z64.begin(), z64.end() - 1);
    CHECK_ERROR_CONTAINS(readError(b), "no end-of-central-directory record");
  }
  SUBCASE("not a zip at all") {
    CHECK_ERROR_CONTAINS(readError(Bytes(5000, 'x')), "not a zip archive");
  }
  SUBCASE("bad central directory signature") {
    Bytes b = plain;
    set32(b, plainCd, 0x12345678);
    std::string msg = readError(b);
    CHECK_ERROR_CONTAINS(msg, "central directory record 0 at offset 1989: bad signature "
                              "0x12345678, expected 0x02014b50");
  }
  SUBCASE("bad local header signature") {
    Bytes b = z64;
    set32(b, 0, 0);
    CHECK_ERROR_CONTAINS(readError(b), "entry 'conv2d_0.weight': local header at offset 0: "
                                       "bad signature 0x00000000, expected 0x04034b50");
  }
  SUBCASE("bad ZIP64 end record signature") {
    Bytes b = z64;
    set32(b, z64End, 0x06054b50);
    CHECK_ERROR_CONTAINS(readError(b), "ZIP64 end-of-central-directory record at offset 2114");
  }
  SUBCASE("compressed entry (deflate)") {
    Bytes b = plain;
    set16(b, 8, 8);
    set16(b, plainCd + 10, 8);
    CHECK_ERROR_CONTAINS(readError(b), "entry 'conv2d_0.weight': compression method 8 "
                                       "(deflate); only stored entries");
    Bytes c = z64;
    set16(c, z64Cd + 10, 8); // central directory only
    CHECK_ERROR_CONTAINS(readError(c), "compression method 8");
  }
  SUBCASE("local header disagrees with the central directory") {
    Bytes b = plain;
    set16(b, 8, 8); // local method only
    CHECK_ERROR_CONTAINS(readError(b), "disagrees with the central directory");
    Bytes c = plain;
    set32(c, 18, 1000); // local compressed size
    set32(c, 22, 1000);
    CHECK_ERROR_CONTAINS(readError(c), "local header at offset 0 gives size 1000");
    Bytes d = plain;
    d[30] = 'X'; // local name
    CHECK_ERROR_CONTAINS(readError(d), "names a different entry, 'Xonv2d_0.weight'");
  }
  SUBCASE("encrypted entry, data descriptor") {
    Bytes b = plain;
    set16(b, plainCd + 8, 1);
    CHECK_ERROR_CONTAINS(readError(b), "encrypted");
    Bytes c = plain;
    set16(c, plainCd + 8, 8);
    CHECK_ERROR_CONTAINS(readError(c), "data descriptor");
  }
  SUBCASE("compressed size differs from uncompressed size") {
    Bytes b = z64;
    set64(b, z64Cd + 46 + 15 + 4 + 8, 1000); // ZIP64 compressed size
    CHECK_ERROR_CONTAINS(readError(b), "compressed size 1000 differs from uncompressed size 1944");
  }
  SUBCASE("entry claims more bytes than the file") {
    Bytes b = plain;
    for (size_t at : {size_t(18), size_t(22), plainCd + 20, plainCd + 24})
      set32(b, at, 5000);
    CHECK_ERROR_CONTAINS(readError(b), "test.pnnx.bin: entry 'conv2d_0.weight': data [45, "
                                       "5045) runs past end of file (2072 bytes)");
    Bytes c = z64;
    const uint64_t huge = uint64_t(1) << 62;
    for (size_t at :
         {size_t(30 + 15 + 4), size_t(30 + 15 + 12), z64Cd + 46 + 15 + 4, z64Cd + 46 + 15 + 12})
      set64(c, at, huge);
    CHECK_ERROR_CONTAINS(readError(c), "runs past end of file (2212 bytes)");
  }
  SUBCASE("entry runs into the central directory") {
    Bytes b = plain;
    for (size_t at : {size_t(18), size_t(22), plainCd + 20, plainCd + 24})
      set32(b, at, 1950);
    CHECK_ERROR_CONTAINS(readError(b), "runs into the central directory at offset 1989");
  }
  SUBCASE("central directory offset past end of file") {
    Bytes b = plain;
    set32(b, plainEnd + 16, 100000);
    CHECK_ERROR_CONTAINS(readError(b),
                         "central directory offset 100000 is past end of file (2072 bytes)");
    Bytes c = z64;
    set64(c, z64End + 48, uint64_t(1) << 40);
    CHECK_ERROR_CONTAINS(readError(c), "central directory offset 1099511627776 is past end");
  }
  SUBCASE("central directory runs into the end records") {
    Bytes b = plain;
    set32(b, plainEnd + 12, 62);
    CHECK_ERROR_CONTAINS(readError(b), "central directory [1989, 2051) runs past");
  }
  SUBCASE("huge entry count") {
    Bytes b = z64;
    set64(b, z64End + 24, uint64_t(1) << 60);
    set64(b, z64End + 32, uint64_t(1) << 60);
    CHECK_ERROR_CONTAINS(readError(b), "archive claims 1152921504606846976 entries, but its "
                                       "central directory of 93 bytes holds at most 2");
    Bytes c = plain;
    set16(c, plainEnd + 8, 0xFFFE);
    set16(c, plainEnd + 10, 0xFFFE);
    CHECK_ERROR_CONTAINS(readError(c), "claims 65534 entries");
  }
  SUBCASE("entry count too small for the central directory") {
    ZipWriter w(ZipLayout::Plain);
    w.add("a", pattern(4, 1));
    w.add("b", pattern(4, 2));
    Bytes b = finishOk(w);
    size_t end = b.size() - 22;
    set16(b, end + 8, 1);
    set16(b, end + 10, 1);
    CHECK_ERROR_CONTAINS(readError(b), "bytes after its 1 records");
  }
  SUBCASE("duplicate names") {
    ZipWriter w(ZipLayout::Zip64);
    w.add("layer.a", pattern(4, 1));
    w.add("layer.b", pattern(4, 2));
    Bytes b = finishOk(w);
    // Rename every "layer.b" (local header and central directory) to "layer.a".
    for (size_t i = 0; i + 7 <= b.size(); ++i)
      if (std::memcmp(&b[i], "layer.b", 7) == 0)
        b[i + 6] = 'a';
    CHECK_ERROR_CONTAINS(readError(b), "duplicate entry 'layer.a' (central directory records "
                                       "0 and 1)");
  }
  SUBCASE("ZIP64 locator pointing outside the file") {
    Bytes b = z64;
    set64(b, z64Locator + 8, 1000000);
    CHECK_ERROR_CONTAINS(readError(b), "ZIP64 locator at offset 2170 points to a ZIP64 "
                                       "end-of-central-directory record at offset 1000000, "
                                       "past end of file (2212 bytes)");
    Bytes c = z64;
    set64(c, z64Locator + 8, 2160);
    CHECK_ERROR_CONTAINS(readError(c), "does not fit (56 bytes) before the locator");
    Bytes d = z64;
    set64(d, z64Locator + 8, 100);
    CHECK_ERROR_CONTAINS(readError(d), "at offset 100 (from the locator at offset 2170): bad "
                                       "signature");
  }
  SUBCASE("saturated end record without a ZIP64 locator") {
    Bytes b = z64;
    set32(b, z64Locator, 0);
    CHECK_ERROR_CONTAINS(readError(b), "no ZIP64 locator");
  }
  SUBCASE("ZIP64 end record contradicts the classic record") {
    Bytes b = z64;
    set16(b, z64Eocd + 10, 3); // total entries no longer saturated
    CHECK_ERROR_CONTAINS(readError(b), "contradicts the ZIP64 record");
  }
  SUBCASE("saturated central directory field without a ZIP64 extra") {
    Bytes b = z64;
    set16(b, z64Cd + 46 + 15, 0x5455); // extra id 1 -> some other id
    CHECK_ERROR_CONTAINS(readError(b), "no ZIP64 extra field");
    Bytes c = z64;
    set16(c, z64Cd + 46 + 15 + 2, 8); // ZIP64 extra too short for 4 fields
    CHECK_ERROR_CONTAINS(readError(c), "too short for its saturated fields");
    Bytes d = z64;
    set16(d, z64Cd + 46 + 15 + 2, 29); // extra block runs past the field
    CHECK_ERROR_CONTAINS(readError(d), "malformed extra field");
  }
  SUBCASE("multi-disk") {
    Bytes b = plain;
    set16(b, plainEnd + 4, 1);
    CHECK_ERROR_CONTAINS(readError(b), "multi-disk archives are not supported");
  }
  SUBCASE("bad CRC") {
    Bytes b = plain;
    b[100] ^= 1;
    auto reader = readOk(b);
    llvm::Error err = reader->verifyCrc("conv2d_0.weight");
    REQUIRE(!!err);
    std::string msg = llvm::toString(std::move(err));
    CHECK_ERROR_CONTAINS(msg, "test.pnnx.bin: entry 'conv2d_0.weight': CRC-32 of data [45, "
                              "1989) is 0x");
    llvm::Error missing = reader->verifyCrc("nope");
    REQUIRE(!!missing);
    CHECK_ERROR_CONTAINS(llvm::toString(std::move(missing)), "no entry 'nope'");
  }
  SUBCASE("hostile names are escaped in messages") {
    Bytes b = plain;
    b[30] = '\n';
    b[plainCd + 46] = '\n';
    set16(b, plainCd + 10, 8);
    CHECK_ERROR_CONTAINS(readError(b), "entry '\\x0aonv2d_0.weight'");
  }
  SUBCASE("missing file") {
    auto reader = ZipReader::open("/nonexistent/model.pnnx.bin");
    REQUIRE(!reader);
    CHECK_ERROR_CONTAINS(llvm::toString(reader.takeError()),
                         "/nonexistent/model.pnnx.bin: cannot open");
  }
}

TEST_CASE("ZipReader: entries that share bytes are refused") {
  // The stored "b" (local header and data, 34 bytes) nested in the data of
  // "a"; the central directory points "b" at that nested copy (offset 31).
  ZipWriter only(ZipLayout::Plain);
  only.add("b", Bytes{'x', 'y', 'z'});
  Bytes inner = finishOk(only);
  inner.resize(30 + 1 + 3);
  for (bool bFirst : {false, true}) {
    ZipWriter w(ZipLayout::Plain);
    if (bFirst)
      w.add("b", Bytes{'x', 'y', 'z'});
    w.add("a", inner);
    if (!bFirst)
      w.add("b", Bytes{'x', 'y', 'z'});
    Bytes zip = finishOk(w);
    const size_t cd = get32(zip, zip.size() - 22 + 16);
    const size_t bRecord = bFirst ? cd : cd + 46 + 1;
    const size_t aOffset = bFirst ? 34 : 0;
    set32(zip, bRecord + 42, uint32_t(aOffset + 31));
    INFO("b listed first: " << bFirst);
    std::string msg = readError(zip);
    CHECK_ERROR_CONTAINS(msg, "test.pnnx.bin: entry 'b': local header and data [" +
                                  std::to_string(aOffset + 31) + ", " +
                                  std::to_string(aOffset + 65) + ") overlap entry 'a' [" +
                                  std::to_string(aOffset) + ", " + std::to_string(aOffset + 65) +
                                  "); entries must not share bytes");
  }
  // Without the patch the same archive reads.
  ZipWriter w(ZipLayout::Plain);
  w.add("a", inner);
  w.add("b", Bytes{'x', 'y', 'z'});
  CHECK(readError(finishOk(w)) == "");
}

TEST_CASE("ZipReader: comment after the end record is allowed") {
  Bytes b = oneEntry(ZipLayout::Plain);
  const char comment[] = "hello, comment";
  set16(b, b.size() - 2, uint16_t(sizeof(comment) - 1));
  b.insert(b.end(), comment, comment + sizeof(comment) - 1);
  auto reader = readOk(b);
  CHECK(reader->entries().size() == 1);
}

TEST_CASE("MappedFile: empty files and directories") {
  llvm::SmallString<128> path;
  REQUIRE(!llvm::sys::fs::createTemporaryFile("kc-empty", "bin", path));
  auto file = MappedFile::open(path);
  REQUIRE_MESSAGE(!!file, llvm::toString(file.takeError()));
  CHECK((*file)->bytes().empty());
  CHECK((*file)->path() == path);
  std::string msg = readError((*file)->bytes(), path);
  CHECK_ERROR_CONTAINS(msg, "file is 0 bytes");
  llvm::sys::fs::remove(path);

  auto dir = MappedFile::open("/tmp");
  REQUIRE(!dir);
  CHECK_ERROR_CONTAINS(llvm::toString(dir.takeError()), "/tmp: not a regular file");
}

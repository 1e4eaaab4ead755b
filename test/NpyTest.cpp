//===- NpyTest.cpp - Tests of the NumPy .npy reader and writer ------------===//
#include "TestPaths.h"

#include "kc/Support/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <doctest/doctest.h>

#include <cstring>

using namespace kc;

namespace {

using Bytes = std::vector<uint8_t>;

#define CHECK_ERROR_CONTAINS(msg, needle)                                                          \
  CHECK_MESSAGE((msg).find(needle) != std::string::npos,                                           \
                "error \"" << (msg) << "\" does not mention \"" << (needle) << "\"")

/// A version 1.0 (or `major`.0) .npy image with header text `header` (padded
/// with a newline only) followed by `dataSize` bytes 0, 1, 2, ...
Bytes npyImage(const std::string &header, size_t dataSize, unsigned major = 1) {
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  std::string text = header + "\n";
  size_t len = text.size();
  b.push_back(uint8_t(len));
  b.push_back(uint8_t(len >> 8));
  if (major >= 2) {
    b.push_back(uint8_t(len >> 16));
    b.push_back(uint8_t(len >> 24));
  }
  b.insert(b.end(), text.begin(), text.end());
  for (size_t i = 0; i < dataSize; ++i)
    b.push_back(uint8_t(i));
  return b;
}

std::string readError(const Bytes &b) {
  auto a = readNpyBuffer(b, "x.npy");
  if (a)
    return "";
  return llvm::toString(a.takeError());
}

NpyArray readOk(const Bytes &b) {
  auto a = readNpyBuffer(b, "x.npy");
  REQUIRE_MESSAGE(!!a, llvm::toString(a.takeError()));
  return std::move(*a);
}

/// A zero-filled array. (Taking the shape by value also sidesteps a GCC 12
/// -Wnonnull false positive on copy-assigning an empty vector.)
NpyArray zeros(DType type, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = type;
  a.shape = std::move(shape);
  a.data.assign(size_t(a.numElements()) * dtypeSize(type), 0);
  return a;
}

uint32_t floatBits(const NpyArray &a, size_t index) {
  uint32_t bits;
  std::memcpy(&bits, a.data.data() + index * 4, 4);
  return bits;
}

} // namespace

TEST_CASE("Npy: reads a reference input written by NumPy") {
  KC_SKIP_UNLESS_DIR(kc::test::modelsDir(), "KC_MODELS_DIR");
  const std::string path = kc::test::modelsDir() + "/cnn_basic/in0.npy";
  auto a = readNpy(path);
  REQUIRE_MESSAGE(!!a, llvm::toString(a.takeError()));
  CHECK(a->dtype == DType::F32);
  CHECK(a->shape == std::vector<int64_t>{1, 3, 32, 32});
  CHECK(a->numElements() == 3 * 32 * 32);
  REQUIRE(a->data.size() == 3 * 32 * 32 * 4);
  // Bit patterns from /usr/bin/python3 with numpy:
  //   a[0,0,0,0] = 1.1261438 (0x3f90257b), a[0,1,5,7] = 0.6593375 (0x3f28ca58),
  //   a[0,2,31,31] = -2.1142766 (0xc007504f).
  CHECK(floatBits(*a, 0) == 0x3f90257b);
  CHECK(floatBits(*a, 1 * 1024 + 5 * 32 + 7) == 0x3f28ca58);
  CHECK(floatBits(*a, 2 * 1024 + 31 * 32 + 31) == 0xc007504f);
  float first;
  std::memcpy(&first, a->data.data(), 4);
  CHECK(first == doctest::Approx(1.1261438f));

  // The writer reproduces NumPy's file byte for byte.
  auto bytes = writeNpyBuffer(*a);
  REQUIRE_MESSAGE(!!bytes, llvm::toString(bytes.takeError()));
  auto original = llvm::MemoryBuffer::getFile(path, false, false);
  REQUIRE(!!original);
  CHECK(Bytes((*original)->getBufferStart(), (*original)->getBufferEnd()) == *bytes);
}

TEST_CASE("Npy: writer output matches numpy.save") {
  // Sizes and header texts of numpy.save (NumPy 1.24) for these arrays; each
  // header is padded with spaces to 118 bytes, newline included, so that the
  // data starts at 128.
  struct Case {
    DType type;
    std::vector<int64_t> shape;
    size_t fileSize;
    const char *text;
  };
  const Case cases[] = {
      {DType::F32, {1, 3}, 140, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }"},
      {DType::F64, {}, 136, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
      {DType::Bool, {5}, 133, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }"},
      {DType::U8, {0}, 128, "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }"},
      {DType::C128,
       {2, 1, 3, 2},
       320,
       "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 1, 3, 2), }"},
      {DType::I8,
       {123456},
       123584,
       "{'descr': '|i1', 'fortran_order': False, 'shape': (123456,), }"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    NpyArray a = zeros(c.type, c.shape);
    auto b = writeNpyBuffer(a);
    REQUIRE_MESSAGE(!!b, llvm::toString(b.takeError()));
    REQUIRE(b->size() == c.fileSize);
    CHECK(Bytes(b->begin(), b->begin() + 8) == Bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0});
    CHECK(((*b)[8] | (*b)[9] << 8) == 118);
    std::string header(b->begin() + 10, b->begin() + 128);
    std::string text = c.text;
    CHECK(header == text + std::string(117 - text.size(), ' ') + "\n");
  }
}

TEST_CASE("Npy: round trip through a file for every dtype and rank") {
  llvm::SmallString<128> path;
  REQUIRE(!llvm::sys::fs::createTemporaryFile("kc-npy-test", "npy", path));
  const std::vector<std::vector<int64_t>> shapes = {{},     {0},          {5},
                                                    {2, 3}, {1, 3, 0, 2}, {2, 1, 3, 2}};
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32, DType::I16,
                     DType::I8, DType::U8, DType::Bool, DType::C64, DType::C128}) {
    for (const auto &shape : shapes) {
      CAPTURE(dtypeName(type).str());
      CAPTURE(shape.size());
      NpyArray a = zeros(type, shape);
      for (size_t i = 0; i < a.data.size(); ++i)
        a.data[i] = type == DType::Bool ? uint8_t(i % 2) : uint8_t(i * 13 + 1);
      llvm::Error err = writeNpy(path, a);
      REQUIRE_MESSAGE(!err, llvm::toString(std::move(err)));
      auto back = readNpy(path);
      REQUIRE_MESSAGE(!!back, llvm::toString(back.takeError()));
      CHECK(back->dtype == a.dtype);
      CHECK(back->shape == a.shape);
      CHECK(back->data == a.data);
    }
  }
  llvm::sys::fs::remove(path);
}

TEST_CASE("Npy: accepted header variants") {
  SUBCASE("version 2.0 and 3.0") {
    for (unsigned major : {2u, 3u}) {
      NpyArray a =
          readOk(npyImage("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 16, major));
      CHECK(a.dtype == DType::I64);
      CHECK(a.shape == std::vector<int64_t>{2});
    }
  }
  SUBCASE("key order, double quotes, Python 2 longs, no trailing comma") {
    NpyArray a =
        readOk(npyImage("{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"|u1\"}", 6));
    CHECK(a.dtype == DType::U8);
    CHECK(a.shape == std::vector<int64_t>{2, 3});
    CHECK(a.data == Bytes{0, 1, 2, 3, 4, 5});
  }
  SUBCASE("scalar, half, bool") {
    NpyArray s = readOk(npyImage("{'descr': '<f2', 'fortran_order': False, 'shape': (), }", 2));
    CHECK(s.dtype == DType::F16);
    CHECK(s.shape.empty());
    CHECK(s.numElements() == 1);
    NpyArray b = readOk(npyImage("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 3));
    CHECK(b.dtype == DType::Bool);
  }
}

TEST_CASE("Npy: errors") {
  SUBCASE("Fortran order") {
    std::string msg =
        readError(npyImage("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24));
    CHECK_ERROR_CONTAINS(msg, "x.npy: Fortran-order (column-major) arrays are not supported");
  }
  SUBCASE("big-endian") {
    std::string msg =
        readError(npyImage("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8));
    CHECK_ERROR_CONTAINS(msg, "x.npy: big-endian dtype '>f4' is not supported");
  }
  SUBCASE("object dtype") {
    std::string msg =
        readError(npyImage("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16));
    CHECK_ERROR_CONTAINS(msg, "x.npy: object dtype '|O' is not supported");
  }
  SUBCASE("unsupported and structured dtypes") {
    CHECK_ERROR_CONTAINS(
        readError(npyImage("{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", 8)),
        "unsupported dtype descriptor '<u4'");
    CHECK_ERROR_CONTAINS(readError(npyImage("{'descr': [('a', '<f4')], 'fortran_order': "
                                            "False, 'shape': (2,), }",
                                            8)),
                         "structured (record) dtypes are not supported");
  }
  SUBCASE("malformed headers") {
    const char *bad[][2] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", "expected a quoted string"},
        {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unexpected key 'x'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
         "duplicate key 'descr'"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "expected True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}", "expected a dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
         "dimension overflows"},
        {"{'descr: '<f4'}", "expected ':'"},
        {"['descr']", "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", "unexpected text"},
    };
    for (auto &item : bad) {
      // Plain variables: the check macros' lambdas cannot capture bindings.
      const char *header = item[0], *needle = item[1];
      CAPTURE(header);
      std::string msg = readError(npyImage(header, 8));
      CHECK_ERROR_CONTAINS(msg, "x.npy: malformed header");
      CHECK_ERROR_CONTAINS(msg, needle);
    }
  }
  SUBCASE("bad magic, version, header length") {
    Bytes b = npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
    Bytes magic = b;
    magic[1] = 'X';
    CHECK_ERROR_CONTAINS(readError(magic), "x.npy: not a .npy file");
    CHECK_ERROR_CONTAINS(readError(Bytes(b.begin(), b.begin() + 7)), "not a .npy file");
    Bytes version = b;
    version[6] = 4;
    CHECK_ERROR_CONTAINS(readError(version), "unsupported .npy format version 4.0");
    Bytes length = b;
    length[8] = 0xFF;
    length[9] = 0xFF;
    CHECK_ERROR_CONTAINS(readError(length), "header of 65535 bytes at offset 10 runs past end of "
                                            "file");
  }
  SUBCASE("data size disagrees with the shape") {
    const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK_ERROR_CONTAINS(readError(npyImage(header, 23)),
                         "x.npy: shape (2, 3) of '<f4' needs 24 bytes of data, but the file has "
                         "23 after the header");
    CHECK_ERROR_CONTAINS(readError(npyImage(header, 25)), "but the file has 25");
  }
  SUBCASE("element count overflows") {
    std::string msg = readError(npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                         "(4294967296, 4294967296), }",
                                         8));
    CHECK_ERROR_CONTAINS(msg, "overflows a 64-bit byte count");
  }
  SUBCASE("missing file") {
    auto a = readNpy("/nonexistent/in0.npy");
    REQUIRE(!a);
    CHECK_ERROR_CONTAINS(llvm::toString(a.takeError()), "/nonexistent/in0.npy: cannot open");
  }
  SUBCASE("writer: dtype without descriptor, size mismatch") {
    NpyArray a;
    a.dtype = DType::BF16;
    a.shape = {2};
    a.data.resize(4);
    llvm::Error err = writeNpy("/tmp/never-written.npy", a);
    REQUIRE(!!err);
    CHECK_ERROR_CONTAINS(llvm::toString(std::move(err)),
                         "/tmp/never-written.npy: dtype bf16 has no .npy descriptor");
    a.dtype = DType::F32;
    auto b = writeNpyBuffer(a);
    REQUIRE(!b);
    CHECK_ERROR_CONTAINS(llvm::toString(b.takeError()), "shape (2,) of f32 needs 8 bytes, but "
                                                        "the array holds 4");
  }
}

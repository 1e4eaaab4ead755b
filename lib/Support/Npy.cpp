//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and a
// minor version byte, the header length (u16 in 1.0, u32 in 2.0 and 3.0),
// then the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
// padded with spaces and a newline, then the raw element bytes.
//
//===----------------------------------------------------------------------===//
#include "kc/Support/Npy.h"

#include "kc/Support/MappedFile.h"
#include "kc/Support/OutputFile.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace kc {

namespace {

constexpr char Magic[] = "\x93NUMPY";
constexpr size_t MagicSize = 6;
/// NumPy aligns the start of the data to this many bytes.
constexpr size_t HeaderAlign = 64;
/// NumPy leaves room for the first dimension to grow to this many digits.
constexpr size_t GrowthAxisMaxDigits = 21;

template <typename... Args>
llvm::Error npyError(llvm::StringRef file, fmt::format_string<Args...> format, Args &&...args) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 file + llvm::Twine(": ") +
                                     fmt::format(format, std::forward<Args>(args)...));
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// The dtype of a descriptor such as '<f4' or '|b1', or an error message.
std::optional<DType> parseDescr(llvm::StringRef descr, std::string &problem) {
  if (descr.size() < 2) {
    problem = fmt::format("malformed dtype descriptor {}", quoteInput(descr));
    return std::nullopt;
  }
  char order = descr[0];
  llvm::StringRef code = descr.drop_front();
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    // NumPy accepts bare codes too, but never writes them.
    order = '=';
    code = descr;
  }
  std::optional<DType> type = llvm::StringSwitch<std::optional<DType>>(code)
                                  .Case("f2", DType::F16)
                                  .Case("f4", DType::F32)
                                  .Case("f8", DType::F64)
                                  .Case("i1", DType::I8)
                                  .Case("i2", DType::I16)
                                  .Case("i4", DType::I32)
                                  .Case("i8", DType::I64)
                                  .Case("u1", DType::U8)
                                  .Case("b1", DType::Bool)
                                  .Case("c8", DType::C64)
                                  .Case("c16", DType::C128)
                                  .Default(std::nullopt);
  if (!type) {
    if (code == "O")
      problem = fmt::format("object dtype {} is not supported (arrays of Python objects "
                            "are pickled, not raw bytes)",
                            quoteInput(descr));
    else
      problem = fmt::format("unsupported dtype descriptor {}; expected one of f2 f4 f8 "
                            "i1 i2 i4 i8 u1 b1 c8 c16",
                            quoteInput(descr));
    return std::nullopt;
  }
  // Byte order only matters for multi-byte elements.
  if (dtypeSize(*type) > 1 && order != '<') {
    if (order == '>')
      problem = fmt::format("big-endian dtype {} is not supported; expected little-endian "
                            "'<'",
                            quoteInput(descr));
    else
      problem = fmt::format("dtype {} has no explicit byte order; expected little-endian "
                            "'<'",
                            quoteInput(descr));
    return std::nullopt;
  }
  return type;
}

/// The descriptor NumPy writes for `type`, or "" if it has none.
llvm::StringRef descrFor(DType type) {
  switch (type) {
  case DType::F16:
    return "<f2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::U8:
    return "|u1";
  case DType::Bool:
    return "|b1";
  case DType::C64:
    return "<c8";
  case DType::C128:
    return "<c16";
  case DType::Unknown:
  case DType::C32:
  case DType::BF16:
    return "";
  }
  return "";
}

/// A parser for the header dict: a small subset of Python literal syntax.
class HeaderParser {
public:
  explicit HeaderParser(llvm::StringRef text) : text_(text) {}

  /// Parses the dict; on failure returns false and sets problem().
  bool parse(std::string &descr, bool &fortranOrder, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!expect('{'))
      return false;
    skipSpace();
    while (!peek('}')) {
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (!expect(':'))
        return false;
      skipSpace();
      bool *seen = nullptr;
      if (key == "descr") {
        seen = &haveDescr;
        if (peek('['))
          return fail("structured (record) dtypes are not supported");
        if (!parseString(descr))
          return false;
      } else if (key == "fortran_order") {
        seen = &haveOrder;
        if (!parseBool(fortranOrder))
          return false;
      } else if (key == "shape") {
        seen = &haveShape;
        if (!parseShape(shape))
          return false;
      } else {
        return fail(fmt::format("unexpected key {}", quoteInput(key)));
      }
      if (*seen)
        return fail(fmt::format("duplicate key {}", quoteInput(key)));
      *seen = true;
      skipSpace();
      if (peek(','))
        ++pos_, skipSpace();
      else if (!peek('}'))
        return fail("expected ',' or '}'");
    }
    ++pos_;
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the closing '}'");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(fmt::format("missing key '{}'", !haveDescr   ? "descr"
                                                  : !haveOrder ? "fortran_order"
                                                               : "shape"));
    return true;
  }

  const std::string &problem() const { return problem_; }

private:
  bool fail(std::string what) {
    problem_ = fmt::format("malformed header at column {}: {}", pos_, what);
    return false;
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool expect(char c) {
    if (!peek(c))
      return fail(fmt::format("expected {}", quoteInput(llvm::StringRef(&c, 1))));
    ++pos_;
    return true;
  }
  bool parseString(std::string &out) {
    if (!peek('\'') && !peek('"'))
      return fail("expected a quoted string");
    char quote = text_[pos_++];
    size_t close = text_.find(quote, pos_);
    if (close == llvm::StringRef::npos)
      return fail("unterminated string");
    llvm::StringRef body = text_.slice(pos_, close);
    // Escapes never occur in the keys and descriptors NumPy writes.
    if (body.contains('\\'))
      return fail("escape sequences in strings are not supported");
    out = body.str();
    pos_ = close + 1;
    return true;
  }
  bool parseBool(bool &out) {
    llvm::StringRef rest = text_.drop_front(pos_);
    if (rest.startswith("True")) {
      out = true;
      pos_ += 4;
    } else if (rest.startswith("False")) {
      out = false;
      pos_ += 5;
    } else {
      return fail("expected True or False");
    }
    return true;
  }
  bool parseShape(std::vector<int64_t> &shape) {
    if (!expect('('))
      return false;
    skipSpace();
    while (!peek(')')) {
      if (peek('-'))
        return fail("negative dimension");
      if (pos_ >= text_.size() || !llvm::isDigit(text_[pos_]))
        return fail("expected a dimension");
      int64_t dim = 0;
      while (pos_ < text_.size() && llvm::isDigit(text_[pos_])) {
        int digit = text_[pos_++] - '0';
        if (dim > (INT64_MAX - digit) / 10)
          return fail("dimension overflows a 64-bit integer");
        dim = dim * 10 + digit;
      }
      if (peek('L')) // Python 2 long literal, as old NumPy wrote.
        ++pos_;
      shape.push_back(dim);
      skipSpace();
      if (peek(','))
        ++pos_, skipSpace();
      else if (!peek(')'))
        return fail("expected ',' or ')' in the shape");
    }
    ++pos_;
    return true;
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
  std::string problem_;
};

} // namespace

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

llvm::Expected<NpyArray> readNpyBuffer(llvm::ArrayRef<uint8_t> bytes, llvm::StringRef name) {
  if (bytes.size() < MagicSize + 4 ||
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()), MagicSize) !=
          llvm::StringRef(Magic, MagicSize))
    return npyError(name, "not a .npy file (expected the magic \\x93NUMPY and a version)");
  const unsigned major = bytes[6], minor = bytes[7];
  size_t headerStart;
  uint64_t headerLen;
  if (major == 1 && minor == 0) {
    headerStart = 10;
    headerLen = uint64_t(bytes[8]) | uint64_t(bytes[9]) << 8;
  } else if ((major == 2 || major == 3) && minor == 0) {
    headerStart = 12;
    if (bytes.size() < headerStart)
      return npyError(name, "file is {} bytes, too short for a version {}.0 preamble", bytes.size(),
                      major);
    headerLen = uint64_t(bytes[8]) | uint64_t(bytes[9]) << 8 | uint64_t(bytes[10]) << 16 |
                uint64_t(bytes[11]) << 24;
  } else {
    return npyError(name, "unsupported .npy format version {}.{}; expected 1.0, 2.0 or 3.0", major,
                    minor);
  }
  if (headerLen > bytes.size() - headerStart)
    return npyError(name, "header of {} bytes at offset {} runs past end of file ({} bytes)",
                    headerLen, headerStart, bytes.size());
  const llvm::StringRef header(reinterpret_cast<const char *>(bytes.data()) + headerStart,
                               headerLen);

  std::string descr;
  bool fortranOrder = false;
  NpyArray array;
  HeaderParser parser(header);
  if (!parser.parse(descr, fortranOrder, array.shape))
    return npyError(name, "{}", parser.problem());
  std::string problem;
  std::optional<DType> type = parseDescr(descr, problem);
  if (!type)
    return npyError(name, "{}", problem);
  array.dtype = *type;
  // Column-major data would need a transpose; NumPy writes C order unless
  // asked otherwise, and the reference data is all C order.
  if (fortranOrder)
    return npyError(name, "Fortran-order (column-major) arrays are not supported; expected "
                          "'fortran_order': False");

  uint64_t byteCount = dtypeSize(array.dtype);
  for (int64_t dim : array.shape)
    if (__builtin_mul_overflow(byteCount, uint64_t(dim), &byteCount))
      return npyError(name, "shape {} of {} elements overflows a 64-bit byte count",
                      clipInput(shapeString(array.shape)), quoteInput(descr));
  const uint64_t available = bytes.size() - headerStart - headerLen;
  if (byteCount != available)
    return npyError(name,
                    "shape {} of {} needs {} bytes of data, but the file has {} after the "
                    "header",
                    clipInput(shapeString(array.shape)), quoteInput(descr), byteCount, available);
  const uint8_t *data = bytes.data() + headerStart + headerLen;
  array.data.assign(data, data + byteCount);
  return array;
}

llvm::Expected<NpyArray> readNpy(llvm::StringRef path) {
  auto file = MappedFile::open(path);
  if (!file)
    return file.takeError();
  return readNpyBuffer((*file)->bytes(), path);
}

/// The .npy image of `array`; `name` names the destination in errors.
static llvm::Expected<std::vector<uint8_t>> encodeNpy(const NpyArray &array, llvm::StringRef name) {
  const llvm::StringRef descr = descrFor(array.dtype);
  if (descr.empty())
    return npyError(name, "dtype {} has no .npy descriptor", dtypeName(array.dtype).str());
  uint64_t byteCount = dtypeSize(array.dtype);
  for (int64_t dim : array.shape)
    if (dim < 0 || __builtin_mul_overflow(byteCount, uint64_t(dim), &byteCount))
      return npyError(name, "invalid shape {}", shapeString(array.shape));
  if (byteCount != array.data.size())
    return npyError(name, "shape {} of {} needs {} bytes, but the array holds {}",
                    shapeString(array.shape), dtypeName(array.dtype).str(), byteCount,
                    array.data.size());

  // Exactly what numpy.save writes (numpy/lib/format.py, _write_array_header
  // and _wrap_header), so files compare equal byte for byte.
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   descr.str(), shapeString(array.shape));
  if (!array.shape.empty()) {
    size_t digits = std::to_string(array.shape.front()).size();
    header.append(GrowthAxisMaxDigits > digits ? GrowthAxisMaxDigits - digits : 0, ' ');
  }
  // Version 1.0 unless the padded header overflows its 16-bit length.
  const size_t headerLen = header.size() + 1; // with the final newline
  auto padFor = [&](size_t preamble) {
    return HeaderAlign - (preamble + headerLen) % HeaderAlign; // 1..64, as NumPy
  };
  const bool version2 = headerLen + padFor(MagicSize + 4) > 0xFFFF;
  const size_t pad = padFor(MagicSize + (version2 ? 6 : 4));
  const size_t total = headerLen + pad;

  std::vector<uint8_t> out(Magic, Magic + MagicSize);
  out.push_back(version2 ? 2 : 1);
  out.push_back(0);
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i)
    out.push_back(uint8_t(total >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), pad, ' ');
  out.push_back('\n');
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

llvm::Expected<std::vector<uint8_t>> writeNpyBuffer(const NpyArray &array) {
  return encodeNpy(array, "npy writer");
}

llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array) {
  auto bytes = encodeNpy(array, path);
  if (!bytes)
    return bytes.takeError();
  return writeOutputFile(path, *bytes);
}

} // namespace kc

//===- kc/Support/Quote.h - Input quoted in diagnostics ---------*- C++ -*-===//
///
/// \file
/// Diagnostics quote the offending input, and hostile input can be a
/// megabyte of one token or hold control bytes. Every quotation goes through
/// quoteInput, which bounds it.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace kc {

/// Most bytes of input a diagnostic quotes.
constexpr size_t kMaxQuotedBytes = 200;

/// `text` in single quotes: bytes outside printable ASCII, the quote and the
/// backslash as `\xHH`; beyond kMaxQuotedBytes cut, with the full length:
/// `'abc...' (1048576 bytes)`.
std::string quoteInput(llvm::StringRef text);
/// quoteInput without the quotes, for text that reads as a name or a type
/// (`nn.Conv2d`, `f32[1,3]`), bounded and escaped the same way.
std::string clipInput(llvm::StringRef text);

} // namespace kc

//===- Quote.cpp - Input quoted in diagnostics ----------------------------===//
#include "kc/Support/Quote.h"

namespace kc {

static std::string bounded(llvm::StringRef text, llvm::StringRef quote) {
  static const char hex[] = "0123456789abcdef";
  std::string out = quote.str();
  for (unsigned char c : text.take_front(kMaxQuotedBytes)) {
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += char(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (text.size() > kMaxQuotedBytes)
    return out + "..." + quote.str() + " (" + std::to_string(text.size()) + " bytes)";
  return out + quote.str();
}

std::string quoteInput(llvm::StringRef text) { return bounded(text, "'"); }
std::string clipInput(llvm::StringRef text) { return bounded(text, ""); }

} // namespace kc

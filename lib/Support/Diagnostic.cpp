//===- Diagnostic.cpp - Where a message is located ------------------------===//
#include "kc/Support/Diagnostic.h"

#include "llvm/ADT/Twine.h"

namespace kc {

/// True when `message` starts with `LOCATION: KIND: `, LOCATION holding no
/// ": " (a file, `file:line:col`, `<stdin>`).
static bool hasLocation(llvm::StringRef message, llvm::StringRef kind) {
  size_t at = message.find((": " + kind + ": ").str());
  return at != llvm::StringRef::npos && at > 0 && !message.take_front(at).contains(": ");
}

std::string locateMessage(llvm::StringRef file, llvm::StringRef message, llvm::StringRef kind) {
  if (hasLocation(message, kind))
    return message.str();
  // One that says its kind but no place (`error: ...`) is placed like any
  // other, without saying the kind twice.
  message.consume_front((kind + ": ").str());
  if (file.empty())
    return (kind + ": " + message).str();
  message.consume_front((file + ": ").str());
  return (file + ": " + kind + ": " + message).str();
}

} // namespace kc

//===- OutputFile.cpp - Checked output ------------------------------------===//
#include "kc/Support/OutputFile.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>
#include <unistd.h>

namespace kc {

static llvm::Error outputError(llvm::StringRef path, const char *what, std::error_code ec) {
  return llvm::createStringError(ec, (path == "-" ? llvm::StringRef("<stdout>") : path) +
                                         ": error: " + what + ": " + ec.message());
}

llvm::Error writeOutputFile(llvm::StringRef path,
                            llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    os.clear_error();
    return outputError(path, "cannot open for writing", ec);
  }
  llvm::Error err = write(os);
  // A failed write, flush or close sets the stream's error. Standard output
  // is flushed, never closed.
  if (path == "-")
    os.flush();
  else
    os.close();
  if (!err && os.has_error())
    err = outputError(path, "cannot write", os.error());
  // An unchecked error would make the stream's destructor abort.
  os.clear_error();
  if (err && path != "-" && llvm::sys::fs::is_regular_file(path))
    llvm::sys::fs::remove(path);
  return err;
}

llvm::Error writeOutputFile(llvm::StringRef path, llvm::ArrayRef<uint8_t> bytes) {
  return writeOutputFile(path, [&](llvm::raw_ostream &os) {
    os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    return llvm::Error::success();
  });
}

llvm::Error writeOutputFile(llvm::StringRef path, llvm::StringRef text) {
  return writeOutputFile(path, llvm::arrayRefFromStringRef(text));
}

static const char *exitToolName = "kc";

static void checkStandardStreams() {
  llvm::raw_fd_ostream &out = llvm::outs();
  out.flush();
  bool failed = out.has_error();
  if (failed) {
    std::string reason = out.error().message();
    out.clear_error();
    llvm::errs() << exitToolName << ": <stdout>: error: cannot write: " << reason << "\n";
  }
  llvm::errs().flush();
  llvm::errs().clear_error();
  if (failed)
    ::_exit(1);
}

void checkStandardStreamsAtExit(const char *toolName) {
  exitToolName = toolName;
  // Both streams must exist before the handler is registered: handlers and
  // static destructors run in reverse order, so it then runs before theirs.
  (void)llvm::outs();
  (void)llvm::errs();
  std::atexit(checkStandardStreams);
}

} // namespace kc

//===- OutputFile.cpp - Checked output ------------------------------------===//
#include "kc/Support/OutputFile.h"

#include "llvm/Support/FileSystem.h"


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

} // namespace kc

//===- ToolVersion.cpp - `--version` of kc's tools ------------------------===//
#include "ToolVersion.h"

#include "kc/Support/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace kc::tools {

void setVersionPrinter(const char *tool) {
  static const char *name = tool;
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << name << " (kc) " << kc::version() << "\n"
       << "  built with LLVM " << LLVM_VERSION_STRING << " Support\n";
  });
}

} // namespace kc::tools

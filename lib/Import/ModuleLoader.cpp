//===- ModuleLoader.cpp - Load a module from any input --------------------===//
#include "kc/Import/ModuleLoader.h"
#include "kc/IR/Parser.h"
#include "kc/Import/Importer.h"
#include "kc/Support/ZipArchive.h"

#include "llvm/Support/MemoryBuffer.h"

namespace kc {

static bool looksLikePnnx(llvm::StringRef text) {
  return text.ltrim().startswith("7767517");
}

llvm::Expected<ModulePtr> loadModule(llvm::StringRef path, llvm::StringRef weightsPath) {
  if (path.endswith(".param"))
    return importPnnx(path, weightsPath);
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(buf.getError(),
                                   path + ": error: cannot read: " + buf.getError().message());
  llvm::StringRef text = (*buf)->getBuffer();
  if (looksLikePnnx(text)) // a .param piped through stdin or without the suffix
    return importPnnx(path, weightsPath);
  if (weightsPath.empty())
    return loadModuleFromText(text, path == "-" ? "<stdin>" : path);
  // kc text names its weights; their bytes come from the given archive.
  auto zip = ZipReader::open(weightsPath);
  if (!zip)
    return zip.takeError();
  return parseModule(text, path == "-" ? "<stdin>" : path, zip->get());
}

llvm::Expected<ModulePtr> loadModuleFromText(llvm::StringRef text, llvm::StringRef name) {
  if (looksLikePnnx(text))
    return importPnnxFromBuffer(text, name, nullptr);
  return parseModule(text, name);
}

} // namespace kc

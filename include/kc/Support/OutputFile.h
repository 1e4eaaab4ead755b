//===- kc/Support/OutputFile.h - Checked output ------------------*- C++ -*-===//
///
/// \file
/// Every byte kc writes goes through here, so that a full disk, a closed
/// pipe or an unwritable path is an error naming the file, never a lost
/// write or an abort. LLVM's streams abort the process (`IO failure on
/// output stream`) when they are destroyed with an unchecked error; these
/// helpers check and clear it.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace kc {

/// Opens `path` (`-` is standard output), lets `write` fill it, then flushes
/// and closes it. An error from `write` is passed on; a failure to open or
/// write is `path: error: cannot open for writing: <reason>` or
/// `path: error: cannot write: <reason>`. On failure a partly written
/// regular file is removed.
llvm::Error writeOutputFile(llvm::StringRef path,
                            llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);
/// writeOutputFile with fixed contents.
llvm::Error writeOutputFile(llvm::StringRef path, llvm::ArrayRef<uint8_t> bytes);
llvm::Error writeOutputFile(llvm::StringRef path, llvm::StringRef text);
/// Tools check their standard output at exit with
/// tools::checkStandardStreamsAtExit (tools/common/Diagnostics.h).

} // namespace kc

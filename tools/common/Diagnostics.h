//===- Diagnostics.h - How kc's tools report errors -------------*- C++ -*-===//
///
/// \file
/// Every error kc-opt and kc-run print starts the same way:
///
///   TOOL: FILE[:LINE[:COL]]: error: MESSAGE
///
/// A message that carries its own location (`model.pnnx.param:4:14: error:
/// ...`, `in0.npy: error: ...`) keeps it; any other is placed at the file the
/// tool was working on (the model, an input, a plugin), and one that starts
/// with that file's name (`in0.npy: cannot open`) has `error:` put after it
/// (kc::locateMessage).
/// Only mistakes in the command line itself, which concern no file, read
/// `TOOL: error: MESSAGE`.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kc::tools {

/// `message` as one line of the form above; `file` may be empty.
std::string formatDiagnostic(llvm::StringRef tool, llvm::StringRef file, llvm::StringRef kind,
                             llvm::StringRef message);

/// Prints each error of `err` to stderr in that form; returns 1, the exit
/// status of a failed run.
int reportError(llvm::StringRef tool, llvm::StringRef file, llvm::Error err);
int reportError(llvm::StringRef tool, llvm::StringRef file, const llvm::Twine &message);
void reportWarning(llvm::StringRef tool, llvm::StringRef file, const llvm::Twine &message);

/// For tools that print to standard output: at exit, a failed write to
/// stdout is reported as `TOOL: <stdout>: error: cannot write: REASON` and
/// the exit status becomes 1; a failed write to stderr is dropped (there is
/// nowhere to report it). Either way the process exits instead of aborting
/// (LLVM's streams abort when destroyed with an unchecked error). It checks
/// the tool's own llvm::outs(): libkc keeps a copy of LLVM Support inside,
/// with streams of its own, so this cannot live in the library. It also
/// covers what the option library prints before exiting (`--help`,
/// `--version`), and makes the process ignore SIGXFSZ, so that a write
/// beyond `ulimit -f` fails with EFBIG and is reported like any other
/// failed write instead of killing the tool. Call once, early in main.
void checkStandardStreamsAtExit(const char *tool);

/// llvm::cl::ParseCommandLineOptions, with its complaints (unknown options,
/// bad values) printed as `TOOL: error: ...` and `TOOL: note: ...`; exits
/// with status 1 on a bad command line.
void parseCommandLine(int argc, char **argv, llvm::StringRef overview);

} // namespace kc::tools

//===- Diagnostics.cpp - How kc's tools report errors ---------------------===//
#include "Diagnostics.h"

#include "kc/Support/Diagnostic.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace kc::tools {

std::string formatDiagnostic(llvm::StringRef tool, llvm::StringRef file, llvm::StringRef kind,
                             llvm::StringRef message) {
  return (tool + ": " + locateMessage(file, message, kind)).str();
}

int reportError(llvm::StringRef tool, llvm::StringRef file, llvm::Error err) {
  llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase &info) {
    llvm::errs() << formatDiagnostic(tool, file, "error", info.message()) << "\n";
  });
  return 1;
}

int reportError(llvm::StringRef tool, llvm::StringRef file, const llvm::Twine &message) {
  llvm::errs() << formatDiagnostic(tool, file, "error", message.str()) << "\n";
  return 1;
}

void reportWarning(llvm::StringRef tool, llvm::StringRef file, const llvm::Twine &message) {
  llvm::errs() << formatDiagnostic(tool, file, "warning", message.str()) << "\n";
}

/// Runs `parse` with standard error going to a temporary file, and returns
/// what was written there: the option library reports some mistakes (a bad
/// option value) straight to llvm::errs() rather than to the stream it is
/// given.
template <typename F> static std::string captureStderr(F &&parse) {
  llvm::errs().flush();
  std::FILE *tmp = std::tmpfile();
  int saved = tmp ? ::dup(STDERR_FILENO) : -1;
  if (saved < 0 || ::dup2(::fileno(tmp), STDERR_FILENO) < 0) {
    parse(); // no capture: the library's own wording
    return "";
  }
  parse();
  llvm::errs().flush();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(tmp);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, tmp)) > 0;)
    text.append(buf, n);
  std::fclose(tmp);
  return text;
}

void parseCommandLine(int argc, char **argv, llvm::StringRef overview) {
  std::string complaints;
  llvm::raw_string_ostream errs(complaints);
  bool ok = true;
  std::string direct =
      captureStderr([&] { ok = llvm::cl::ParseCommandLineOptions(argc, argv, overview, &errs); });
  if (ok) {
    llvm::errs() << direct;
    return;
  }
  // The library prints `TOOL: Message.` lines: the first is the error, the
  // rest ("Did you mean ...?") are notes.
  std::string tool = llvm::sys::path::filename(argv[0]).str();
  llvm::SmallVector<llvm::StringRef, 4> lines;
  std::string all = direct + errs.str();
  llvm::StringRef(all).trim().split(lines, '\n', -1, false);
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].trim();
    line.consume_front(tool + ": ");
    std::string text = line.str();
    if (!text.empty() && i == 0)
      text[0] = char(std::tolower(static_cast<unsigned char>(text[0])));
    llvm::errs() << formatDiagnostic(tool, "", i == 0 ? "error" : "note", text) << "\n";
  }
  std::exit(1);
}

static const char *exitToolName = "kc";

static void checkStandardStreams() {
  llvm::raw_fd_ostream &out = llvm::outs();
  out.flush();
  bool failed = out.has_error();
  if (failed) {
    std::string reason = out.error().message();
    out.clear_error();
    llvm::errs() << formatDiagnostic(exitToolName, "<stdout>", "error", "cannot write: " + reason)
                 << "\n";
  }
  llvm::errs().flush();
  llvm::errs().clear_error();
  if (failed)
    ::_exit(1);
}

void checkStandardStreamsAtExit(const char *tool) {
  exitToolName = tool;
  // Both streams must exist before the handler is registered: handlers and
  // static destructors run in reverse order, so it then runs before theirs.
  (void)llvm::outs();
  (void)llvm::errs();
  std::atexit(checkStandardStreams);
}

} // namespace kc::tools

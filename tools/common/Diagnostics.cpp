//===- Diagnostics.cpp - How kc's tools report errors ---------------------===//
#include "Diagnostics.h"

#include "kc/Support/Diagnostic.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <csignal>
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

/// While the command line is parsed, standard error goes to a temporary file
/// (see captureStderr). The option library may exit in the middle of it
/// (`--help`, `--version`); the exit handler then puts standard error back
/// (endCapture) before it reports anything, so that nothing is lost.
static int savedStderr = -1;
static std::FILE *captureFile = nullptr;

/// Ends a capture in progress: standard error is the real one again, and the
/// text written meanwhile is returned ("" when no capture is in progress).
static std::string endCapture() {
  if (savedStderr < 0)
    return "";
  llvm::errs().flush();
  ::dup2(savedStderr, STDERR_FILENO);
  ::close(savedStderr);
  savedStderr = -1;
  std::string text;
  std::rewind(captureFile);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, captureFile)) > 0;)
    text.append(buf, n);
  std::fclose(captureFile);
  captureFile = nullptr;
  return text;
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
    if (saved >= 0)
      ::close(saved);
    if (tmp)
      std::fclose(tmp);
    parse(); // no capture: the library's own wording
    return "";
  }
  savedStderr = saved;
  captureFile = tmp;
  parse();
  return endCapture();
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
  // An exit during the parse of the command line (--help, --version) leaves
  // standard error captured.
  std::string captured = endCapture();
  if (!captured.empty())
    llvm::errs() << captured;
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
  // Beyond `ulimit -f`, the kernel kills a writer with SIGXFSZ, leaving a
  // truncated file and no message; ignored, the write fails with EFBIG and
  // is reported (and a partly written file removed) like any other.
  std::signal(SIGXFSZ, SIG_IGN);
  // Both streams must exist before the handler is registered: handlers and
  // static destructors run in reverse order, so it then runs before theirs.
  (void)llvm::outs();
  (void)llvm::errs();
  std::atexit(checkStandardStreams);
}

} // namespace kc::tools

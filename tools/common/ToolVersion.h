//===- ToolVersion.h - `--version` of kc's tools ----------------*- C++ -*-===//
#pragma once

namespace kc::tools {

/// Makes `--version` print kc's version (not LLVM's, the command-line
/// library's default): `kc-opt (kc) 0.1.0`. Call before parsing options.
void setVersionPrinter(const char *tool);

} // namespace kc::tools

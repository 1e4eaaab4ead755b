//===- Version.cpp - kc's version -----------------------------------------===//
#include "kc/Support/Version.h"

namespace kc {

const char *version() { return KC_VERSION_STRING; }

} // namespace kc

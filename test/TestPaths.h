//===- TestPaths.h - Where unit tests find shared data ----------*- C++ -*-===//
///
/// \file
/// Locations of the shared reference models and the old-pnnx corpus, for
/// tests that read real files. Each comes from an environment variable, or
/// else from a compile definition of the test target. A test whose folder is
/// missing says so with MESSAGE and returns, since doctest cannot skip:
///
///   TEST_CASE("reads every model") {
///     KC_SKIP_UNLESS_DIR(kc::test::modelsDir(), "KC_MODELS_DIR");
///     ...
///   }
///
//===----------------------------------------------------------------------===//
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <sys/stat.h>

namespace kc::test {

/// The value of environment variable `var` if set and non-empty, else `dflt`.
inline std::string envOr(const char *var, const char *dflt) {
  const char *value = std::getenv(var);
  return value && *value ? std::string(value) : std::string(dflt);
}

/// The reference models (`$KC_MODELS_DIR`, default ../shared/models).
inline std::string modelsDir() {
#ifdef KC_DEFAULT_MODELS_DIR
  return envOr("KC_MODELS_DIR", KC_DEFAULT_MODELS_DIR);
#else
  return envOr("KC_MODELS_DIR", "");
#endif
}

/// The model zoo (`$KC_ZOO_DIR`, default ../shared-zoo), made by scripts/zoo.py.
inline std::string zooDir() {
#ifdef KC_DEFAULT_ZOO_DIR
  return envOr("KC_ZOO_DIR", KC_DEFAULT_ZOO_DIR);
#else
  return envOr("KC_ZOO_DIR", "");
#endif
}

/// The old-pnnx file corpus (`$KC_CORPUS_DIR`, default ../shared/pnnx-corpus).
inline std::string corpusDir() {
#ifdef KC_DEFAULT_CORPUS_DIR
  return envOr("KC_CORPUS_DIR", KC_DEFAULT_CORPUS_DIR);
#else
  return envOr("KC_CORPUS_DIR", "");
#endif
}

/// True if `dir` names an existing directory.
inline bool haveDir(const std::string &dir) {
  struct stat st;
  return !dir.empty() && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace kc::test

/// Ends the current test, visibly, when directory `dir` does not exist;
/// `envVar` is the variable that sets it.
#define KC_SKIP_UNLESS_DIR(dir, envVar)                                                            \
  do {                                                                                             \
    const std::string kcSkipDir_ = (dir);                                                          \
    if (!::kc::test::haveDir(kcSkipDir_)) {                                                        \
      MESSAGE("skipped: " << kcSkipDir_ << " not found (set " << (envVar) << ")");                 \
      return;                                                                                      \
    }                                                                                              \
  } while (false)

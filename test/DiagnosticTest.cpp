//===- DiagnosticTest.cpp - Where error messages are located --------------===//
#include "kc/Support/Diagnostic.h"

#include <doctest/doctest.h>

using kc::locateMessage;

TEST_CASE("diagnostic: a message is placed at its file once") {
  // Already located: unchanged.
  CHECK(locateMessage("m.pnnx.param", "m.pnnx.param:4:14: error: unknown dtype 'f33'") ==
        "m.pnnx.param:4:14: error: unknown dtype 'f33'");
  CHECK(locateMessage("m.pnnx.param", "in0.npy: error: input 0 (%0) must be f32[1,3]") ==
        "in0.npy: error: input 0 (%0) must be f32[1,3]");
  CHECK(locateMessage("", "<stdin>:1:1: error: expected 'fn'") ==
        "<stdin>:1:1: error: expected 'fn'");
  // Starting with the file's name: the kind goes after it.
  CHECK(locateMessage("x.npy", "x.npy: cannot open: No such file or directory") ==
        "x.npy: error: cannot open: No such file or directory");
  // Anything else is placed at the file.
  CHECK(locateMessage("m.pnnx.param",
                      "@main: nn.Conv2d 'c' (line 4): padding must not be negative") ==
        "m.pnnx.param: error: @main: nn.Conv2d 'c' (line 4): padding must not be negative");
  CHECK(locateMessage("m.pnnx.param", "w.pnnx.bin: file is 20 bytes, too small") ==
        "m.pnnx.param: error: w.pnnx.bin: file is 20 bytes, too small");
  // A message that mentions "error:" further in is not located by it.
  CHECK(locateMessage("m.kc", "pass pipeline: bad value: error: x") ==
        "m.kc: error: pass pipeline: bad value: error: x");
  // A message that says its kind but no place gets the place, and the kind
  // once (it used to read `m.pnnx.param: error: error: cannot export: ...`).
  CHECK(locateMessage("m.pnnx.param", "error: cannot export: x") ==
        "m.pnnx.param: error: cannot export: x");
  CHECK(locateMessage("", "error: x") == "error: x");
  CHECK(locateMessage("m.kc", "warning: w", "warning") == "m.kc: warning: w");
  // No file; another kind.
  CHECK(locateMessage("", "no model given") == "error: no model given");
  CHECK(locateMessage("m.kc", "weight 'w' has no data", "warning") ==
        "m.kc: warning: weight 'w' has no data");
}

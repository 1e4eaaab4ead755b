# lit configuration for kc's FileCheck tests.
import os
import lit.formats

config.name = "kc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".kc", ".param", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kc_bin_dir, "..", "lit-tests")

llvm_bin = "/usr/lib/llvm-14/bin"
config.environment["PATH"] = os.pathsep.join(
    [config.kc_bin_dir, llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%kc_root", os.path.dirname(config.test_source_root)))
config.substitutions.append(("%kc_version", config.kc_version))
config.substitutions.append(("%kc_lib_dir", os.path.join(config.kc_bin_dir, "..", "lib")))
# Time and memory bounds hold for optimized builds; the sanitizers' own
# memory (shadow, quarantine) and slowdown would break them.
if getattr(config, "kc_sanitize", False):
    config.available_features.add("sanitize")
# Suites over ../shared/models find them through KC_MODELS_DIR.
models = os.environ.get("KC_MODELS_DIR",
                        os.path.join(os.path.dirname(config.test_source_root), "..", "shared", "models"))
config.substitutions.append(("%models", models))
if os.path.isdir(models):
    config.available_features.add("models")
else:
    lit_config.note("KC_MODELS_DIR (%s) is absent: tests that need the shared models are skipped" % models)

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

# lit configuration of the example plugin's tests: kc-opt and kc-run from
# the kc the plugin was built against, %plugin the plugin itself.
import os
import lit.formats

config.name = "KcExamplePlugin"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".kc"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join(
    [config.kc_tools_dir, config.llvm_tools_dir, os.environ.get("PATH", "")])
config.substitutions.append(("%plugin", config.plugin))

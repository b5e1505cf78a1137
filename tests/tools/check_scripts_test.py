#!/usr/bin/env python3
"""The source-tree checks of tools/run_tests.sh, run on small trees written here: a clean tree
passes, and each rule broken once fails naming the file, the line and the rule (so that a
check cannot pass silently). Registered in tests/CMakeLists.txt (ctest check_scripts_test,
label unit)."""
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")


def run_check(script, files):
    """Writes `files` ({path: text}) into a fresh tree and runs the script on it."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as out:
                out.write(text)
        done = subprocess.run([sys.executable, os.path.join(TOOLS, script), root],
                              capture_output=True, text=True, check=False)
        return done.returncode, done.stdout + done.stderr


# Every folder including what it may: the layering check passes on this tree.
CLEAN_LAYERING = {
    "core/units.h": "#pragma once\n#include <string>\n",
    "core/job.cpp": '#include "core/units.h"\n',
    "cost_models/step.cpp": '#include "core/units.h"\n#include "cost_models/step.h"\n',
    "cost_models/step.h": "#pragma once\n",
    "planner/search.cpp": '#include "core/units.h"\n#include "cost_models/step.h"\n',
    "profiler/fit.cpp": '#include "core/units.h"\n',
    "profiler/cuda/gemm.cpp": "#include <cublasLt.h>\n#include <cuda_runtime.h>\n",
    "profiler/backends.cpp": '#include "parplan/parplan_config.h"\n'
                             '#include "profiler/cuda/gemm.h"\n',
    "executor/nccl/comm.cpp": "#include <nccl.h>\n",
    "executor/kernels.cu": "#include <cuda_runtime.h>\n",
    "tools/main.cpp": '#include "planner/search.h"\n#include "executor/step.h"\n',
    "tests/fuzz/job_fuzzer.cpp": '#include "fuzz_input.h"\n#include "tools/main.h"\n',
    "tests/fuzz/fuzz_input.h": "#pragma once\n",
    "hardware_profiles/nodes/dgx.json": "{}\n",
    "build/generated/any.cpp": '#include "tools/main.h"\n',  # build trees are skipped
    "gpu_deps/include/CLI/CLI.hpp": '#include "tools/main.h"\n',  # copied dependencies too
}


class LayeringCheck(unittest.TestCase):
    def test_clean_tree_passes(self):
        code, out = run_check("check_layering.py", CLEAN_LAYERING)
        self.assertEqual(code, 0, out)

    def test_each_rule_broken_fails_naming_file_line_and_rule(self):
        broken = {
            "core/bad.cpp": ('#include <vector>\n#include "planner/search.h"\n', 2,
                             "core/ may include only core"),
            "cost_models/bad.cpp": ('#include "planner/search.h"\n', 1,
                                    "cost_models/ may include only core, cost_models"),
            "planner/bad.h": ('#include "tools/main.h"\n', 1, "planner/ may include only"),
            "profiler/bad.cpp": ('#include "executor/step.h"\n', 1,
                                 "profiler/ may include only core, profiler"),
            "executor/bad.cpp": ('#include "cost_models/step.h"\n', 1,
                                 "executor/ may include only core, executor"),
            "planner/gpu.cpp": ("\n#include <cuda_runtime.h>\n", 2, "CUDA/cuBLAS/CUPTI/NCCL"),
            "executor/comm.h": ("#include <nccl.h>\n", 1, "CUDA/cuBLAS/CUPTI/NCCL"),
            "hardware_profiles/x.cpp": ("int x;\n", 1, "holds no C++"),
            "misc/x.cpp": ("int x;\n", 1, "not in the rules table"),
        }
        for path, (text, line, rule) in broken.items():
            with self.subTest(path=path):
                code, out = run_check("check_layering.py", {**CLEAN_LAYERING, path: text})
                self.assertEqual(code, 1, out)
                self.assertIn(f"{path}:{line}: ", out)
                self.assertIn(rule, out)
                self.assertIn("1 violation", out)


def function(name, lines, body_line="  x += 1;"):
    """A function `name` of exactly `lines` lines, signature to closing brace."""
    return f"void {name}(int& x) {{\n" + (body_line + "\n") * (lines - 2) + "}\n"


# Braces in strings, characters, comments and preprocessor lines, a constructor with member
# initialisers holding lambdas and braces, a class, a namespace and a macro-defined test.
TRICKY = r'''#include <string>
#define OPEN {
namespace n {
// a comment with a brace {
struct S {
  S(int a) : a_(a), f_([](int v) { return v; }), b_{1, 2} {
    const char* text = "}}}";
    char c = '}';
    int big = 100'000;
  }
  int size() const { return a_; }
  int a_;
};
TEST(Suite, Name) {
  /* { */
  auto raw = R"x(})x";
}
}  // namespace n
'''


class FunctionLengthCheck(unittest.TestCase):
    def test_functions_at_their_limits_pass(self):
        code, out = run_check("check_function_length.py", {
            "tools/a.cpp": function("at_limit", 150) + TRICKY,
            "planner/b.cpp": function("at_planner_limit", 100),
            "tools/c.h": function("headers_are_not_scanned", 300),
        })
        self.assertEqual(code, 0, out)

    def test_functions_over_their_limits_fail_naming_file_line_and_limit(self):
        code, out = run_check("check_function_length.py", {
            "tools/a.cpp": TRICKY + function("too_long", 151, '  s += "{";  // }'),
            "cost_models/b.cu": "\n" + function("too_long_for_cost_models", 101),
        })
        self.assertEqual(code, 1, out)
        self.assertIn("tools/a.cpp:19: too_long: 151 lines, limit 150", out)
        self.assertIn("cost_models/b.cu:2: too_long_for_cost_models: 101 lines, limit 100", out)
        self.assertIn("2 function(s) over the limit", out)

    def test_tricky_text_is_one_class_and_three_functions(self):
        sys.path.insert(0, TOOLS)
        import check_function_length  # pylint: disable=import-outside-toplevel
        found = check_function_length.functions(TRICKY)
        self.assertEqual([(name, first, last) for name, first, last in found],
                         [("S", 6, 10), ("size", 11, 11), ("TEST(Suite, Name)", 14, 17)])


if __name__ == "__main__":
    unittest.main(verbosity=2)

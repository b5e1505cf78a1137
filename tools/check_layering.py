#!/usr/bin/env python3
"""Include-direction check: every #include in the tree follows the library layering.

Usage: tools/check_layering.py [ROOT]   (ROOT defaults to the repository holding this script)
Prints one line per violation (file:line: rule) and exits 1 when there is any. Runs in
tools/run_tests.sh; tests/tools/check_scripts_test.py runs it on small trees, clean and not.
"""
import os
import re
import sys

# Folder -> the folders whose headers it may include ("*": any). Dependencies point down:
# tools -> planner -> cost_models -> core, tools -> profiler -> core, tools -> executor -> core.
# A folder holding C++ that is not in this table is a violation too.
MAY_INCLUDE = {
    "core": {"core"},
    "cost_models": {"core", "cost_models"},
    "planner": {"core", "cost_models", "planner"},
    "profiler": {"core", "profiler"},
    "executor": {"core", "executor"},
    "tools": "*",
    "tests": "*",
    "hardware_profiles": None,  # data only: no C++ at all
}
# Generated at configure time (build/parplan/parplan_config.h): anyone may include it.
GENERATED = {"parplan"}
# The toolkit's CUDA, cuBLAS, CUPTI and NCCL headers (cuda_runtime.h, cublasLt.h, cupti.h,
# nccl.h, ...; included without a folder), allowed only in CUDA sources and the folders below.
CUDA_HEADER = re.compile(r"^(cuda|cuda_\w+|cublas\w*|cupti\w*|nccl\w*)\.h$")
CUDA_FOLDERS = re.compile(r"(^|/)cuda/|^executor/nccl/|^tests/gpu/")
CUDA_SUFFIXES = (".cu", ".cuh")

CPP_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def cpp_files(root):
    """Every C++ file under root, skipping hidden folders, build trees (build*/) and
    tools/gpu_check_prepare.sh's copied dependencies (gpu_deps/)."""
    for folder, dirs, files in os.walk(root):
        top = os.path.relpath(folder, root) == "."
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and
                         not (top and (d.startswith("build") or d == "gpu_deps")))
        for name in sorted(files):
            if name.endswith(CPP_SUFFIXES):
                yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")


def included_folder(root, path, header):
    """The top folder of a quoted include, resolved like the compiler: beside the file first."""
    beside = os.path.normpath(os.path.join(os.path.dirname(path), header))
    if os.path.exists(os.path.join(root, beside)):
        return beside.replace(os.sep, "/").split("/")[0]
    return header.split("/")[0] if "/" in header else None


def check_file(root, path):
    folder = path.split("/")[0] if "/" in path else "(top level)"
    if folder not in MAY_INCLUDE:
        return [f"{path}:1: folder {folder}/ is not in the rules table of tools/check_layering.py"]
    allowed = MAY_INCLUDE[folder]
    if allowed is None:
        return [f"{path}:1: {folder}/ holds no C++"]
    cuda_ok = path.endswith(CUDA_SUFFIXES) or CUDA_FOLDERS.search(path) is not None
    problems = []
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as source:
        for number, line in enumerate(source, 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            quote, header = match.groups()
            if CUDA_HEADER.match(header) and not cuda_ok:
                problems.append(f"{path}:{number}: includes {header}: CUDA/cuBLAS/CUPTI/NCCL "
                                f"headers only in .cu/.cuh files, */cuda/ and executor/nccl/")
            if quote != '"' or allowed == "*":
                continue
            target = included_folder(root, path, header)
            if target in GENERATED or target in allowed:
                continue
            problems.append(f"{path}:{number}: includes \"{header}\": {folder}/ may include "
                            f"only {', '.join(sorted(allowed))}")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = [p for path in cpp_files(root) for p in check_file(root, path)]
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_layering: {len(problems)} violation(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

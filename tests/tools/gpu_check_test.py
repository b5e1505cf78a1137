#!/usr/bin/env python3
"""Tests of tools/gpu_check.sh's parts that need no GPU (registered in tests/CMakeLists.txt).

  gpu_check_test.py summary
      tools/gpu_check_summary.py on tests/data/gpu_check/one_gpu (and on a folder where only
      the preflight ran): every number of gpu_check_summary.json recomputed from the inputs.
  gpu_check_test.py preflight
      tools/gpu_check.sh on a machine without a GPU stops in its preflight (exit 2) naming what
      is missing, finds NCCL in a fake pip venv (PARPLAN_NCCL_VENVS) and leaves a summary.
  gpu_check_test.py configure CMAKE CXX
      tools/gpu_check_prepare.sh writes a folder; a configure (no CUDA) with -DPARPLAN_DEPS_DIR
      and the system prefixes hidden (CMAKE_IGNORE_PREFIX_PATH=/usr;/) finds Eigen,
      nlohmann_json and CLI11 there, builds GoogleTest from its sources and skips MPI; without
      PARPLAN_DEPS_DIR the same configure fails saying what to do. Configure only, ~15 s.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "gpu_check")
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAILED: {what}", file=sys.stderr)


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def run_summary(out):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gpu_check_summary.py"), out],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, f"gpu_check_summary.py exit {r.returncode}: {r.stderr}")
    path = os.path.join(out, "gpu_check_summary.json")
    check(os.path.exists(path), "no gpu_check_summary.json")
    check(not [f for f in os.listdir(out) if f.startswith(".gpu_check_summary.")],
          "a temporary file was left beside the summary")
    return load(path)


def test_summary(tmp):
    out = os.path.join(tmp, "one_gpu")
    shutil.copytree(os.path.join(DATA, "one_gpu"), out)
    s = run_summary(out)
    check(s["schema"] == "parplan-gpu-check/1", "schema")
    check(s["status"] == "failed" and s["failed_steps"] == ["gpu_tests"],
          f"status failed with gpu_tests failed, got {s['status']} {s['failed_steps']}")
    check([st["name"] for st in s["steps"]][:3] == ["preflight", "configure", "build"], "steps")
    check(s["steps"][2]["seconds"] == 187, "build seconds")
    t = s["gpu_tests"]
    check((t["passed"], t["failed"], t["skipped"], t["total"]) == (4, 1, 1, 6),
          f"gpu tests 4/1/1/6, got {t}")
    check(t["failed_names"] == ["ProfilerGemm.Fp8WithinTolerance"], "failed test name")

    profile = load(os.path.join(out, "profile_cuda_quick.json"))
    gemm = s["gemm"]["by_precision"]
    check(sorted(gemm) == ["bf16", "fp16", "fp8"], f"precisions, got {sorted(gemm)}")
    for p, g in gemm.items():
        best = max(r["tflops"] for r in profile["measurements"]["gemm"] if r["precision"] == p)
        peak = profile["node"]["gpu"]["dense_tflops"][p]["value"]
        check(close(g["best_tflops"], best) and close(g["peak_tflops"], peak), f"{p} TFLOP/s")
        check(close(g["fraction_of_peak"], best / peak), f"{p} fraction of peak")
        efficiency = profile["node"]["gpu"]["matmul_efficiency"][p]["value"]
        check(close(g["fitted_matmul_efficiency"], efficiency), f"{p} fitted efficiency")
    check(gemm["bf16"]["best_shape"] == {"m": 8192, "n": 8192, "k": 8192, "batch": 1}, "shape")
    check(close(s["gemm"]["fitted_throughput_tflops"], 742.0), "fitted throughput")

    n = s["nccl"]
    check(n["all_reduce_busbw_gbps"] is None and "1 rank(s)" in n["reason"],
          f"one GPU: no busbw, with a reason; got {n}")

    run = load(os.path.join(out, "run_one_gpu.json"))
    sim = load(os.path.join(out, "simulate_one_gpu.json"))
    e = s["executor"]
    check(close(e["measured_step_time_s"], run["step_time_s"]), "measured step time")
    check(close(e["predicted_step_time_s"], sim["step_time_s"]), "predicted step time")
    check(close(e["predicted_over_measured"], sim["step_time_s"] / run["step_time_s"]), "ratio")
    check(close(e["executor_mfu"], sim["mfu"] * sim["step_time_s"] / run["step_time_s"]), "MFU")

    # A multi-GPU profile beside it supplies the busbw.
    multi = dict(profile)
    multi["coverage"] = dict(profile["coverage"], ranks=8)
    multi["measurements"] = dict(profile["measurements"], collectives=[
        {"op": "all_reduce", "group_size": 8, "span": "intra_node", "size_bytes": 1 << 30,
         "algbw_gbps": 205.0, "busbw_gbps": 358.75},
        {"op": "all_reduce", "group_size": 8, "span": "intra_node", "size_bytes": 1 << 20,
         "algbw_gbps": 60.0, "busbw_gbps": 105.0},
        {"op": "all_gather", "group_size": 8, "span": "intra_node", "size_bytes": 1 << 30,
         "algbw_gbps": 400.0, "busbw_gbps": 350.0}])
    with open(os.path.join(out, "profile_cuda_quick_np8.json"), "w", encoding="utf-8") as f:
        json.dump(multi, f)
    n = run_summary(out)["nccl"]
    check(close(n["all_reduce_busbw_gbps"], 358.75) and n["group_size"] == 8 and
          n["profile"] == "profile_cuda_quick_np8.json", f"eight GPUs: busbw 358.75, got {n}")

    # Only the preflight ran: every figure null with a reason, still valid JSON.
    out = os.path.join(tmp, "preflight")
    os.makedirs(out)
    with open(os.path.join(out, "steps.tsv"), "w", encoding="utf-8") as f:
        f.write("preflight\tfailed\t0\tgpu_check.log\n")
    s = run_summary(out)
    check(s["status"] == "failed" and s["failed_steps"] == ["preflight"], "preflight status")
    check(s["gpu_tests"]["total"] is None and "gpu_tests.xml" in s["gpu_tests"]["reason"],
          "gpu tests reason")
    check(s["gemm"]["by_precision"] == {} and "profile_cuda_quick.json" in s["gemm"]["reason"],
          "gemm reason")
    check(s["executor"]["executor_mfu"] is None and "run_one_gpu.json" in s["executor"]["reason"],
          "executor reason")


def test_preflight(tmp):
    venv = os.path.join(tmp, "venv")
    nccl = os.path.join(venv, "lib", "python3.12", "site-packages", "nvidia", "nccl")
    os.makedirs(os.path.join(nccl, "include"))
    os.makedirs(os.path.join(nccl, "lib"))
    open(os.path.join(nccl, "include", "nccl.h"), "w").close()
    open(os.path.join(nccl, "lib", "libnccl.so.2"), "w").close()
    env = dict(os.environ, PARPLAN_NCCL_VENVS=venv, PARPLAN_GPU_BUILD=os.path.join(tmp, "b"),
               PARPLAN_DEPS_DIR=os.path.join(tmp, "no_deps"),
               PARPLAN_NCCL_SYSTEM_INCLUDES=os.path.join(tmp, "no_system_nccl"))
    env.pop("NCCL_HOME", None)
    # Hide nvidia-smi so the check stops even on a machine with a GPU.
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "nvidia-smi"), "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\necho 'NVIDIA-SMI has failed (test stand-in)'\nexit 9\n")
    os.chmod(os.path.join(bin_dir, "nvidia-smi"), 0o755)
    env["PATH"] = bin_dir + os.pathsep + env["PATH"]
    out = os.path.join(tmp, "out")
    r = subprocess.run(["bash", os.path.join(ROOT, "tools", "gpu_check.sh"), out], env=env,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2, f"preflight exit 2, got {r.returncode}: {r.stdout} {r.stderr}")
    log = open(os.path.join(out, "gpu_check.log"), encoding="utf-8").read()
    check("preflight: nvidia-smi failed" in log, f"log names nvidia-smi: {log}")
    check(f"preflight: NCCL at {nccl}" in log, f"log names the venv's NCCL: {log}")
    check(not os.path.exists(env["PARPLAN_GPU_BUILD"]), "preflight configured nothing")
    s = load(os.path.join(out, "gpu_check_summary.json"))
    check(s["failed_steps"] == ["preflight"], f"summary after preflight: {s['failed_steps']}")


def configure(cmake, cxx, build, extra):
    # The C compiler (GoogleTest's project enables C) is CMake's default one.
    args = [cmake, "-S", ROOT, "-B", build, "-DCMAKE_IGNORE_PREFIX_PATH=/usr;/",
            f"-DCMAKE_CXX_COMPILER={cxx}",
            f"-DPython3_EXECUTABLE={sys.executable}", "-DPARPLAN_ENABLE_CUDA=OFF",
            "-DPARPLAN_ENABLE_BENCHMARKS=OFF",
            # FindMPI finds mpicxx on PATH past the hidden prefixes: hide MPI itself.
            "-DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON"] + extra
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_configure(tmp, cmake, cxx):
    deps = os.path.join(tmp, "deps")
    r = subprocess.run(["bash", os.path.join(ROOT, "tools", "gpu_check_prepare.sh"), deps],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"gpu_check_prepare.sh exit {r.returncode}: {r.stderr}")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(deps) for f in fs)
    check(size < 32 << 20, f"gpu_deps under 32 MiB (64 MiB travel with the tree), got {size}")
    r = configure(cmake, cxx, os.path.join(tmp, "with"), [f"-DPARPLAN_DEPS_DIR={deps}"])
    check(r.returncode == 0, f"configure with PARPLAN_DEPS_DIR: {r.stdout[-3000:]} {r.stderr}")
    cache = open(os.path.join(tmp, "with", "CMakeCache.txt"), encoding="utf-8").read()
    for name in ("Eigen3_DIR", "nlohmann_json_DIR", "CLI11_DIR"):
        check(f"{name}:PATH={deps}/" in cache, f"{name} found in {deps}")
    check(os.path.isdir(os.path.join(tmp, "with", "googletest")), "GoogleTest from the sources")
    # PARPLAN_ENABLE_MPI stays ON; with MPI hidden too (a lent machine has none) it is skipped.
    check("[ ] MPI" in r.stdout, "MPI hidden: the configure skips it")
    r = configure(cmake, cxx, os.path.join(tmp, "without"), [])
    check(r.returncode != 0 and "tools/gpu_check_prepare.sh" in r.stderr,
          f"configure without PARPLAN_DEPS_DIR fails naming the prepare script: {r.stderr}")


def main(argv):
    if len(argv) < 2 or argv[1] not in ("summary", "preflight", "configure") or (
            argv[1] == "configure" and len(argv) != 4):
        print("usage: gpu_check_test.py summary | preflight | configure CMAKE CXX",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        if argv[1] == "summary":
            test_summary(tmp)
        elif argv[1] == "preflight":
            test_preflight(tmp)
        else:
            test_configure(tmp, *argv[2:4])
    print(f"{argv[1]}: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""tools/gpu_check_summary.py OUTDIR: the one summary of tools/gpu_check.sh.

Reads what gpu_check.sh left in OUTDIR and writes OUTDIR/gpu_check_summary.json (temporary
file + rename) with:
  steps            every step of steps.tsv (name, status ok|failed|timeout|skipped, seconds, log)
  gpu_tests        passed / failed / skipped / total of `ctest -L gpu` (gpu_tests.xml, junit)
  gemm             per precision the best measured TFLOP/s of profile_cuda_quick.json
                   (measurements.gemm[].tflops) against the node's peak
                   (node.gpu.dense_tflops.<precision>.value, SM count x clock x FLOP/clock
                   on sm_80/89/90), the fitted asymptote / peak
                   (node.gpu.matmul_efficiency.<precision>.value) and the joint fit
                   (fits.gemm.node.throughput_tflops); keys in profiler/README.md
                   (fp32: the executor's cuBLAS GEMMs on the CUDA cores, fitted alone)
  executor_kernels the executor's own kernels the profile timed (node.gpu.kernel_gbps,
                   attention_tflops) and kernel_figures_precision, the job precision they
                   describe
  nccl             the best all-reduce busbw_gbps of measurements.collectives (the multi-GPU
                   profile when there is one), or null with a reason
  executor         `parplan run --json` (executor/executor.cpp run_report_to_json) against
                   `parplan simulate --json` (tools/estimate_json.cpp): measured and predicted
                   step_time_s, their ratio, the predicted MFU and the executor's MFU under the
                   same definition (model FLOPs of the step / time / peak), i.e.
                   predicted mfu x predicted / measured step time
Missing or broken inputs give null with a reason, never an exception: a failed step must
still leave a summary. Standard library only (the lent GPU machine has python3 and nothing
else to rely on). Tested by tests/tools/gpu_check_test.py on tests/data/gpu_check/.
"""

import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET


def read_json(path):
    """(object, None) or (None, reason)."""
    if not os.path.exists(path):
        return None, f"no {os.path.basename(path)}"
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"{os.path.basename(path)} is not JSON: {e}"


def read_steps(out):
    steps = []
    path = os.path.join(out, "steps.tsv")
    if not os.path.exists(path):
        return steps
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 4:
                continue
            name, status, seconds, log = fields[:4]
            try:
                seconds = int(seconds)
            except ValueError:
                seconds = None
            steps.append({"name": name, "status": status, "seconds": seconds, "log": log})
    return steps


def gpu_tests(out):
    """Counts of ctest's junit file (ctest --output-junit): testcase status run|fail|disabled."""
    path = os.path.join(out, "gpu_tests.xml")
    if not os.path.exists(path):
        return {"passed": None, "failed": None, "skipped": None, "total": None,
                "failed_names": [], "reason": "no gpu_tests.xml (the gpu_tests step did not run)"}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return {"passed": None, "failed": None, "skipped": None, "total": None,
                "failed_names": [], "reason": f"gpu_tests.xml is not XML: {e}"}
    passed, failed, skipped, failed_names = 0, 0, 0, []
    for case in root.iter("testcase"):
        status = case.get("status", "")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed += 1
            failed_names.append(case.get("name", "?"))
        elif case.find("skipped") is not None or status in ("disabled", "notrun"):
            skipped += 1
        else:
            passed += 1
    total = passed + failed + skipped
    result = {"passed": passed, "failed": failed, "skipped": skipped, "total": total,
              "failed_names": failed_names}
    if total == 0:
        result["reason"] = "ctest ran no gpu test (were the gpu test executables built?)"
    return result


def figure(node_gpu, key, precision):
    """node.gpu.<key>.<precision>.value of the node schema, or None."""
    entry = (node_gpu.get(key) or {}).get(precision)
    if isinstance(entry, dict):
        entry = entry.get("value")
    return entry if isinstance(entry, (int, float)) and entry > 0 else None


def gemm(profile, reason):
    if profile is None:
        return {"by_precision": {}, "reason": reason}
    records = (profile.get("measurements") or {}).get("gemm") or []
    node_gpu = (profile.get("node") or {}).get("gpu") or {}
    best = {}
    for r in records:
        p, t = r.get("precision"), r.get("tflops")
        if isinstance(t, (int, float)) and (p not in best or t > best[p]["tflops"]):
            best[p] = {"tflops": t, "m": r.get("m"), "n": r.get("n"), "k": r.get("k"),
                       "batch": r.get("batch")}
    by_precision = {}
    for p, b in sorted(best.items()):
        peak = figure(node_gpu, "dense_tflops", p)
        by_precision[p] = {"best_tflops": b["tflops"],
                           "best_shape": {k: b[k] for k in ("m", "n", "k", "batch")},
                           "peak_tflops": peak,
                           "fraction_of_peak": b["tflops"] / peak if peak else None,
                           # the fitted asymptote / peak (profiler/README.md, Fits)
                           "fitted_matmul_efficiency": figure(node_gpu, "matmul_efficiency", p)}
    fit = ((profile.get("fits") or {}).get("gemm") or {}).get("node") or {}
    out = {"device": (profile.get("device") or {}).get("name"),
           "by_precision": by_precision,
           "fitted_throughput_tflops": fit.get("throughput_tflops"),
           "fit_rms_relative_error": fit.get("rms_relative_error")}
    if not by_precision:
        out["reason"] = "the profile has no GEMM measurements"
    return out


def executor_kernels(profile):
    """The executor's own kernels as the profile timed them (node.gpu: kernel_gbps,
    attention_tflops, and the precision they describe), or None."""
    if profile is None:
        return None
    node_gpu = (profile.get("node") or {}).get("gpu") or {}

    def value(entry):
        return entry.get("value") if isinstance(entry, dict) else entry

    return {"precision": node_gpu.get("kernel_figures_precision"),
            "kernel_gbps": {k: value(v) for k, v in (node_gpu.get("kernel_gbps") or {}).items()},
            "attention_tflops": {k: value(v)
                                 for k, v in (node_gpu.get("attention_tflops") or {}).items()}}


def nccl(profiles):
    """Best all-reduce busbw over the profiles (multi-GPU first), with its size and group."""
    reasons = []
    for name, profile, reason in profiles:
        if profile is None:
            reasons.append(reason)
            continue
        records = (profile.get("measurements") or {}).get("collectives") or []
        all_reduce = [r for r in records if r.get("op") == "all_reduce" and
                      isinstance(r.get("busbw_gbps"), (int, float))]
        if not all_reduce:
            ranks = (profile.get("coverage") or {}).get("ranks")
            reasons.append(f"{name}: no all-reduce measured ({ranks} rank(s); collectives "
                           "need two or more GPUs under mpirun)")
            continue
        best = max(all_reduce, key=lambda r: r["busbw_gbps"])
        return {"all_reduce_busbw_gbps": best["busbw_gbps"],
                "size_bytes": best.get("size_bytes"), "group_size": best.get("group_size"),
                "span": best.get("span"), "profile": name}
    return {"all_reduce_busbw_gbps": None, "reason": "; ".join(reasons) or "no profile"}


def executor(run, run_reason, sim, sim_reason):
    out = {"measured_step_time_s": None, "predicted_step_time_s": None,
           "predicted_over_measured": None, "predicted_mfu": None, "executor_mfu": None}
    reasons = [r for r in (run_reason, sim_reason) if r]
    if run is not None:
        out["measured_step_time_s"] = run.get("step_time_s")
        out["tokens_per_s"] = run.get("tokens_per_s")
        out["gemm_tflops_per_rank"] = run.get("gemm_tflops_per_rank")
        out["backend"] = run.get("backend")
    if sim is not None:
        out["predicted_step_time_s"] = sim.get("step_time_s")
        out["predicted_mfu"] = sim.get("mfu")
    measured, predicted = out["measured_step_time_s"], out["predicted_step_time_s"]
    if isinstance(measured, (int, float)) and measured > 0 and isinstance(predicted, (int, float)):
        out["predicted_over_measured"] = predicted / measured
        if isinstance(out["predicted_mfu"], (int, float)):
            out["executor_mfu"] = out["predicted_mfu"] * predicted / measured
            out["executor_mfu_definition"] = ("the simulator's MFU definition (model FLOPs of "
                                              "the step / step time / peak) at the measured time")
    if reasons:
        out["reason"] = "; ".join(reasons)
    return out


def summarize(out):
    steps = read_steps(out)
    profile, profile_reason = read_json(os.path.join(out, "profile_cuda_quick.json"))
    multi = sorted(f for f in os.listdir(out)
                   if f.startswith("profile_cuda_quick_np") and f.endswith(".json"))
    profiles = [(f, *read_json(os.path.join(out, f))) for f in multi]
    profiles.append(("profile_cuda_quick.json", profile, profile_reason))
    run, run_reason = read_json(os.path.join(out, "run_one_gpu.json"))
    sim, sim_reason = read_json(os.path.join(out, "simulate_one_gpu.json"))
    failed = [s["name"] for s in steps if s["status"] not in ("ok", "skipped")]
    return {"schema": "parplan-gpu-check/1",
            "status": "ok" if steps and not failed else "failed",
            "failed_steps": failed,
            "steps": steps,
            "gpu_tests": gpu_tests(out),
            "gemm": gemm(profile, profile_reason),
            "executor_kernels": executor_kernels(profile),
            "nccl": nccl(profiles),
            "executor": executor(run, run_reason, sim, sim_reason)}


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: tools/gpu_check_summary.py OUTDIR (the folder of tools/gpu_check.sh)",
              file=sys.stderr)
        return 2
    out = argv[1]
    summary = summarize(out)
    fd, tmp = tempfile.mkstemp(prefix=".gpu_check_summary.", dir=out)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(out, "gpu_check_summary.json"))
    print(json.dumps({k: summary[k] for k in ("status", "failed_steps", "gpu_tests")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

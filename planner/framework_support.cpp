#include "planner/framework_support.h"

#include <initializer_list>

namespace parplan::planner {

namespace {

// Bit sets of ZeRO stages and schedule kinds.
constexpr unsigned stages(std::initializer_list<int> values) {
  unsigned bits = 0;
  for (int v : values) bits |= 1u << v;
  return bits;
}
constexpr unsigned kinds(std::initializer_list<ScheduleKind> values) {
  unsigned bits = 0;
  for (auto v : values) bits |= 1u << static_cast<int>(v);
  return bits;
}

struct Support {
  bool tp = true, pp = true, cp = true, ep = true, sp = true, vpp = true;
  unsigned zero_stages = stages({0, 1, 2, 3});
  unsigned schedules =
      kinds({ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::Gpipe,
             ScheduleKind::ZeroBubble, ScheduleKind::DualPipe});
  bool selective_recompute = true;
};

Support support_of(Framework framework) {
  Support s;
  switch (framework) {
    case Framework::MegatronCore:
      // tp/pp/vpp/cp/ep, sequence parallelism, distributed optimizer, Megatron-FSDP.
      s.zero_stages = stages({0, 1, 3});
      s.schedules = kinds({ScheduleKind::OneFOneB, ScheduleKind::Interleaved});
      break;
    case Framework::MegatronLm:
      // Megatron-LM 2019-2022: no context or expert parallelism yet.
      s.cp = false;
      s.ep = false;
      s.zero_stages = stages({0, 1});
      s.schedules = kinds({ScheduleKind::OneFOneB, ScheduleKind::Interleaved});
      break;
    case Framework::MegatronDeepspeed:
      // Megatron tp + DeepSpeed pipeline engine (no interleaving) + ZeRO-1. The 2021-2022
      // code (BLOOM, MT-NLG) checkpoints whole layers only (--checkpoint-activations);
      // selective recomputation came later with Megatron-LM v3 (Korthikanti et al. 2022).
      s.cp = false;
      s.sp = false;
      s.vpp = false;
      s.zero_stages = stages({0, 1});
      s.schedules = kinds({ScheduleKind::OneFOneB});
      s.selective_recompute = false;
      break;
    case Framework::Deepspeed:
      // ZeRO data parallelism and the pipeline engine; no Megatron tensor parallelism.
      s.tp = false;
      s.cp = false;
      s.sp = false;
      s.vpp = false;
      s.schedules = kinds({ScheduleKind::OneFOneB});
      break;
    case Framework::Torchtitan:
      // FSDP2 (or DDP), tp with sequence parallelism, pipeline schedules incl. zero bubble,
      // context parallelism, expert parallelism.
      s.zero_stages = stages({0, 3});
      s.schedules = kinds({ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::Gpipe,
                           ScheduleKind::ZeroBubble});
      break;
    case Framework::LlmFoundry:
      // Composer FSDP (FULL_SHARD, SHARD_GRAD_OP) or DDP; full activation checkpointing.
      s.tp = false;
      s.pp = false;
      s.cp = false;
      s.ep = false;
      s.sp = false;
      s.vpp = false;
      s.zero_stages = stages({0, 2, 3});
      s.selective_recompute = false;
      break;
    case Framework::Maxtext:
      // Sharding over data/fsdp/tensor/sequence/expert axes and a pipeline axis.
      s.sp = false;
      s.zero_stages = stages({0, 3});
      s.schedules = kinds({ScheduleKind::OneFOneB, ScheduleKind::Interleaved});
      break;
    case Framework::Other:
      break;
    case Framework::Parplan:
      // executor/: dp, tp with sp, pp (gpipe, 1f1b, interleaved), ZeRO-1.
      s.cp = false;
      s.ep = false;
      s.zero_stages = stages({0, 1});
      s.schedules = kinds({ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::Gpipe});
      break;
  }
  return s;
}

bool contains(unsigned bits, int v) { return (bits >> v) & 1u; }

}  // namespace

std::optional<std::string> unsupported_by_framework(Framework framework, const ParallelPlan& p) {
  const Support s = support_of(framework);
  if (!s.tp && p.tp > 1) return "framework-no-tp";
  if (!s.pp && p.pp > 1) return "framework-no-pp";
  if (!s.cp && p.cp > 1) return "framework-no-cp";
  if (!s.ep && p.ep > 1) return "framework-no-ep";
  if (!s.sp && p.sequence_parallel) return "framework-no-sp";
  if (!s.vpp && p.vpp > 1) return "framework-no-vpp";
  if (!contains(s.zero_stages, p.zero_stage)) return "framework-zero-stage";
  if (p.pp > 1 && !contains(s.schedules, static_cast<int>(p.schedule))) return "framework-schedule";
  if (!s.selective_recompute && p.recompute == Recompute::Selective) return "framework-recompute";
  return std::nullopt;
}

}  // namespace parplan::planner

// ParameterBufferLayout: shards tile the model, tensors tile the buffer, and initial values depend
// only on (seed, tensor, global index), whatever the partition.
#include "executor/parameter_buffer_layout.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/executor/test_jobs.h"

namespace parplan::executor {
namespace {

using testing::tiny_job;

TEST(ParameterBufferLayout, TensorsTileTheBufferAndTheReplicatedRange) {
  const Job job = tiny_job({{"tp", 2}, {"pp", 2}, {"vpp", 2}, {"dp", 3}}, "gpt", 4, 12);
  for (int64_t tp_rank = 0; tp_rank < 2; ++tp_rank) {
    for (int64_t pp_rank = 0; pp_rank < 2; ++pp_rank) {
      const ParameterBufferLayout l =
          make_parameter_buffer_layout(job.model, job.plan, 16, tp_rank, pp_rank);
      int64_t next = 0;
      for (const ParamTensor& t : l.tensors) {
        EXPECT_EQ(t.offset, next) << t.name;
        next += t.numel();
        const bool in_replicated = t.offset >= l.replicated_begin && t.offset < l.replicated_end;
        EXPECT_EQ(in_replicated, t.tp_replicated) << t.name;
      }
      EXPECT_EQ(next, l.num_params);
      EXPECT_EQ(l.num_elements % 3, 0);
      EXPECT_GE(l.num_elements, l.num_params);
      ASSERT_EQ(l.chunks.size(), 2u);
      EXPECT_EQ(l.chunks[0].virtual_stage, pp_rank);
      EXPECT_EQ(l.chunks[1].virtual_stage, 2 + pp_rank);
      EXPECT_EQ(l.chunks[0].layers.size(), 1u);
      EXPECT_EQ(l.chunks[0].has_embedding, pp_rank == 0);
      EXPECT_EQ(l.chunks[1].has_head, pp_rank == 1);
      // Tied embeddings over pp: both end stages hold a copy of the word embedding.
      EXPECT_EQ(l.tied_size, 64 / 2 * 32);
    }
  }
}

// Parameters of the model counted once: every shard of sharded tensors, replicated tensors
// on tp rank 0, and the tied output copy (a duplicate of the word embedding) left out.
int64_t counted_params(const Job& job) {
  int64_t total = 0;
  for (int64_t tp_rank = 0; tp_rank < job.plan.tp; ++tp_rank) {
    for (int64_t pp_rank = 0; pp_rank < job.plan.pp; ++pp_rank) {
      const ParameterBufferLayout l = make_parameter_buffer_layout(
          job.model, job.plan, job.training.seq_length, tp_rank, pp_rank);
      for (const ParamTensor& t : l.tensors) {
        if (t.tp_replicated && tp_rank != 0) continue;
        if (t.kv_replicated && tp_rank % l.dims.kv_replicas() != 0) continue;
        if (t.name == "output.tied_word_embedding") continue;
        total += t.numel();
      }
    }
  }
  return total;
}

TEST(ParameterBufferLayout, ShardsAddUpToTheModelParameterCount) {
  for (const std::string flavour : {"gpt", "llama"}) {
    const Job one = tiny_job({}, flavour);
    // llama has vocabulary 63: tp=2 pads it to 64 rows, one extra row of C.
    const int64_t expected = one.model.total_params(16);
    EXPECT_EQ(counted_params(one), expected) << flavour;
    const Job split = tiny_job({{"tp", 2}, {"pp", 2}}, flavour);
    const int64_t padding = flavour == "llama" ? 2 * 32 : 0;  // word embedding + output
    EXPECT_EQ(counted_params(split), expected + padding) << flavour;
    // tp = 4 > 2 query groups: each key/value head lives on two ranks and counts once.
    const Job replicated = tiny_job({{"tp", 4}}, flavour);
    EXPECT_EQ(counted_params(replicated), expected + padding) << flavour;
  }
}

void expect_partition_independent_init(const Json& plan) {
  const Job one = tiny_job({}, "llama");
  const Job split = tiny_job(plan, "llama");
  const ParameterBufferLayout full = make_parameter_buffer_layout(one.model, one.plan, 16, 0, 0);
  std::vector<double> full_values(full.num_elements);
  init_parameters(full, 5, full_values.data());
  std::map<std::string, const ParamTensor*> by_name;
  for (const ParamTensor& t : full.tensors) by_name[t.name] = &t;
  int64_t compared = 0;
  for (int64_t tp_rank = 0; tp_rank < split.plan.tp; ++tp_rank) {
    for (int64_t pp_rank = 0; pp_rank < split.plan.pp; ++pp_rank) {
      const ParameterBufferLayout l =
          make_parameter_buffer_layout(split.model, split.plan, 16, tp_rank, pp_rank);
      std::vector<double> values(l.num_elements);
      init_parameters(l, 5, values.data());
      for (const ParamTensor& t : l.tensors) {
        const ParamTensor* f = by_name.at(t.name);
        for (int64_t i = 0; i < t.rows; ++i) {
          for (int64_t j = 0; j < t.cols; ++j) {
            const int64_t gi = t.row_offset + i;
            const int64_t gj = t.col_offset + j;
            if (gi >= f->rows) continue;  // vocabulary padding row
            ASSERT_EQ(values[t.offset + i * t.cols + j], full_values[f->offset + gi * f->cols + gj])
                << t.name;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, one.model.total_params(16));  // every element, replicated ones twice
}

TEST(ParameterBufferLayout, InitialValuesDoNotDependOnThePartition) {
  expect_partition_independent_init({{"tp", 2}, {"pp", 2}});
  expect_partition_independent_init({{"tp", 4}});  // replicated key/value heads
}

TEST(ParameterBufferLayout, InitialisationScalesAndConstants) {
  const Job job = tiny_job({});
  const ParameterBufferLayout l = make_parameter_buffer_layout(job.model, job.plan, 16, 0, 0);
  std::vector<double> values(l.num_elements);
  init_parameters(l, 1, values.data());
  for (const ParamTensor& t : l.tensors) {
    double sum_sq = 0;
    for (int64_t i = 0; i < t.numel(); ++i) sum_sq += values[t.offset + i] * values[t.offset + i];
    const double rms = std::sqrt(sum_sq / static_cast<double>(t.numel()));
    if (t.init == InitKind::Ones) {
      EXPECT_EQ(rms, 1.0) << t.name;
    }
    if (t.init == InitKind::Zeros) {
      EXPECT_EQ(rms, 0.0) << t.name;
    }
    if (t.init == InitKind::Normal && t.numel() >= 1024) {
      EXPECT_NEAR(rms, t.init_std, 0.1 * t.init_std) << t.name;
    }
    EXPECT_EQ(t.weight_decay, t.init == InitKind::Normal) << t.name;  // norms are not decayed
  }
}

}  // namespace
}  // namespace parplan::executor

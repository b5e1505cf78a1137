#include "cost_models/lora.h"

namespace parplan::cost {

std::vector<AdaptedProjection> adapted_projections(const ModelSpec& m, bool moe_layer) {
  const double h = static_cast<double>(m.hidden_size);
  const double qw = static_cast<double>(m.query_width());
  const double kvw = static_cast<double>(m.kv_width());
  const double f = static_cast<double>(m.ffn_hidden_size);
  std::vector<AdaptedProjection> out = {
      {"q", h, qw, true}, {"k", h, kvw, true}, {"v", h, kvw, true}, {"o", qw, h, false}};
  if (moe_layer) return out;
  if (m.activation == Activation::Swiglu) {
    out.push_back({"gate", h, f, true});
    out.push_back({"up", h, f, true});
    out.push_back({"down", f, h, false});
  } else {
    out.push_back({"fc1", h, f, true});
    out.push_back({"fc2", f, h, false});
  }
  return out;
}

double lora_layer_params(const ModelSpec& m, bool moe_layer, int64_t rank, int64_t tp) {
  const double r = static_cast<double>(rank);
  const double t = static_cast<double>(tp);
  double params = 0;
  for (const auto& p : adapted_projections(m, moe_layer)) {
    params += p.column_parallel ? r * p.in + r * p.out / t : r * p.in / t + r * p.out;
  }
  return params;
}

double lora_total_params(const ModelSpec& m, int64_t rank) {
  double total = 0;
  for (int64_t l = 0; l < m.num_layers; ++l)
    total += lora_layer_params(m, m.is_moe_layer(l), rank, 1);
  return total;
}

}  // namespace parplan::cost

#include "tools/calibration_text.h"

#include <cstdio>

namespace parplan::tools {

Json calibration_factors_json(const Calibration& calibration) {
  Json factors = Json::object();
  for (const CalibrationFactor f : all_calibration_factors()) {
    const double value = factor_value(calibration, f);
    if (value != identity_value(f)) factors[to_string(f)] = value;
  }
  return factors;
}

std::string calibration_factors_text(const Calibration& calibration) {
  std::string factors;  // in the order of core/calibration.h
  for (const CalibrationFactor f : all_calibration_factors()) {
    const double value = factor_value(calibration, f);
    if (value == identity_value(f)) continue;
    char text[96];
    std::snprintf(text, sizeof text, "%s%s %.4g", factors.empty() ? "" : ", ", to_string(f), value);
    factors += text;
  }
  return factors;
}

}  // namespace parplan::tools

#include "tools/report/svg.h"

#include <cmath>
#include <cstdio>

namespace parplan::tools::svg {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double value) {
  if (!std::isfinite(value)) value = 0;
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  std::string out = text;
  while (!out.empty() && out.back() == '0') out.pop_back();
  if (!out.empty() && out.back() == '.') out.pop_back();
  if (out == "-0") out = "0";
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  int decimals = 0;
  while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) -
                                   std::round(step * std::pow(10.0, decimals))) > 1e-6) {
    ++decimals;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string rect(double x, double y, double w, double h, std::string_view fill,
                 std::string_view tooltip, std::string_view extra) {
  std::string out = "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
                    num(std::max(0.0, w)) + "\" height=\"" + num(std::max(0.0, h)) + "\" fill=\"" +
                    std::string(fill) + "\"";
  if (!extra.empty()) out += " " + std::string(extra);
  if (tooltip.empty()) return out + "/>";
  return out + "><title>" + escape(tooltip) + "</title></rect>";
}

std::string line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                 std::string_view extra) {
  std::string out = "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) +
                    "\" y2=\"" + num(y2) + "\" stroke=\"" + std::string(stroke) +
                    "\" stroke-width=\"" + num(width) + "\"";
  if (!extra.empty()) out += " " + std::string(extra);
  return out + "/>";
}

std::string text(double x, double y, std::string_view content, std::string_view anchor, double size,
                 std::string_view extra) {
  std::string out =
      "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(size) + "\"";
  if (anchor != "start") out += " text-anchor=\"" + std::string(anchor) + "\"";
  if (!extra.empty()) out += " " + std::string(extra);
  return out + ">" + escape(content) + "</text>";
}

std::string_view text_color_on(std::string_view fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#000";
  auto channel = [&](int i) {
    const double v = std::stoi(std::string(fill.substr(1 + 2 * i, 2)), nullptr, 16) / 255.0;
    return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  // WCAG relative luminance; white text below the point where both contrasts are equal.
  const double luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return luminance < 0.179 ? "#fff" : "#000";
}

std::string open(double height, std::string_view label) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + num(kWidth) + " " +
         num(height) + "\" role=\"img\" aria-label=\"" + escape(label) +
         "\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', "
         "sans-serif\">\n";
}

std::string clip_text(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  // Cut on a UTF-8 character boundary.
  std::size_t cut = max_chars > 1 ? max_chars - 1 : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "…";
}

}  // namespace parplan::tools::svg

// A few helpers for writing inline SVG by hand: escaping, compact numbers, "nice" axis
// ticks, and element builders. The charts (charts.h) use a fixed 960-unit-wide viewBox and
// scale with the page. Tested in tests/tools/report_test.cpp (ticks, escaping).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace parplan::tools::svg {

inline constexpr double kWidth = 960;

// Escapes &, <, >, " and ' for text and attribute values.
std::string escape(std::string_view text);

// A coordinate with at most two decimals and no trailing zeros ("12.5", "3").
std::string num(double value);

// Round tick values covering [lo, hi]: about `target` steps of 1, 2 or 5 times a power of 10.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// A tick label with as many decimals as the tick step needs.
std::string tick_label(double value, double step);

std::string rect(double x, double y, double w, double h, std::string_view fill,
                 std::string_view tooltip = {}, std::string_view extra = {});
std::string line(double x1, double y1, double x2, double y2, std::string_view stroke,
                 double width = 1, std::string_view extra = {});
// anchor: "start", "middle" or "end"; size in viewBox units.
std::string text(double x, double y, std::string_view content, std::string_view anchor = "start",
                 double size = 13, std::string_view extra = {});

// Black or white, whichever reads better on `fill` ("#rrggbb").
std::string_view text_color_on(std::string_view fill);

// Opens an <svg> element scaled to the page width; `label` is its accessible name.
std::string open(double height, std::string_view label);
inline const char* close() { return "</svg>\n"; }

// Shortens `text` to at most `max_chars` characters, ending with an ellipsis.
std::string clip_text(const std::string& text, std::size_t max_chars);

}  // namespace parplan::tools::svg

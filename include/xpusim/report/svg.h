#pragma once
// A small SVG chart toolkit for the HTML reports (docs/html.md): scales with nice ticks (linear
// and log), an x/y chart with lines, scatter points with error bars and a legend, horizontal
// stacked bars, a Gantt timeline and a dot-and-range chart. Output is plain inline SVG text,
// deterministic (fixed number formatting, no ids but the chart's own), every text escaped.
// Each chart is `<svg class="chart" data-chart="ID" ...>` so that tests can find it.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xpusim::report::svg {

/// Text escaped for HTML/SVG content and attribute values: & < > " '.
std::string escape(std::string_view text);
/// A coordinate or length: at most two decimals, trailing zeros dropped, never "-0".
std::string num(double v);
/// A tick label: three significant digits (core::fmt_num), k/M/G/T suffixes from 10⁴ up.
std::string tick_label(double v);

/// "Nice" linear ticks (steps 1, 2 or 5 × 10^k), about `target` of them, covering [lo, hi]:
/// the first tick ≤ lo and the last ≥ hi. lo == hi gives a range around the value.
std::vector<double> linear_ticks(double lo, double hi, int target = 5);
/// Powers of ten from the one ≤ lo to the one ≥ hi (lo, hi > 0); when they span a single
/// decade, 1-2-5 steps inside it.
std::vector<double> log_ticks(double lo, double hi);

/// A mapping from data values to pixels, linear or logarithmic (base 10, domain > 0).
struct Scale {
  double lo = 0, hi = 1;      ///< domain
  double from = 0, to = 1;    ///< pixel range (from ↔ lo)
  bool log = false;
  double operator()(double v) const;
};

/// One axis of a chart: its title, the data range to cover, log or linear.
struct Axis {
  std::string title;
  double lo = 0, hi = 1;
  bool log = false;
};

/// A fixed palette (colour-blind safe, Okabe-Ito); index modulo its size.
const char* colour(int index);

/// One legend entry.
struct LegendItem {
  std::string name;
  int colour = 0;
  bool dashed = false;
};

/// A point with an optional vertical error bar and a tooltip.
struct Point {
  double x = 0, y = 0;
  double y_low = 0, y_high = 0;  ///< error bar when y_low < y_high
  std::string tip;
};

/// An x/y chart with axes, grid and ticks; add series, then render().
class Chart {
 public:
  Chart(std::string id, std::string title, Axis x, Axis y, int width = 640, int height = 340);
  const Scale& x() const { return x_; }
  const Scale& y() const { return y_; }
  /// A polyline through `pts` (clipped to the plot), named in the legend when `name` is set.
  void line(const std::vector<std::pair<double, double>>& pts, int colour, const std::string& name,
            bool dashed = false);
  /// Dots (with error bars where the point has them), each with its tooltip.
  void scatter(const std::vector<Point>& pts, int colour, const std::string& name);
  /// A vertical marker line at x with a label.
  void vmarker(double x, const std::string& label);
  std::string render() const;

 private:
  std::string id_, title_;
  Axis xa_, ya_;
  int width_, height_;
  Scale x_, y_;
  std::vector<double> xticks_, yticks_;
  std::string body_;
  std::vector<LegendItem> legend_;
};

/// A segment of the stacked bars: its name and one value per bar.
struct Segment {
  std::string name;
  std::vector<double> values;
};

/// Horizontal stacked bars, one per label, with an optional limit line (e.g. HBM capacity).
struct StackedBars {
  std::string id, title, unit;
  std::vector<std::string> labels;
  std::vector<Segment> segments;
  double limit = 0;              ///< > 0: a vertical line at this value
  std::string limit_label;
};
std::string render(const StackedBars& c);

/// A bar of the Gantt timeline.
struct Span {
  int lane = 0;
  double start = 0, end = 0;
  int colour = 0;
  std::string tip;
};

/// A Gantt timeline: lanes top to bottom, spans on a linear time axis.
struct Timeline {
  std::string id, title, axis_title;
  std::vector<std::string> lanes;
  std::vector<Span> spans;
  std::vector<LegendItem> legend;
};
std::string render(const Timeline& c);

/// One row of a dot-and-range chart: a range bar and markers (e.g. published vs predicted).
struct RangeRow {
  std::string label;
  double low = 0, high = 0;                 ///< the range (drawn when low < high)
  /// value, colour; the first is drawn as a ring around the others (e.g. the published value)
  std::vector<std::pair<double, int>> dots;
  std::string tip;
};
struct RangeChart {
  std::string id, title, axis_title;
  bool log = false;
  std::vector<RangeRow> rows;
  std::vector<LegendItem> legend;
  double reference = 0;  ///< > 0: a vertical reference line (e.g. ratio 1)
};
std::string render(const RangeChart& c);

}  // namespace xpusim::report::svg

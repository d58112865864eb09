#include "xpusim/report/svg.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "xpusim/core/format.h"

namespace xpusim::report::svg {

namespace {

// Layout of an x/y chart (pixels): room for the title, tick labels, axis titles and the legend.
constexpr double kLeft = 70, kRight = 20, kTop = 34, kBottom = 62;
constexpr double kLaneHeight = 18, kRowHeight = 28;

std::string open_svg(const std::string& id, const std::string& title, double width, double height) {
  const std::string t = escape(title);
  return "<svg class=\"chart\" data-chart=\"" + escape(id) + "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
         num(width) + " " + num(height) + "\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" role=\"img\" aria-label=\"" + t + "\">\n<title>" + t + "</title>\n<text class=\"title\" x=\"" +
         num(width / 2) + "\" y=\"18\" text-anchor=\"middle\">" + t + "</text>\n";
}

std::string text(double x, double y, const std::string& s, const char* anchor, const char* cls = "") {
  std::string o = "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"";
  if (*cls) o += std::string(" class=\"") + cls + "\"";
  return o + ">" + escape(s) + "</text>\n";
}

std::string line_el(double x1, double y1, double x2, double y2, const char* cls) {
  return "<line class=\"" + std::string(cls) + "\" x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) +
         "\" y2=\"" + num(y2) + "\"/>\n";
}

std::string rect(double x, double y, double w, double h, int c, const std::string& tip) {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.5)) + "\" height=\"" +
         num(h) + "\" fill=\"" + colour(c) + "\"><title>" + escape(tip) + "</title></rect>\n";
}

/// The legend: rows of swatches from (x0, y), wrapping before max_x; `extra` is the height it
/// needs beyond its first row.
struct Legend {
  std::string svg;
  double extra = 0;
};
Legend legend_rows(const std::vector<LegendItem>& items, double x0, double max_x, double y) {
  Legend l;
  double x = x0;
  for (const auto& it : items) {
    const double w = 36 + 6.5 * static_cast<double>(it.name.size());
    if (x > x0 && x + w > max_x) x = x0, y += 16, l.extra += 16;
    l.svg += "<line class=\"series" + std::string(it.dashed ? " dashed" : "") + "\" stroke=\"" + colour(it.colour) +
             "\" x1=\"" + num(x) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(x + 16) + "\" y2=\"" + num(y - 4) + "\"/>\n";
    l.svg += text(x + 20, y, it.name, "start", "legend");
    x += w;
  }
  return l;
}

std::vector<double> ticks_for(const Axis& a) {
  if (a.log) return log_ticks(std::max(a.lo, 1e-300), std::max(a.hi, std::max(a.lo, 1e-300)));
  return linear_ticks(a.lo, a.hi);
}

double clamp_to(const Scale& s, double v) {
  const double lo = std::min(s.lo, s.hi), hi = std::max(s.lo, s.hi);
  return std::clamp(v, lo, hi);
}

}  // namespace

std::string escape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = core::strformat("%.2f", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string tick_label(double v) {
  const double a = std::fabs(v);
  static const char* const kSuffix[] = {"k", "M", "G", "T"};
  if (a >= 1e4 && a < 1e16) {
    int i = 0;
    double scaled = v / 1e3;
    while (std::fabs(scaled) >= 1e3 && i < 3) scaled /= 1e3, ++i;
    return core::fmt_num(scaled, 3) + kSuffix[i];
  }
  return core::fmt_num(v, 3);
}

std::vector<double> linear_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo <= std::fabs(hi) * 1e-12) {
    const double d = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= d, hi += d;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  const double step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double k = first; k <= last + 0.5; k += 1) {
    const double v = k * step;
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (lo > hi) std::swap(lo, hi);
  int e0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int e1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (e1 <= e0) e1 = e0 + 1;
  std::vector<double> ticks;
  if (e1 - e0 > 1) {
    for (int e = e0; e <= e1; ++e) ticks.push_back(std::pow(10.0, e));
    return ticks;
  }
  const double base = std::pow(10.0, e0);
  const double steps[] = {1, 2, 5, 10};
  for (size_t i = 0; i < 4; ++i) {
    const double v = steps[i] * base;
    const bool next_below = i + 1 < 4 && steps[i + 1] * base <= lo * (1 + 1e-9);
    if (next_below) continue;  // a later tick still starts at or below lo
    ticks.push_back(v);
    if (v >= hi * (1 - 1e-9)) break;
  }
  return ticks;
}

double Scale::operator()(double v) const {
  double f = 0;
  if (log) {
    const double l0 = std::log10(lo), l1 = std::log10(hi);
    f = l1 == l0 ? 0.5 : (std::log10(std::max(v, lo * 1e-6)) - l0) / (l1 - l0);
  } else {
    f = hi == lo ? 0.5 : (v - lo) / (hi - lo);
  }
  return from + f * (to - from);
}

const char* colour(int index) {
  static const char* const kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                         "#CC79A7", "#56B4E9", "#F0E442", "#000000"};
  const int n = static_cast<int>(sizeof kPalette / sizeof *kPalette);
  return kPalette[((index % n) + n) % n];
}

Chart::Chart(std::string id, std::string title, Axis x, Axis y, int width, int height)
    : id_(std::move(id)), title_(std::move(title)), xa_(std::move(x)), ya_(std::move(y)), width_(width),
      height_(height) {
  xticks_ = ticks_for(xa_);
  yticks_ = ticks_for(ya_);
  x_ = Scale{xticks_.front(), xticks_.back(), kLeft, width_ - kRight, xa_.log};
  y_ = Scale{yticks_.front(), yticks_.back(), height_ - kBottom, kTop, ya_.log};
}

void Chart::line(const std::vector<std::pair<double, double>>& pts, int c, const std::string& name, bool dashed) {
  if (pts.empty()) return;
  std::string d;
  for (const auto& [px, py] : pts) {
    d += (d.empty() ? "M" : " L") + num(x_(clamp_to(x_, px))) + " " + num(y_(clamp_to(y_, py)));
  }
  body_ += "<path class=\"series" + std::string(dashed ? " dashed" : "") + "\" stroke=\"" + colour(c) + "\" d=\"" +
           d + "\"><title>" + escape(name) + "</title></path>\n";
  if (!name.empty()) legend_.push_back({name, c, dashed});
}

void Chart::scatter(const std::vector<Point>& pts, int c, const std::string& name) {
  for (const auto& p : pts) {
    const double cx = x_(clamp_to(x_, p.x)), cy = y_(clamp_to(y_, p.y));
    body_ += "<g class=\"point\">";
    if (p.y_low < p.y_high) {
      body_ += "<line class=\"errorbar\" stroke=\"" + std::string(colour(c)) + "\" x1=\"" + num(cx) + "\" y1=\"" +
               num(y_(clamp_to(y_, p.y_low))) + "\" x2=\"" + num(cx) + "\" y2=\"" + num(y_(clamp_to(y_, p.y_high))) +
               "\"/>";
    }
    body_ += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"3.5\" fill=\"" + colour(c) + "\"><title>" +
             escape(p.tip) + "</title></circle></g>\n";
  }
  if (!name.empty()) legend_.push_back({name, c, false});
}

void Chart::vmarker(double x, const std::string& label) {
  const double px = x_(clamp_to(x_, x));
  body_ += line_el(px, kTop, px, height_ - kBottom, "marker");
  body_ += text(px + 3, kTop + 10, label, "start", "legend");
}

std::string Chart::render() const {
  const Legend legend = legend_rows(legend_, kLeft, width_ - kRight, height_ - 8);
  std::string o = open_svg(id_, title_, width_, height_ + legend.extra);
  const double bottom = height_ - kBottom, right = width_ - kRight;
  for (double t : xticks_) {
    o += line_el(x_(t), kTop, x_(t), bottom, "grid");
    o += text(x_(t), bottom + 14, tick_label(t), "middle");
  }
  for (double t : yticks_) {
    o += line_el(kLeft, y_(t), right, y_(t), "grid");
    o += text(kLeft - 5, y_(t) + 4, tick_label(t), "end");
  }
  o += line_el(kLeft, bottom, right, bottom, "axis") + line_el(kLeft, kTop, kLeft, bottom, "axis");
  o += text((kLeft + right) / 2, bottom + 30, xa_.title, "middle", "axis-title");
  o += "<text class=\"axis-title\" text-anchor=\"middle\" transform=\"translate(14 " + num((kTop + bottom) / 2) +
       ") rotate(-90)\">" + escape(ya_.title) + "</text>\n";
  o += body_;
  return o + legend.svg + "</svg>\n";
}

std::string render(const StackedBars& c) {
  const double left = 130, width = 640, right = 40;
  const double height = kTop + kRowHeight * static_cast<double>(c.labels.size()) + 62;
  double top_value = c.limit;
  for (size_t i = 0; i < c.labels.size(); ++i) {
    double sum = 0;
    for (const auto& s : c.segments) sum += i < s.values.size() ? s.values[i] : 0;
    top_value = std::max(top_value, sum);
  }
  const auto ticks = linear_ticks(0, top_value > 0 ? top_value : 1);
  const Scale x{ticks.front(), ticks.back(), left, width - right, false};
  const double bottom = height - 62;
  std::vector<LegendItem> items;
  for (size_t k = 0; k < c.segments.size(); ++k) {
    bool any = false;
    for (double v : c.segments[k].values) any = any || v > 0;
    if (any) items.push_back({c.segments[k].name, static_cast<int>(k), false});
  }
  const Legend legend = legend_rows(items, left, width - right, height - 8);
  std::string o = open_svg(c.id, c.title, width, height + legend.extra);
  for (double t : ticks) o += line_el(x(t), kTop, x(t), bottom, "grid") + text(x(t), bottom + 14, tick_label(t), "middle");
  o += text((left + width - right) / 2, bottom + 30, c.unit, "middle", "axis-title");
  for (size_t i = 0; i < c.labels.size(); ++i) {
    const double y = kTop + kRowHeight * static_cast<double>(i) + 4;
    o += text(left - 6, y + 14, c.labels[i], "end");
    double at = 0;
    for (size_t k = 0; k < c.segments.size(); ++k) {
      const double v = i < c.segments[k].values.size() ? c.segments[k].values[i] : 0;
      if (v <= 0) continue;
      o += rect(x(at), y, x(at + v) - x(at), kRowHeight - 8, static_cast<int>(k),
                c.labels[i] + ": " + c.segments[k].name + " " + core::fmt_num(v, 4) + " " + c.unit);
      at += v;
    }
  }
  if (c.limit > 0) {
    o += line_el(x(c.limit), kTop, x(c.limit), bottom, "limit");
    o += text(x(c.limit) - 4, bottom - 6, c.limit_label, "end", "legend");
  }
  return o + line_el(left, bottom, width - right, bottom, "axis") + legend.svg + "</svg>\n";
}

std::string render(const Timeline& c) {
  const double left = 110, width = 760, right = 20;
  const double height = kTop + kLaneHeight * static_cast<double>(c.lanes.size()) + 62;
  double t0 = 0, t1 = 0;
  for (const auto& s : c.spans) t0 = std::min(t0, s.start), t1 = std::max(t1, s.end);
  const auto ticks = linear_ticks(t0, t1 > t0 ? t1 : t0 + 1);
  const Scale x{ticks.front(), ticks.back(), left, width - right, false};
  const double bottom = height - 62;
  const Legend legend = legend_rows(c.legend, left, width - right, height - 8);
  std::string o = open_svg(c.id, c.title, width, height + legend.extra);
  for (double t : ticks) o += line_el(x(t), kTop, x(t), bottom, "grid") + text(x(t), bottom + 14, tick_label(t), "middle");
  for (size_t i = 0; i < c.lanes.size(); ++i)
    o += text(left - 6, kTop + kLaneHeight * static_cast<double>(i) + 13, c.lanes[i], "end");
  for (const auto& s : c.spans) {
    o += rect(x(s.start), kTop + kLaneHeight * s.lane + 2, x(s.end) - x(s.start), kLaneHeight - 4, s.colour, s.tip);
  }
  o += line_el(left, bottom, width - right, bottom, "axis");
  o += text((left + width - right) / 2, bottom + 30, c.axis_title, "middle", "axis-title");
  return o + legend.svg + "</svg>\n";
}

std::string render(const RangeChart& c) {
  const double left = 190, width = 700, right = 30;
  const double height = kTop + kRowHeight * static_cast<double>(c.rows.size()) + 62;
  Axis a{c.axis_title, c.reference > 0 ? c.reference : 1e300, c.reference > 0 ? c.reference : -1e300, c.log};
  for (const auto& r : c.rows) {
    for (const auto& [v, col] : r.dots) a.lo = std::min(a.lo, v), a.hi = std::max(a.hi, v);
    if (r.low < r.high) a.lo = std::min(a.lo, r.low), a.hi = std::max(a.hi, r.high);
  }
  if (a.lo > a.hi) a.lo = 0, a.hi = 1;
  if (!c.log) a.lo = std::min(a.lo, 0.0);
  const auto ticks = ticks_for(a);
  const Scale x{ticks.front(), ticks.back(), left, width - right, c.log};
  const double bottom = height - 62;
  const Legend legend = legend_rows(c.legend, left, width - right, height - 8);
  std::string o = open_svg(c.id, c.title, width, height + legend.extra);
  for (double t : ticks) o += line_el(x(t), kTop, x(t), bottom, "grid") + text(x(t), bottom + 14, tick_label(t), "middle");
  if (c.reference > 0) o += line_el(x(c.reference), kTop, x(c.reference), bottom, "marker");
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    const double y = kTop + kRowHeight * static_cast<double>(i) + kRowHeight / 2;
    o += "<g class=\"row\"><title>" + escape(r.tip) + "</title>\n" + text(left - 6, y + 4, r.label, "end");
    if (r.low < r.high) o += line_el(x(r.low), y, x(r.high), y, "range");
    for (size_t k = 0; k < r.dots.size(); ++k) {
      const auto& [v, col] = r.dots[k];
      const std::string paint = k == 0 ? std::string("fill=\"none\" stroke-width=\"2.5\" stroke=\"") + colour(col) + "\""
                                       : std::string("fill=\"") + colour(col) + "\"";
      o += "<circle cx=\"" + num(x(v)) + "\" cy=\"" + num(y) + "\" r=\"" + (k == 0 ? "7" : "4.5") + "\" " + paint + "/>\n";
    }
    o += "</g>\n";
  }
  o += line_el(left, bottom, width - right, bottom, "axis");
  o += text((left + width - right) / 2, bottom + 30, c.axis_title, "middle", "axis-title");
  return o + legend.svg + "</svg>\n";
}

}  // namespace xpusim::report::svg

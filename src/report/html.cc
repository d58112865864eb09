#include "xpusim/report/html.h"

#include "xpusim/report/svg.h"

namespace xpusim::report::html {

namespace {

using svg::escape;

constexpr const char* kStyle = R"(body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.subtitle{color:#555;margin:0 0 16px}.note{color:#555;font-size:13px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #e2e2e2;max-width:100%;height:auto}
svg.chart text{font:11px sans-serif;fill:#333}svg.chart text.title{font-size:13px;font-weight:600}
svg.chart text.axis-title{font-size:12px}svg.chart text.legend{font-size:11px}
svg.chart .grid{stroke:#ececec}svg.chart .axis{stroke:#555}
svg.chart .series{fill:none;stroke-width:2}svg.chart .dashed{stroke-dasharray:5 4}
svg.chart .errorbar{stroke-width:1.2}svg.chart .marker{stroke:#777;stroke-dasharray:4 3}
svg.chart .limit{stroke:#c00;stroke-width:2}svg.chart .range{stroke:#bbb;stroke-width:8;stroke-linecap:round}
footer{margin-top:32px;color:#555;font-size:12px})";

bool numeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == ',' || c == '%')) return false;
  return true;
}

}  // namespace

std::string page(const std::string& command, const std::string& title, const std::string& subtitle,
                 const Provenance& provenance, const std::string& body) {
  const auto digest = [](const std::string& d) { return d.empty() ? std::string("none") : d; };
  std::vector<Cells> rows = {{"xpusim version", xpusim_version()},
                             {"catalog digest", digest(provenance.catalog_digest)},
                             {"calibration digest", digest(provenance.calibration_digest)},
                             {"command", command}};
  for (const auto& e : provenance.catalog_user)  // --catalog-dir entries (docs/catalog.md)
    rows.push_back({"user catalog", e.kind + " " + e.id + " (" + e.file +
                                        (e.replaces_shipped ? ", replaces the shipped one)" : ")")});
  const std::string prov = table("provenance", {"", ""}, rows);
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         escape(title) + "</title>\n<style>\n" + kStyle + "\n</style>\n</head>\n<body data-page=\"" + escape(command) +
         "\">\n<h1>" + escape(title) + "</h1>\n<p class=\"subtitle\">" + escape(subtitle) + "</p>\n" + body +
         "<footer>\n<h2>Provenance</h2>\n" + prov +
         "<p>Self-contained page written by xpusim (no scripts, no external resources); the same inputs, "
         "version and digests give the same bytes.</p>\n</footer>\n</body>\n</html>\n";
}

std::string section(const std::string& id, const std::string& heading, const std::string& content,
                    const std::string& note) {
  std::string o = "<section id=\"" + escape(id) + "\">\n<h2>" + escape(heading) + "</h2>\n" + content;
  if (!note.empty()) o += "<p class=\"note\">" + escape(note) + "</p>\n";
  return o + "</section>\n";
}

std::string table(const std::string& cls, const Cells& header, const std::vector<Cells>& rows) {
  std::string o = "<table class=\"" + escape(cls) + "\">\n";
  bool any_header = false;
  for (const auto& h : header) any_header = any_header || !h.empty();
  if (any_header) {
    o += "<tr>";
    for (const auto& h : header) o += "<th>" + escape(h) + "</th>";
    o += "</tr>\n";
  }
  for (const auto& r : rows) {
    o += "<tr>";
    for (const auto& c : r) o += (numeric(c) ? "<td class=\"num\">" : "<td>") + escape(c) + "</td>";
    o += "</tr>\n";
  }
  return o + "</table>\n";
}

std::string summary(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::vector<Cells> cells;
  for (const auto& [k, v] : rows) cells.push_back({k, v});
  return table("summary", {"", ""}, cells);
}

std::string para(const std::string& text) { return "<p>" + escape(text) + "</p>\n"; }

std::string row(const std::vector<std::string>& charts) {
  std::string o = "<div class=\"charts\">\n";
  for (const auto& c : charts) o += c;
  return o + "</div>\n";
}

}  // namespace xpusim::report::html

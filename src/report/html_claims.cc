// `claims --html`: each public Trainium3 claim, published against xpusim's ratio (docs/html.md).

#include "xpusim/core/format.h"
#include "xpusim/report/html.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/svg.h"

namespace xpusim::report {

namespace {

using core::fmt_num;

std::string published_text(const scenario::Claim& c) {
  return (c.published_at_least ? "> " : "") + fmt_num(c.published_ratio, 3);
}

std::string ratio_chart(const scenario::ClaimsReport& rep) {
  svg::RangeChart chart{"claims-ratios", "Trn3 over Trn2: published against xpusim", "ratio (Trn3 ÷ Trn2)", false, {},
                        {{"published (ring)", 1, false}, {"xpusim (central)", 0, false}}, 1};
  for (const auto& c : rep.claims) {
    chart.rows.push_back({c.id, c.ratio_low, c.ratio_high, {{c.published_ratio, 1}, {c.xpusim_ratio, 0}},
                          c.text + " (published " + published_text(c) + ", xpusim " + fmt_num(c.xpusim_ratio, 3) +
                              ", range " + fmt_num(c.ratio_low, 3) + "–" + fmt_num(c.ratio_high, 3) + "): " + c.verdict});
  }
  return svg::render(chart);
}

std::string verdict_table(const scenario::ClaimsReport& rep) {
  std::vector<html::Cells> rows;
  for (const auto& c : rep.claims)
    rows.push_back({c.id, c.text, c.metric, published_text(c), fmt_num(c.xpusim_ratio, 3),
                    fmt_num(c.ratio_low, 3) + " – " + fmt_num(c.ratio_high, 3), c.verdict});
  return html::table("verdicts", {"claim", "as made", "metric", "published", "xpusim", "xpusim range", "verdict"}, rows);
}

std::string claim_detail(const scenario::Claim& c) {
  std::string o = html::para("Source: " + c.source) + html::para("Conditions: " + c.conditions);
  std::vector<html::Cells> cases;
  for (const auto& k : c.cases) cases.push_back({k.conditions, fmt_num(k.ratio, 3)});
  o += html::table("cases", {"conditions", "ratio"}, cases);
  std::vector<html::Cells> notes;
  for (const auto& w : c.why) notes.push_back({"why they differ", w});
  for (const auto& f : c.flips) notes.push_back({"flips", f});
  for (const auto& f : c.figures) notes.push_back({f.key, fmt_num(f.value, 4)});
  if (!notes.empty()) o += html::table("notes", {"", ""}, notes);
  return html::section("claim-" + c.id, c.id + ": " + c.verdict, o, c.text);
}

}  // namespace

std::string claims_html(const Provenance& provenance, const scenario::ClaimsReport& rep) {
  int reproduced = 0, within = 0;
  for (const auto& c : rep.claims) reproduced += c.verdict == "reproduced", within += c.verdict == "within range";
  std::string body = html::section(
      "summary", "Summary",
      html::summary({{"claims", std::to_string(rep.claims.size())},
                     {"reproduced", std::to_string(reproduced)},
                     {"within range", std::to_string(within)},
                     {"not reproduced", std::to_string(static_cast<int>(rep.claims.size()) - reproduced - within)}}));
  body += html::section("ratios", "Claims", ratio_chart(rep) + verdict_table(rep),
                        "Grey bar: the range xpusim computes over reasonable conditions; the line at 1 is parity.");
  std::vector<html::Cells> est;
  for (const auto& e : rep.estimates) est.push_back({"estimate", e});
  for (const auto& o : rep.overrides) est.push_back({"override", o});
  if (!est.empty()) body += html::section("estimates", "Estimated inputs", html::table("estimates", {"", ""}, est));
  for (const auto& c : rep.claims) body += claim_detail(c);
  return html::page("claims", "xpusim claims: Trainium3 against Trainium2",
                    "Every public claim checked with the simulator (docs/claims.md)", provenance, body);
}

}  // namespace xpusim::report

#include "xpusim/report/claims_report.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "xpusim/core/format.h"

namespace xpusim::report {

namespace {

using core::fmt_num;
using core::strformat;

Json claim_json(const scenario::Claim& c) {
  Json cases = Json::array();
  for (const auto& k : c.cases) cases.push_back(Json{{"conditions", k.conditions}, {"xpusim_ratio", k.ratio}});
  Json figures = Json::object();
  for (const auto& f : c.figures) figures[f.key] = f.value;
  return Json{{"id", c.id},
              {"text", c.text},
              {"source", c.source},
              {"conditions", c.conditions},
              {"metric", c.metric},
              {"published_ratio", c.published_ratio},
              {"published_relation", c.published_at_least ? "greater than" : "equal to"},
              {"xpusim_ratio", c.xpusim_ratio},
              {"xpusim_ratio_range", Json{{"low", c.ratio_low}, {"high", c.ratio_high}}},
              {"verdict", c.verdict},
              {"why", c.why},
              {"flips", c.flips},
              {"cases", cases},
              {"figures", figures}};
}

std::string published_text(const scenario::Claim& c) {
  return (c.published_at_least ? ">" : "") + fmt_num(c.published_ratio, 3) + "x";
}

void claim_text(std::ostream& o, const scenario::Claim& c) {
  o << "\n" << c.id << ": " << c.text << "\n  source: " << c.source << "\n  conditions: " << c.conditions
    << "\n  metric: " << c.metric << "\n  published " << published_text(c) << ", xpusim " << fmt_num(c.xpusim_ratio, 3)
    << "x (" << c.verdict << ")\n";
  for (const auto& k : c.cases) o << strformat("    %-70s %8sx\n", k.conditions.c_str(), fmt_num(k.ratio, 3).c_str());
  for (const auto& f : c.figures) o << "    " << f.key << " = " << fmt_num(f.value, 5) << "\n";
  for (const auto& w : c.why) o << "  why: " << w << "\n";
  for (const auto& f : c.flips) o << "  estimated inputs: " << f << "\n";
}

}  // namespace

Json claims_document(const Provenance& provenance, const scenario::ClaimsInputs& in, const scenario::ClaimsReport& rep) {
  Json inputs = Json::object();
  put_overrides(inputs, in.trn3);
  Json claims = Json::array();
  for (const auto& c : rep.claims) claims.push_back(claim_json(c));
  Json body{{"estimated_inputs", rep.estimates}, {"overrides", rep.overrides}, {"claims", claims}};
  return document("claims", provenance, inputs, body);
}

std::string claims_text(const scenario::ClaimsReport& rep) {
  std::ostringstream o;
  o << "Trainium3 claims checked by xpusim (Trn3 / Trn2; docs/claims.md)\n\n";
  o << strformat("%-38s %10s %8s %17s  %s\n", "claim", "published", "xpusim", "range", "verdict");
  for (const auto& c : rep.claims) {
    const std::string range = fmt_num(c.ratio_low, 3) + " .. " + fmt_num(c.ratio_high, 3);
    o << strformat("%-38s %10s %8s %17s  %s\n", c.id.c_str(), published_text(c).c_str(),
                   (fmt_num(c.xpusim_ratio, 3) + "x").c_str(), range.c_str(), c.verdict.c_str());
  }
  o << "\nestimated inputs:\n";
  for (const auto& e : rep.estimates) o << "  " << e << "\n";
  for (const auto& e : rep.overrides) o << "  override: " << e << "\n";
  for (const auto& c : rep.claims) claim_text(o, c);
  return o.str();
}

}  // namespace xpusim::report

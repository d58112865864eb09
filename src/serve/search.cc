#include "xpusim/serve/search.h"
namespace xpusim::serve {
std::vector<std::string> default_compare_systems() { return {"trn3-ultraserver-gen2", "trn2-ultraserver", "gb300-nvl72"}; }
SearchResult search_plan(const SearchSpec& spec, const ServeEnv&) { SearchResult r; r.system = spec.base.system; return r; }
std::vector<SearchResult> compare_systems(const SearchSpec&, const std::vector<std::string>&, const ServeEnv&) { return {}; }
}

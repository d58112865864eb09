#include "demo_serving.h"

namespace xpusim::cli {

nlohmann::ordered_json demo_serving(const hw::Catalog&, const std::string&, std::ostream& o) {
  o << "== Serving: see `xpusim serve --compare`\n";
  return nlohmann::ordered_json::array();
}

}  // namespace xpusim::cli

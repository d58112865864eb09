// The source of a validation row: the repository, paper or web site its URL points to
// (leave-one-source-out folds, docs/calibration.md).

#include <string>

#include "xpusim/validation/source.h"

namespace xpusim::validation {

namespace {

/// The first `n` '/'-separated components of `path` (fewer when it has fewer).
std::string leading_components(const std::string& path, int n) {
  size_t end = 0;
  for (int i = 0; i < n && end != std::string::npos; ++i) end = path.find('/', end == 0 ? 0 : end + 1);
  return end == std::string::npos ? path : path.substr(0, end);
}

/// "2104.04473v2" → "2104.04473".
std::string without_version(std::string id) {
  const size_t v = id.rfind('v');
  if (v != std::string::npos && v > 0 && v + 1 < id.size() &&
      id.find_first_not_of("0123456789", v + 1) == std::string::npos)
    id.erase(v);
  return id;
}

}  // namespace

std::string source_of(const std::string& url) {
  std::string rest = url;
  if (const size_t scheme = rest.find("://"); scheme != std::string::npos) rest = rest.substr(scheme + 3);
  const size_t slash = rest.find('/');
  std::string host = rest.substr(0, slash);
  const std::string path = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (host.rfind("www.", 0) == 0) host = host.substr(4);
  if (host == "github.com") return host + "/" + leading_components(path, 2);
  if (host == "arxiv.org") {
    const std::string id = path.substr(path.find('/') == std::string::npos ? 0 : path.find('/') + 1);
    return "arxiv:" + without_version(leading_components(id, 1));
  }
  if (host == "doi.org" || host == "dx.doi.org") return "doi:" + path;
  return host;
}

}  // namespace xpusim::validation

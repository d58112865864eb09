// A validation CSV (validation/): every row read and checked, held (read_csv) and streamed
// (check_csv_stream, then RowStream). The two paths must agree: a file one accepts the other
// accepts with the same rows (fuzz inputs are far below both paths' row and size limits).

#include <cstdlib>
#include <optional>
#include <vector>

#include "fuzz_input.h"
#include "xpusim/validation/row.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string path = fuzz::input_file(data, size, ".csv");
  std::optional<std::vector<validation::Row>> held;
  fuzz::accept_diagnostics([&] { held = validation::read_csv(path); });
  std::optional<std::vector<std::string>> streamed;
  fuzz::accept_diagnostics([&] {
    validation::check_csv_stream(path);
    validation::RowStream stream(path);
    std::vector<std::string> ids;
    validation::Row row;
    while (stream.next(row)) ids.push_back(row.id + "@" + std::to_string(row.line));
    streamed = ids;
  });
  if (held.has_value() != streamed.has_value()) std::abort();
  if (held) {
    if (held->size() != streamed->size()) std::abort();
    for (size_t i = 0; i < held->size(); ++i)
      if ((*held)[i].id + "@" + std::to_string((*held)[i].line) != (*streamed)[i]) std::abort();
  }
  return 0;
}

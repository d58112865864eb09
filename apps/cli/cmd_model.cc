// xpusim model: placeholder until the sub-command lands.
#include <iostream>

#include "commands.h"

namespace xpusim::cli {

int run_model(const Args&) {
  std::cerr << "xpusim model: not implemented yet\n";
  return 3;
}

}  // namespace xpusim::cli

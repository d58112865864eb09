// xpusim catalog: placeholder until the sub-command lands.
#include <iostream>

#include "commands.h"

namespace xpusim::cli {

int run_catalog(const Args&) {
  std::cerr << "xpusim catalog: not implemented yet\n";
  return 3;
}

}  // namespace xpusim::cli

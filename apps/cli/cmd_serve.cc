// xpusim serve: placeholder until the sub-command lands.
#include <iostream>

#include "commands.h"

namespace xpusim::cli {

int run_serve(const Args&) {
  std::cerr << "xpusim serve: not implemented yet\n";
  return 3;
}

}  // namespace xpusim::cli

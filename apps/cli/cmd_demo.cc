// xpusim demo: placeholder until the sub-command lands.
#include <iostream>

#include "commands.h"

namespace xpusim::cli {

int run_demo(const Args&) {
  std::cerr << "xpusim demo: not implemented yet\n";
  return 3;
}

}  // namespace xpusim::cli

// xpusim mx: placeholder until the sub-command lands.
#include <iostream>

#include "commands.h"

namespace xpusim::cli {

int run_mx(const Args&) {
  std::cerr << "xpusim mx: not implemented yet\n";
  return 3;
}

}  // namespace xpusim::cli

// xpusim validate: placeholder until the sub-command lands.
#include <iostream>

#include "commands.h"

namespace xpusim::cli {

int run_validate(const Args&) {
  std::cerr << "xpusim validate: not implemented yet\n";
  return 3;
}

}  // namespace xpusim::cli

// xpusim train: placeholder until the sub-command lands.
#include <iostream>

#include "commands.h"

namespace xpusim::cli {

int run_train(const Args&) {
  std::cerr << "xpusim train: not implemented yet\n";
  return 3;
}

}  // namespace xpusim::cli

#pragma once
// Programmer errors: XS_CHECK aborts with file, line and message in every build type.
// Never use it for user input (that is a Diagnostic) or for expected infeasibility (a value).

#include <cstdio>
#include <cstdlib>

#define XS_CHECK(cond, msg)                                                               \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "xpusim internal error: %s:%d: check '%s' failed: %s\n",      \
                   __FILE__, __LINE__, #cond, msg);                                       \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

// Probe of the layering (tests/layering/CMakeLists.txt): serve/ is below validation/, so this
// include is a back-edge and must not compile against xpusim_serve's include path.
#include "xpusim/validation/row.h"

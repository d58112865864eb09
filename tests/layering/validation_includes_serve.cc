// Probe of the layering (tests/layering/CMakeLists.txt): validation/ links serve/, so this
// include compiles (the control that proves the back-edge probe fails for the right reason).
#include "xpusim/serve/scenario.h"
#include "xpusim/validation/row.h"

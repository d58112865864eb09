#include "xpusim/hw/catalog.h"

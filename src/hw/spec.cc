#include "xpusim/hw/spec.h"

#include "xpusim/core/check.h"

namespace xpusim::hw {

std::string confidence_name(Confidence c) {
  switch (c) {
    case Confidence::Published: return "published";
    case Confidence::Derived: return "derived";
    case Confidence::Estimated: return "estimated";
    case Confidence::Projected: return "projected";
  }
  return "?";
}

std::string dim_kind_name(DimKind k) {
  switch (k) {
    case DimKind::Switch: return "switch";
    case DimKind::Ring: return "ring";
    case DimKind::Torus: return "torus";
    case DimKind::Hypercube: return "hypercube";
    case DimKind::FatTree: return "fat-tree";
    case DimKind::FullyConnected: return "fully-connected";
  }
  return "?";
}

core::FlopRate ChipSpec::peak_for(core::Dtype d) const {
  auto it = peak.find(d);
  XS_CHECK(it != peak.end(), "peak_for: dtype not supported by chip");
  return it->second.value;
}

}  // namespace xpusim::hw

#include "metrics/build_info.h"

namespace fairq::metrics {

// BuildRevision() is in the generated build_revision.cc.
std::string_view BuildVersion() { return FAIRQ_VERSION; }

}  // namespace fairq::metrics

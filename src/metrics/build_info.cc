#include "metrics/build_info.h"

namespace fairq::metrics {

std::string_view BuildVersion() { return FAIRQ_VERSION; }
std::string_view BuildRevision() { return FAIRQ_REVISION; }

}  // namespace fairq::metrics

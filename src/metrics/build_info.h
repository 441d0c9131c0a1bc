// The version and source revision fairqd was built from, for
// fairq_build_info. Set at configure time (CMake's project version; `git
// rev-parse` of the checkout, or "unknown" outside a git checkout).
// Constants; safe from any thread.
#ifndef FAIRQ_METRICS_BUILD_INFO_H_
#define FAIRQ_METRICS_BUILD_INFO_H_

#include <string_view>

namespace fairq::metrics {

std::string_view BuildVersion();
std::string_view BuildRevision();

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_BUILD_INFO_H_

// The version and source revision fairqd was built from, for
// fairq_build_info: CMake's project version, and the checkout's commit as
// of the build (`-dirty` with uncommitted changes; "unknown" outside a git
// checkout). Constants; safe from any thread.
#ifndef FAIRQ_METRICS_BUILD_INFO_H_
#define FAIRQ_METRICS_BUILD_INFO_H_

#include <string_view>

namespace fairq::metrics {

std::string_view BuildVersion();
std::string_view BuildRevision();

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_BUILD_INFO_H_

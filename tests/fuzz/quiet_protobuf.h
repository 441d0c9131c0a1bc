// Silences protobuf's logging for a fuzz target. Most inputs are not valid
// wire forms, and protobuf logs each string field that is not UTF-8; those
// lines would be most of a run's time and output.
#ifndef FAIRQ_TESTS_FUZZ_QUIET_PROTOBUF_H_
#define FAIRQ_TESTS_FUZZ_QUIET_PROTOBUF_H_

#include "google/protobuf/stubs/logging.h"

namespace fairq::fuzz {

// Call at the top of LLVMFuzzerTestOneInput; the work is done once.
inline void QuietProtobuf() {
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
}

}  // namespace fairq::fuzz

#endif  // FAIRQ_TESTS_FUZZ_QUIET_PROTOBUF_H_

// Fuzz target: a `jobs` value as fairqd reads it back from disk, a page of
// job records or a format-1 bare record (store/job_page.h). Whatever the
// bytes, JobPageReader ends or reports corruption; every record it yields
// lies inside the value; and each record parses, or is refused, without
// harm, as the read-ahead's view and as a whole record, both readings
// agreeing on what they share.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fairq/v1/records.pb.h"
#include "store/job_page.h"
#include "quiet_protobuf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fairq::fuzz::QuietProtobuf();
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  fairq::store::JobPageReader page(value);
  uint64_t id = 0;
  std::string_view record;
  while (page.Next(&id, &record)) {
    if (record.data() < value.data() ||
        record.data() + record.size() > value.data() + value.size()) {
      std::abort();
    }
    fairq::v1::JobRecordWithEncodedSpec view;
    fairq::v1::JobRecord whole;
    const bool view_ok = fairq::store::ParsePageRecord(id, record, &view);
    const bool whole_ok = fairq::store::ParsePageRecord(id, record, &whole);
    if ((view_ok && view.id() != id) || (whole_ok && whole.id() != id) ||
        (view_ok && whole_ok &&
         view.enqueued_unix_ms() != whole.enqueued_unix_ms())) {
      std::abort();  // the two readings of one record disagree
    }
  }
  return 0;
}

// The one place a rocksdb::Status becomes a fairq::Status.
//
// Pure function; safe from any thread.
#ifndef FAIRQ_STORE_ROCKS_STATUS_H_
#define FAIRQ_STORE_ROCKS_STATUS_H_

#include <string_view>

#include "base/status.h"
#include "rocksdb/status.h"

namespace fairq::store {

// What the store was doing; it decides the code (store.h's contract).
enum class RocksOp {
  // Open and Commit: every failure is UNAVAILABLE, since to the caller it
  // means one thing, "the store cannot take this write", whatever the cause.
  kOpen,
  kWrite,
  // Reads: corruption is INTERNAL (retrying will not help), I/O and
  // transient conditions are UNAVAILABLE, anything else INTERNAL.
  kRead,
};

// The message is "<what>: <RocksDB's own text>", e.g.
// "commit batch 1 of 3: IO error: No space left on device".
Status FromRocks(const rocksdb::Status& status, RocksOp op,
                 std::string_view what);

}  // namespace fairq::store

#endif  // FAIRQ_STORE_ROCKS_STATUS_H_

#include "store/rocks_status.h"

#include <string>

namespace fairq::store {
namespace {

StatusCode ReadCode(const rocksdb::Status& status) {
  switch (status.code()) {
    case rocksdb::Status::kNotFound:
      return StatusCode::kNotFound;
    case rocksdb::Status::kIOError:
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTimedOut:
    case rocksdb::Status::kTryAgain:
    case rocksdb::Status::kShutdownInProgress:
    case rocksdb::Status::kIncomplete:
    case rocksdb::Status::kAborted:
      return StatusCode::kUnavailable;
    default:
      // Corruption, InvalidArgument, NotSupported, ...: a bug or damaged
      // data, not something a retry fixes.
      return StatusCode::kInternal;
  }
}

}  // namespace

Status FromRocks(const rocksdb::Status& status, RocksOp op,
                 std::string_view what) {
  if (status.ok()) return Status::Ok();
  const StatusCode code =
      op == RocksOp::kRead ? ReadCode(status) : StatusCode::kUnavailable;
  std::string message(what);
  message += ": ";
  message += status.ToString();
  return Status(code, std::move(message));
}

}  // namespace fairq::store

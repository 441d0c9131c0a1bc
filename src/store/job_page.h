// Job pages: how the jobs family stores the records of jobs enqueued
// together, one value per page under the first job's id (docs/storage.md,
// "Job pages"). JobPageEncoder builds a value as the dispatcher adds records;
// JobPageReader reads one back, a format-1 bare record as a page of one.
//
// Thread-safety: an encoder or a reader belongs to the thread that uses it;
// ParsePageRecord is pure.
#ifndef FAIRQ_STORE_JOB_PAGE_H_
#define FAIRQ_STORE_JOB_PAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fairq/v1/records.pb.h"

namespace fairq::store {

// A JobPage's bytes, written record by record: each record is serialized
// once, straight into the value, instead of being copied into a JobPage
// message first.
class JobPageEncoder {
 public:
  // Records come in ascending id order.
  void Add(const v1::JobRecord& record);
  void Clear();

  bool empty() const { return count_ == 0; }
  uint32_t count() const { return count_; }
  uint64_t first_id() const { return first_id_; }
  // One past the last record's id.
  uint64_t end_id() const { return end_id_; }
  std::string_view bytes() const { return bytes_; }

 private:
  std::string bytes_;
  uint64_t first_id_ = 0;
  uint64_t end_id_ = 0;
  uint32_t count_ = 0;
};

// Walks the records of one jobs value in order, reading only each record's
// id, so that a reader parses just the records it wants (a lease's read by
// id picks one record out of hundreds). A format-1 bare record is read as a
// page of one: a bare record never has JobPage's field, and a page starts
// with it.
class JobPageReader {
 public:
  explicit JobPageReader(std::string_view value);
  // The next record's id and serialized bytes (a JobRecord); false at the
  // end, or at bytes that do not parse (then corrupt() is true).
  bool Next(uint64_t* id, std::string_view* record);
  bool corrupt() const { return corrupt_; }

 private:
  bool Fail();

  std::string_view rest_;
  bool paged_ = false;
  bool corrupt_ = false;
};

// Parses a record JobPageReader yielded into `record` (v1::JobRecord, or
// its view with the spec left encoded). False if the bytes do not parse,
// or parse to another id than the reader read (a record with two id
// fields, of which protobuf keeps the last): either is corruption.
template <class Record>
bool ParsePageRecord(uint64_t id, std::string_view bytes, Record* record) {
  return record->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
         record->id() == id;
}

}  // namespace fairq::store

#endif  // FAIRQ_STORE_JOB_PAGE_H_

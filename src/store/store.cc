#include "store/store.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <string>
#include <utility>

#include "rocksdb/db.h"
#include "rocksdb/perf_level.h"
#include "rocksdb/write_batch.h"
#include "store/column_families.h"
#include "store/rocks_status.h"

namespace fairq::store {
namespace {

using Handles = std::vector<rocksdb::ColumnFamilyHandle*>;

rocksdb::ColumnFamilyHandle* Handle(const Handles& families, Family family) {
  return families[static_cast<size_t>(family)];
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

Status CorruptRecord(Family family, std::string_view key,
                     std::string_view what) {
  return Internal("corrupt " + std::string(what) + " in family " +
                  std::string(FamilyName(family)) + " at key " + Hex(key));
}

template <class Message>
std::string Serialize(const Message& message) {
  std::string out;
  // Fails only past 2 GiB, which the API's size limits rule out.
  [[maybe_unused]] const bool ok = message.SerializeToString(&out);
  assert(ok);
  return out;
}

template <class Message>
bool Parse(rocksdb::Slice bytes, Message* message) {
  return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// rocksdb::WriteBatch::Put/Delete fail only past max_bytes (unset) or 4 GiB
// per entry, which the API's size limits rule out.
void BatchPut(rocksdb::WriteBatch* batch, rocksdb::ColumnFamilyHandle* family,
              std::string_view key, std::string_view value) {
  [[maybe_unused]] const rocksdb::Status s = batch->Put(family, key, value);
  assert(s.ok());
}

void BatchDelete(rocksdb::WriteBatch* batch,
                 rocksdb::ColumnFamilyHandle* family, std::string_view key) {
  [[maybe_unused]] const rocksdb::Status s = batch->Delete(family, key);
  assert(s.ok());
}

std::string PoolKey(std::string_view name) {
  return std::string(kPoolKeyPrefix) + std::string(name);
}

// ---------------------------------------------------------------------------
// Opening

// A family we do not know was made by a newer fairqd; RocksDB would refuse
// to open without it anyway, but with a less helpful message.
Status CheckKnownFamilies(const rocksdb::DBOptions& options,
                          const std::string& path) {
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(options, path, &names).ok()) {
    return Status::Ok();  // no database yet, or Open will say what is wrong
  }
  std::string unknown;
  for (const std::string& name : names) {
    bool known = false;
    for (const FamilySpec& spec : FamilyTable()) known |= spec.name == name;
    if (!known) unknown += (unknown.empty() ? "" : ", ") + name;
  }
  if (unknown.empty()) return Status::Ok();
  return FailedPrecondition("store at " + path +
                            " has column families this fairqd does not know (" +
                            unknown + "); was it written by a newer version?");
}

StatusOr<bool> AllFamiliesEmpty(rocksdb::DB* db, const Handles& families) {
  for (rocksdb::ColumnFamilyHandle* family : families) {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), family));
    it->SeekToFirst();
    FAIRQ_RETURN_IF_ERROR(
        FromRocks(it->status(), RocksOp::kOpen, "check for existing data"));
    if (it->Valid()) return false;
  }
  return true;
}

Status WriteFormatVersion(rocksdb::DB* db, const Handles& families) {
  v1::MetaFormat format;
  format.set_format_version(kFormatVersion);
  rocksdb::WriteOptions write_options;
  write_options.sync = true;  // once per database: always worth it
  return FromRocks(db->Put(write_options, Handle(families, Family::kMeta),
                           kFormatVersionKey, Serialize(format)),
                   RocksOp::kOpen, "write format_version");
}

// A database without a format_version is new only if it holds nothing: a
// crash between creating the files and writing the version must not leave a
// store that refuses to open, but foreign data must not be adopted either.
Status InitFormatVersion(rocksdb::DB* db, const Handles& families) {
  StatusOr<bool> empty = AllFamiliesEmpty(db, families);
  FAIRQ_RETURN_IF_ERROR(empty.status());
  if (!*empty) {
    return FailedPrecondition(
        "store holds data but no format_version; not a fairq store?");
  }
  return WriteFormatVersion(db, families);
}

Status CheckFormatVersion(rocksdb::DB* db, const Handles& families) {
  rocksdb::PinnableSlice value;
  const rocksdb::Status s =
      db->Get(rocksdb::ReadOptions(), Handle(families, Family::kMeta),
              kFormatVersionKey, &value);
  if (s.IsNotFound()) return InitFormatVersion(db, families);
  FAIRQ_RETURN_IF_ERROR(FromRocks(s, RocksOp::kOpen, "read format_version"));
  v1::MetaFormat format;
  if (!Parse(value, &format)) {
    return FailedPrecondition("store's format_version record is unreadable");
  }
  if (format.format_version() == kFormatVersion) return Status::Ok();
  // Format 2 reads format 1 as it is: each bare record is a page of one,
  // and no job is marked done (format 1 deleted a finished job's record);
  // Open made the done family. So the upgrade is the new version, after
  // which a format-1 fairqd refuses the store (it does not know the done
  // family) instead of misreading pages.
  if (format.format_version() == 1) return WriteFormatVersion(db, families);
  return FailedPrecondition("store has format_version " +
                            std::to_string(format.format_version()) +
                            "; this fairqd reads format_version 1 and " +
                            std::to_string(kFormatVersion));
}

// ---------------------------------------------------------------------------
// Reading

// A failed read of `key`. Only called on failure: building the message for
// every read cost two heap allocations per leased job (job_reads_bench).
Status ReadFailed(const rocksdb::Status& status, Family family,
                  std::string_view key) {
  return FromRocks(
      status, RocksOp::kRead,
      "get from " + std::string(FamilyName(family)) + " key " + Hex(key));
}

template <class Message>
StatusOr<std::optional<Message>> GetRecord(rocksdb::DB* db,
                                           const Handles& families,
                                           Family family,
                                           std::string_view key) {
  rocksdb::PinnableSlice value;
  const rocksdb::Status s =
      db->Get(rocksdb::ReadOptions(), Handle(families, family), key, &value);
  if (s.IsNotFound()) return std::optional<Message>();
  if (!s.ok()) return ReadFailed(s, family, key);
  Message message;
  if (!Parse(value, &message)) return CorruptRecord(family, key, "value");
  return std::optional<Message>(std::move(message));
}

// One family's keys in [begin, end); no end means to the family's end.
struct KeyRange {
  rocksdb::DB* db;
  rocksdb::ColumnFamilyHandle* handle;
  Family family;
  std::string begin;
  std::optional<std::string> end;
};

KeyRange WholeFamily(rocksdb::DB* db, const Handles& families, Family family) {
  return {db, Handle(families, family), family, "", std::nullopt};
}

// Read options for a scan up to `end` (none: to the family's end). Scans
// (recovery, listings, reading ahead) read each block once; they must not
// evict the blocks point reads use.
struct ScanOptions {
  explicit ScanOptions(std::optional<std::string> end_key)
      : end(std::move(end_key)) {
    options.fill_cache = false;
    if (end) {
      upper = *end;
      options.iterate_upper_bound = &upper;
    }
  }
  ScanOptions(const ScanOptions&) = delete;  // options points at upper
  ScanOptions& operator=(const ScanOptions&) = delete;

  std::optional<std::string> end;
  rocksdb::Slice upper;
  rocksdb::ReadOptions options;
};

// Calls on_record(key, message) in key order until it returns false or an
// error. A value that does not parse is corruption: reported, never skipped,
// since recovery must not silently drop jobs.
template <class Message, class OnRecord>
Status ScanRecords(const KeyRange& range, OnRecord on_record) {
  const ScanOptions scan(range.end);
  std::unique_ptr<rocksdb::Iterator> it(
      range.db->NewIterator(scan.options, range.handle));
  for (it->Seek(range.begin); it->Valid(); it->Next()) {
    const std::string_view key = it->key().ToStringView();
    Message message;
    if (!Parse(it->value(), &message)) {
      return CorruptRecord(range.family, key, "value");
    }
    StatusOr<bool> more = on_record(key, message);
    if (!more.ok() || !*more) return more.status();
  }
  return FromRocks(it->status(), RocksOp::kRead,
                   "scan " + std::string(FamilyName(range.family)));
}

// ScanRecords with the key decoded by `decode` (returning an optional).
template <class Message, class Decode, class Visit>
Status ScanDecoded(const KeyRange& range, Decode decode, Visit visit) {
  return ScanRecords<Message>(
      range, [&](std::string_view key, Message& message) -> StatusOr<bool> {
        auto decoded = decode(key);
        if (!decoded) return CorruptRecord(range.family, key, "key");
        return visit(*decoded, message);
      });
}

// Reads the jobs family's records in id order through one iterator, page by
// page, checking each page against its key: its first record must carry
// the key's id and ids must rise within it. A record filed under another id
// would put a job in the wrong place on recovery, so it is corruption like
// any other.
class JobsCursor {
 public:
  explicit JobsCursor(rocksdb::Iterator* it) : it_(it) {}

  // To the page that holds `id` (the page at or before its key), or the
  // first page after it if none is before; false if there is none.
  StatusOr<bool> SeekPage(uint64_t id) {
    sought_ = EncodeJobId(id);
    it_->SeekForPrev(sought_);
    if (!it_->Valid() && it_->status().ok()) it_->Seek(sought_);
    return StartPage();
  }
  // To the next page; false past the last (or the iterator's upper bound).
  StatusOr<bool> NextPage() {
    it_->Next();
    return StartPage();
  }
  // The current page's next record; false at its end, or with an error in
  // status().
  bool NextInPage(uint64_t* id, std::string_view* record) {
    if (!page_->Next(id, record)) {
      if (page_->corrupt() || records_ == 0) Fail("value");
      return false;
    }
    if (records_ == 0 ? *id != first_id_ : *id <= last_id_) {
      Fail("page (record id " + std::to_string(*id) + ")");
      return false;
    }
    last_id_ = *id;
    ++records_;
    return true;
  }

  const Status& status() const { return status_; }
  uint64_t first_id() const { return first_id_; }
  // One past the last record read from the page.
  uint64_t end_id() const { return last_id_ + 1; }
  uint32_t records() const { return records_; }

 private:
  StatusOr<bool> StartPage() {
    if (!it_->Valid()) {
      if (it_->status().ok()) return false;
      return FromRocks(it_->status(), RocksOp::kRead,
                       "read jobs from key " + Hex(sought_));
    }
    const std::optional<uint64_t> first =
        DecodeJobId(it_->key().ToStringView());
    if (!first)
      return CorruptRecord(Family::kJobs, it_->key().ToStringView(), "key");
    first_id_ = *first;
    last_id_ = 0;
    records_ = 0;
    page_.emplace(it_->value().ToStringView());
    return true;
  }
  void Fail(const std::string& what) {
    status_ = CorruptRecord(Family::kJobs, EncodeJobId(first_id_), what);
  }

  rocksdb::Iterator* it_;
  std::string sought_;
  std::optional<JobPageReader> page_;
  uint64_t first_id_ = 0;
  uint64_t last_id_ = 0;
  uint32_t records_ = 0;
  Status status_;
};

// Walks the records from the page that holds `from_id` to the iterator's
// upper bound. Calls on_record(id, serialized record), which returns false
// to stop or an error, and on_page(first_id, end_id, records) after each
// page read to its end.
template <class OnRecord, class OnPage>
Status WalkJobs(rocksdb::Iterator* it, uint64_t from_id, OnRecord on_record,
                OnPage on_page) {
  JobsCursor cursor(it);
  for (StatusOr<bool> page = cursor.SeekPage(from_id);;
       page = cursor.NextPage()) {
    if (!page.ok() || !*page) return page.status();
    uint64_t id = 0;
    std::string_view record;
    while (cursor.NextInPage(&id, &record)) {
      StatusOr<bool> more = on_record(id, record);
      if (!more.ok() || !*more) return more.status();
    }
    if (!cursor.status().ok()) return cursor.status();
    on_page(cursor.first_id(), cursor.end_id(), cursor.records());
  }
}

// Finds records by id, asked in ascending order, through one JobsCursor: an
// id is looked for further on in the page the last one was found in, and
// only an id beyond that page seeks (to the page at or before it).
class JobFinder {
 public:
  using Found = std::optional<std::string_view>;  // the serialized record

  explicit JobFinder(rocksdb::Iterator* it) : cursor_(it) {}

  // nullopt if `id` is not stored. The view lives until the next call.
  StatusOr<Found> Find(uint64_t id) {
    for (bool sought = false;;) {
      if (!held_) {
        held_ = on_page_ && cursor_.NextInPage(&id_, &record_);
        if (!cursor_.status().ok()) return cursor_.status();
      }
      if (!held_) {
        if (sought) return Found();  // not in the page at or before it
        StatusOr<bool> page = cursor_.SeekPage(id);
        if (!page.ok()) return page.status();
        on_page_ = *page;
        sought = true;
        continue;
      }
      if (id_ > id) return Found();  // not stored
      if (id_ == id) return Found(record_);  // held: it may be asked again
      held_ = false;
    }
  }

 private:
  JobsCursor cursor_;
  bool on_page_ = false;  // the cursor is in a page
  bool held_ = false;     // id_ and record_ hold a record not passed yet
  uint64_t id_ = 0;
  std::string_view record_;
};

// Parses a record the walk found into `record` (v1::JobRecord, or its view
// with the spec left encoded), in place: the read-ahead's records are
// parsed straight into the vector it hands on.
template <class Record>
Status ParseRecord(uint64_t id, std::string_view bytes, Record* record) {
  if (ParsePageRecord(id, bytes, record)) return Status::Ok();
  return CorruptRecord(Family::kJobs, EncodeJobId(id), "record in page");
}

// Whether the done family marks job ids, asked in ascending order: one
// iterator walked alongside the jobs.
class DoneMarks {
 public:
  DoneMarks(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* done,
            const rocksdb::ReadOptions& options)
      : it_(db->NewIterator(options, done)) {
    it_->SeekToFirst();
  }

  StatusOr<bool> Marked(uint64_t id) {
    for (; it_->Valid(); it_->Next()) {
      const std::optional<uint64_t> marked =
          DecodeJobId(it_->key().ToStringView());
      if (!marked) {
        return CorruptRecord(Family::kDone, it_->key().ToStringView(), "key");
      }
      if (*marked >= id) return *marked == id;
    }
    FAIRQ_RETURN_IF_ERROR(
        FromRocks(it_->status(), RocksOp::kRead, "scan done"));
    return false;
  }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace

// ---------------------------------------------------------------------------
// WriteBatch

WriteBatch::WriteBatch(
    const std::vector<rocksdb::ColumnFamilyHandle*>* families)
    : families_(families), rep_(std::make_unique<rocksdb::WriteBatch>()) {}
WriteBatch::~WriteBatch() = default;
WriteBatch::WriteBatch(WriteBatch&&) noexcept = default;
WriteBatch& WriteBatch::operator=(WriteBatch&&) noexcept = default;

void WriteBatch::PutJobPage(const JobPageEncoder& page) {
  BatchPut(rep_.get(), Handle(*families_, Family::kJobs),
           EncodeJobId(page.first_id()), page.bytes());
}

void WriteBatch::DeleteJobPage(uint64_t first_id) {
  BatchDelete(rep_.get(), Handle(*families_, Family::kJobs),
              EncodeJobId(first_id));
}

void WriteBatch::PutJobDone(uint64_t job_id) {
  BatchPut(rep_.get(), Handle(*families_, Family::kDone), EncodeJobId(job_id),
           {});
}

// One range tombstone for the page's marks, where a delete per mark would
// leave as many tombstones as the page had jobs.
void WriteBatch::DeleteJobsDone(uint64_t begin_id, uint64_t end_id) {
  [[maybe_unused]] const rocksdb::Status s =
      rep_->DeleteRange(Handle(*families_, Family::kDone),
                        EncodeJobId(begin_id), EncodeJobId(end_id));
  assert(s.ok());
}

void WriteBatch::PutReady(const ReadyKey& key, const v1::ReadyEntry& entry) {
  BatchPut(rep_.get(), Handle(*families_, Family::kReady), EncodeReadyKey(key),
           Serialize(entry));
}

void WriteBatch::DeleteReady(const ReadyKey& key) {
  BatchDelete(rep_.get(), Handle(*families_, Family::kReady),
              EncodeReadyKey(key));
}

void WriteBatch::PutScheduled(const ScheduledKey& key,
                              const v1::ScheduledEntry& entry) {
  BatchPut(rep_.get(), Handle(*families_, Family::kScheduled),
           EncodeScheduledKey(key), Serialize(entry));
}

void WriteBatch::DeleteScheduled(const ScheduledKey& key) {
  BatchDelete(rep_.get(), Handle(*families_, Family::kScheduled),
              EncodeScheduledKey(key));
}

void WriteBatch::PutLease(uint64_t job_id, const v1::LeaseRecord& lease) {
  BatchPut(rep_.get(), Handle(*families_, Family::kLeases), EncodeJobId(job_id),
           Serialize(lease));
}

void WriteBatch::DeleteLease(uint64_t job_id) {
  BatchDelete(rep_.get(), Handle(*families_, Family::kLeases),
              EncodeJobId(job_id));
}

void WriteBatch::PutDead(uint64_t job_id, const v1::DeadRecord& dead) {
  BatchPut(rep_.get(), Handle(*families_, Family::kDead), EncodeJobId(job_id),
           Serialize(dead));
}

void WriteBatch::DeleteDead(uint64_t job_id) {
  BatchDelete(rep_.get(), Handle(*families_, Family::kDead),
              EncodeJobId(job_id));
}

void WriteBatch::PutTenant(const v1::TenantRecord& tenant) {
  BatchPut(rep_.get(), Handle(*families_, Family::kTenants),
           tenant.config().name(), Serialize(tenant));
}

void WriteBatch::PutIdempotency(uint32_t tenant_id, std::string_view key,
                                const v1::IdempotencyRecord& record) {
  BatchPut(rep_.get(), Handle(*families_, Family::kIdempotency),
           EncodeIdempotencyKey(tenant_id, key), Serialize(record));
}

void WriteBatch::PutPool(std::string_view name, const v1::PoolRecord& pool) {
  BatchPut(rep_.get(), Handle(*families_, Family::kMeta), PoolKey(name),
           Serialize(pool));
}

void WriteBatch::PutIdReservation(const v1::IdReservation& reservation) {
  BatchPut(rep_.get(), Handle(*families_, Family::kMeta), kIdReservationKey,
           Serialize(reservation));
}

// A moved-from batch counts as empty, so Commit can skip it.
bool WriteBatch::empty() const { return count() == 0; }

uint32_t WriteBatch::count() const {
  return rep_ == nullptr ? 0 : rep_->Count();
}

// ---------------------------------------------------------------------------
// Store

StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  const StoreResources resources = NewStoreResources();
  const rocksdb::DBOptions db_options = MakeDBOptions(resources, options.env);
  FAIRQ_RETURN_IF_ERROR(CheckKnownFamilies(db_options, options.path));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status s =
      rocksdb::DB::Open(db_options, options.path,
                        MakeFamilyDescriptors(resources), &handles, &db);
  FAIRQ_RETURN_IF_ERROR(
      FromRocks(s, RocksOp::kOpen, "open store at " + options.path));
  // From here the Store owns db and handles, so any early return closes them.
  std::unique_ptr<Store> store(new Store());
  store->db_.reset(db);
  store->families_ = std::move(handles);
  store->sync_ = options.sync;
  FAIRQ_RETURN_IF_ERROR(CheckFormatVersion(store->db_.get(), store->families_));
  return store;
}

Store::~Store() {
  if (db_ == nullptr) return;
  for (rocksdb::ColumnFamilyHandle* family : families_) {
    // Fails only for a handle of another DB; ours are all from db_.
    [[maybe_unused]] const rocksdb::Status s =
        db_->DestroyColumnFamilyHandle(family);
  }
  db_.reset();
}

WriteBatch Store::NewBatch() const { return WriteBatch(&families_); }

// If a write fails, the earlier batches of this call reached the log but
// perhaps not the disk; the caller replies to none of them, and nothing after
// the failure is attempted.
Status Store::Apply(std::vector<WriteBatch>& batches) {
  FAIRQ_RETURN_IF_ERROR(CheckNotFailed());
  for (size_t i = 0; i < batches.size(); ++i) {
    if (batches[i].empty()) continue;
    const rocksdb::Status s =
        db_->Write(rocksdb::WriteOptions(), batches[i].rep_.get());
    if (!s.ok()) {
      failed_.store(true, std::memory_order_release);
      return FromRocks(s, RocksOp::kWrite,
                       "commit batch " + std::to_string(i + 1) + " of " +
                           std::to_string(batches.size()));
    }
  }
  return Status::Ok();
}

// SyncWAL rather than Write(sync=true): the writes are visible before they
// are durable, so replies that may be lost in a crash (leases) need not wait
// for the fsync, while one fsync still covers every write before it.
Status Store::SyncLog() {
  FAIRQ_RETURN_IF_ERROR(CheckNotFailed());
  if (!sync_) return Status::Ok();
  const rocksdb::Status s = db_->SyncWAL();
  if (!s.ok()) {
    failed_.store(true, std::memory_order_release);
    return FromRocks(s, RocksOp::kWrite, "sync the log");
  }
  return Status::Ok();
}

Status Store::Commit(std::vector<WriteBatch>& batches) {
  FAIRQ_RETURN_IF_ERROR(Apply(batches));
  return SyncLog();
}

void DisablePerfCountersOnThisThread() {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
}

Status Store::CheckNotFailed() const {
  if (!failed()) return Status::Ok();
  return Unavailable(
      "store is in the failed state after an earlier write error; "
      "nothing was written");
}

StatusOr<std::optional<v1::JobRecord>> Store::GetJob(uint64_t job_id) const {
  StatusOr<std::vector<std::optional<v1::JobRecord>>> jobs = GetJobs({job_id});
  if (!jobs.ok()) return jobs.status();
  return std::move(jobs->front());
}

// One iterator for all the ids, taken in ascending order (JobFinder).
// Records are picked out without parsing the others. A lease's ids cluster
// (DRR takes each tenant's oldest), so most pages are walked once for
// several ids.
StatusOr<std::vector<std::optional<v1::JobRecord>>> Store::GetJobs(
    const std::vector<uint64_t>& job_ids) const {
  std::vector<std::optional<v1::JobRecord>> jobs(job_ids.size());
  std::vector<size_t> order(job_ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return job_ids[a] < job_ids[b]; });
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(
      rocksdb::ReadOptions(), Handle(families_, Family::kJobs)));
  JobFinder finder(it.get());
  for (size_t i : order) {
    StatusOr<JobFinder::Found> found = finder.Find(job_ids[i]);
    if (!found.ok()) return found.status();
    if (!*found) continue;
    FAIRQ_RETURN_IF_ERROR(ParseRecord(job_ids[i], **found, &jobs[i].emplace()));
  }
  return jobs;
}

StatusOr<std::optional<v1::DeadRecord>> Store::GetDead(uint64_t job_id) const {
  return GetRecord<v1::DeadRecord>(db_.get(), families_, Family::kDead,
                                   EncodeJobId(job_id));
}

StatusOr<std::optional<v1::IdReservation>> Store::GetIdReservation() const {
  return GetRecord<v1::IdReservation>(db_.get(), families_, Family::kMeta,
                                      kIdReservationKey);
}

StatusOr<Store::JobsRead> Store::ReadJobs(uint64_t begin_id, uint64_t end_id,
                                          size_t max_spec_bytes) const {
  JobsRead read;
  read.next_id = end_id;
  if (end_id <= begin_id) return read;
  // Ids are dense, so the span is about the count; growing the vector
  // instead moved each record once more on average (callgrind,
  // docs/benchmarks.md, twenty-seventh round). Capped: a caller may pass a
  // wide, sparse range.
  constexpr uint64_t kMaxReserved = 4096;
  read.jobs.reserve(std::min(end_id - begin_id, kMaxReserved));
  const ScanOptions scan(EncodeJobId(end_id));  // pages that start before it
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(scan.options, Handle(families_, Family::kJobs)));
  size_t bytes = 0;
  auto take = [&](uint64_t id, std::string_view record) -> StatusOr<bool> {
    if (id < begin_id) return true;
    if (id >= end_id) return false;
    v1::JobRecordWithEncodedSpec& job = read.jobs.emplace_back();
    FAIRQ_RETURN_IF_ERROR(ParseRecord(id, record, &job));
    bytes += job.spec().size();
    if (bytes > max_spec_bytes) read.next_id = id + 1;
    return bytes <= max_spec_bytes;
  };
  Status status =
      WalkJobs(it.get(), begin_id, take, [](uint64_t, uint64_t, uint32_t) {});
  if (!status.ok()) return status;
  return read;
}

Status Store::ScanJobs(
    const Visitor<v1::JobRecord>& visit,
    const std::function<void(const StoredPage&)>& on_page) const {
  const ScanOptions scan(std::nullopt);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(scan.options, Handle(families_, Family::kJobs)));
  DoneMarks done(db_.get(), Handle(families_, Family::kDone), scan.options);
  uint32_t live = 0;
  auto visit_live = [&](uint64_t id, std::string_view bytes) -> StatusOr<bool> {
    StatusOr<bool> marked = done.Marked(id);
    if (!marked.ok()) return marked.status();
    if (*marked) return true;
    ++live;
    v1::JobRecord record;
    FAIRQ_RETURN_IF_ERROR(ParseRecord(id, bytes, &record));
    return visit(record);
  };
  auto end_page = [&](uint64_t first_id, uint64_t end_id, uint32_t records) {
    if (records > 1) on_page({first_id, end_id, live});
    live = 0;
  };
  return WalkJobs(it.get(), 0, visit_live, end_page);
}

Status Store::ScanReady(const Visitor<ReadyKey, v1::ReadyEntry>& visit) const {
  return ScanDecoded<v1::ReadyEntry>(
      WholeFamily(db_.get(), families_, Family::kReady), DecodeReadyKey, visit);
}

Status Store::ScanScheduled(
    const Visitor<ScheduledKey, v1::ScheduledEntry>& visit) const {
  return ScanDecoded<v1::ScheduledEntry>(
      WholeFamily(db_.get(), families_, Family::kScheduled), DecodeScheduledKey,
      visit);
}

Status Store::ScanLeases(
    const Visitor<uint64_t, v1::LeaseRecord>& visit) const {
  return ScanDecoded<v1::LeaseRecord>(
      WholeFamily(db_.get(), families_, Family::kLeases), DecodeJobId, visit);
}

Status Store::ScanDead(uint64_t after_job_id,
                       const Visitor<uint64_t, v1::DeadRecord>& visit) const {
  if (after_job_id == UINT64_MAX) return Status::Ok();  // nothing after it
  KeyRange range = WholeFamily(db_.get(), families_, Family::kDead);
  range.begin = EncodeJobId(after_job_id + 1);
  return ScanDecoded<v1::DeadRecord>(range, DecodeJobId, visit);
}

Status Store::ScanTenants(const Visitor<v1::TenantRecord>& visit) const {
  return ScanRecords<v1::TenantRecord>(
      WholeFamily(db_.get(), families_, Family::kTenants),
      [&](std::string_view, const v1::TenantRecord& tenant) -> StatusOr<bool> {
        return visit(tenant);
      });
}

Status Store::ScanPools(
    const Visitor<std::string, v1::PoolRecord>& visit) const {
  KeyRange range = WholeFamily(db_.get(), families_, Family::kMeta);
  range.begin = std::string(kPoolKeyPrefix);
  // "pool0" is the first key after every "pool/..." ('0' follows '/').
  range.end = range.begin;
  ++range.end->back();
  auto name_of = [](std::string_view key) -> std::optional<std::string> {
    return std::string(key.substr(kPoolKeyPrefix.size()));
  };
  return ScanDecoded<v1::PoolRecord>(range, name_of, visit);
}

Status Store::ScanIdempotency(
    int64_t now_unix_ms,
    const Visitor<uint32_t, std::string, v1::IdempotencyRecord>& visit) const {
  // Expired records linger until compaction drops them; skip them here by
  // the compaction filter's rule, so both agree on what "expired" means.
  auto live = [&](const std::pair<uint32_t, std::string>& key,
                  const v1::IdempotencyRecord& record) {
    if (record.expires_unix_ms() < now_unix_ms) return true;
    return visit(key.first, key.second, record);
  };
  return ScanDecoded<v1::IdempotencyRecord>(
      WholeFamily(db_.get(), families_, Family::kIdempotency),
      DecodeIdempotencyKey, live);
}

}  // namespace fairq::store

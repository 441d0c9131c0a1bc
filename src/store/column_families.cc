#include "store/column_families.h"

#include "rocksdb/filter_policy.h"
#include "rocksdb/memtablerep.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/table_properties_collectors.h"

namespace fairq::store {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

struct TableShape {
  size_t write_buffer_bytes;
  size_t block_bytes;
  // Families read by key (dead). Bloom filters pay off only for point
  // lookups; families that are only scanned or read with iterators (jobs,
  // ready, scheduled, leases) would carry them for nothing. A restart point
  // every 4 keys instead of 16 shortens the walk inside a data block to the
  // key: 3.0k -> 1.8k instructions a lease read at the 2M backlog level
  // (callgrind, measured on jobs when each record was its own key), for
  // full keys stored at a quarter of the entries.
  bool point_reads;
};

// The settings every family shares: the one block cache, with index and
// filter blocks charged to it so table readers cannot grow memory past the
// budget as SST files accumulate.
void ApplyShape(const StoreResources& resources, const TableShape& shape,
                rocksdb::ColumnFamilyOptions* options) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = resources.block_cache;
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  table.block_size = shape.block_bytes;
  if (shape.point_reads) {
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    table.block_restart_interval = 4;
  }
  options->table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options->write_buffer_size = shape.write_buffer_bytes;
  options->max_write_buffer_number = 2;
}

// `jobs` takes its puts in id order (ids are handed out in order). One
// insert hint for the whole memtable (the empty prefix) lets each insert
// start from where the last one went instead of from the skiplist's head:
// memtable inserts were half of the apply thread in the cycle benchmark,
// and the hint raised its rate 7-13% (A/B, 4 runs, docs/benchmarks.md).
// Deletes come in lease order, which DRR spreads over tenants, and gain
// less (docs/storage.md).
void HintInsertsInIdOrder(rocksdb::ColumnFamilyOptions* options) {
  options->memtable_insert_with_hint_prefix_extractor.reset(
      rocksdb::NewFixedPrefixTransform(0));
}

// Queue-like families: every entry is put, then deleted soon after (leased,
// promoted, completed). Tombstones pile up in front of the live entries and
// slow the recovery scan, so SST files dense with deletes are compacted
// early instead of waiting for size triggers.
//
// They are read only by the scans at startup, so their memtables need no
// order until then: a vector memtable appends each write and sorts once,
// when it is flushed or scanned. `leases` is written twice for every job
// (`ready` and `scheduled` for retries and delays, the same pattern), out
// of id order as DRR moves between tenants, and its skiplist searched ~20
// keys per insert; with vectors fairqd ran 18% fewer instructions over a
// 20k-job cycle (callgrind) and drained 3-10% faster (docs/benchmarks.md,
// eighth round).
// None of these families may be read by key (Get): a vector memtable sorts a
// copy of itself for each such read.
void ApplyQueueShape(const StoreResources& resources, size_t write_buffer,
                     rocksdb::ColumnFamilyOptions* options) {
  ApplyShape(resources, {write_buffer, 4 * 1024, false}, options);
  options->memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  options->table_properties_collector_factories.push_back(
      rocksdb::NewCompactOnDeletionCollectorFactory(
          /*sliding_window_size=*/128, /*deletion_trigger=*/64,
          /*deletion_ratio=*/0.5));
}

// Format version, pools and the id reservation: a few hundred bytes.
void TuneMeta(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyShape(r, {4 * kMiB, 4 * 1024, false}, o);
}

// Job pages (store/job_page.h) carry payloads up to 1 MiB each and are
// read with iterators: by id, the page at or before it; by range, the
// read-ahead. So no bloom filters, which answer only point lookups. The
// largest memtable, since it takes most bytes. With 2M jobs queued the
// read-ahead reads every record from an SST file, so reads decide the
// backlog benchmark's 2M level: no compression (payloads are small or
// compressed by their producers; without Snappy the level ran 28-39%
// faster, A/B, 2 runs). 4 KiB blocks rather than 16 KiB copied less per
// record read when each record was its own key (+6% to +34%, 3 A/B runs);
// a page past 4 KiB is a block of its own either way.
// With a deep backlog every L0 -> L1 compaction rewrites the whole family:
// a flush holds the tombstones of the pages just finished (the oldest ids)
// and the pages just enqueued (the newest), so each L0 file
// spans every L1 file. Waiting for 8 L0 files instead of 4 halves how often
// (one took 1.1 s of CPU for 208 MB with 2M jobs queued); the 2M backlog
// level rose 5-9% with 16 workers, restart and RSS unchanged (seventeenth
// round). The write-stall triggers keep RocksDB's distance above it. A
// trigger of 16 changed nothing: with 27 MB flushes L0 outgrows the level
// size base (256 MB) at about 10 files, and that starts the compaction
// first (twenty-sixth round).
void TuneJobs(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyShape(r, {32 * kMiB, 4 * 1024, false}, o);
  o->compression = rocksdb::kNoCompression;
  HintInsertsInIdOrder(o);
  o->level0_file_num_compaction_trigger = 8;
  o->level0_slowdown_writes_trigger = 24;
  o->level0_stop_writes_trigger = 40;
}

// The busiest index: 20-byte keys, small values. A bigger memtable lets a
// put and its delete meet before flush, so neither reaches an SST file.
void TuneReady(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyQueueShape(r, 16 * kMiB, o);
}

void TuneScheduled(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyQueueShape(r, 8 * kMiB, o);
}

void TuneLeases(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyQueueShape(r, 8 * kMiB, o);
}

// Dead letters are long-lived, read by id (GetDead) and listed in pages.
void TuneDead(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyShape(r, {8 * kMiB, 4 * 1024, true}, o);
}

// One small record per tenant, loaded at start.
void TuneTenants(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyShape(r, {4 * kMiB, 4 * 1024, false}, o);
}

// Expired records are dropped by the compaction filter. Compactions follow
// writes, so a quiet family would keep dead records forever: a periodic
// compaction bounds that to about a day.
void TuneIdempotency(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyShape(r, {8 * kMiB, 4 * 1024, false}, o);
  o->compaction_filter_factory = r.idempotency_filter;
  o->periodic_compaction_seconds = 24 * 60 * 60;
}

// Markers of finished jobs whose page lives on: put one at a time, removed
// by a range delete with their page, read only by the recovery scan.
void TuneDone(const StoreResources& r, rocksdb::ColumnFamilyOptions* o) {
  ApplyQueueShape(r, 8 * kMiB, o);
}

// kMeta lives in "default": RocksDB creates that family in every database
// and cannot drop it, so giving it a purpose leaves no empty family for
// stray writes, and `ldb get format_version` works without --column_family.
constexpr std::array<FamilySpec, kFamilyCount> kFamilies = {{
    {Family::kMeta, "default", TuneMeta},
    {Family::kJobs, "jobs", TuneJobs},
    {Family::kReady, "ready", TuneReady},
    {Family::kScheduled, "scheduled", TuneScheduled},
    {Family::kLeases, "leases", TuneLeases},
    {Family::kDead, "dead", TuneDead},
    {Family::kTenants, "tenants", TuneTenants},
    {Family::kIdempotency, "idempotency", TuneIdempotency},
    {Family::kDone, "done", TuneDone},
}};

constexpr bool TableMatchesEnum() {
  for (size_t i = 0; i < kFamilies.size(); ++i) {
    if (static_cast<size_t>(kFamilies[i].family) != i) return false;
  }
  return true;
}
static_assert(TableMatchesEnum(), "kFamilies must be in Family order");

}  // namespace

StoreResources NewStoreResources(UnixMsClock clock) {
  StoreResources resources;
  resources.block_cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  resources.write_buffers =
      std::make_shared<rocksdb::WriteBufferManager>(kWriteBufferBudgetBytes);
  resources.idempotency_filter =
      std::make_shared<IdempotencyFilterFactory>(std::move(clock));
  return resources;
}

const std::array<FamilySpec, kFamilyCount>& FamilyTable() { return kFamilies; }

std::string_view FamilyName(Family family) {
  return kFamilies[static_cast<size_t>(family)].name;
}

rocksdb::DBOptions MakeDBOptions(const StoreResources& resources,
                                 rocksdb::Env* env) {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  if (env != nullptr) options.env = env;
  options.write_buffer_manager = resources.write_buffers;
  options.max_total_wal_size = kMaxTotalWalBytes;
  // Table readers are cheap with index blocks in the cache, but file
  // descriptors are shared with gRPC's sockets.
  options.max_open_files = 512;
  // Required by the queue families' vector memtables: with concurrent
  // memtable writes on, DB::Open refuses any memtable but the skiplist.
  // Nothing is lost: fairqd writes from one thread (the Writer's apply
  // thread).
  options.allow_concurrent_memtable_write = false;
  // RocksDB's own LOG files: bounded, not the default 1000 files.
  options.keep_log_file_num = 5;
  options.max_log_file_size = 16 * kMiB;
  return options;
}

std::vector<rocksdb::ColumnFamilyDescriptor> MakeFamilyDescriptors(
    const StoreResources& resources) {
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.reserve(kFamilies.size());
  for (const FamilySpec& spec : kFamilies) {
    rocksdb::ColumnFamilyOptions options;
    spec.tune(resources, &options);
    descriptors.emplace_back(std::string(spec.name), options);
  }
  return descriptors;
}

}  // namespace fairq::store

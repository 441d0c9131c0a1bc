// What the lease's payload reads cost at a deep backlog, by access pattern
// (docs/benchmarks.md, fifth round): a Store holding 2M job records as the
// backlog benchmark leaves them (100 tenants enqueued round robin, 100-byte
// payloads), read in lease-sized MultiGets of 6 tenants x 17 jobs, in the
// order a backlog is drained. `Interleaved` is today's layout, where a
// tenant's next jobs are 100 ids apart; `Contiguous` reads the same number
// of records per call with each tenant's 17 adjacent, as a tenant-major key
// would store them. Run by hand; each fill takes ~10 s.
//
// The Raw* benchmarks ask the same questions of RocksDB directly, on a
// second store reopened with the Store's options (so its memtables are
// empty), and add the one access a tenant-major layout would allow that
// ids 100 apart do not: one iterator over each tenant's 17 records.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "store/column_families.h"
#include "store/key_codec.h"
#include "store/store.h"

namespace fairq::store {
namespace {

constexpr uint64_t kJobs = 2'000'000;
constexpr uint64_t kTenants = 100;
constexpr uint64_t kPerTenant = 17;  // jobs a tenant gets in one lease
constexpr uint64_t kTenantsPerLease = 6;
constexpr uint64_t kWindow = kTenants * kPerTenant;  // ids one round reads

std::string NewTempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "job_reads_XXXXXX").string();
  std::string dir = mkdtemp(pattern.data());
  static std::vector<std::string> dirs;
  if (dirs.empty()) {
    std::atexit([] {
      for (const std::string& d : dirs) std::filesystem::remove_all(d);
    });
  }
  dirs.push_back(dir);
  return dir;
}

// A store at `dir` holding kJobs records, tenants round robin.
std::unique_ptr<Store> Fill(const std::string& dir) {
  std::unique_ptr<Store> store = std::move(Store::Open({dir, false})).value();
  v1::JobRecord job;
  job.mutable_spec()->set_payload(std::string(100, 'p'));
  job.mutable_spec()->set_pool("bench-pool");
  for (uint64_t first = 1; first <= kJobs; first += 1000) {
    std::vector<WriteBatch> batches;
    batches.push_back(store->NewBatch());
    for (uint64_t id = first; id < first + 1000; ++id) {
      job.set_id(id);
      job.set_tenant_id(static_cast<uint32_t>(id % kTenants));
      job.mutable_spec()->set_tenant("bench-tenant-" +
                                     std::to_string(id % kTenants));
      job.set_enqueued_unix_ms(static_cast<int64_t>(id));
      batches.back().PutJob(job);
    }
    if (!store->Apply(batches).ok()) std::abort();
  }
  return store;
}

// The store, filled once for every Store benchmark of the run.
Store& Filled() {
  static std::unique_ptr<Store> store = Fill(NewTempDir());
  return *store;
}

// RocksDB opened on a filled store's directory with the Store's options.
class RawStore {
 public:
  explicit RawStore(const std::string& dir) {
    StoreResources resources = NewStoreResources();
    rocksdb::DB* db = nullptr;
    if (!rocksdb::DB::Open(MakeDBOptions(resources, nullptr), dir,
                           MakeFamilyDescriptors(resources), &families_, &db)
             .ok()) {
      std::abort();
    }
    db_.reset(db);
  }
  ~RawStore() {
    for (rocksdb::ColumnFamilyHandle* family : families_) {
      db_->DestroyColumnFamilyHandle(family).PermitUncheckedError();
    }
  }
  RawStore(const RawStore&) = delete;
  RawStore& operator=(const RawStore&) = delete;

  rocksdb::DB& db() { return *db_; }
  rocksdb::ColumnFamilyHandle* jobs() const {
    return families_[static_cast<size_t>(Family::kJobs)];
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> families_;
};

RawStore& RawFilled() {
  static RawStore raw([] {
    std::string dir = NewTempDir();
    Fill(dir).reset();  // closed, so RocksDB can open it
    return dir;
  }());
  return raw;
}

// The ids of lease `n` of a drain: in each window of kWindow ids, leases
// take kTenantsPerLease tenants at a time until every tenant had its turn.
template <bool kContiguous>
std::vector<uint64_t> LeaseIds(uint64_t n) {
  constexpr uint64_t kLeasesPerWindow =
      (kTenants + kTenantsPerLease - 1) / kTenantsPerLease;
  const uint64_t window = n / kLeasesPerWindow % (kJobs / kWindow - 1);
  const uint64_t base = 1 + window * kWindow;
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < kTenantsPerLease; ++i) {
    uint64_t tenant = (n % kLeasesPerWindow * kTenantsPerLease + i) % kTenants;
    for (uint64_t k = 0; k < kPerTenant; ++k) {
      ids.push_back(kContiguous ? base + tenant * kPerTenant + k
                                : base + tenant + k * kTenants);
    }
  }
  return ids;
}

template <bool kContiguous>
void BM_LeaseReads(benchmark::State& state) {
  Store& store = Filled();
  uint64_t n = 0;
  for (auto _ : state) {
    auto jobs = store.GetJobs(LeaseIds<kContiguous>(n++));
    if (!jobs.ok() || !(*jobs)[0]) {
      state.SkipWithError("a leased job was not found");
      break;
    }
    benchmark::DoNotOptimize(jobs);
  }
  state.SetItemsProcessed(state.iterations() * kTenantsPerLease * kPerTenant);
}
BENCHMARK_TEMPLATE(BM_LeaseReads, false)->Name("Interleaved");
BENCHMARK_TEMPLATE(BM_LeaseReads, true)->Name("Contiguous");

void Decode(const rocksdb::Slice& value, v1::JobRecord& job) {
  if (!job.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    std::abort();
  }
}

template <bool kContiguous>
void BM_RawMultiGet(benchmark::State& state) {
  RawStore& raw = RawFilled();
  constexpr size_t kKeys = kTenantsPerLease * kPerTenant;
  uint64_t n = 0;
  v1::JobRecord job;
  for (auto _ : state) {
    std::vector<std::string> keys;
    for (uint64_t id : LeaseIds<kContiguous>(n++)) {
      keys.push_back(EncodeJobId(id));
    }
    std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
    std::vector<rocksdb::PinnableSlice> values(kKeys);
    std::vector<rocksdb::Status> statuses(kKeys);
    raw.db().MultiGet(rocksdb::ReadOptions(), raw.jobs(), kKeys, slices.data(),
                      values.data(), statuses.data());
    for (size_t i = 0; i < kKeys; ++i) {
      if (!statuses[i].ok()) std::abort();
      Decode(values[i], job);
    }
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
BENCHMARK_TEMPLATE(BM_RawMultiGet, false)->Name("RawInterleavedMultiGet");
BENCHMARK_TEMPLATE(BM_RawMultiGet, true)->Name("RawContiguousMultiGet");

// Contiguous ids read as one Seek and 16 Nexts per tenant.
void BM_RawContiguousScan(benchmark::State& state) {
  RawStore& raw = RawFilled();
  uint64_t n = 0;
  v1::JobRecord job;
  for (auto _ : state) {
    std::vector<uint64_t> ids = LeaseIds<true>(n++);
    std::unique_ptr<rocksdb::Iterator> it(
        raw.db().NewIterator(rocksdb::ReadOptions(), raw.jobs()));
    for (size_t run = 0; run < ids.size(); run += kPerTenant) {
      it->Seek(EncodeJobId(ids[run]));
      for (uint64_t k = 0; k < kPerTenant; ++k, it->Next()) {
        if (!it->Valid()) std::abort();
        Decode(it->value(), job);
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * kTenantsPerLease * kPerTenant);
}
BENCHMARK(BM_RawContiguousScan)->Name("RawContiguousScan");

}  // namespace
}  // namespace fairq::store

BENCHMARK_MAIN();

// What the lease's payload reads cost at a deep backlog, by access pattern
// (docs/benchmarks.md, fifth round). 2M job records, 100 tenants enqueued
// round robin with 100-byte payloads, are read in lease-sized batches of 10
// tenants x 10 jobs (a lease of 100, and the ~10 leases a tenant gets per
// DRR turn at the minimum charge, docs/scheduling.md), in drain order.
// `Interleaved` is today's layout, where a tenant's next jobs are 100 ids
// apart; `Contiguous` reads as many records with each tenant's 10 adjacent,
// as a tenant-major key would store them.
//
// The database is the friendliest shape: filled in id order with no
// deletes, so its files do not overlap, unlike the daemon's (whose L0 files
// span the whole backlog). Every benchmark reads its own stretch of ids, so
// none finds blocks another one loaded (RawPagedRangeScan reads
// RawRangeScan's, in a store of its own). Run by hand; each fill takes ~10 s,
// and an interrupted run leaves its fairq_store_* directories in the temp dir.
//
// Store* go through Store::GetJobs on a store that holds the records in
// pages of kPageJobs (format 2, as fairqd stores an EnqueueBatch of 100),
// its memtables still holding the newest pages, as the daemon's do. Raw*
// ask RocksDB directly, on a second store holding one bare record per key
// (format 1), opened with the Store's options and left to finish its
// compactions (empty memtables), and add the access a tenant-major layout
// would allow: one iterator per tenant.
//
// *Range* read whole ranges of ids in order, as the read-ahead does
// (Store::ReadJobs), and count per record: StoreRangeRead on the store,
// RawRangeScan on the raw store, and RawPagedRangeScan on a third, raw
// store that holds the same records in pages (docs/benchmarks.md,
// twenty-seventh and twenty-eighth rounds). Every record is parsed as the
// read-ahead parses it, its spec left encoded.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lease_ids.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "store/column_families.h"
#include "store/key_codec.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace fairq::store {
namespace {

using bench::IdLayout;
using bench::kLeasesPerWindow;
using bench::kPerLease;
using bench::kPerTenant;
using bench::kTenants;
using bench::kWindow;

constexpr uint64_t kJobs = 2'000'000;
constexpr uint64_t kWindows = kJobs / kWindow;
// Each benchmark reads kIterations leases from its own stretch of windows.
constexpr uint64_t kIterations = 2'000;
constexpr uint64_t kStretch = kIterations / kLeasesPerWindow;
static_assert(7 * kStretch <= kWindows, "seven stretches fit in the store");
// The range benchmarks read kRangeIterations ranges of kRangeIds ids, one
// stretch: about the read-ahead planner's span (ReadAheadPlanner::kSpan,
// 2,048), in whole windows.
constexpr uint64_t kRangeIds = 2 * kWindow;
constexpr uint64_t kRangeIterations = kStretch * kWindow / kRangeIds;
// Jobs a page holds in the paged stores: an EnqueueBatch of 100.
constexpr uint64_t kPageJobs = 100;
static_assert(kRangeIds % kPageJobs == 0, "ranges start on a page");

// Job `id` as every store here holds it: tenants round robin, 100-byte
// payloads.
void SetBenchJob(uint64_t id, v1::JobRecord* job) {
  job->set_id(id);
  job->set_tenant_id(static_cast<uint32_t>(id % kTenants));
  job->mutable_spec()->set_tenant("bench-tenant-" +
                                  std::to_string(id % kTenants));
  job->mutable_spec()->set_pool("bench-pool");
  job->mutable_spec()->set_payload(std::string(100, 'p'));
  job->set_enqueued_unix_ms(static_cast<int64_t>(id));
}

// Calls put(page) for kJobs records in pages of kPageJobs, in id order, and
// write() after every 1,000 records.
template <typename PutPage, typename Write>
void FillPages(PutPage put, Write write) {
  JobPageEncoder page;
  v1::JobRecord job;
  for (uint64_t id = 1; id <= kJobs; ++id) {
    SetBenchJob(id, &job);
    page.Add(job);
    if (page.count() == kPageJobs) {
      put(page);
      page.Clear();
    }
    if (id % 1000 == 0) write();
  }
}

// A store at `dir` holding kJobs records in pages.
std::unique_ptr<Store> Fill(const std::string& dir) {
  std::unique_ptr<Store> store = std::move(Store::Open({dir, false})).value();
  std::vector<WriteBatch> batches;
  batches.push_back(store->NewBatch());
  FillPages([&](const JobPageEncoder& page) { batches[0].PutJobPage(page); },
            [&] {
              if (!store->Apply(batches).ok()) std::abort();
              batches[0] = store->NewBatch();
            });
  return store;
}

Store& FilledStore() {
  static ScopedTempDir dir;  // declared first, so it outlives the store
  static std::unique_ptr<Store> store = Fill(dir.Path("db"));
  return *store;
}

// Polls, as RocksDB has no call that waits for background work; bounded.
void WaitForCompactions(const RawDb& raw) {
  for (int i = 0; i < 1200; ++i) {
    uint64_t running = 0, pending = 0;
    raw.db()->GetIntProperty(raw.handle(Family::kJobs),
                             "rocksdb.num-running-compactions", &running);
    raw.db()->GetIntProperty(raw.handle(Family::kJobs),
                             "rocksdb.compaction-pending", &pending);
    if (running == 0 && pending == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// A raw store at `path`, with the Store's options, holding kJobs records:
// one bare record per key (format 1) or in pages; flushed and compacted.
template <bool kPaged>
std::unique_ptr<RawDb> OpenFilledRaw(const std::string& path) {
  auto raw = std::make_unique<RawDb>(path);
  if (!raw->ok()) std::abort();
  rocksdb::ColumnFamilyHandle* jobs = raw->handle(Family::kJobs);
  rocksdb::WriteBatch batch;
  auto put = [&](std::string_view key, std::string_view value) {
    if (!batch.Put(jobs, key, value).ok()) std::abort();
  };
  auto write = [&] {
    if (!raw->db()->Write(rocksdb::WriteOptions(), &batch).ok()) std::abort();
    batch.Clear();
  };
  if (kPaged) {
    FillPages(
        [&](const JobPageEncoder& page) {
          put(EncodeJobId(page.first_id()), page.bytes());
        },
        write);
  } else {
    v1::JobRecord job;
    for (uint64_t id = 1; id <= kJobs; ++id) {
      SetBenchJob(id, &job);
      put(EncodeJobId(id), job.SerializeAsString());
      if (id % 1000 == 0) write();
    }
  }
  if (!raw->db()->Flush(rocksdb::FlushOptions(), jobs).ok()) std::abort();
  WaitForCompactions(*raw);
  return raw;
}

// The raw store `kOpen` makes, made once, in a temporary directory that
// lives as long as the process.
template <std::unique_ptr<RawDb> (*kOpen)(const std::string&)>
RawDb& RawStoreOnce() {
  static ScopedTempDir dir;
  static std::unique_ptr<RawDb> raw = kOpen(dir.Path("db"));
  return *raw;
}

RawDb& FilledRawStore() { return RawStoreOnce<OpenFilledRaw<false>>(); }

// Calls read(ids) for each lease of a drain over benchmark `slot`'s own
// stretch of windows (slots 0..4, one per benchmark). After SkipWithError
// the loop ends with that iteration.
template <typename Read>
void Drain(benchmark::State& state, int slot, IdLayout layout, Read read) {
  const uint64_t first = static_cast<uint64_t>(slot) * kStretch;
  uint64_t n = 0;
  for (auto _ : state) read(bench::LeaseIds(first, n++, layout));
  state.SetItemsProcessed(state.iterations() * kPerLease);
}

template <IdLayout kLayout>
void BM_StoreGetJobs(benchmark::State& state) {
  Store& store = FilledStore();
  Drain(
      state, kLayout == IdLayout::kTenantMajor ? 1 : 0, kLayout,
      [&](const std::vector<uint64_t>& ids) {
        auto jobs = store.GetJobs(ids);
        if (!jobs.ok()) {
          state.SkipWithError(jobs.status().ToString().c_str());
        } else if (std::any_of(jobs->begin(), jobs->end(), [](const auto& job) {
                     return !job.has_value();
                   })) {
          state.SkipWithError("a leased job was not found");
        }
        benchmark::DoNotOptimize(jobs);
      });
}
BENCHMARK_TEMPLATE(BM_StoreGetJobs, IdLayout::kRoundRobin)
    ->Name("StoreInterleaved")
    ->Iterations(kIterations);
BENCHMARK_TEMPLATE(BM_StoreGetJobs, IdLayout::kTenantMajor)
    ->Name("StoreContiguous")
    ->Iterations(kIterations);

// Parses one record into a fresh message, as the store does for each
// record it reads: v1::JobRecord for GetJobs, the encoded-spec view for
// ReadJobs.
template <class Record = v1::JobRecord>
void Decode(const void* data, size_t size) {
  Record job;
  if (!job.ParseFromArray(data, static_cast<int>(size))) std::abort();
  benchmark::DoNotOptimize(job);
}

void Decode(const rocksdb::Slice& value) { Decode(value.data(), value.size()); }

template <IdLayout kLayout>
void BM_RawMultiGet(benchmark::State& state) {
  RawDb& raw = FilledRawStore();
  Drain(
      state, kLayout == IdLayout::kTenantMajor ? 3 : 2, kLayout,
      [&](const std::vector<uint64_t>& ids) {
        std::vector<std::string> keys;
        for (uint64_t id : ids) keys.push_back(EncodeJobId(id));
        std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
        std::vector<rocksdb::PinnableSlice> values(kPerLease);
        std::vector<rocksdb::Status> statuses(kPerLease);
        raw.db()->MultiGet(rocksdb::ReadOptions(), raw.handle(Family::kJobs),
                           kPerLease, slices.data(), values.data(),
                           statuses.data());
        for (size_t i = 0; i < kPerLease; ++i) {
          if (!statuses[i].ok()) std::abort();
          Decode(values[i]);
        }
      });
}
BENCHMARK_TEMPLATE(BM_RawMultiGet, IdLayout::kRoundRobin)
    ->Name("RawInterleavedMultiGet")
    ->Iterations(kIterations);
BENCHMARK_TEMPLATE(BM_RawMultiGet, IdLayout::kTenantMajor)
    ->Name("RawContiguousMultiGet")
    ->Iterations(kIterations);

// Contiguous ids read as one Seek, then Next for the other 9, per tenant.
void BM_RawContiguousScan(benchmark::State& state) {
  RawDb& raw = FilledRawStore();
  Drain(state, 4, IdLayout::kTenantMajor,
        [&](const std::vector<uint64_t>& ids) {
          std::unique_ptr<rocksdb::Iterator> it(raw.db()->NewIterator(
              rocksdb::ReadOptions(), raw.handle(Family::kJobs)));
          for (size_t run = 0; run < ids.size(); run += kPerTenant) {
            it->Seek(EncodeJobId(ids[run]));
            for (uint64_t k = 0; k < kPerTenant; ++k) {
              if (k > 0) it->Next();
              if (!it->Valid()) std::abort();
              Decode(it->value());
            }
          }
        });
}
BENCHMARK(BM_RawContiguousScan)
    ->Name("RawContiguousScan")
    ->Iterations(kIterations);

// Returns how many records the page held.
uint64_t DecodePage(const rocksdb::Slice& value) {
  JobPageReader page(value.ToStringView());
  uint64_t records = 0;
  uint64_t id = 0;
  std::string_view record;
  while (page.Next(&id, &record)) {
    Decode<v1::JobRecordWithEncodedSpec>(record.data(), record.size());
    ++records;
  }
  if (page.corrupt()) std::abort();
  return records;
}

RawDb& PagedRawStore() { return RawStoreOnce<OpenFilledRaw<true>>(); }

// Calls read(begin, end) for consecutive ranges of kRangeIds ids over
// benchmark `slot`'s stretch of windows (slots 5 and 6).
template <typename Read>
void DrainRanges(benchmark::State& state, int slot, Read read) {
  uint64_t begin = 1 + static_cast<uint64_t>(slot) * kStretch * kWindow;
  for (auto _ : state) {
    read(begin, begin + kRangeIds);
    begin += kRangeIds;
  }
  state.SetItemsProcessed(state.iterations() * kRangeIds);
}

void BM_StoreRangeRead(benchmark::State& state) {
  Store& store = FilledStore();
  DrainRanges(state, 5, [&](uint64_t begin, uint64_t end) {
    auto read = store.ReadJobs(begin, end, SIZE_MAX);
    if (!read.ok()) {
      state.SkipWithError(read.status().ToString().c_str());
    } else if (read->jobs.size() != kRangeIds) {
      state.SkipWithError("a range did not hold every job");
    }
    benchmark::DoNotOptimize(read);
  });
}
BENCHMARK(BM_StoreRangeRead)
    ->Name("StoreRangeRead")
    ->Iterations(kRangeIterations);

// One iterator over [begin, end), read as Store::ReadJobs reads; calls
// decode(value) for each value and returns the sum of what it returned.
template <typename DecodeValue>
uint64_t ScanRange(const RawDb& raw, uint64_t begin, uint64_t end,
                   DecodeValue decode) {
  const std::string upper = EncodeJobId(end);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions options;
  options.fill_cache = false;
  options.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(
      raw.db()->NewIterator(options, raw.handle(Family::kJobs)));
  uint64_t records = 0;
  for (it->Seek(EncodeJobId(begin)); it->Valid(); it->Next()) {
    records += decode(it->value());
  }
  if (!it->status().ok()) std::abort();
  return records;
}

void BM_RawRangeScan(benchmark::State& state) {
  RawDb& raw = FilledRawStore();
  DrainRanges(state, 6, [&](uint64_t begin, uint64_t end) {
    const uint64_t records =
        ScanRange(raw, begin, end, [](const rocksdb::Slice& value) {
          Decode<v1::JobRecordWithEncodedSpec>(value.data(), value.size());
          return uint64_t{1};
        });
    if (records != kRangeIds) state.SkipWithError("a record is missing");
  });
}
BENCHMARK(BM_RawRangeScan)->Name("RawRangeScan")->Iterations(kRangeIterations);

// The same ids as RawRangeScan, in the paged store.
void BM_RawPagedRangeScan(benchmark::State& state) {
  RawDb& raw = PagedRawStore();
  DrainRanges(state, 6, [&](uint64_t begin, uint64_t end) {
    if (ScanRange(raw, begin, end, DecodePage) != kRangeIds) {
      state.SkipWithError("a record is missing");
    }
  });
}
BENCHMARK(BM_RawPagedRangeScan)
    ->Name("RawPagedRangeScan")
    ->Iterations(kRangeIterations);

}  // namespace
}  // namespace fairq::store

BENCHMARK_MAIN();

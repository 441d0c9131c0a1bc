#include "store/fault_injection_env.h"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace fairq::store {

struct FaultInjectionEnv::State {
  mutable std::mutex mu;
  bool fail_appends = false;
  std::string marker;
  bool torn = false;
  bool fail_syncs = false;
  bool hold_syncs = false;
  bool fail_table_reads = false;
  std::condition_variable syncs_released;
  std::condition_variable sync_held;
  int syncs_held = 0;
  uint64_t append_calls = 0;
  uint64_t sync_calls = 0;
  uint64_t injected_failures = 0;
};

namespace {

using State = FaultInjectionEnv::State;

class FaultyWritableFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultyWritableFile(std::unique_ptr<rocksdb::FSWritableFile> file,
                     std::shared_ptr<State> state)
      : FSWritableFileOwnerWrapper(std::move(file)), state_(std::move(state)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    if (ShouldFailAppend(data)) return FailAppend(data, options, dbg);
    return FSWritableFileOwnerWrapper::Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (ShouldFailAppend(data)) return FailAppend(data, options, dbg);
    return FSWritableFileOwnerWrapper::Append(data, options, info, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                         rocksdb::IODebugContext* dbg) override {
    if (ShouldFailSync()) return rocksdb::IOStatus::IOError("injected: sync");
    return FSWritableFileOwnerWrapper::Sync(options, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    if (ShouldFailSync()) return rocksdb::IOStatus::IOError("injected: fsync");
    return FSWritableFileOwnerWrapper::Fsync(options, dbg);
  }

 private:
  bool ShouldFailAppend(const rocksdb::Slice& data) {
    std::lock_guard lock(state_->mu);
    ++state_->append_calls;
    const bool fail =
        state_->fail_appends &&
        (state_->marker.empty() ||
         data.ToStringView().find(state_->marker) != std::string_view::npos);
    if (fail) ++state_->injected_failures;
    return fail;
  }

  bool ShouldFailSync() {
    std::unique_lock lock(state_->mu);
    if (state_->hold_syncs) {
      ++state_->syncs_held;
      state_->sync_held.notify_all();
      state_->syncs_released.wait(lock, [&] { return !state_->hold_syncs; });
      --state_->syncs_held;
    }
    ++state_->sync_calls;
    if (state_->fail_syncs) ++state_->injected_failures;
    return state_->fail_syncs;
  }

  rocksdb::IOStatus FailAppend(const rocksdb::Slice& data,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) {
    bool torn;
    {
      std::lock_guard lock(state_->mu);
      torn = state_->torn;
    }
    if (torn) {
      rocksdb::Slice half(data.data(), data.size() / 2);
      FSWritableFileOwnerWrapper::Append(half, options, dbg)
          .PermitUncheckedError();
    }
    return rocksdb::IOStatus::NoSpace("injected: no space left on device");
  }

  std::shared_ptr<State> state_;
};

rocksdb::IOStatus InjectedReadError() {
  return rocksdb::IOStatus::IOError("injected: read");
}

class FaultyRandomAccessFile : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  FaultyRandomAccessFile(std::unique_ptr<rocksdb::FSRandomAccessFile> file,
                         std::shared_ptr<State> state)
      : FSRandomAccessFileOwnerWrapper(std::move(file)),
        state_(std::move(state)) {}

  rocksdb::IOStatus Read(uint64_t offset, size_t n,
                         const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    if (ShouldFail()) return InjectedReadError();
    return FSRandomAccessFileOwnerWrapper::Read(offset, n, options, result,
                                                scratch, dbg);
  }
  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num_reqs,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    if (ShouldFail()) {
      for (size_t i = 0; i < num_reqs; ++i) {
        reqs[i].status = InjectedReadError();
      }
      return InjectedReadError();
    }
    return FSRandomAccessFileOwnerWrapper::MultiRead(reqs, num_reqs, options,
                                                     dbg);
  }
  // Only reached with ReadOptions::async_io, which the Store does not set;
  // failed too, so that setting it cannot slip past the faults.
  rocksdb::IOStatus ReadAsync(
      rocksdb::FSReadRequest& req, const rocksdb::IOOptions& options,
      std::function<void(const rocksdb::FSReadRequest&, void*)> cb,
      void* cb_arg, void** io_handle, rocksdb::IOHandleDeleter* del_fn,
      rocksdb::IODebugContext* dbg) override {
    if (ShouldFail()) {
      req.status = InjectedReadError();
      cb(req, cb_arg);
      return rocksdb::IOStatus::OK();
    }
    return FSRandomAccessFileOwnerWrapper::ReadAsync(req, options, cb, cb_arg,
                                                     io_handle, del_fn, dbg);
  }

 private:
  bool ShouldFail() const {
    std::lock_guard lock(state_->mu);
    if (state_->fail_table_reads) ++state_->injected_failures;
    return state_->fail_table_reads;
  }

  std::shared_ptr<State> state_;
};

class FaultyFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit FaultyFileSystem(std::shared_ptr<State> state)
      : FileSystemWrapper(rocksdb::FileSystem::Default()),
        state_(std::move(state)) {}

  const char* Name() const override { return "FaultyFileSystem"; }

  rocksdb::IOStatus NewWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->NewWritableFile(name, options, result, dbg), result);
  }
  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s =
        target()->NewRandomAccessFile(name, options, result, dbg);
    if (s.ok() && name.ends_with(".sst")) {
      *result =
          std::make_unique<FaultyRandomAccessFile>(std::move(*result), state_);
    }
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->ReopenWritableFile(name, options, result, dbg),
                result);
  }
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& name, const std::string& old_name,
      const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    return Wrap(
        target()->ReuseWritableFile(name, old_name, options, result, dbg),
        result);
  }

 private:
  rocksdb::IOStatus Wrap(rocksdb::IOStatus s,
                         std::unique_ptr<rocksdb::FSWritableFile>* result) {
    if (s.ok()) {
      *result =
          std::make_unique<FaultyWritableFile>(std::move(*result), state_);
    }
    return s;
  }

  std::shared_ptr<State> state_;
};

}  // namespace

FaultInjectionEnv::FaultInjectionEnv()
    : state_(std::make_shared<State>()),
      env_(rocksdb::NewCompositeEnv(
          std::make_shared<FaultyFileSystem>(state_))) {}

FaultInjectionEnv::~FaultInjectionEnv() = default;

void FaultInjectionEnv::FailAppends(bool fail, std::string marker) {
  std::lock_guard lock(state_->mu);
  state_->fail_appends = fail;
  state_->marker = std::move(marker);
}

void FaultInjectionEnv::SetTornWrites(bool torn) {
  std::lock_guard lock(state_->mu);
  state_->torn = torn;
}

void FaultInjectionEnv::FailSyncs(bool fail) {
  std::lock_guard lock(state_->mu);
  state_->fail_syncs = fail;
}

void FaultInjectionEnv::HoldSyncs(bool hold) {
  {
    std::lock_guard lock(state_->mu);
    state_->hold_syncs = hold;
  }
  state_->syncs_released.notify_all();
}

bool FaultInjectionEnv::WaitForHeldSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mu);
  return state_->sync_held.wait_for(lock, timeout,
                                    [&] { return state_->syncs_held > 0; });
}

void FaultInjectionEnv::FailTableReads(bool fail) {
  std::lock_guard lock(state_->mu);
  state_->fail_table_reads = fail;
}

uint64_t FaultInjectionEnv::append_calls() const {
  std::lock_guard lock(state_->mu);
  return state_->append_calls;
}

uint64_t FaultInjectionEnv::sync_calls() const {
  std::lock_guard lock(state_->mu);
  return state_->sync_calls;
}

uint64_t FaultInjectionEnv::injected_failures() const {
  std::lock_guard lock(state_->mu);
  return state_->injected_failures;
}

}  // namespace fairq::store

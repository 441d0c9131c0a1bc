// FaultInjectionEnv (tests only): a RocksDB Env whose files fail on demand,
// to simulate a full disk, a torn write, a failing fsync or a bad read.
//
// The faults live in a FileSystem wrapper, not in an EnvWrapper override:
// since RocksDB 6 the DB does its file I/O through env->GetFileSystem(), and
// an EnvWrapper hands out its target's file system, so overriding
// EnvWrapper::NewWritableFile would never see a WAL write. env() is a
// composite Env (RocksDB's NewCompositeEnv) over the faulty file system.
//
// Thread-safety: the switches may be flipped from any thread while RocksDB's
// threads read and write; every call takes one mutex.
#ifndef FAIRQ_STORE_FAULT_INJECTION_ENV_H_
#define FAIRQ_STORE_FAULT_INJECTION_ENV_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace fairq::store {

class FaultInjectionEnv {
 public:
  // Wraps the default (POSIX) file system; starts healthy.
  FaultInjectionEnv();
  ~FaultInjectionEnv();
  FaultInjectionEnv(const FaultInjectionEnv&) = delete;
  FaultInjectionEnv& operator=(const FaultInjectionEnv&) = delete;

  rocksdb::Env* env() const { return env_.get(); }

  // Appends fail with IOError(NoSpace), as on a full disk. With a marker,
  // only appends whose data contains it fail, so a test can poison one batch
  // by its contents; an empty marker fails every append.
  void FailAppends(bool fail, std::string marker = "");
  // A failing append first writes the first half of its data: a torn write,
  // as a crash in the middle of write(2) would leave.
  void SetTornWrites(bool torn);
  // Sync and Fsync fail with IOError.
  void FailSyncs(bool fail);
  // While held, Sync and Fsync wait (then go on as usual when released), so
  // a test can see what happens before a sync completes.
  void HoldSyncs(bool hold);
  // Waits until a sync is being held, or `timeout` ends (returns false).
  bool WaitForHeldSync(std::chrono::milliseconds timeout);
  // Reads of table (.sst) files fail with IOError, as on a bad sector. Those
  // of flushes and compactions too, which puts RocksDB in its background
  // error state and fails the Store's later writes.
  void FailTableReads(bool fail);

  // Calls seen (failed or not), to check that nothing was attempted.
  uint64_t append_calls() const;
  uint64_t sync_calls() const;  // Sync and Fsync, of every file
  uint64_t injected_failures() const;

  struct State;  // shared with the wrapped files

 private:
  std::shared_ptr<State> state_;
  std::unique_ptr<rocksdb::Env> env_;
};

}  // namespace fairq::store

#endif  // FAIRQ_STORE_FAULT_INJECTION_ENV_H_

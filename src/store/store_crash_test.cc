// kill -9 at storage level: a child process commits batches and reports each
// acknowledged one through a pipe; the parent kills it with SIGKILL after a
// chosen number of acknowledgements, reopens the store and checks that every
// acknowledged batch is there, whole, and that what survived is a prefix of
// the commit order.
//
// The child is forked without exec. That is safe here because the parent
// holds no open database at fork time (RocksDB's idle pool threads do not
// exist in the child, and the child's small writes never need them), and the
// child leaves only through _exit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/store_test_util.h"

namespace fairq::store {
namespace {

constexpr uint64_t kMaxBatchesPerChild = 100000;  // never reached
constexpr int kAckTimeoutMs = 60000;  // a bound on a hung child, not a sleep

// Batch `id`: job id, its ready entry, and a lease for even ids.
WriteBatch NumberedBatch(const Store& store, uint64_t id) {
  WriteBatch batch = store.NewBatch();
  PutJob(batch, MakeJob(id));
  batch.PutReady({1, 1, 0, id}, MakeReady(id));
  if (id % 2 == 0) batch.PutLease(id, v1::LeaseRecord());
  return batch;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void RunWriter(const std::string& path, bool sync, int ack_fd,
                            uint64_t first_id) {
  StoreOptions options;
  options.path = path;
  options.sync = sync;
  StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) _exit(3);
  for (uint64_t id = first_id; id < first_id + kMaxBatchesPerChild; ++id) {
    std::vector<WriteBatch> batches;
    batches.push_back(NumberedBatch(**store, id));
    if (!(*store)->Commit(batches).ok()) _exit(4);
    if (!WriteAll(ack_fd, &id, sizeof id)) _exit(5);
  }
  _exit(0);
}

// Reads one acknowledged id; nullopt at end of file, on error or timeout.
std::optional<uint64_t> ReadAck(int fd) {
  uint64_t id = 0;
  char* p = reinterpret_cast<char*>(&id);
  size_t left = sizeof id;
  while (left > 0) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, kAckTimeoutMs) <= 0) return std::nullopt;
    const ssize_t n = read(fd, p, left);
    if (n <= 0) return std::nullopt;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return id;
}

// Runs a writer from first_id, kills it after `kill_after` acks, and returns
// the highest acknowledged id (first_id - 1 if none).
uint64_t CommitUntilKilled(const std::string& path, bool sync,
                           uint64_t first_id, int kill_after) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    RunWriter(path, sync, fds[1], first_id);
  }
  close(fds[1]);
  uint64_t last_ack = first_id - 1;
  for (int acks = 0; acks < kill_after; ++acks) {
    std::optional<uint64_t> ack = ReadAck(fds[0]);
    if (!ack) {
      ADD_FAILURE() << "writer stopped or hung after " << acks << " acks";
      break;
    }
    last_ack = *ack;
  }
  kill(pid, SIGKILL);
  // Acks already in the pipe were sent after their Commit returned: they
  // count too.
  while (std::optional<uint64_t> ack = ReadAck(fds[0])) last_ack = *ack;
  close(fds[0]);
  int wait_status = 0;
  EXPECT_EQ(waitpid(pid, &wait_status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL)
      << "writer exited by itself with status " << wait_status;
  return last_ack;
}

// Checks that batches 1..n are present whole, for some n >= last_ack, and
// nothing after n; returns n.
uint64_t ExpectAcknowledgedPrefix(const std::string& path, uint64_t last_ack) {
  auto store = OpenStore(path);
  if (store == nullptr) return 0;
  const std::vector<uint64_t> ready = AllJobIdsInReady(*store);
  const uint64_t n = ready.size();
  EXPECT_GE(n, last_ack) << "an acknowledged batch was lost";
  for (uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ(ready[i], i + 1) << "survivors are not a prefix";
  }
  std::vector<uint64_t> leases;
  EXPECT_TRUE(store
                  ->ScanLeases([&](uint64_t id, const v1::LeaseRecord&) {
                    leases.push_back(id);
                    return true;
                  })
                  .ok());
  EXPECT_EQ(leases.size(), n / 2) << "a batch survived in part";
  for (uint64_t id = 1; id <= n; ++id) EXPECT_TRUE(HasJob(*store, id)) << id;
  EXPECT_FALSE(HasJob(*store, n + 1));
  return n;
}

class StoreCrashTest : public ::testing::TestWithParam<bool> {};

// Three kills at different points, each round continuing on the store the
// previous crash left behind.
TEST_P(StoreCrashTest, EveryAcknowledgedBatchSurvivesSigkill) {
  const bool sync = GetParam();
  ScopedTempDir dir;
  uint64_t present = 0;
  for (int kill_after : {1, 25, 200}) {
    const uint64_t last_ack =
        CommitUntilKilled(dir.Path("db"), sync, present + 1, kill_after);
    ASSERT_GE(last_ack, present + static_cast<uint64_t>(kill_after));
    present = ExpectAcknowledgedPrefix(dir.Path("db"), last_ack);
    if (HasFailure()) return;
  }
}

// With sync: false the log is still written to the kernel on every Commit,
// so a process crash (as opposed to a power loss) loses nothing either.
INSTANTIATE_TEST_SUITE_P(SyncAndNoSync, StoreCrashTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "Sync" : "NoSync";
                         });

}  // namespace
}  // namespace fairq::store

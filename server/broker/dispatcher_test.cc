// The dispatcher's queue: bounded, with back-pressure instead of memory.
#include "server/broker/dispatcher.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>

namespace fairq::server {
namespace {

TEST(DispatcherTest, AFullQueueAnswersResourceExhaustedAndEveryCallEnds) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "dispatcher_test_XXXXXX").string();
  std::string dir = mkdtemp(pattern.data());
  {
    config::DaemonConfig config;
    auto store = std::move(store::Store::Open({dir, false, nullptr})).value();
    auto broker = std::move(Broker::Create(config, store.get())).value();
    Turn restore(store->NewBatch());
    ASSERT_TRUE(broker->Restore(1'764'000'000'000, restore).ok());
    // A writer that is not started and holds one turn: the dispatcher
    // blocks handing it a second, so the one-slot queue behind it fills.
    Writer writer(store.get(), /*max_turns_in_flight=*/1);
    Dispatcher dispatcher(std::move(broker), &writer, store.get(), 1);
    dispatcher.Start();
    v1::JobSpec spec;
    spec.set_tenant("a");
    constexpr int kCalls = 12;
    std::vector<v1::EnqueueBatchResponse> responses(kCalls);
    std::atomic<int> finished{0}, exhausted{0};
    for (int i = 0; i < kCalls; ++i) {
      dispatcher.Post(EnqueueCommand{{&spec}, &responses[i],
                                     [&](const Status& s) {
                                       ++finished;
                                       if (s.code() == StatusCode::kResourceExhausted) {
                                         ++exhausted;
                                       }
                                     }});
    }
    // At most one turn with the writer, one blocked, one queued: the rest
    // were refused at once.
    EXPECT_GE(exhausted.load(), kCalls - 3);
    writer.Start();  // the disk catches up; everything drains
    dispatcher.Stop();
    writer.Stop();
    EXPECT_EQ(finished.load(), kCalls);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fairq::server

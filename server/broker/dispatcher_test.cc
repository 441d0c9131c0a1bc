// The dispatcher's queue (bounded, with back-pressure instead of memory)
// and its event loop.
#include "server/broker/dispatcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "server/broker/broker_fixture.h"

namespace fairq::server {
namespace {

// The broker comes from the fixture, for a Dispatcher to own.
class DispatcherTest : public BrokerFixture {};

TEST_F(DispatcherTest, AFullQueueAnswersResourceExhaustedAndEveryCallEnds) {
  // A writer that is not started and holds one turn: the dispatcher
  // blocks handing it a second, so the one-slot queue behind it fills.
  Writer writer(store_.get(), /*max_turns_in_flight=*/1);
  Dispatcher dispatcher(std::move(broker_), &writer, store_.get(), 1);
  dispatcher.Start();
  v1::JobSpec spec;
  spec.set_tenant("a");
  constexpr int kCalls = 12;
  std::vector<v1::EnqueueBatchResponse> responses(kCalls);
  std::atomic<int> finished{0}, exhausted{0};
  for (int i = 0; i < kCalls; ++i) {
    dispatcher.Post(
        EnqueueCommand{{&spec}, &responses[i], [&](const Status& s) {
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

// How long a test waits for an answer before it fails (a bound, not a
// pace: answers come within milliseconds).
constexpr std::chrono::seconds kBound(10);

// Stands in for the CallLoop: Collect runs the handlers the test delivers,
// and returns on a Kick.
class FakeEventLoop final : public EventLoop {
 public:
  void Collect(
      std::optional<std::chrono::steady_clock::time_point> deadline) override {
    std::unique_lock lock(mu_);
    auto ready = [&] { return kicked_ || !handlers_.empty(); };
    if (deadline) {
      ready_.wait_until(lock, *deadline, ready);
    } else {
      ready_.wait(lock, ready);
    }
    kicked_ = false;
    std::vector<std::function<void()>> handlers = std::move(handlers_);
    handlers_.clear();
    lock.unlock();
    for (auto& handler : handlers) handler();
  }
  void Kick() override {
    {
      std::lock_guard lock(mu_);
      kicked_ = true;
      ++kicks_;
    }
    ready_.notify_one();
  }
  int kicks() {
    std::lock_guard lock(mu_);
    return kicks_;
  }
  // Any thread: runs `handler` in the dispatcher's next Collect.
  void Deliver(std::function<void()> handler) {
    {
      std::lock_guard lock(mu_);
      handlers_.push_back(std::move(handler));
    }
    ready_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable ready_;
  bool kicked_ = false;
  int kicks_ = 0;
  std::vector<std::function<void()>> handlers_;
};

TEST_F(DispatcherTest, WithAnEventLoopHandlersAndOtherThreadsAreBothServed) {
  Writer writer(store_.get(), /*max_turns_in_flight=*/4);
  writer.Start();
  FakeEventLoop events;
  Dispatcher dispatcher(std::move(broker_), &writer, store_.get(), 16);
  dispatcher.Start(&events);
  v1::JobSpec spec;
  spec.set_tenant("a");
  v1::EnqueueBatchResponse from_handler, from_thread;
  std::promise<std::thread::id> handler_ran;
  std::promise<Status> handler_done, thread_done;
  // A handler on the dispatcher thread posts into the coming turn.
  events.Deliver([&] {
    handler_ran.set_value(std::this_thread::get_id());
    dispatcher.Post(
        EnqueueCommand{{&spec}, &from_handler, [&](const Status& s) {
                         handler_done.set_value(s);
                       }});
  });
  std::future<Status> handled = handler_done.get_future();
  ASSERT_EQ(handled.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(handled.get().ok());
  // Start's kick only: the handler's post joined the turn without one.
  EXPECT_EQ(events.kicks(), 1);
  EXPECT_NE(handler_ran.get_future().get(), std::this_thread::get_id());
  // A post from another thread wakes the loop through Kick.
  dispatcher.Post(EnqueueCommand{{&spec}, &from_thread, [&](const Status& s) {
                                   thread_done.set_value(s);
                                 }});
  std::future<Status> posted = thread_done.get_future();
  ASSERT_EQ(posted.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(posted.get().ok());
  EXPECT_EQ(events.kicks(), 2);
  ASSERT_EQ(from_handler.results_size(), 1);
  ASSERT_EQ(from_thread.results_size(), 1);
  EXPECT_NE(from_handler.results(0).job_id(), from_thread.results(0).job_id());
  dispatcher.Stop();
  writer.Stop();
  // Stopped: a post is refused at once, not left with the event loop.
  Status late;
  dispatcher.Post(EnqueueCommand{
      {&spec}, &from_thread, [&](const Status& s) { late = s; }});
  EXPECT_EQ(late.code(), StatusCode::kUnavailable);
}

TEST_F(DispatcherTest, WithAnEventLoopAPostBeforeStartIsServedAfterIt) {
  Writer writer(store_.get(), /*max_turns_in_flight=*/4);
  writer.Start();
  FakeEventLoop events;
  Dispatcher dispatcher(std::move(broker_), &writer, store_.get(), 16);
  v1::JobSpec spec;
  spec.set_tenant("a");
  v1::EnqueueBatchResponse response;
  std::promise<Status> done;
  dispatcher.Post(EnqueueCommand{
      {&spec}, &response, [&](const Status& s) { done.set_value(s); }});
  dispatcher.Start(&events);  // nothing else will wake the loop
  std::future<Status> served = done.get_future();
  ASSERT_EQ(served.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(served.get().ok());
  dispatcher.Stop();
  writer.Stop();
}

// A SIGHUP's whole file is one command: with the queue nearly full it takes
// the one place left, and every tenant it lists gets its settings.
TEST_F(DispatcherTest, AReloadTakesOnePlaceInTheQueueAndAppliesWhole) {
  Writer writer(store_.get(), /*max_turns_in_flight=*/4);
  writer.Start();
  Dispatcher dispatcher(std::move(broker_), &writer, store_.get(), 2);
  v1::JobSpec spec;
  spec.set_tenant("a");
  v1::EnqueueBatchResponse enqueued;
  dispatcher.Post(EnqueueCommand{{&spec}, &enqueued, [](const Status&) {}});
  constexpr int kTenants = 30;
  std::vector<v1::Tenant> settings(kTenants), results(kTenants);
  std::atomic<int> refused{0};
  ReloadCommand reload{
      std::make_unique<ReloadCommand::Parts>(ReloadCommand::Parts{
          .orgs = {{{"acme", 3}}, [](const Status&) {}},
          .pools = {{"gpu"}, [](const Status&) {}},
          .tenants = {},
      }),
      {}};
  for (int i = 0; i < kTenants; ++i) {
    settings[i] = config::DefaultTenantSettings();
    settings[i].set_name("t" + std::to_string(i));
    settings[i].set_org("acme");
    settings[i].set_weight(5);
    reload.parts->tenants.push_back(
        SetTenantCommand{&settings[i], &results[i],
                         [&](const Status& s) { refused += s.ok() ? 0 : 1; },
                         /*from_config=*/true});
  }
  std::promise<Status> reloaded;
  reload.done = [&](const Status& s) { reloaded.set_value(s); };
  dispatcher.Post(std::move(reload));
  dispatcher.Start();
  std::future<Status> applied = reloaded.get_future();
  ASSERT_EQ(applied.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(applied.get().ok());
  EXPECT_EQ(refused.load(), 0);
  v1::ListTenantsResponse listed;
  std::promise<Status> done;
  dispatcher.Post(
      ListTenantsCommand{&listed, [&](const Status& s) { done.set_value(s); }});
  std::future<Status> answered = done.get_future();
  ASSERT_EQ(answered.wait_for(kBound), std::future_status::ready);
  ASSERT_TRUE(answered.get().ok());
  int reweighted = 0;
  for (const v1::Tenant& tenant : listed.tenants()) {
    if (tenant.org() == "acme" && tenant.weight() == 5) ++reweighted;
  }
  EXPECT_EQ(reweighted, kTenants);
  dispatcher.Stop();
  writer.Stop();
}

TEST_F(DispatcherTest, StoppedBeforeItStartedItRefusesWhatWasPosted) {
  Writer writer(store_.get(), /*max_turns_in_flight=*/4);
  Dispatcher dispatcher(std::move(broker_), &writer, store_.get(), 16);
  v1::JobSpec spec;
  spec.set_tenant("a");
  v1::EnqueueBatchResponse response;
  Status result;
  dispatcher.Post(
      EnqueueCommand{{&spec}, &response, [&](const Status& s) { result = s; }});
  dispatcher.Stop();  // as when the gRPC server could not listen
  EXPECT_EQ(result.code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace fairq::server

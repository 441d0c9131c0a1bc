// DaemonClientTest: a gtest fixture base holding the Producer, Worker and
// Admin stubs of one fairqd that the test starts itself.
//
// All three stubs share one channel (one HTTP/2 connection), so requests a
// test sends one after another reach fairqd in that order.
#ifndef FAIRQ_TESTS_INTEGRATION_DAEMON_CLIENT_TEST_H_
#define FAIRQ_TESTS_INTEGRATION_DAEMON_CLIENT_TEST_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "tests/integration/client_util.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::testing {

class DaemonClientTest : public ::testing::Test {
 protected:
  // (Re)creates the stubs: after a restart fairqd listens on a new port.
  void Connect(FairqdProcess& daemon) {
    std::shared_ptr<grpc::Channel> channel = daemon.Channel();
    producer_ = v1::Producer::NewStub(channel);
    worker_ = v1::Worker::NewStub(channel);
    admin_ = v1::Admin::NewStub(channel);
  }

  // Enqueues `spec`, failing the test if it is refused; returns its id.
  uint64_t MustEnqueue(const v1::JobSpec& spec) {
    uint64_t id = 0;
    grpc::Status status = Enqueue(*producer_, spec, &id);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return id;
  }

  std::unique_ptr<v1::Producer::Stub> producer_;
  std::unique_ptr<v1::Worker::Stub> worker_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

}  // namespace fairq::testing

#endif  // FAIRQ_TESTS_INTEGRATION_DAEMON_CLIENT_TEST_H_

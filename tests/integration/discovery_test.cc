// What generic gRPC tools find on a real fairqd without fairq's .proto
// files (docs/api.md): server reflection lists fairq's services, as
// `grpcurl -plaintext HOST:PORT list` asks for them.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

// A ServerReflectionRequest with list_services = "*" (field 7), encoded by
// hand: the reflection protos are not installed with Debian's gRPC.
grpc::ByteBuffer ListServicesRequest() {
  static const std::string kRequest = std::string("\x3a\x01*", 3);
  grpc::Slice slice(kRequest);
  return grpc::ByteBuffer(&slice, 1);
}

TEST(DiscoveryTest, ServerReflectionListsFairqsServices) {
  FairqdProcess fairqd;
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  grpc::GenericStub stub(fairqd.Channel());
  grpc::ClientContext context;
  context.set_deadline(Deadline(10));
  grpc::CompletionQueue queue;
  auto stream = stub.PrepareCall(
      &context,
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &queue);
  void* tag = nullptr;
  bool ok = false;
  stream->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(queue.Next(&tag, &ok) && ok);
  grpc::ByteBuffer request = ListServicesRequest();
  stream->Write(request, reinterpret_cast<void*>(2));
  ASSERT_TRUE(queue.Next(&tag, &ok) && ok);
  grpc::ByteBuffer reply;
  stream->Read(&reply, reinterpret_cast<void*>(3));
  ASSERT_TRUE(queue.Next(&tag, &ok) && ok) << "no reflection reply";
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(reply.Dump(&slices).ok());
  std::string body;
  for (const grpc::Slice& slice : slices) {
    body.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  // Not grpc.health.v1.Health: fairqd serves it as a generic service, which
  // reflection does not see (docs/api.md).
  for (const char* service :
       {"fairq.v1.Producer", "fairq.v1.Worker", "fairq.v1.Admin"}) {
    EXPECT_NE(body.find(service), std::string::npos) << service;
  }
  stream->WritesDone(reinterpret_cast<void*>(4));
  ASSERT_TRUE(queue.Next(&tag, &ok));
  grpc::Status status;
  stream->Finish(&status, reinterpret_cast<void*>(5));
  ASSERT_TRUE(queue.Next(&tag, &ok));
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace fairq::testing

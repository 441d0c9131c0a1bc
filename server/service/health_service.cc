#include "server/service/health_service.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include "server/service/unary_call.h"

namespace fairq::server {

using google::protobuf::internal::WireFormatLite;

namespace {

constexpr char kCheck[] = "/grpc.health.v1.Health/Check";
constexpr uint8_t kServing = 1;     // HealthCheckResponse.SERVING
constexpr uint8_t kNotServing = 2;  // HealthCheckResponse.NOT_SERVING

}  // namespace

// One call of any method the other services do not serve: Check is
// answered, the rest are UNIMPLEMENTED. Frees itself once finished.
class HealthCall {
 public:
  HealthCall(HealthService* health, grpc::ServerCompletionQueue* cq)
      : health_(health), cq_(cq) {
    health_->service_.RequestCall(&context_, &stream_, cq_, cq_, &started_);
  }

 private:
  void Started(bool ok) {
    if (!ok) {
      delete this;
      return;
    }
    new HealthCall(health_, cq_);
    if (context_.method() != kCheck) {
      stream_.Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                                  "fairqd does not serve " + context_.method()),
                     &finished_);
      return;
    }
    stream_.Read(&request_, &read_);
  }

  void Read(bool ok) {
    std::optional<std::string> name;
    if (ok) name = HealthService::ParseServiceName(&request_);
    if (!name) {
      stream_.Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                  "request: not a HealthCheckRequest"),
                     &finished_);
    } else if (!name->empty()) {
      stream_.Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                  "service: unknown service " + *name),
                     &finished_);
    } else {
      const uint8_t status = health_->serving_.load() ? kServing : kNotServing;
      const char bytes[] = {static_cast<char>(WireFormatLite::MakeTag(
                                1, WireFormatLite::WIRETYPE_VARINT)),
                            static_cast<char>(status)};
      grpc::Slice slice(bytes, sizeof(bytes));
      stream_.WriteAndFinish(grpc::ByteBuffer(&slice, 1), grpc::WriteOptions(),
                             grpc::Status::OK, &finished_);
    }
  }

  void Finished(bool) { delete this; }

  HealthService* const health_;
  grpc::ServerCompletionQueue* const cq_;
  grpc::GenericServerContext context_;
  grpc::GenericServerAsyncReaderWriter stream_{&context_};
  grpc::ByteBuffer request_;
  StepEvent<HealthCall> started_{this, &HealthCall::Started};
  StepEvent<HealthCall> read_{this, &HealthCall::Read};
  StepEvent<HealthCall> finished_{this, &HealthCall::Finished};
};

void HealthService::Start(grpc::ServerCompletionQueue* cq) {
  new HealthCall(this, cq);
}

std::optional<std::string> HealthService::ParseServiceName(
    grpc::ByteBuffer* request) {
  grpc::ProtoBufferReader reader(request);
  if (!reader.status().ok()) return std::nullopt;
  google::protobuf::io::CodedInputStream in(&reader);
  std::string name;
  while (uint32_t tag = in.ReadTag()) {
    if (tag ==
        WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      if (!WireFormatLite::ReadString(&in, &name)) return std::nullopt;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return std::nullopt;
    }
  }
  if (!in.ConsumedEntireMessage()) return std::nullopt;
  return name;
}

}  // namespace fairq::server

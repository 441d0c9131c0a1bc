#include "store/job_page.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace fairq::store {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

constexpr uint32_t kRecordsTag =
    WireFormatLite::MakeTag(v1::JobPage::kRecordsFieldNumber,
                            WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kIdTag = WireFormatLite::MakeTag(
    v1::JobRecord::kIdFieldNumber, WireFormatLite::WIRETYPE_VARINT);

CodedInputStream InputOver(std::string_view bytes) {
  return CodedInputStream(reinterpret_cast<const uint8_t*>(bytes.data()),
                          static_cast<int>(bytes.size()));
}

// A record's id, read from its first id field without parsing the rest
// (the writer writes the id once); 0, the proto default, if it has none.
bool PeekId(std::string_view record, uint64_t* id) {
  CodedInputStream in = InputOver(record);
  *id = 0;
  while (in.CurrentPosition() < static_cast<int>(record.size())) {
    const uint32_t tag = in.ReadTag();  // 0: bytes that are no tag
    if (tag == kIdTag) return in.ReadVarint64(id);
    if (tag == 0 || !WireFormatLite::SkipField(&in, tag)) return false;
  }
  return true;
}

}  // namespace

void JobPageEncoder::Add(const v1::JobRecord& record) {
  if (count_ == 0) first_id_ = record.id();
  end_id_ = record.id() + 1;
  ++count_;
  // JobPage.records: the field's tag, the record's length, the record.
  const size_t size = record.ByteSizeLong();
  const size_t head = CodedOutputStream::VarintSize32(kRecordsTag) +
                      CodedOutputStream::VarintSize64(size);
  const size_t at = bytes_.size();
  bytes_.resize(at + head + size);
  auto* out = reinterpret_cast<uint8_t*>(bytes_.data() + at);
  out = CodedOutputStream::WriteVarint32ToArray(kRecordsTag, out);
  out = CodedOutputStream::WriteVarint64ToArray(size, out);
  record.SerializeWithCachedSizesToArray(out);
}

void JobPageEncoder::Clear() {
  bytes_.clear();
  first_id_ = end_id_ = 0;
  count_ = 0;
}

JobPageReader::JobPageReader(std::string_view value) : rest_(value) {
  uint32_t tag = 0;
  CodedInputStream in = InputOver(value);
  paged_ = in.ReadVarint32(&tag) && tag == kRecordsTag;
}

bool JobPageReader::Next(uint64_t* id, std::string_view* record) {
  if (corrupt_) return false;
  if (!paged_) {  // format 1: the whole value, once
    if (rest_.data() == nullptr) return false;
    *record = rest_;
    rest_ = {};
    return PeekId(*record, id) || Fail();
  }
  if (rest_.empty()) return false;
  CodedInputStream in = InputOver(rest_);
  uint32_t tag = 0;
  uint32_t size = 0;
  if (!in.ReadVarint32(&tag) || tag != kRecordsTag || !in.ReadVarint32(&size)) {
    return Fail();
  }
  const size_t at = static_cast<size_t>(in.CurrentPosition());
  if (size > rest_.size() - at) return Fail();
  *record = rest_.substr(at, size);
  rest_.remove_prefix(at + size);
  return PeekId(*record, id) || Fail();
}

bool JobPageReader::Fail() {
  corrupt_ = true;
  return false;
}

}  // namespace fairq::store

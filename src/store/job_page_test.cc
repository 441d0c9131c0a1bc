#include "store/job_page.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fairq::store {
namespace {

v1::JobRecord Record(uint64_t id, std::string payload = "p") {
  v1::JobRecord record;
  record.set_id(id);
  record.set_tenant_id(3);
  record.mutable_spec()->set_tenant("t");
  record.mutable_spec()->set_payload(std::move(payload));
  record.set_enqueued_unix_ms(1000 + static_cast<int64_t>(id));
  return record;
}

// Every (id, parsed record) the reader yields, and whether it ended clean.
struct Walked {
  std::vector<uint64_t> ids;
  std::vector<v1::JobRecord> records;
  bool corrupt = false;
};

Walked Walk(std::string_view value) {
  Walked walked;
  JobPageReader reader(value);
  uint64_t id = 0;
  std::string_view bytes;
  while (reader.Next(&id, &bytes)) {
    walked.ids.push_back(id);
    EXPECT_TRUE(walked.records.emplace_back().ParseFromArray(
        bytes.data(), static_cast<int>(bytes.size())));
  }
  walked.corrupt = reader.corrupt();
  return walked;
}

TEST(JobPageTest, EncoderKeepsRecordsAndIds) {
  JobPageEncoder page;
  EXPECT_TRUE(page.empty());
  for (uint64_t id : {7u, 8u, 10u}) page.Add(Record(id, std::string(id, 'x')));
  EXPECT_EQ(page.count(), 3u);
  EXPECT_EQ(page.first_id(), 7u);
  EXPECT_EQ(page.end_id(), 11u);

  Walked walked = Walk(page.bytes());
  EXPECT_FALSE(walked.corrupt);
  EXPECT_EQ(walked.ids, (std::vector<uint64_t>{7, 8, 10}));
  ASSERT_EQ(walked.records.size(), 3u);
  EXPECT_EQ(walked.records[2].spec().payload(), std::string(10, 'x'));
  EXPECT_EQ(walked.records[1].enqueued_unix_ms(), 1008);
}

TEST(JobPageTest, EncodesAJobPageMessage) {
  JobPageEncoder page;
  page.Add(Record(1));
  page.Add(Record(2));
  v1::JobPage parsed;
  ASSERT_TRUE(parsed.ParseFromString(std::string(page.bytes())));
  ASSERT_EQ(parsed.records_size(), 2);
  EXPECT_EQ(parsed.records(1).id(), 2u);
}

TEST(JobPageTest, ClearStartsANewPage) {
  JobPageEncoder page;
  page.Add(Record(1));
  page.Clear();
  EXPECT_TRUE(page.empty());
  page.Add(Record(5));
  EXPECT_EQ(page.first_id(), 5u);
  EXPECT_EQ(Walk(page.bytes()).ids, (std::vector<uint64_t>{5}));
}

TEST(JobPageTest, ReadsAFormat1BareRecordAsAPageOfOne) {
  Walked walked = Walk(Record(42, "bare").SerializeAsString());
  EXPECT_FALSE(walked.corrupt);
  EXPECT_EQ(walked.ids, (std::vector<uint64_t>{42}));
  EXPECT_EQ(walked.records[0].spec().payload(), "bare");
}

TEST(JobPageTest, TruncatedPageIsCorrupt) {
  JobPageEncoder page;
  page.Add(Record(1));
  page.Add(Record(2, "a longer payload"));
  std::string bytes(page.bytes());
  bytes.resize(bytes.size() - 3);
  Walked walked = Walk(bytes);
  EXPECT_EQ(walked.ids, (std::vector<uint64_t>{1}));
  EXPECT_TRUE(walked.corrupt);
}

TEST(JobPageTest, GarbageIsCorrupt) {
  EXPECT_TRUE(Walk(std::string("\xff\xff\xff", 3)).corrupt);
}

}  // namespace
}  // namespace fairq::store

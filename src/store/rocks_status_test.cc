#include "store/rocks_status.h"

#include <gtest/gtest.h>

namespace fairq::store {
namespace {

TEST(RocksStatusTest, OkStaysOk) {
  EXPECT_TRUE(FromRocks(rocksdb::Status::OK(), RocksOp::kRead, "x").ok());
  EXPECT_TRUE(FromRocks(rocksdb::Status::OK(), RocksOp::kWrite, "x").ok());
}

TEST(RocksStatusTest, OpenAndWriteFailuresAreAlwaysUnavailable) {
  for (RocksOp op : {RocksOp::kOpen, RocksOp::kWrite}) {
    for (const rocksdb::Status& s :
         {rocksdb::Status::IOError("disk"), rocksdb::Status::NoSpace("full"),
          rocksdb::Status::Corruption("bad"),
          rocksdb::Status::InvalidArgument("arg")}) {
      EXPECT_EQ(FromRocks(s, op, "x").code(), StatusCode::kUnavailable)
          << s.ToString();
    }
  }
}

TEST(RocksStatusTest, ReadFailuresKeepTheirMeaning) {
  EXPECT_EQ(FromRocks(rocksdb::Status::NotFound(), RocksOp::kRead, "x").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(FromRocks(rocksdb::Status::IOError(), RocksOp::kRead, "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(FromRocks(rocksdb::Status::Busy(), RocksOp::kRead, "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(
      FromRocks(rocksdb::Status::Corruption(), RocksOp::kRead, "x").code(),
      StatusCode::kInternal);
  EXPECT_EQ(
      FromRocks(rocksdb::Status::NotSupported(), RocksOp::kRead, "x").code(),
      StatusCode::kInternal);
}

TEST(RocksStatusTest, MessageNamesTheOperationAndKeepsRocksDbText) {
  const Status s = FromRocks(rocksdb::Status::NoSpace("wal"), RocksOp::kWrite,
                             "commit batch 1 of 2");
  EXPECT_EQ(s.message(),
            "commit batch 1 of 2: IO error: No space left on "
            "device: wal");
}

}  // namespace
}  // namespace fairq::store

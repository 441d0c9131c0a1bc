#include "server/broker/idempotency_index.h"

#include <gtest/gtest.h>

namespace fairq::server {
namespace {

// A restart reloads keys in key order, not expiry order: each still goes
// when its own time comes.
TEST(IdempotencyIndexTest, KeysExpireInTheirOwnOrderNotInsertionOrder) {
  IdempotencyIndex index;
  index.Insert(1, "a", 10, /*expires_ms=*/3000);
  index.Insert(1, "b", 11, /*expires_ms=*/1000);
  index.Insert(1, "c", 12, /*expires_ms=*/2000);
  index.Expire(1000);
  EXPECT_EQ(index.size(), 2u);
  EXPECT_FALSE(index.Find(1, "b", 1000).has_value());
  index.Expire(2000);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.Find(1, "a", 2000), 10u);
  index.Expire(3000);
  EXPECT_EQ(index.size(), 0u);
}

// A key inserted again carries the later expiry; its first one passing
// does not drop it.
TEST(IdempotencyIndexTest, AKeyInsertedAgainKeepsItsLaterExpiry) {
  IdempotencyIndex index;
  index.Insert(1, "a", 10, 1000);
  index.Insert(1, "a", 20, 5000);
  index.Expire(1000);
  EXPECT_EQ(index.Find(1, "a", 1000), 20u);
}

}  // namespace
}  // namespace fairq::server

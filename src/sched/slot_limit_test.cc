#include "sched/slot_limit.h"

#include <gtest/gtest.h>

namespace fairq::sched {
namespace {

TEST(SlotLimitTest, ParsesCountsAndShares) {
  StatusOr<SlotLimit> count = SlotLimit::Parse("4", "cap");
  ASSERT_TRUE(count.ok());
  EXPECT_FALSE(count->is_share());
  EXPECT_EQ(count->CapSlots(100), 4u);

  StatusOr<SlotLimit> share = SlotLimit::Parse("50%", "cap");
  ASSERT_TRUE(share.ok());
  EXPECT_TRUE(share->is_share());
  EXPECT_EQ(share->CapSlots(8), 4u);
  EXPECT_EQ(share->ToString(), "50%");
}

TEST(SlotLimitTest, RejectsBadTextNamingTheField) {
  for (const char* text : {"", "abc", "4x", "1.5", "-2", "0", "0%", "150%",
                           "-5%"}) {
    StatusOr<SlotLimit> limit = SlotLimit::Parse(text, "tenants[0].cap");
    ASSERT_FALSE(limit.ok()) << text;
    EXPECT_EQ(limit.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(limit.status().message().find("tenants[0].cap"),
              std::string::npos)
        << limit.status().message();
  }
}

TEST(SlotLimitTest, SharesOutsideUnitIntervalAreInvalid) {
  EXPECT_FALSE(SlotLimit::Share(0).Validate("cap").ok());
  EXPECT_FALSE(SlotLimit::Share(1.01).Validate("cap").ok());
  EXPECT_FALSE(SlotLimit::Share(-0.5).Validate("cap").ok());
  EXPECT_TRUE(SlotLimit::Share(1).Validate("cap").ok());
  EXPECT_TRUE(SlotLimit().Validate("cap").ok());
}

TEST(SlotLimitTest, CapsRoundDownButKeepOneSlotFloorsRoundUp) {
  SlotLimit tenth = SlotLimit::Share(0.1);
  EXPECT_EQ(tenth.CapSlots(8), 1u);    // 0.8 rounds down, kept at 1
  EXPECT_EQ(tenth.CapSlots(25), 2u);   // 2.5 rounds down
  EXPECT_EQ(tenth.FloorSlots(8), 1u);  // 0.8 rounds up
  EXPECT_EQ(tenth.FloorSlots(25), 3u);
  EXPECT_EQ(SlotLimit::Share(0.3).CapSlots(10), 3u);  // 0.3*10 is 2.999...
  EXPECT_EQ(SlotLimit::Share(0.3).FloorSlots(10), 3u);
  EXPECT_EQ(SlotLimit().CapSlots(8), SlotLimit::kUnlimited);
  EXPECT_EQ(SlotLimit().FloorSlots(8), 0u);
}

}  // namespace
}  // namespace fairq::sched

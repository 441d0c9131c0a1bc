#include "server/broker/job_pages.h"

#include <gtest/gtest.h>

namespace fairq::server {
namespace {

TEST(JobPagesTest, JobOutsideEveryPageIsAPageOfOne) {
  JobPages pages;
  pages.Add(10, 13, 3);
  for (uint64_t id : {9u, 13u, 500u}) {
    JobPages::Finish finish = pages.Finished(id);
    EXPECT_TRUE(finish.delete_page) << id;
    EXPECT_FALSE(finish.clear_marks) << id;
    EXPECT_EQ(finish.first_id, id);
  }
  EXPECT_EQ(pages.size(), 1u);
}

TEST(JobPagesTest, LastJobDeletesThePageAndItsMarks) {
  JobPages pages;
  pages.Add(10, 13, 3);
  pages.Add(13, 15, 2);
  for (uint64_t id : {12u, 10u}) {
    JobPages::Finish finish = pages.Finished(id);
    EXPECT_FALSE(finish.delete_page) << id;
    EXPECT_EQ(finish.first_id, 10u);
  }
  JobPages::Finish last = pages.Finished(11);
  EXPECT_TRUE(last.delete_page);
  EXPECT_TRUE(last.clear_marks);
  EXPECT_EQ(last.first_id, 10u);
  EXPECT_EQ(last.end_id, 13u);
  EXPECT_EQ(pages.size(), 1u);
  EXPECT_FALSE(pages.Finished(14).delete_page);
  EXPECT_TRUE(pages.Finished(13).delete_page);
  EXPECT_EQ(pages.size(), 0u);
}

// Recovery adds a page with only its unfinished jobs counted.
TEST(JobPagesTest, PageAddedWithFewerLiveThanRecords) {
  JobPages pages;
  pages.Add(1, 101, 2);
  EXPECT_FALSE(pages.Finished(40).delete_page);
  EXPECT_TRUE(pages.Finished(99).delete_page);
}

TEST(JobPagesTest, PagesOfOneAndEmptyPagesAreNotTracked) {
  JobPages pages;
  pages.Add(5, 6, 1);
  pages.Add(7, 9, 0);
  EXPECT_EQ(pages.size(), 0u);
}

}  // namespace
}  // namespace fairq::server

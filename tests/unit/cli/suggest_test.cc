#include "cli/suggest.h"

#include <gtest/gtest.h>

namespace elasticjob::cli {
namespace {

const std::vector<std::string> kTop = {"cron",  "sharding", "run",  "job",     "server",
                                       "agent", "trace",    "dump", "console", "help"};
const std::vector<std::string> kJob = {"list",   "show",     "trigger", "disable",
                                       "enable", "shutdown", "remove",  "config",
                                       "add",    "sharding", "item"};

TEST(EditDistanceTest, CountsASwapOfTwoAdjacentCharactersAsOneEdit) {
  EXPECT_EQ(EditDistance("lsit", "list"), 1u);
  EXPECT_EQ(EditDistance("jobs", "job"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(ClosestWordTest, SuggestsTheCommandATypoMeant) {
  EXPECT_EQ(ClosestWord("jobs", kTop), "job");
  EXPECT_EQ(ClosestWord("servers", kTop), "server");
  EXPECT_EQ(ClosestWord("consol", kTop), "console");
  EXPECT_EQ(ClosestWord("lsit", kJob), "list");
  EXPECT_EQ(ClosestWord("trigegr", kJob), "trigger");
  EXPECT_EQ(ClosestWord("disabel", kJob), "disable");
}

TEST(ClosestWordTest, SuggestsNothingForAWordFarFromEveryCommand) {
  EXPECT_EQ(ClosestWord("frobnicate", kTop), std::nullopt);
  EXPECT_EQ(ClosestWord("xyz", kJob), std::nullopt);
  EXPECT_EQ(ClosestWord("", kJob), std::nullopt);
}

}  // namespace
}  // namespace elasticjob::cli

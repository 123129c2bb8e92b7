#include "cli/output.h"

#include <gtest/gtest.h>

#include <sstream>

namespace elasticjob::cli {
namespace {

TEST(TableTest, PadsColumnsToTheWidestCellAndLeavesTheLastOneUnpadded) {
  Table t({"JOB", "STATUS", "CRON"});
  t.AddRow({"orderSync", "OK", "0/5 * * * * ?"});
  t.AddRow({"j", "DISABLED", ""});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "JOB        STATUS    CRON\n"
            "orderSync  OK        0/5 * * * * ?\n"
            "j          DISABLED  \n");
}

TEST(TableTest, CountsCodePointsAndEscapesControlCharactersWhenPrinting) {
  Table t({"A", "B"});
  t.AddRow({"北京", "x"});
  t.AddRow({"a\nb", "y"});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "A       B\n"
            "北京      x\n"
            "a\\x0Ab  y\n");
  // JSON keeps the value as it is.
  EXPECT_EQ(t.ToJson()[1]["a"], "a\nb");
}

TEST(TableTest, JsonHasOneObjectPerRowKeyedByLowerCaseHeaders) {
  Table t({"JOB", "INSTANCE_COUNT"});
  EXPECT_EQ(t.ToJson(), nlohmann::json::array());
  t.AddRow({"a", "2"});
  std::ostringstream out;
  PrintJson(out, t.ToJson());
  EXPECT_EQ(out.str(), "[{\"instance_count\":\"2\",\"job\":\"a\"}]\n");
}

TEST(TableTest, JsonGivesNumberColumnsAsNumbersAndBoolColumnsAsBooleans) {
  Table t({"JOB", "INSTANCES", "FAILOVER", "NOTE"},
          {Table::Kind::kText, Table::Kind::kNumber, Table::Kind::kBool, Table::Kind::kText});
  t.AddRow({"a", "2", "yes", "3"});
  t.AddRow({"b", "", "no", ""});
  EXPECT_EQ(t.ToJson(), nlohmann::json::parse(R"([
    {"job": "a", "instances": 2, "failover": true, "note": "3"},
    {"job": "b", "instances": null, "failover": false, "note": ""}])"));
}

TEST(PrintJsonTest, ReplacesInvalidUtf8InsteadOfThrowing) {
  std::ostringstream out;
  PrintJson(out, nlohmann::json(std::string("a\xff")));
  EXPECT_EQ(out.str(), "\"a\xEF\xBF\xBD\"\n");
}

}  // namespace
}  // namespace elasticjob::cli

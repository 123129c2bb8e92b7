#include "tracing/events/tracing_url.h"

#include <gtest/gtest.h>

#include "tracing/events/event.h"

namespace elasticjob::tracing {
namespace {

TEST(TracingUrlTest, ParsesEachDatabase) {
  auto s = ParseTracingUrl("sqlite:///var/lib/ej/events.db");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kind, TracingUrl::Kind::kSqlite);
  EXPECT_EQ(s->path, "/var/lib/ej/events.db");

  auto pg = ParseTracingUrl("postgresql://ej:p%40ss@127.0.0.1:5433/events");
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->kind, TracingUrl::Kind::kPostgreSql);
  EXPECT_EQ(pg->user, "ej");
  EXPECT_EQ(pg->password, "p@ss");
  EXPECT_EQ(pg->host, "127.0.0.1");
  EXPECT_EQ(pg->port, 5433);
  EXPECT_EQ(pg->database, "events");
  EXPECT_EQ(pg->redacted, "postgresql://ej:***@127.0.0.1:5433/events");

  auto my = ParseTracingUrl("mysql://root@db.local/ej");
  ASSERT_TRUE(my.ok()) << my.status();
  EXPECT_EQ(my->kind, TracingUrl::Kind::kMySql);
  EXPECT_EQ(my->user, "root");
  EXPECT_EQ(my->password, "");
  EXPECT_EQ(my->port, 0);
}

TEST(TracingUrlTest, ErrorsNameTheProblemAndNeverThePassword) {
  for (const char* bad :
       {"oracle://u:secret@h/db", "postgresql://u:secret@h:99999/db", "mysql://u:secret@h:3306",
        "postgresql://u:secret@:5432/db", "events.db", "sqlite://"}) {
    auto r = ParseTracingUrl(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().find("secret"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find("tracing URL"), std::string::npos) << r.status();
  }
  EXPECT_EQ(RedactUrl("mysql://a:b@h:1/d"), "mysql://a:***@h:1/d");
  EXPECT_EQ(RedactUrl("sqlite:///tmp/x.db"), "sqlite:///tmp/x.db");
}

TEST(TracingEventTest, TimestampsRoundTripInUtc) {
  Clock::WallTime t = Clock::WallTime{} + std::chrono::milliseconds(1'795'305'600'123);
  std::string text = FormatTimestamp(t);
  EXPECT_EQ(text, "2026-11-22 00:00:00.123");
  auto back = ParseTimestamp(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, t);
  EXPECT_TRUE(ParseTimestamp("2026-11-25").ok());
  EXPECT_TRUE(ParseTimestamp("2026-11-25T10:00:00").ok());
  EXPECT_FALSE(ParseTimestamp("yesterday").ok());
  EXPECT_FALSE(ParseTimestamp("2026-13-01 00:00:00").ok());
}

TEST(TracingEventTest, RunInfoReadsTheTaskIdAsElasticJobsTaskContextDoes) {
  auto info = MakeRunInfo("job", "job@-@0,1,2@-@READY@-@10.0.0.1@-@4242", "host", "10.0.0.1");
  EXPECT_EQ(info->items_text, "[0, 1, 2]");
  EXPECT_EQ(info->execution_type, "READY");
  EXPECT_EQ(info->slave_id, "10.0.0.1");
  auto ids = std::set<std::string>{};
  for (int i = 0; i < 100; ++i) ids.insert(std::string(UuidText(NewUuid())));
  EXPECT_EQ(ids.size(), 100u);
  EXPECT_EQ(std::string(UuidText(NewUuid()))[14], '4');
}

}  // namespace
}  // namespace elasticjob::tracing

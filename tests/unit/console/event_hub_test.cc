// The console's event fan-out: debouncing per job, bounded streams, pings, overflow, stop.
// Streams block on the hub's condition variable (real time, no sleeps in the tests).
#include "console/event_hub.h"

#include <gtest/gtest.h>

#include <thread>

namespace elasticjob::console {
namespace {

using namespace std::chrono_literals;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

EventHub::Options Fast() {
  EventHub::Options o;
  o.max_clients = 2;
  o.debounce = 20ms;
  o.ping_interval = 5s;
  o.poll_interval = 10ms;
  return o;
}

TEST(EventHubTest, GathersAJobsChangesIntoOneEvent) {
  EventHub::Options o = Fast();
  o.debounce = 500ms;  // far more than the three calls below take, even on a loaded machine
  EventHub hub(o, nullptr);
  auto stream = hub.Connect();
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(*stream->Next(), "retry: 2000\n: connected\n\n");
  hub.JobChanged(0, "orders");
  hub.JobChanged(0, "orders");
  hub.JobChanged(0, "orders");
  hub.JobChanged(1, "");  // the set of jobs of registry 1
  std::string text;
  while (Count(text, "event: ") < 2) text += *stream->Next();
  EXPECT_EQ(Count(text, "event: job\ndata: {\"job\":\"orders\",\"registry\":0}\n\n"), 1u) << text;
  EXPECT_EQ(Count(text, "event: jobs\ndata: {\"registry\":1}\n\n"), 1u) << text;
  hub.Publish("execution", "{\"job\":\"orders\"}");
  EXPECT_EQ(*stream->Next(), "event: execution\ndata: {\"job\":\"orders\"}\n\n");
}

TEST(EventHubTest, BoundsTheStreamsAndPings) {
  EventHub::Options o = Fast();
  o.ping_interval = 10ms;
  EventHub hub(o, nullptr);
  auto a = hub.Connect();
  auto b = hub.Connect();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(hub.Connect(), nullptr);
  EXPECT_EQ(hub.streams(), 2u);
  hub.Disconnect(b);
  EXPECT_NE(hub.Connect(), nullptr);
  a->Next();  // the greeting
  EXPECT_EQ(*a->Next(), ": ping\n\n");
}

TEST(EventHubTest, ClosesAStreamThatDoesNotRead) {
  EventHub hub(Fast(), nullptr);
  auto slow = hub.Connect();
  auto reader = hub.Connect();
  for (int i = 0; i < 1100; ++i) {
    hub.Publish("execution", "{}");
    if (i % 100 == 0) reader->Next();
  }
  EXPECT_FALSE(slow->Next().has_value());
  EXPECT_TRUE(reader->Next().has_value());
  EXPECT_EQ(hub.streams(), 1u);
}

TEST(EventHubTest, PollsOnlyWhileAStreamIsOpen) {
  std::mutex mu;
  std::condition_variable cv;
  int polls = 0;
  EventHub hub(Fast(), [&](EventHub& h) {
    {
      std::lock_guard lock(mu);
      ++polls;  // counted before the stream can see what it publishes
      cv.notify_all();
    }
    h.Publish("execution", "{\"poll\":true}");
  });
  {
    std::unique_lock lock(mu);
    EXPECT_FALSE(cv.wait_for(lock, 100ms, [&] { return polls > 0; }));  // nobody listens
  }
  auto stream = hub.Connect();
  std::string text;
  while (text.find("\"poll\":true") == std::string::npos) text += *stream->Next();
  std::unique_lock lock(mu);
  EXPECT_GT(polls, 0);
}

TEST(EventHubTest, StopEndsEveryStream) {
  EventHub hub(Fast(), nullptr);
  auto stream = hub.Connect();
  stream->Next();
  std::thread waiter([&] { EXPECT_FALSE(stream->Next().has_value()); });
  hub.Stop();
  waiter.join();
  EXPECT_EQ(hub.Connect(), nullptr);
  hub.Stop();  // idempotent
}

}  // namespace
}  // namespace elasticjob::console

// memory:// as the library builds it: the registry class over a MemoryClient of a per-name
// MemoryServer (reg/memory/memory_registry.h). The shared behaviour is in tests/integration/reg
// (every backend); this is what memory:// adds: the per-name server, the server's clock, and
// the test seams other tests rely on (an expiry, waiting for another session's write, the
// lease held back by hand).
#include "reg/memory/memory_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "elasticjob/executor.h"
#include "elasticjob/simulated_clock.h"

namespace elasticjob::reg {
namespace {

using namespace std::chrono_literals;

TEST(MemoryRegistryTest, RegistryTimeComesFromTheServersClock) {
  SimulatedClock clock(Clock::WallTime{} + std::chrono::seconds(1000));
  auto reg = NewMemoryRegistry(std::make_shared<MemoryServer>(clock), "ns");
  ASSERT_TRUE(reg->Init().ok());
  EXPECT_EQ(*reg->GetRegistryCenterTime("/systemTime/current"), 1'000'000);
  clock.Advance(std::chrono::seconds(5));
  EXPECT_EQ(*reg->GetRegistryCenterTime("/systemTime/current"), 1'005'000);
}

TEST(MemoryRegistryTest, SameNamespaceSharesAServerAcrossRegistries) {
  auto a = NewRegistryCenter("memory://shared-ns-test");
  auto b = NewRegistryCenter("memory://shared-ns-test");
  ASSERT_TRUE((*a)->Init().ok());
  ASSERT_TRUE((*b)->Init().ok());
  ASSERT_TRUE((*a)->Persist("/k", "v").ok());
  EXPECT_EQ(*(*b)->Get("/k"), "v");
  auto other = NewRegistryCenter("memory://other-ns-test");
  ASSERT_TRUE((*other)->Init().ok());
  EXPECT_FALSE(*(*other)->IsExisted("/k"));
}

TEST(MemoryRegistryTest, MemoryUrlsBuildTheOneRegistryClassWithoutCacheBatching) {
  auto r = NewRegistryCenter("memory://class-test");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(dynamic_cast<ComposedRegistry*>(r->get()), nullptr);
  auto url = ParseRegistryUrl("memory://class-test");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->cache_batch_ms, 0);
}

TEST(MemoryRegistryTest, ExpireSessionDropsEphemeralsAndReturnsInANewSession) {
  auto reg = NewMemoryRegistry(std::make_shared<MemoryServer>(), "ns");
  ASSERT_TRUE(reg->Init().ok());
  ThreadPool pool(1);
  std::atomic<int> lost{0}, reconnected{0};
  auto listener = reg->AddConnectionStateListener(pool, [&](ConnectionState s) {
    if (s == ConnectionState::kLost) ++lost;
    if (s == ConnectionState::kReconnected) ++reconnected;
  });
  auto sub = reg->Watch("/", pool, [](const TreeEvent&) {});
  ASSERT_TRUE(sub.ok());
  const int64_t before = reg->session_id();
  const uint64_t epoch = reg->session_epoch();
  ASSERT_TRUE(reg->PersistEphemeral("/e", "1").ok());
  ASSERT_TRUE(reg->Persist("/p", "2").ok());
  ASSERT_TRUE(reg->ExpireSession());
  // Back in a new session when it returns, the cache resynchronised.
  EXPECT_NE(reg->session_id(), before);
  EXPECT_NE(reg->session_id(), 0);
  EXPECT_GT(reg->session_epoch(), epoch);
  EXPECT_FALSE(*reg->IsExisted("/e"));
  EXPECT_EQ(*reg->Get("/p"), "2");
  pool.Stop();
  pool.Join();
  EXPECT_EQ(lost.load(), 1);
  EXPECT_EQ(reconnected.load(), 1);
}

TEST(MemoryRegistryTest, AnotherSessionsWriteIsInTheCacheOnceTheRegistryIsIdle) {
  auto server = std::make_shared<MemoryServer>();
  auto reader = NewMemoryRegistry(server, "ns");
  auto writer = NewMemoryRegistry(server, "ns");
  ASSERT_TRUE(reader->Init().ok());
  ASSERT_TRUE(writer->Init().ok());
  ThreadPool pool(1);
  auto sub = reader->Watch("/job", pool, [](const TreeEvent&) {});
  ASSERT_TRUE(sub.ok());
  for (int i = 0; i < 20; ++i) {
    const std::string value = std::to_string(i);
    ASSERT_TRUE(writer->Persist("/job/a/b", value).ok());
    ASSERT_TRUE(writer->Persist("/job/c" + value, value).ok());
    reader->WaitIdleForTesting();
    // From the cache: no request is sent for it.
    EXPECT_EQ(reader->GetCached("/job/a/b").value, value);
    EXPECT_EQ(reader->GetCached("/job/c" + value).value, value);
  }
}

TEST(MemoryRegistryTest, ALeaseHeldBackByHandHoldsItsWaitersUntilReleased) {
  auto reg = NewMemoryRegistry(std::make_shared<MemoryServer>(), "ns");
  ASSERT_TRUE(reg->Init().ok());
  EXPECT_TRUE(reg->LeaseHeld());
  reg->SetLeaseHeldForTesting(false);
  EXPECT_FALSE(reg->LeaseHeld());
  std::atomic<int> answer{-1};
  std::thread waiter(
      [&] { answer = reg->AwaitLease(std::chrono::steady_clock::now() + 60s) ? 1 : 0; });
  ASSERT_TRUE(reg->WaitLeaseWaitersForTesting(1, 20s));
  EXPECT_EQ(answer.load(), -1);
  reg->SetLeaseHeldForTesting(true);
  waiter.join();
  EXPECT_EQ(answer.load(), 1);
  EXPECT_TRUE(reg->LeaseHeld());
}

TEST(MemoryRegistryTest, AWaiterOnAHeldBackLeaseIsAnsweredFalseWhenTheSessionExpires) {
  auto reg = NewMemoryRegistry(std::make_shared<MemoryServer>(), "ns");
  ASSERT_TRUE(reg->Init().ok());
  reg->SetLeaseHeldForTesting(false);
  std::atomic<int> answer{-1};
  std::thread waiter(
      [&] { answer = reg->AwaitLease(std::chrono::steady_clock::now() + 60s) ? 1 : 0; });
  ASSERT_TRUE(reg->WaitLeaseWaitersForTesting(1, 20s));
  ASSERT_TRUE(reg->ExpireSession());
  waiter.join();
  EXPECT_EQ(answer.load(), 0);
}

}  // namespace
}  // namespace elasticjob::reg

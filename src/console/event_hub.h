// EventHub: the console's Server-Sent Events fan-out (GET /api/v1/events). Registry views
// report changes here; each open stream gets them as SSE text:
//   event: job    data: {"registry":0,"job":"orderSync"}   (debounced per job)
//   event: jobs   data: {"registry":0}                     (a job added or removed)
//   event: execution data: {...}                           (from the tracing poll)
// and a ": ping" comment when nothing else was sent for the ping interval.
//
// One thread of its own sends debounced job events when they are due and, while at least one
// stream is open, calls the poll callback (the tracing database's newest executions) every
// poll interval. Streams are bounded (Connect returns null beyond max_clients) because each
// holds one server thread; a stream whose queue overflows (a client that does not read) is
// closed, and its browser reconnects and refetches.
//
// Thread safety: every method may be called from any thread.
#ifndef ELASTICJOB_CONSOLE_EVENT_HUB_H_
#define ELASTICJOB_CONSOLE_EVENT_HUB_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::console {

class EventHub {
 public:
  struct Options {
    int max_clients = 16;
    std::chrono::milliseconds debounce{100};
    std::chrono::milliseconds ping_interval{std::chrono::seconds(15)};
    std::chrono::milliseconds poll_interval{std::chrono::seconds(2)};
  };
  // Called on the hub's thread while a stream is open; publishes what it finds (may be null).
  using PollCallback = std::function<void(EventHub&)>;

  class Stream {
   public:
    // The next SSE text to send: queued events, else a ping after the ping interval.
    // nullopt once the stream is closed (hub stopping, or the queue overflowed).
    std::optional<std::string> Next();

   private:
    friend class EventHub;
    explicit Stream(EventHub& hub) : hub_(hub) {}
    EventHub& hub_;
    std::deque<std::string> queue_;  // guarded by hub_.mu_
    bool closed_ = false;            // guarded by hub_.mu_
  };

  EventHub(Options options, PollCallback poll);
  ~EventHub();  // Stop()
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  // A new stream, or null when max_clients are open.
  std::shared_ptr<Stream> Connect();
  // Ends a stream (its server thread is done with it).
  void Disconnect(const std::shared_ptr<Stream>& stream);
  size_t streams();

  // Job `job` of registry `registry` changed: one `job` event after the debounce interval,
  // whatever else changes in that job meanwhile. An empty `job`: the set of jobs changed (a
  // `jobs` event, debounced alike).
  void JobChanged(int registry, const std::string& job);
  // Sends `event` with `json_data` to every stream now.
  void Publish(const std::string& event, const std::string& json_data);

  // Closes every stream and ends the thread. Idempotent.
  void Stop();

 private:
  void Loop();
  void BroadcastLocked(const std::string& text) ELASTICJOB_REQUIRES(mu_);

  const Options options_;
  const PollCallback poll_;

  Mutex mu_;
  CondVar cv_{&mu_};  // the hub's thread and the streams wait on it
  std::set<std::shared_ptr<Stream>> streams_ ELASTICJOB_GUARDED_BY(mu_);
  // (registry, job) -> when its event is due.
  std::map<std::pair<int, std::string>, std::chrono::steady_clock::time_point> pending_
      ELASTICJOB_GUARDED_BY(mu_);
  bool stopping_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace elasticjob::console

#endif  // ELASTICJOB_CONSOLE_EVENT_HUB_H_

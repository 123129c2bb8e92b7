// NotificationSender: where the error handlers that talk to the network (DINGTALK, WECHAT,
// EMAIL) send from. One bounded queue and one sender thread for the whole process, however
// many jobs: a failing item only queues its message (never blocking the item, a trigger or a
// registry thread), and the sender works through the queue one message at a time, each bounded
// by its own timeouts. A full queue drops the new message with one logged line; a failed send
// (a dead endpoint, an error reply) is logged once, naming the handler, the job and the reason.
// Nothing a send does can crash the process: exceptions are caught and logged. The thread
// starts with the first message queued: a process whose jobs only log their failures (LOG,
// the default handler) has none.
//
// Thread safety: safe for concurrent use. Stop() then the destructor ends the thread.
#ifndef ELASTICJOB_ERROR_HANDLER_NOTIFICATION_SENDER_H_
#define ELASTICJOB_ERROR_HANDLER_NOTIFICATION_SENDER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "elasticjob/logger.h"
#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::error_handler {

class NotificationSender {
 public:
  // What a queued message does when its turn comes: OK, or why it failed.
  using Send = std::function<Status()>;

  explicit NotificationSender(size_t capacity = kDefaultCapacity);
  ~NotificationSender();  // Stop(), then waits for the message being sent
  NotificationSender(const NotificationSender&) = delete;
  NotificationSender& operator=(const NotificationSender&) = delete;

  // The process's sender, made on first use and never destroyed.
  static NotificationSender& Shared();

  // Queues `send`; `what` names it in the log ("DINGTALK for job 'x'"), whose lines about it
  // (not queued, failed) go to `logger` (the job's; null: the process default). False
  // (logged) when the queue is full or the sender stopped.
  bool Post(std::string what, Send send, std::shared_ptr<Logger> logger = nullptr);
  // Sends nothing more; queued messages are dropped.
  void Stop();
  // Waits until the queue is empty and no message is being sent (for tests).
  void WaitIdle();
  // Messages sent OK, and failed (or dropped), since the start.
  size_t sent();
  size_t failed();

  static constexpr size_t kDefaultCapacity = 1000;

 private:
  struct Message {
    std::string what;
    Send send;
    std::shared_ptr<Logger> logger;
  };
  void Loop();

  const size_t capacity_;
  Mutex mu_;
  CondVar cv_{&mu_};
  std::deque<Message> queue_ ELASTICJOB_GUARDED_BY(mu_);
  bool stopped_ ELASTICJOB_GUARDED_BY(mu_) = false;
  bool busy_ ELASTICJOB_GUARDED_BY(mu_) = false;
  size_t sent_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  size_t failed_ ELASTICJOB_GUARDED_BY(mu_) = 0;
  std::thread thread_ ELASTICJOB_GUARDED_BY(mu_);  // started by the first Post
};

}  // namespace elasticjob::error_handler

#endif  // ELASTICJOB_ERROR_HANDLER_NOTIFICATION_SENDER_H_

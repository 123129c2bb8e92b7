// Job error handlers: what happens to the cause of a failed item, as ElasticJob's
// JobErrorHandler SPI, chosen by the configuration's `jobErrorHandlerType` with ElasticJob
// 3.0.5's props (docs/error-handlers.md):
//   LOG (default)  an ERROR line naming the job, the item, the instance and the cause
//   IGNORE         nothing
//   THROW          an ERROR line (the item is failed, as under every handler)
//   DINGTALK       a DingTalk group robot message (dingtalk.* props), signed with a secret
//   WECHAT         a WeCom group robot message (wechat.* props)
//   EMAIL          a mail over SMTP (email.* props)
// Under every handler the item is reported failed (ItemRunReport). The notifying handlers
// only queue their message on the NotificationSender: Handle never blocks on the network.
//
// Thread safety: Handle may be called concurrently.
#ifndef ELASTICJOB_ERROR_HANDLER_JOB_ERROR_HANDLER_H_
#define ELASTICJOB_ERROR_HANDLER_JOB_ERROR_HANDLER_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/logger.h"
#include "elasticjob/status.h"
#include "error_handler/notification_sender.h"

namespace elasticjob::error_handler {

struct JobFailure {
  std::string job_name;
  int item = 0;
  std::string instance_id;
  std::string cause;
  Logger* logger = nullptr;  // the job's (ShardingContext::logger); null: the process default
};

class JobErrorHandler {
 public:
  virtual ~JobErrorHandler() = default;
  virtual void Handle(const JobFailure& failure) = 0;
  virtual std::string type() const = 0;
};

// The handler `config.job_error_handler_type` names (unset: LOG), its props read and checked.
// INVALID_ARGUMENT naming the prop and the value (a missing webhook, a port that is not a
// number, no recipient), or an unknown type listing the known ones. The notifying handlers
// send through `sender`, which must outlive them, and log what they could not send to
// `logger` (the job's; null: the process default).
Result<std::shared_ptr<JobErrorHandler>> NewJobErrorHandler(
    const JobConfiguration& config, NotificationSender& sender,
    std::shared_ptr<Logger> logger = nullptr);

// The DingTalk and WeCom message text: "[keyword]Job '<job>' exception occur in job
// processing, caused by <cause>", and the JSON body carrying it.
std::string ErrorMessageText(const std::string& keyword, const JobFailure& failure);
std::string RobotMessageJson(const std::string& content);

// DingTalk's signature: URL-encoded base64 of HmacSHA256(key = secret, data = timestamp +
// "\n" + secret), `timestamp_ms` in epoch milliseconds. OpenSSL's libcrypto is loaded at the
// first call: FAILED_PRECONDITION naming libcrypto.so.3 when it cannot be.
Result<std::string> DingTalkSignature(int64_t timestamp_ms, const std::string& secret);

// The URL a DingTalk message goes to: the webhook, plus `&timestamp=..&sign=..` with a secret;
// DingTalkSignature's error when the signature cannot be made.
Result<std::string> DingTalkUrl(const std::string& webhook, const std::string& secret,
                                int64_t timestamp_ms);

// A robot's JSON reply: OK when `errcode` is 0; else why not (its errmsg, or that the reply
// is not such JSON).
Status CheckRobotReply(long status, const std::string& body);

}  // namespace elasticjob::error_handler

#endif  // ELASTICJOB_ERROR_HANDLER_JOB_ERROR_HANDLER_H_

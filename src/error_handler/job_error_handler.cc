#include "error_handler/job_error_handler.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/opensslv.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "http/curl_api.h"
#include "http/http_client.h"
#include "infra/log.h"
#include "infra/printable.h"
#include "infra/props.h"
#include "infra/shared_library.h"

namespace elasticjob::error_handler {
namespace {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Describe(const JobFailure& f) {
  return fmt::format("Job '{}' exception occur in job processing (item {} on instance {}): {}",
                     f.job_name, f.item, f.instance_id, infra::OneLine(f.cause));
}

// An ERROR line about `f` to its job's logger.
void Log(const JobFailure& f, std::string_view message) {
  infra::LogLine(f.logger, LogLevel::kError,
                 {.job = f.job_name, .item = std::nullopt, .instance = f.instance_id}, message);
}

class LogHandler final : public JobErrorHandler {
 public:
  void Handle(const JobFailure& f) override { Log(f, Describe(f)); }
  std::string type() const override { return "LOG"; }
};

class IgnoreHandler final : public JobErrorHandler {
 public:
  void Handle(const JobFailure&) override {}
  std::string type() const override { return "IGNORE"; }
};

class ThrowHandler final : public JobErrorHandler {
 public:
  void Handle(const JobFailure& f) override {
    Log(f, Describe(f) + " (jobErrorHandlerType THROW)");
  }
  std::string type() const override { return "THROW"; }
};

// DINGTALK and WECHAT: a JSON text message POSTed to a robot's webhook.
class RobotHandler final : public JobErrorHandler {
 public:
  RobotHandler(std::string type, std::string webhook, std::string keyword, std::string secret,
               std::chrono::milliseconds connect, std::chrono::milliseconds read,
               NotificationSender& sender, std::shared_ptr<Logger> logger)
      : type_(std::move(type)),
        webhook_(std::move(webhook)),
        keyword_(std::move(keyword)),
        secret_(std::move(secret)),
        connect_(connect),
        read_(read),
        sender_(sender),
        logger_(std::move(logger)) {}

  void Handle(const JobFailure& f) override {
    const std::string body = RobotMessageJson(ErrorMessageText(keyword_, f));
    sender_.Post(
        fmt::format("{} for job '{}'", type_, f.job_name),
        [type = type_, webhook = webhook_, secret = secret_, connect = connect_, read = read_,
         body]() -> Status {
          infra::HttpRequest request;
          request.method = "POST";
          request.url = webhook;
          if (type == "DINGTALK") {
            auto signed_url = DingTalkUrl(webhook, secret, NowMillis());
            if (!signed_url.ok()) return signed_url.status();
            request.url = std::move(*signed_url);
          }
          request.headers.emplace_back("Content-Type", "application/json; charset=UTF-8");
          request.body = body;
          request.connect_timeout = connect;
          request.read_timeout = read;
          request.max_body_bytes = 16 * 1024;
          auto response = infra::SendHttp(request);
          if (!response.ok()) return response.status();
          return CheckRobotReply(response->status, response->body);
        },
        logger_);
  }
  std::string type() const override { return type_; }

 private:
  const std::string type_;
  const std::string webhook_;
  const std::string keyword_;
  const std::string secret_;
  const std::chrono::milliseconds connect_;
  const std::chrono::milliseconds read_;
  NotificationSender& sender_;
  const std::shared_ptr<Logger> logger_;
};

struct EmailSettings {
  std::string host;
  int64_t port = 0;
  std::string username;
  std::string password;
  bool use_ssl = true;
  std::string ssl_trust;
  std::string subject;
  std::string from;
  std::vector<std::string> to, cc, bcc;
  bool debug = false;
};

std::vector<std::string> SplitAddresses(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Whether `ssl_trust` (ElasticJob's email.ssl.trust, JavaMail's mail.smtp.ssl.trust: "*" or
// host names separated by spaces) trusts `host`'s certificate without checking it.
bool Trusted(const std::string& ssl_trust, const std::string& host) {
  std::stringstream in(ssl_trust);
  std::string h;
  while (in >> h) {
    if (h == "*" || h == host) return true;
  }
  return false;
}

struct Upload {
  std::string text;
  size_t at = 0;
};

size_t ReadUpload(char* buffer, size_t size, size_t n, void* user) {
  auto* up = static_cast<Upload*>(user);
  const size_t len = std::min(size * n, up->text.size() - up->at);
  std::memcpy(buffer, up->text.data() + up->at, len);
  up->at += len;
  return len;
}

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

Status SendMail(const EmailSettings& e, const std::string& body) {
  auto api = infra::Curl();
  if (!api.ok()) return api.status();
  const infra::CurlApi& c = **api;
  std::unique_ptr<CURL, void (*)(CURL*)> curl(c.easy_init(), c.easy_cleanup);
  if (curl == nullptr) return Internal("curl_easy_init failed");
  CURL* h = curl.get();
  const std::string url = fmt::format("{}://{}:{}", e.use_ssl ? "smtps" : "smtp", e.host, e.port);
  char date[64];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
  Upload up;
  up.text = fmt::format(
      "Date: {}\r\nFrom: {}\r\nTo: {}\r\n{}Subject: {}\r\nMIME-Version: 1.0\r\n"
      "Content-Type: text/plain; charset=UTF-8\r\n\r\n{}\r\n",
      date, e.from, Join(e.to), e.cc.empty() ? "" : "Cc: " + Join(e.cc) + "\r\n", e.subject, body);
  curl_slist* rcpt = nullptr;
  for (const auto* list : {&e.to, &e.cc, &e.bcc}) {
    for (const auto& a : *list) rcpt = c.slist_append(rcpt, a.c_str());
  }
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> rcpt_list(rcpt, c.slist_free_all);
  char error[CURL_ERROR_SIZE] = {0};
  c.easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  c.easy_setopt(h, CURLOPT_URL, url.c_str());
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS, 15000L);
  if (!e.use_ssl) c.easy_setopt(h, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_TRY));
  if (Trusted(e.ssl_trust, e.host)) {
    c.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    c.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!e.username.empty()) {
    c.easy_setopt(h, CURLOPT_USERNAME, e.username.c_str());
    c.easy_setopt(h, CURLOPT_PASSWORD, e.password.c_str());
  }
  c.easy_setopt(h, CURLOPT_MAIL_FROM, e.from.c_str());
  c.easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt_list.get());
  c.easy_setopt(h, CURLOPT_READFUNCTION, ReadUpload);
  c.easy_setopt(h, CURLOPT_READDATA, &up);
  c.easy_setopt(h, CURLOPT_UPLOAD, 1L);
  c.easy_setopt(h, CURLOPT_WRITEFUNCTION, Discard);
  if (e.debug) c.easy_setopt(h, CURLOPT_VERBOSE, 1L);
  const CURLcode rc = c.easy_perform(h);
  if (rc != CURLE_OK) {
    return Status(rc == CURLE_OPERATION_TIMEDOUT ? StatusCode::kTimeout : StatusCode::kUnavailable,
                  fmt::format("{}: {}", url, error[0] != '\0' ? error : c.easy_strerror(rc)));
  }
  return Status::Ok();
}

class EmailHandler final : public JobErrorHandler {
 public:
  EmailHandler(EmailSettings settings, NotificationSender& sender, std::shared_ptr<Logger> logger)
      : settings_(std::move(settings)), sender_(sender), logger_(std::move(logger)) {}
  void Handle(const JobFailure& f) override {
    std::string body = fmt::format(
        "Job '{}' exception occur in job processing.\r\nItem: {}\r\nInstance: {}\r\nCause: {}",
        f.job_name, f.item, f.instance_id, f.cause);
    sender_.Post(
        fmt::format("EMAIL for job '{}'", f.job_name),
        [settings = settings_, body = std::move(body)] { return SendMail(settings, body); },
        logger_);
  }
  std::string type() const override { return "EMAIL"; }

 private:
  const EmailSettings settings_;
  NotificationSender& sender_;
  const std::shared_ptr<Logger> logger_;
};

Result<std::shared_ptr<JobErrorHandler>> NewRobot(const std::string& type,
                                                  const std::string& prefix,
                                                  const infra::Props& props,
                                                  NotificationSender& sender,
                                                  std::shared_ptr<Logger> logger) {
  auto webhook = infra::RequiredProp(props, prefix + ".webhook");
  if (!webhook.ok()) return webhook.status();
  if (webhook->rfind("http://", 0) != 0 && webhook->rfind("https://", 0) != 0) {
    return InvalidArgument(
        fmt::format("props.{}.webhook: expected an http:// or https:// URL, "
                    "got '{}'",
                    prefix, *webhook));
  }
  auto connect = infra::MillisProp(props, prefix + ".connectTimeoutMilliseconds", 3000);
  if (!connect.ok()) return connect.status();
  auto read = infra::MillisProp(props, prefix + ".readTimeoutMilliseconds", 5000);
  if (!read.ok()) return read.status();
  std::string keyword, secret;
  if (type == "DINGTALK") {
    keyword = infra::PropOr(props, "dingtalk.keyword", "");
    secret = infra::PropOr(props, "dingtalk.secret", "");
  }
  return std::shared_ptr<JobErrorHandler>(std::make_shared<RobotHandler>(
      type, *webhook, keyword, secret, *connect, *read, sender, std::move(logger)));
}

Result<std::shared_ptr<JobErrorHandler>> NewEmail(const infra::Props& props,
                                                  NotificationSender& sender,
                                                  std::shared_ptr<Logger> logger) {
  EmailSettings e;
  auto host = infra::RequiredProp(props, "email.host");
  if (!host.ok()) return host.status();
  e.host = *host;
  auto ssl = infra::BoolProp(props, "email.useSsl", true);
  if (!ssl.ok()) return ssl.status();
  e.use_ssl = *ssl;
  auto port = infra::PositiveIntProp(props, "email.port", e.use_ssl ? 465 : 25);
  if (!port.ok()) return port.status();
  if (*port > 65535) {
    return InvalidArgument(
        fmt::format("props.email.port: expected a port number, got '{}'", *port));
  }
  e.port = *port;
  e.username = infra::PropOr(props, "email.username", "");
  e.password = infra::PropOr(props, "email.password", "");
  e.ssl_trust = infra::PropOr(props, "email.ssl.trust", "");
  e.subject = infra::PropOr(props, "email.subject", "ElasticJob error message");
  auto from = infra::RequiredProp(props, "email.from");
  if (!from.ok()) return from.status();
  e.from = *from;
  e.to = SplitAddresses(infra::PropOr(props, "email.to", ""));
  e.cc = SplitAddresses(infra::PropOr(props, "email.cc", ""));
  e.bcc = SplitAddresses(infra::PropOr(props, "email.bcc", ""));
  if (e.to.empty() && e.cc.empty() && e.bcc.empty()) {
    return InvalidArgument(
        "props.email.to: no recipient (email.to, email.cc and email.bcc are "
        "all empty)");
  }
  auto debug = infra::BoolProp(props, "email.debug", false);
  if (!debug.ok()) return debug.status();
  e.debug = *debug;
  return std::shared_ptr<JobErrorHandler>(
      std::make_shared<EmailHandler>(std::move(e), sender, std::move(logger)));
}

}  // namespace

Result<std::shared_ptr<JobErrorHandler>> NewJobErrorHandler(const JobConfiguration& config,
                                                            NotificationSender& sender,
                                                            std::shared_ptr<Logger> logger) {
  const std::string type = config.job_error_handler_type.value_or("LOG");
  const auto& props = config.props;
  Result<std::shared_ptr<JobErrorHandler>> handler = InvalidArgument("");
  if (type == "LOG") return std::shared_ptr<JobErrorHandler>(std::make_shared<LogHandler>());
  if (type == "IGNORE") return std::shared_ptr<JobErrorHandler>(std::make_shared<IgnoreHandler>());
  if (type == "THROW") return std::shared_ptr<JobErrorHandler>(std::make_shared<ThrowHandler>());
  if (type == "DINGTALK") {
    handler = NewRobot(type, "dingtalk", props, sender, std::move(logger));
  } else if (type == "WECHAT") {
    handler = NewRobot(type, "wechat", props, sender, std::move(logger));
  } else if (type == "EMAIL") {
    handler = NewEmail(props, sender, std::move(logger));
  } else {
    return InvalidArgument(
        fmt::format("jobErrorHandlerType: unknown type '{}' (known: LOG, IGNORE, THROW, "
                    "DINGTALK, WECHAT, EMAIL)",
                    type));
  }
  if (!handler.ok()) {
    return handler.status().WithContext(fmt::format("jobErrorHandlerType {}", type));
  }
  return handler;
}

std::string ErrorMessageText(const std::string& keyword, const JobFailure& failure) {
  return keyword + fmt::format("Job '{}' exception occur in job processing, caused by {}",
                               failure.job_name, failure.cause);
}

std::string RobotMessageJson(const std::string& content) {
  nlohmann::json j;
  j["msgtype"] = "text";
  j["text"]["content"] = content;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// libcrypto's HMAC and base64, resolved from the library at the first signature
// (infra/shared_library.h): a process that signs no DingTalk message does not load OpenSSL.
static_assert(OPENSSL_VERSION_MAJOR == 3, "kCryptoSoname names OpenSSL 3's libcrypto");
constexpr const char* kCryptoSoname = "libcrypto.so.3";

struct CryptoApi {
  decltype(&HMAC) hmac = nullptr;
  decltype(&EVP_sha256) sha256 = nullptr;
  decltype(&EVP_EncodeBlock) encode_block = nullptr;
};

Result<const CryptoApi*> LoadCrypto() {
  auto library = infra::LoadSharedLibrary(kCryptoSoname, "the DINGTALK error handler's signature");
  if (!library.ok()) return library.status();
  static CryptoApi api;  // written here only, once (Crypto's static)
  for (Status s :
       {infra::ResolveFunction(*library, kCryptoSoname, "HMAC", api.hmac),
        infra::ResolveFunction(*library, kCryptoSoname, "EVP_sha256", api.sha256),
        infra::ResolveFunction(*library, kCryptoSoname, "EVP_EncodeBlock", api.encode_block)}) {
    if (!s.ok()) return s;
  }
  return &api;
}

// Loaded by the first call (a function-local static: once, thread-safe), the same after.
Result<const CryptoApi*> Crypto() {
  static const Result<const CryptoApi*> loaded = LoadCrypto();
  return loaded;
}

}  // namespace

Result<std::string> DingTalkSignature(int64_t timestamp_ms, const std::string& secret) {
  auto api = Crypto();
  if (!api.ok()) return api.status();
  const std::string data = std::to_string(timestamp_ms) + "\n" + secret;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if ((*api)->hmac((*api)->sha256(), secret.data(), static_cast<int>(secret.size()),
                   reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac,
                   &mac_len) == nullptr) {
    return Internal("DingTalk signature: HMAC-SHA256 failed");
  }
  std::string base64(4 * ((mac_len + 2) / 3) + 1, '\0');
  const int n = (*api)->encode_block(reinterpret_cast<unsigned char*>(base64.data()), mac,
                                     static_cast<int>(mac_len));
  base64.resize(static_cast<size_t>(n));
  return infra::UrlEncode(base64);
}

Result<std::string> DingTalkUrl(const std::string& webhook, const std::string& secret,
                                int64_t timestamp_ms) {
  if (secret.empty()) return webhook;
  auto signature = DingTalkSignature(timestamp_ms, secret);
  if (!signature.ok()) return signature.status();
  return fmt::format("{}&timestamp={}&sign={}", webhook, timestamp_ms, *signature);
}

Status CheckRobotReply(long status, const std::string& body) {
  if (status != 200) {
    return Status(StatusCode::kUnavailable, fmt::format("unexpected response status {}: {}", status,
                                                        infra::OneLine(body.substr(0, 200))));
  }
  const nlohmann::json reply = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object() || !reply.contains("errcode")) {
    return Status(StatusCode::kUnavailable, fmt::format("reply is not the robot's JSON: {}",
                                                        infra::OneLine(body.substr(0, 200))));
  }
  const auto& code = reply["errcode"];
  const bool zero = (code.is_number_integer() && code.get<int64_t>() == 0) ||
                    (code.is_string() && code.get<std::string>() == "0");
  if (zero) return Status::Ok();
  std::string errmsg = reply.contains("errmsg") && reply["errmsg"].is_string()
                           ? reply["errmsg"].get<std::string>()
                           : reply.dump();
  return Status(StatusCode::kUnavailable,
                fmt::format("errcode {}: {}", code.dump(), infra::OneLine(errmsg)));
}

}  // namespace elasticjob::error_handler

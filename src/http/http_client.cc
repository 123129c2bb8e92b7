#include "http/http_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>

#include "http/curl_api.h"

namespace elasticjob::infra {
namespace {

struct Sink {
  std::string* body;
  size_t max;
  bool* truncated;
};

size_t Write(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t bytes = size * n;
  const size_t room = sink->max > sink->body->size() ? sink->max - sink->body->size() : 0;
  if (bytes > room) *sink->truncated = true;
  sink->body->append(data, std::min(bytes, room));
  return bytes;  // the rest is read and dropped
}

// Perform's result when the cancellation came first (no CURLcode means it).
constexpr CURLcode kAborted = CURL_LAST;

// curl_easy_perform through a multi handle whose wait the cancellation wakes: the transfer
// ends at once when it is requested, not at the next progress callback.
CURLcode Perform(const CurlApi& c, CURL* h, Cancellation& cancellation) {
  std::unique_ptr<CURLM, CURLMcode (*)(CURLM*)> multi(c.multi_init(), c.multi_cleanup);
  if (multi == nullptr) return CURLE_OUT_OF_MEMORY;
  CURLM* m = multi.get();
  if (c.multi_add_handle(m, h) != CURLM_OK) return CURLE_FAILED_INIT;
  // Called under the cancellation's lock, which Unregister takes: never after it.
  const uint64_t wake = cancellation.OnRequest([&c, m] { c.multi_wakeup(m); });
  CURLcode rc = CURLE_OK;
  for (;;) {
    if (cancellation.requested()) {
      rc = kAborted;
      break;
    }
    int running = 0;
    if (c.multi_perform(m, &running) != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      break;
    }
    if (running == 0) {
      int queued = 0;
      while (CURLMsg* msg = c.multi_info_read(m, &queued)) {
        if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
      }
      break;
    }
    // Bounded, though the wake-up or the transfer's own progress ends it sooner.
    if (c.multi_poll(m, nullptr, 0, 1000, nullptr) != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      break;
    }
  }
  cancellation.Unregister(wake);
  c.multi_remove_handle(m, h);
  return rc;
}

}  // namespace

Result<HttpResponse> SendHttp(const HttpRequest& request) {
  auto api = Curl();
  if (!api.ok()) return api.status();
  const CurlApi& c = **api;
  std::unique_ptr<CURL, void (*)(CURL*)> curl(c.easy_init(), c.easy_cleanup);
  if (curl == nullptr) return Internal("curl_easy_init failed");
  CURL* h = curl.get();
  HttpResponse response;
  Sink sink{&response.body, request.max_body_bytes, &response.truncated};
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = c.slist_append(headers, fmt::format("{}: {}", name, value).c_str());
  }
  // No "Expect: 100-continue" round trip before a body.
  headers = c.slist_append(headers, "Expect:");
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers, c.slist_free_all);
  char error[CURL_ERROR_SIZE] = {0};
  c.easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  c.easy_setopt(h, CURLOPT_URL, request.url.c_str());
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                static_cast<long>(std::max<int64_t>(1, request.connect_timeout.count())));
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS,
                static_cast<long>(std::max<int64_t>(
                    1, request.connect_timeout.count() + request.read_timeout.count())));
  c.easy_setopt(h, CURLOPT_HTTPHEADER, header_list.get());
  c.easy_setopt(h, CURLOPT_WRITEFUNCTION, Write);
  c.easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  if (!request.ca_file.empty()) c.easy_setopt(h, CURLOPT_CAINFO, request.ca_file.c_str());
  const std::string& m = request.method;
  if (m == "HEAD") {
    c.easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (m == "GET") {
    c.easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    c.easy_setopt(h, CURLOPT_CUSTOMREQUEST, m.c_str());
  }
  if (m == "POST" || m == "PUT" || m == "PATCH" || (!request.body.empty() && m != "HEAD")) {
    c.easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    c.easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }
  const CURLcode rc =
      request.cancellation != nullptr ? Perform(c, h, *request.cancellation) : c.easy_perform(h);
  if (rc == kAborted) {
    return Status(StatusCode::kCancelled, fmt::format("{} {}: aborted: {}", m, request.url,
                                                      request.cancellation->reason()));
  }
  if (rc != CURLE_OK) {
    const std::string why = error[0] != '\0' ? error : c.easy_strerror(rc);
    const std::string message = fmt::format("{} {}: {}", m, request.url, why);
    if (rc == CURLE_OPERATION_TIMEDOUT) return Status(StatusCode::kTimeout, message);
    if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
      return InvalidArgument(message);
    }
    return Status(StatusCode::kUnavailable, message);
  }
  c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace elasticjob::infra

// HttpClient: one HTTP(S) request with libcurl, for the HTTP job type and the webhook error
// handlers (DINGTALK, WECHAT). Blocking, bounded by its timeouts: call it from a thread that
// may wait (the item pool, the notification sender), never from a trigger or registry thread.
// A request given a Cancellation ends as soon as it is requested.
//
// libcurl is loaded at the first request (http/curl_api.h), not when the process starts.
//
// Thread safety: SendHttp is safe to call from many threads at once (each call has its own
// curl handle; loading libcurl and curl_global_init run once).
#ifndef ELASTICJOB_HTTP_HTTP_CLIENT_H_
#define ELASTICJOB_HTTP_HTTP_CLIENT_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "elasticjob/api/cancellation.h"
#include "elasticjob/status.h"

namespace elasticjob::infra {

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PUT, DELETE, PATCH, HEAD
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent when not empty (or for POST, PUT, PATCH)
  std::chrono::milliseconds connect_timeout{3000};
  // Bound on the time after the connection is made (the whole request takes at most
  // connect_timeout + read_timeout).
  std::chrono::milliseconds read_timeout{5000};
  // A PEM file of trusted CA certificates; empty: the system's.
  std::string ca_file;
  // At most this much of the response body is kept (the rest is read and dropped).
  size_t max_body_bytes = 64 * 1024;
  // When requested (an item's timeout or an operator's stop), the transfer is aborted at
  // once (curl's multi interface, woken by the request). Null: runs to its timeouts.
  Cancellation* cancellation = nullptr;
};

struct HttpResponse {
  long status = 0;
  std::string body;  // truncated to max_body_bytes
  bool truncated = false;
};

// Sends `request`. FAILED_PRECONDITION naming libcurl.so.4 when it cannot be loaded (the
// request is not sent); UNAVAILABLE naming the URL and curl's reason when no response came
// (connection refused, a timeout, a TLS failure); TIMEOUT when a timeout ran out;
// INVALID_ARGUMENT for a URL curl rejects; CANCELLED (`aborted: {reason}`) when
// `request.cancellation` was requested first. A response with any status is a value.
Result<HttpResponse> SendHttp(const HttpRequest& request);

// `text` percent-encoded (RFC 3986 unreserved characters kept).
std::string UrlEncode(const std::string& text);

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_HTTP_HTTP_CLIENT_H_

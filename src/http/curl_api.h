// The libcurl functions the HTTP client (http_client.h) and the EMAIL error handler call,
// resolved from libcurl.so.4 at their first use rather than linked: a process that sends no
// request does not load libcurl and the TLS stack under it (OpenSSL, GnuTLS, Kerberos, ...:
// about 4 MB of RSS and their initialisation at start-up; docs/runtime.md, "What a process
// loads"). The headers are still the build's (<curl/curl.h>): types and constants only.
//
// Thread safety: Curl() may be called from many threads at once; the functions it returns
// are libcurl's, with libcurl's rules (one easy handle per thread at a time).
#ifndef ELASTICJOB_HTTP_CURL_API_H_
#define ELASTICJOB_HTTP_CURL_API_H_

#include <curl/curl.h>

#include "elasticjob/status.h"

namespace elasticjob::infra {

// X(name): the function curl_<name>, a field <name> of CurlApi.
// clang-format off
#define ELASTICJOB_CURL_FUNCTIONS(X) \
  X(global_init) X(easy_init) X(easy_cleanup) X(easy_setopt) X(easy_perform) \
  X(easy_getinfo) X(easy_strerror) X(slist_append) X(slist_free_all) X(multi_init) \
  X(multi_cleanup) X(multi_add_handle) X(multi_remove_handle) X(multi_perform) \
  X(multi_info_read) X(multi_poll) X(multi_wakeup)
// clang-format on

struct CurlApi {
#define ELASTICJOB_CURL_FIELD(name) decltype(&curl_##name) name = nullptr;
  ELASTICJOB_CURL_FUNCTIONS(ELASTICJOB_CURL_FIELD)
#undef ELASTICJOB_CURL_FIELD
};

// libcurl's functions, the library loaded and curl_global_init(CURL_GLOBAL_DEFAULT) done by
// the first call (once for the process, under std::call_once; every later call returns the
// same functions or the same error). FAILED_PRECONDITION naming libcurl.so.4 when it cannot
// be loaded (not installed: Debian's libcurl4), lacks one of these functions (older than
// 7.85) or its global initialisation fails.
Result<const CurlApi*> Curl();

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_HTTP_CURL_API_H_

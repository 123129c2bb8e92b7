#include "http/curl_api.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>

#include "infra/shared_library.h"

namespace elasticjob::infra {
namespace {

constexpr const char* kSoname = "libcurl.so.4";

Result<const CurlApi*> Load() {
  auto library =
      LoadSharedLibrary(kSoname, "HTTP jobs and the DINGTALK, WECHAT and EMAIL error handlers");
  if (!library.ok()) return library.status();
  static CurlApi api;  // written here only, under Curl's call_once
#define ELASTICJOB_CURL_RESOLVE(name)                                                    \
  if (Status s = ResolveFunction(*library, kSoname, "curl_" #name, api.name); !s.ok()) { \
    return s;                                                                            \
  }
  ELASTICJOB_CURL_FUNCTIONS(ELASTICJOB_CURL_RESOLVE)
#undef ELASTICJOB_CURL_RESOLVE
  const CURLcode rc = api.global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    return FailedPrecondition(
        fmt::format("{}: curl_global_init failed: {}", kSoname, api.easy_strerror(rc)));
  }
  return &api;
}

}  // namespace

Result<const CurlApi*> Curl() {
  static std::once_flag once;
  static std::optional<Result<const CurlApi*>> loaded;  // set once, under `once`
  std::call_once(once, [] { loaded.emplace(Load()); });
  return *loaded;
}

}  // namespace elasticjob::infra

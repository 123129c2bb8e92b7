#include "console/embedded_assets.h"

#include <algorithm>
#include <string_view>

namespace elasticjob::console {

const EmbeddedAsset* FindAsset(std::string_view path) {
  auto assets = EmbeddedAssets();
  auto it = std::lower_bound(assets.begin(), assets.end(), path,
                             [](const EmbeddedAsset& a, std::string_view p) { return a.path < p; });
  if (it == assets.end() || it->path != path) return nullptr;
  return &*it;
}

const char* ContentTypeFor(std::string_view path) {
  struct Type {
    std::string_view ext;
    const char* type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".woff2", "font/woff2"},
      {".map", "application/json"},
  };
  for (const Type& t : kTypes) {
    if (path.ends_with(t.ext)) return t.type;
  }
  return "application/octet-stream";
}

}  // namespace elasticjob::console

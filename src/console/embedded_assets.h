// The web console's files (console/web/ in the source tree), embedded into the binary at build
// time by cmake/EmbedAssets.cmake: nothing to deploy beside the executable.
//
// Thread safety: immutable data.
#ifndef ELASTICJOB_CONSOLE_EMBEDDED_ASSETS_H_
#define ELASTICJOB_CONSOLE_EMBEDDED_ASSETS_H_

#include <cstddef>
#include <span>
#include <string_view>

namespace elasticjob::console {

struct EmbeddedAsset {
  const char* path;  // relative to console/web, '/' separated: "index.html", "assets/app.js"
  const unsigned char* data;
  size_t size;
};

// Every embedded file, sorted by path (generated).
std::span<const EmbeddedAsset> EmbeddedAssets();

// The file at `path` (as EmbeddedAsset::path), or null. Only embedded paths match: "..",
// absolute paths and anything else are simply not found.
const EmbeddedAsset* FindAsset(std::string_view path);

// The Content-Type for a file name by its extension ("application/octet-stream" if unknown).
const char* ContentTypeFor(std::string_view path);

}  // namespace elasticjob::console

#endif  // ELASTICJOB_CONSOLE_EMBEDDED_ASSETS_H_

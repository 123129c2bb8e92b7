// The files embedded from console/web: looked up by exact path only.
#include "console/embedded_assets.h"

#include <gtest/gtest.h>

#include <string_view>

namespace elasticjob::console {
namespace {

TEST(EmbeddedAssetsTest, HoldsTheIndexPageSortedByPath) {
  const EmbeddedAsset* index = FindAsset("index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_NE(std::string_view(reinterpret_cast<const char*>(index->data), index->size).find("<html"),
            std::string_view::npos);
  auto assets = EmbeddedAssets();
  for (size_t i = 1; i < assets.size(); ++i) {
    EXPECT_LT(std::string_view(assets[i - 1].path), std::string_view(assets[i].path));
  }
}

TEST(EmbeddedAssetsTest, FindsNothingOutsideTheTable) {
  for (const char* path : {"", "/index.html", "../index.html", "./index.html",
                           "assets/../index.html", "index.htm", "INDEX.HTML"}) {
    EXPECT_EQ(FindAsset(path), nullptr) << path;
  }
}

TEST(EmbeddedAssetsTest, TypesFilesByExtension) {
  EXPECT_STREQ(ContentTypeFor("index.html"), "text/html; charset=utf-8");
  EXPECT_STREQ(ContentTypeFor("assets/app.js"), "text/javascript; charset=utf-8");
  EXPECT_STREQ(ContentTypeFor("assets/app.css"), "text/css; charset=utf-8");
  EXPECT_STREQ(ContentTypeFor("assets/logo.svg"), "image/svg+xml");
  EXPECT_STREQ(ContentTypeFor("assets/blob"), "application/octet-stream");
}

}  // namespace
}  // namespace elasticjob::console

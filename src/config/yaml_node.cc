#include "config/yaml_node.h"

#include <fmt/format.h>

#include "infra/printable.h"

namespace elasticjob::config {

std::string DescribeYamlNode(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  if (!n.IsScalar()) return "nothing";
  return "'" + infra::Printable(n.Scalar(), 60) + "'";
}

YAML::Node YamlChild(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) return YAML::Node();
  const YAML::Node child = node[key];
  return child.IsDefined() ? child : YAML::Node();
}

Status YamlTypeError(std::string_view key, std::string_view expected, const YAML::Node& n) {
  return InvalidArgument(
      fmt::format("{}: expected {}, got {}", key, expected, DescribeYamlNode(n)));
}

Status ReadYamlString(const YAML::Node& n, std::string_view key, std::string* out) {
  if (!n.IsScalar()) return YamlTypeError(key, "a string", n);
  *out = YamlScalarText(n);
  return Status::Ok();
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlongs, no
// surrogates, at most U+10FFFF), or 0.
size_t Utf8SequenceAt(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  size_t len = b >= 0xC2 && b <= 0xDF   ? 2
               : b >= 0xE0 && b <= 0xEF ? 3
               : b >= 0xF0 && b <= 0xF4 ? 4
                                        : 0;
  if (len == 0 || i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  const unsigned char b1 = byte(i + 1);
  if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 > 0x9F) || (b == 0xF0 && b1 < 0x90) ||
      (b == 0xF4 && b1 > 0x8F)) {
    return 0;
  }
  return len;
}

}  // namespace

std::string YamlScalarText(const YAML::Node& n) {
  const std::string& text = n.Scalar();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (size_t len = Utf8SequenceAt(text, i); len > 0) {
      out.append(text, i, len);
      i += len;
      continue;
    }
    // yaml-cpp decodes the escapes \N and \_ to the single bytes 85 and A0 instead of
    // U+0085 and U+00A0 (which YamlWriter writes them as, like SnakeYAML).
    const auto b = static_cast<unsigned char>(text[i++]);
    out += b == 0x85 ? "\xC2\x85" : b == 0xA0 ? "\xC2\xA0" : "\xEF\xBF\xBD";
  }
  return out;
}

Result<YAML::Node> LoadYaml(std::string_view text) {
  try {
    return YAML::Load(std::string(text));
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("not valid YAML: {}", infra::Printable(e.what(), 200)));
  }
}

}  // namespace elasticjob::config

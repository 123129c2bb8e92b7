#include "config/yaml_node.h"

#include <fmt/format.h>

namespace elasticjob::config {

std::string Printable(std::string_view text, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return text.size() > max_chars ? out + "..." : out;
}

std::string DescribeYamlNode(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  if (!n.IsScalar()) return "nothing";
  return "'" + Printable(n.Scalar(), 60) + "'";
}

Status YamlTypeError(std::string_view key, std::string_view expected, const YAML::Node& n) {
  return InvalidArgument(
      fmt::format("{}: expected {}, got {}", key, expected, DescribeYamlNode(n)));
}

Status ReadYamlString(const YAML::Node& n, std::string_view key, std::string* out) {
  if (!n.IsScalar()) return YamlTypeError(key, "a string", n);
  *out = n.Scalar();
  return Status::Ok();
}

Result<YAML::Node> LoadYaml(std::string_view text) {
  try {
    return YAML::Load(std::string(text));
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("not valid YAML: {}", Printable(e.what(), 200)));
  }
}

}  // namespace elasticjob::config

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
  *out = n.Scalar();
  return Status::Ok();
}

Result<YAML::Node> LoadYaml(std::string_view text) {
  try {
    return YAML::Load(std::string(text));
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("not valid YAML: {}", infra::Printable(e.what(), 200)));
  }
}

}  // namespace elasticjob::config

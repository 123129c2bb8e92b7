// Reading yaml-cpp nodes without its exceptions: type checks that name the key and the value
// found, for every YAML the project reads (the `/config` node, `elasticjob run` files).
//
// Thread safety: stateless functions.
#ifndef ELASTICJOB_CONFIG_YAML_NODE_H_
#define ELASTICJOB_CONFIG_YAML_NODE_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob::config {

// `'text'` for a scalar (control characters escaped as \xNN, cut to 60 characters with
// "..."), or "a list", "a map", "nothing".
std::string DescribeYamlNode(const YAML::Node& n);

// `node[key]` when `node` is a map that has `key`, else a null node. Unlike yaml-cpp's own
// subscript, never throws (a scalar's subscript throws BadSubscript) and never returns an
// invalid node (whose IsMap(), IsScalar()... throw InvalidNode).
YAML::Node YamlChild(const YAML::Node& node, const char* key);

// INVALID_ARGUMENT "`key`: expected `expected`, got <DescribeYamlNode(n)>".
Status YamlTypeError(std::string_view key, std::string_view expected, const YAML::Node& n);

// The text of scalar `n` as UTF-8. yaml-cpp returns the escapes \N and \_ as the single
// bytes 85 and A0: they read as U+0085 and U+00A0, and any other byte that is not UTF-8 as
// U+FFFD (as Java decodes it), so the text can be written as YAML and read back the same.
// REQUIRES: n.IsScalar().
std::string YamlScalarText(const YAML::Node& n);

// YamlScalarText of scalar `n` into `*out`; YamlTypeError(key, "a string", n) for a list, map or
// nothing.
Status ReadYamlString(const YAML::Node& n, std::string_view key, std::string* out);

// Parses `text` as one YAML document. INVALID_ARGUMENT "not valid YAML: ..." on a syntax
// error (or any other exception from the parser).
Result<YAML::Node> LoadYaml(std::string_view text);

}  // namespace elasticjob::config

#endif  // ELASTICJOB_CONFIG_YAML_NODE_H_

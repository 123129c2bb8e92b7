// YamlWriter: writes block-style YAML the way SnakeYAML 1.33's Emitter does with default
// DumperOptions, so that the `/{job}/config` text we write is byte-for-byte what ElasticJob
// writes for the same values. Hand-written because a general emitter (yaml-cpp) chooses
// different quoting and folding; the rules here are SnakeYAML's: scalar analysis, implicit
// type resolution (a string that would read back as a bool, int, float, null or timestamp is
// quoted), plain and single-quoted folding at 80 columns, literal blocks for multi-line text.
// tests/integration/config compares it with SnakeYAML itself.
//
// Thread safety: not thread-safe; one writer per document.
#ifndef ELASTICJOB_CONFIG_YAML_SCALAR_H_
#define ELASTICJOB_CONFIG_YAML_SCALAR_H_

#include <string>
#include <string_view>
#include <vector>

namespace elasticjob::config {

class YamlWriter {
 public:
  // `key: value` for a string at mapping depth `depth` (0 = top level).
  void StringEntry(int depth, std::string_view key, std::string_view value);
  // `key: value` for a value written as is (ints, booleans).
  void RawEntry(int depth, std::string_view key, std::string_view value);
  // `key:` followed by `- item` lines (an indentless block sequence of strings).
  void StringList(int depth, std::string_view key, const std::vector<std::string>& items);
  // `key:` alone; nested entries follow at depth + 1.
  void MapStart(int depth, std::string_view key);
  // Appends pre-formatted text (must end with a newline).
  void Verbatim(std::string_view text);

  const std::string& str() const { return out_; }

 private:
  void Key(int depth, std::string_view key);
  void Scalar(std::u16string_view text, int indent, bool simple_key);
  void WritePlain(std::u16string_view text, int indent, bool split);
  void WriteSingleQuoted(std::u16string_view text, int indent, bool split);
  void WriteDoubleQuoted(std::u16string_view text);
  void WriteLiteral(std::u16string_view text, int indent);
  void Write(std::u16string_view text);
  void Write(std::string_view ascii);
  void LineBreak();
  void WriteIndent(int indent);

  std::string out_;
  int column_ = 0;
  bool whitespace_ = true;
  bool indention_ = true;
};

// Whether SnakeYAML's resolver reads `s` as something other than a string (bool, int,
// float, null, timestamp, merge key...), which forces quoting.
bool ResolvesToNonString(std::string_view s);

}  // namespace elasticjob::config

#endif  // ELASTICJOB_CONFIG_YAML_SCALAR_H_

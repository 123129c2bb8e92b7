#include "config/yaml_scalar.h"

#include <fmt/format.h>

#include <regex>

#include "infra/java_string.h"

namespace elasticjob::config {
namespace {

constexpr int kBestWidth = 80;
constexpr int kBestIndent = 2;

bool IsLineBreak(char32_t c) { return c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029; }

// SnakeYAML StreamReader.isPrintable.
bool IsPrintable(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
         (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

struct Analysis {
  bool empty = false;
  bool multiline = false;
  bool allow_block_plain = true;
  bool allow_single_quoted = true;
  bool allow_block = true;
  bool printable = true;
};

std::vector<char32_t> CodePoints(std::u16string_view s) {
  std::vector<char32_t> cps;
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
        s[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    }
    cps.push_back(c);
  }
  return cps;
}

// SnakeYAML Emitter.analyzeScalar (flow-plain bits omitted: we only write block context).
Analysis Analyze(std::u16string_view text) {
  Analysis a;
  if (text.empty()) {
    a.empty = true;
    a.allow_block = false;
    return a;
  }
  std::vector<char32_t> cps = CodePoints(text);
  bool block_indicators = false, line_breaks = false, special = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false;
  bool break_space = false, space_break = false;
  std::u16string_view sv = text;
  if (sv.substr(0, 3) == u"---" || sv.substr(0, 3) == u"...") block_indicators = true;
  auto is_blank = [](char32_t c) { return c == 0 || c == ' ' || c == '\t'; };
  bool preceded_by_ws = true;
  bool followed_by_ws = cps.size() == 1 || is_blank(cps[1]) || IsLineBreak(cps[1]);
  bool previous_space = false, previous_break = false;
  for (size_t i = 0; i < cps.size(); ++i) {
    char32_t c = cps[i];
    if (i == 0) {
      if (std::u32string_view(U"#,[]{}&*!|>'\"%@`").find(c) != std::u32string_view::npos) {
        block_indicators = true;
      }
      if ((c == '?' || c == ':') && followed_by_ws) block_indicators = true;
      if (c == '-' && followed_by_ws) block_indicators = true;
    } else {
      if (c == ':' && followed_by_ws) block_indicators = true;
      if (c == '#' && preceded_by_ws) block_indicators = true;
    }
    bool is_break = IsLineBreak(c);
    if (is_break) line_breaks = true;
    if (!(c == '\n' || (c >= 0x20 && c <= 0x7E))) {
      bool unicode = c == 0x85 || (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
                     (c >= 0x10000 && c <= 0x10FFFF);
      if (!unicode) special = true;  // allowUnicode is on by default
    }
    if (!IsPrintable(c)) a.printable = false;
    if (c == ' ') {
      if (i == 0) leading_space = true;
      if (i == cps.size() - 1) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (is_break) {
      if (i == 0) leading_break = true;
      if (i == cps.size() - 1) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = false;
      previous_break = false;
    }
    preceded_by_ws = is_blank(c) || is_break;
    followed_by_ws = true;
    if (i + 2 < cps.size()) followed_by_ws = is_blank(cps[i + 2]) || is_break;
  }
  if (leading_space || leading_break || trailing_space || trailing_break) {
    a.allow_block_plain = false;
  }
  if (trailing_space) a.allow_block = false;
  if (break_space) a.allow_block_plain = a.allow_single_quoted = false;
  if (space_break || special) {
    a.allow_block_plain = a.allow_single_quoted = a.allow_block = false;
  }
  if (block_indicators) a.allow_block_plain = false;
  a.multiline = line_breaks;
  return a;
}

}  // namespace

bool ResolvesToNonString(std::string_view s) {
  // SnakeYAML 1.33 Resolver's implicit resolvers (YAML 1.1 core types).
  static const std::regex kBool(
      "yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF");
  static const std::regex kInt(
      "[-+]?0b_*[0-1]+[0-1_]*|[-+]?0_*[0-7]+[0-7_]*|[-+]?(?:0|[1-9][0-9_]*)|"
      "[-+]?0x_*[0-9a-fA-F]+[0-9a-fA-F_]*|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+");
  static const std::regex kFloat(
      "([-+]?(\\.[0-9]+|[0-9_]+(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?|"
      "[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN))");
  static const std::regex kNull("~|null|Null|NULL| ");
  static const std::regex kTimestamp(
      "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
      "(?:[Tt]|[ \\t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\\.[0-9]*)?"
      "(?:[ \\t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?");
  if (s.empty()) return true;
  const char c = s[0];
  std::string str(s);
  auto first_in = [c](std::string_view set) { return set.find(c) != std::string_view::npos; };
  if (first_in("yYnNtTfFoO") && std::regex_match(str, kBool)) return true;
  if (first_in("-+0123456789") && std::regex_match(str, kInt)) return true;
  if (first_in("-+0123456789.") && std::regex_match(str, kFloat)) return true;
  if (c == '<' && str == "<<") return true;
  if (first_in("~nN") && std::regex_match(str, kNull)) return true;
  if (first_in("0123456789") && std::regex_match(str, kTimestamp)) return true;
  if (first_in("!&*") && (str == "!" || str == "&" || str == "*")) return true;
  return false;
}

void YamlWriter::Write(std::u16string_view text) {
  out_ += infra::Utf16ToUtf8(text);
  column_ += static_cast<int>(text.size());
}

void YamlWriter::Write(std::string_view ascii) {
  out_ += ascii;
  column_ += static_cast<int>(ascii.size());
}

void YamlWriter::LineBreak() {
  out_ += '\n';
  whitespace_ = true;
  indention_ = true;
  column_ = 0;
}

void YamlWriter::WriteIndent(int indent) {
  if (!indention_ || column_ > indent || (column_ == indent && !whitespace_)) LineBreak();
  if (indent > column_) {
    whitespace_ = true;
    out_.append(static_cast<size_t>(indent - column_), ' ');
    column_ = indent;
  }
}

void YamlWriter::Key(int depth, std::string_view key) {
  if (column_ != 0) LineBreak();
  WriteIndent(depth * kBestIndent);
  indention_ = true;
  whitespace_ = true;
  std::u16string k = infra::Utf8ToUtf16(key);
  Scalar(k, depth * kBestIndent + kBestIndent, /*simple_key=*/true);
  Write(std::string_view(":"));
  whitespace_ = false;
  indention_ = false;
}

void YamlWriter::Scalar(std::u16string_view text, int indent, bool simple_key) {
  Analysis a = Analyze(text);
  std::string utf8 = infra::Utf16ToUtf8(text);
  if (!a.printable) {  // SnakeYAML would write !!binary; a string is more useful to readers
    WriteDoubleQuoted(text);
    return;
  }
  if (a.multiline && !simple_key) {  // SnakeYAML asks for a literal block
    if (a.allow_block && text.find(u'\x85') == std::u16string_view::npos &&
        text.find(u'\u2028') == std::u16string_view::npos &&
        text.find(u'\u2029') == std::u16string_view::npos) {
      WriteLiteral(text, indent);
    } else {
      WriteDoubleQuoted(text);
    }
    return;
  }
  if (!ResolvesToNonString(utf8) && !(simple_key && (a.empty || a.multiline)) &&
      a.allow_block_plain) {
    WritePlain(text, indent, !simple_key);
    return;
  }
  if (a.allow_single_quoted && !(simple_key && a.multiline)) {
    WriteSingleQuoted(text, indent, !simple_key);
    return;
  }
  WriteDoubleQuoted(text);
}

void YamlWriter::WritePlain(std::u16string_view text, int indent, bool split) {
  if (text.empty()) return;
  if (!whitespace_) Write(std::string_view(" "));
  whitespace_ = false;
  indention_ = false;
  bool spaces = false;
  size_t start = 0;
  for (size_t end = 0; end <= text.size(); ++end) {
    char16_t ch = end < text.size() ? text[end] : 0;
    if (spaces) {
      if (ch != ' ') {
        if (start + 1 == end && column_ > kBestWidth && split) {
          WriteIndent(indent);
          whitespace_ = false;
          indention_ = false;
        } else {
          Write(text.substr(start, end - start));
        }
        start = end;
      }
    } else if (ch == 0 || ch == ' ') {
      Write(text.substr(start, end - start));
      start = end;
    }
    if (ch != 0) spaces = ch == ' ';
  }
}

void YamlWriter::WriteSingleQuoted(std::u16string_view text, int indent, bool split) {
  if (!whitespace_) Write(std::string_view(" "));
  Write(std::string_view("'"));
  whitespace_ = false;
  indention_ = false;
  bool spaces = false;
  size_t start = 0;
  for (size_t end = 0; end <= text.size(); ++end) {
    char16_t ch = end < text.size() ? text[end] : 0;
    if (spaces) {
      if (ch == 0 || ch != ' ') {
        if (start + 1 == end && column_ > kBestWidth && split && start != 0 && end != text.size()) {
          WriteIndent(indent);
        } else {
          Write(text.substr(start, end - start));
        }
        start = end;
      }
    } else if (ch == 0 || ch == ' ' || ch == '\'') {
      if (start < end) {
        Write(text.substr(start, end - start));
        start = end;
      }
    }
    if (ch == '\'') {
      Write(std::string_view("''"));
      start = end + 1;
    }
    if (ch != 0) spaces = ch == ' ';
  }
  Write(std::string_view("'"));
}

void YamlWriter::WriteDoubleQuoted(std::u16string_view text) {
  if (!whitespace_) Write(std::string_view(" "));
  Write(std::string_view("\""));
  for (size_t i = 0; i < text.size(); ++i) {
    char16_t ch = text[i];
    switch (ch) {
      case 0:
        Write(std::string_view("\\0"));
        continue;
      case 0x07:
        Write(std::string_view("\\a"));
        continue;
      case 0x08:
        Write(std::string_view("\\b"));
        continue;
      case 0x09:
        Write(std::string_view("\\t"));
        continue;
      case 0x0A:
        Write(std::string_view("\\n"));
        continue;
      case 0x0B:
        Write(std::string_view("\\v"));
        continue;
      case 0x0C:
        Write(std::string_view("\\f"));
        continue;
      case 0x0D:
        Write(std::string_view("\\r"));
        continue;
      case 0x1B:
        Write(std::string_view("\\e"));
        continue;
      case '"':
        Write(std::string_view("\\\""));
        continue;
      case '\\':
        Write(std::string_view("\\\\"));
        continue;
      case 0x85:
        Write(std::string_view("\\N"));
        continue;
      case 0xA0:
        Write(std::string_view("\\_"));
        continue;
      case 0x2028:
        Write(std::string_view("\\L"));
        continue;
      case 0x2029:
        Write(std::string_view("\\P"));
        continue;
      default:
        break;
    }
    bool surrogate_pair = ch >= 0xD800 && ch <= 0xDBFF && i + 1 < text.size() &&
                          text[i + 1] >= 0xDC00 && text[i + 1] <= 0xDFFF;
    if (surrogate_pair) {
      Write(text.substr(i, 2));
      ++i;
    } else if ((ch >= 0x20 && ch <= 0x7E) || (ch >= 0xA0 && ch <= 0xD7FF) ||
               (ch >= 0xE000 && ch <= 0xFFFD && ch != 0xFEFF)) {
      Write(text.substr(i, 1));
    } else if (ch <= 0xFF) {
      Write(fmt::format("\\x{:02X}", static_cast<unsigned>(ch)));
    } else {
      Write(fmt::format("\\u{:04X}", static_cast<unsigned>(ch)));
    }
  }
  Write(std::string_view("\""));
}

void YamlWriter::WriteLiteral(std::u16string_view text, int indent) {
  std::string hints;
  if (text[0] == ' ' || text[0] == '\n') hints += std::to_string(kBestIndent);
  if (text.back() != '\n') {
    hints += "-";
  } else if (text.size() == 1 || text[text.size() - 2] == '\n') {
    hints += "+";
  }
  if (!whitespace_) Write(std::string_view(" "));
  Write("|" + hints);
  LineBreak();
  bool breaks = true;
  size_t start = 0;
  for (size_t end = 0; end <= text.size(); ++end) {
    char16_t ch = end < text.size() ? text[end] : 0;
    if (breaks) {
      if (ch == 0 || ch != '\n') {
        for (size_t k = start; k < end; ++k) LineBreak();
        if (ch != 0) WriteIndent(indent);
        start = end;
      }
    } else if (ch == 0 || ch == '\n') {
      Write(text.substr(start, end - start));
      if (ch == 0) LineBreak();
      start = end;
    }
    if (ch != 0) breaks = ch == '\n';
  }
}

void YamlWriter::StringEntry(int depth, std::string_view key, std::string_view value) {
  std::u16string k = infra::Utf8ToUtf16(key);
  Analysis a = Analyze(k);
  if (a.empty || a.multiline || k.size() >= 128) {
    // Not a simple key (SnakeYAML checkSimpleKey): `? key` then `: value`.
    if (column_ != 0) LineBreak();
    WriteIndent(depth * kBestIndent);
    Write(std::string_view("?"));
    whitespace_ = false;
    Scalar(k, depth * kBestIndent + kBestIndent, false);
    WriteIndent(depth * kBestIndent);
    Write(std::string_view(":"));
    whitespace_ = false;
    indention_ = false;
  } else {
    Key(depth, key);
  }
  Scalar(infra::Utf8ToUtf16(value), depth * kBestIndent + kBestIndent, false);
  if (column_ != 0) LineBreak();
}

void YamlWriter::RawEntry(int depth, std::string_view key, std::string_view value) {
  Key(depth, key);
  Write(" ");
  Write(value);
  LineBreak();
}

void YamlWriter::StringList(int depth, std::string_view key,
                            const std::vector<std::string>& items) {
  Key(depth, key);
  LineBreak();
  for (const std::string& item : items) {
    WriteIndent(depth * kBestIndent);
    Write(std::string_view("-"));
    whitespace_ = false;
    indention_ = true;
    Scalar(infra::Utf8ToUtf16(item), depth * kBestIndent + kBestIndent, false);
    if (column_ != 0) LineBreak();
  }
}

void YamlWriter::MapStart(int depth, std::string_view key) {
  Key(depth, key);
  LineBreak();
}

void YamlWriter::Verbatim(std::string_view text) {
  out_ += text;
  column_ = 0;
  whitespace_ = true;
  indention_ = true;
}

}  // namespace elasticjob::config

#include "api/gson_writer.h"

#include <fmt/format.h>

namespace elasticjob::api {

void AppendGsonString(std::string& out, std::string_view value) {
  out += '"';
  for (size_t i = 0; i < value.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '<':
        out += "\\u003c";
        continue;
      case '>':
        out += "\\u003e";
        continue;
      case '&':
        out += "\\u0026";
        continue;
      case '=':
        out += "\\u003d";
        continue;
      case '\'':
        out += "\\u0027";
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8 / E2 80 A9) are escaped; other characters pass through.
    if (c == 0xE2 && i + 2 < value.size() && static_cast<unsigned char>(value[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(value[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(value[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(value[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
      continue;
    }
    out += static_cast<char>(c);
  }
  out += '"';
}

}  // namespace elasticjob::api

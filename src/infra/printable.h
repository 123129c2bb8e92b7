// Printable: a value quoted in a one-line error or log line stays one printable line.
//
// Thread safety: pure function.
#ifndef ELASTICJOB_INFRA_PRINTABLE_H_
#define ELASTICJOB_INFRA_PRINTABLE_H_

#include <string>
#include <string_view>

namespace elasticjob::infra {

// `text` with control characters (below 0x20, and 0x7F) escaped as \xNN, cut to
// `max_chars` characters followed by "..." when longer. Other bytes pass unchanged.
inline std::string Printable(std::string_view text, size_t max_chars) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return text.size() > max_chars ? out + "..." : out;
}

// A one-line error message: `message` made Printable, cut at 1000 characters.
inline std::string OneLine(std::string_view message) { return Printable(message, 1000); }

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_PRINTABLE_H_

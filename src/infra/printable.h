// Printable: a value quoted in a one-line error or log line stays one printable line.
//
// Thread safety: pure function.
#ifndef ELASTICJOB_INFRA_PRINTABLE_H_
#define ELASTICJOB_INFRA_PRINTABLE_H_

#include <string>
#include <string_view>

namespace elasticjob::infra {

// The length of the well-formed UTF-8 sequence of two to four bytes at the start of `s`,
// or 0 (a lone continuation byte, an overlong form, a surrogate, a cut sequence).
inline size_t Utf8SequenceLength(std::string_view s) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

// `text` with control characters (below 0x20, and 0x7F) and bytes that are not well-formed
// UTF-8 (a binary file's) escaped as \xNN, cut to `max_chars` bytes of input followed by
// "..." when longer. Printable ASCII and well-formed UTF-8 pass unchanged.
inline std::string Printable(std::string_view text, size_t max_chars) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const std::string_view shown = text.substr(0, max_chars);
  std::string out;
  for (size_t i = 0; i < shown.size();) {
    auto c = static_cast<unsigned char>(shown[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (size_t n = Utf8SequenceLength(shown.substr(i)); n > 0) {
        out.append(shown.substr(i, n));
        i += n;
        continue;
      }
    }
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
    ++i;
  }
  return text.size() > max_chars ? out + "..." : out;
}

// A one-line error message: `message` made Printable, cut at 1000 characters.
inline std::string OneLine(std::string_view message) { return Printable(message, 1000); }

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_PRINTABLE_H_

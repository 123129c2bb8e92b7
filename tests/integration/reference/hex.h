#ifndef ELASTICJOB_TESTS_INTEGRATION_REFERENCE_HEX_H_
#define ELASTICJOB_TESTS_INTEGRATION_REFERENCE_HEX_H_

#include <string>
#include <string_view>

namespace elasticjob::testing {

inline std::string Hex(std::string_view s) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

inline std::string Unhex(std::string_view s) {
  std::string out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(s.substr(i, 2)), nullptr, 16));
  }
  return out;
}

}  // namespace elasticjob::testing

#endif  // ELASTICJOB_TESTS_INTEGRATION_REFERENCE_HEX_H_

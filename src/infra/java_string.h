// Java string semantics that decide wire-visible results: String.hashCode over UTF-16 code
// units (sharding strategies), and UTF-8 <-> UTF-16 conversion for it.
//
// Thread safety: pure functions.
#ifndef ELASTICJOB_INFRA_JAVA_STRING_H_
#define ELASTICJOB_INFRA_JAVA_STRING_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace elasticjob::infra {

// Java's String.hashCode of the string whose UTF-8 encoding is `utf8`: h = 31*h + c over
// its UTF-16 code units (a character outside the BMP counts as its two surrogates), with
// 32-bit two's-complement wrap-around. Invalid UTF-8 bytes count as U+FFFD, as Java's
// decoder replaces them.
int32_t JavaStringHashCode(std::string_view utf8);

// Decodes UTF-8 into UTF-16 code units, replacing each invalid sequence with U+FFFD.
std::u16string Utf8ToUtf16(std::string_view utf8);

// Encodes UTF-16 code units as UTF-8; a lone surrogate becomes U+FFFD.
std::string Utf16ToUtf8(std::u16string_view utf16);

// Java's String.compareTo(a, b) < 0: order by UTF-16 code units, as ElasticJob sorts
// registry children. Differs from byte order only for characters above U+E000 versus
// characters outside the BMP.
bool JavaStringLess(std::string_view a, std::string_view b);

// Java's Math.abs(h) % n for the sharding strategies, defined where Java's is not: for
// h == INT32_MIN, Java's abs stays negative and the rotation throws; we use 2^31 % n.
// REQUIRES: n > 0.
int JavaAbsMod(int32_t h, int n);

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_JAVA_STRING_H_

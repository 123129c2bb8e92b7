// What the command line says about a word it does not know: the closest known word, for
// "unknown command 'jobs'; did you mean 'job'?".
//
// Thread safety: pure functions.
#ifndef ELASTICJOB_CLI_SUGGEST_H_
#define ELASTICJOB_CLI_SUGGEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace elasticjob::cli {

// The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of
// two adjacent characters count one each (optimal string alignment).
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, when it is close enough to be what was meant: at most
// one edit for words of up to four characters, two for longer ones, or `word` a prefix of
// it or it a prefix of `word` ("jobs" -> "job"). Ties go to the first candidate given.
// nullopt when none is close.
std::optional<std::string> ClosestWord(std::string_view word,
                                       const std::vector<std::string>& candidates);

}  // namespace elasticjob::cli

#endif  // ELASTICJOB_CLI_SUGGEST_H_

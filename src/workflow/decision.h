// Decision nodes (docs/workflows.md "Decision nodes"): a Lua 5.4 expression over the
// workflow context, evaluated in a sandbox: a fresh state per evaluation with only the base
// functions that touch nothing outside it (no io, os, load, loadfile, dofile, require,
// collectgarbage, print), string, math, table and utf8; at most kDecisionInstructions VM
// instructions and kDecisionMemory bytes. `ctx` is the context as a Lua table (JSON objects
// and arrays as tables, null as nil).
//
// Thread safety: pure; safe to call from any thread.
#ifndef ELASTICJOB_WORKFLOW_DECISION_H_
#define ELASTICJOB_WORKFLOW_DECISION_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob::workflow {

inline constexpr long kDecisionInstructions = 1'000'000;
inline constexpr size_t kDecisionMemory = 16 * 1024 * 1024;

// The value of `expression` as text: "true"/"false" for a boolean, the number or string
// as Lua prints it, "nil" for nil. INVALID_ARGUMENT with Lua's message when it does not
// compile, fails at run time, or passes a bound.
Result<std::string> EvaluateDecision(std::string_view expression, std::string_view context_json);

}  // namespace elasticjob::workflow

#endif  // ELASTICJOB_WORKFLOW_DECISION_H_

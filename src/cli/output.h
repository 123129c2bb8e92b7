// What the `elasticjob` operation commands print: a Table for people (aligned columns, one
// header line) or, with --json, the same rows as JSON for scripts. Shared by every command
// that lists things (job, server, trace), so they all look and parse alike.
//
//   cli::Table t({"JOB", "STATUS", "CRON"});
//   t.AddRow({"orderSync", "OK", "0/5 * * * * ?"});
//   t.Print(std::cout);      // JOB        STATUS  CRON
//                            // orderSync  OK      0/5 * * * * ?
//   PrintJson(std::cout, t.ToJson());  // [{"job":"orderSync",...}] (keys lower-cased)
//
// Print shows cells as given, except that control characters (a newline in a value read
// from the registry) are escaped so a row stays one line; ToJson keeps them as they are.
// A column declared kNumber is a JSON number (null when its cell is empty), kBool a JSON
// boolean ("yes" is true): every --json output gives numbers as numbers
// (docs/operations.md has the schemas).
//
// Thread safety: plain value type.
#ifndef ELASTICJOB_CLI_OUTPUT_H_
#define ELASTICJOB_CLI_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace elasticjob::cli {

class Table {
 public:
  // What a column's cells are in ToJson.
  enum class Kind { kText, kNumber, kBool };

  // `kinds`: one per header, or empty for every column kText.
  explicit Table(std::vector<std::string> headers, std::vector<Kind> kinds = {});

  // REQUIRES: as many cells as headers.
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  size_t size() const { return rows_.size(); }

  // Columns padded to their widest cell (counted in UTF-8 code points), two spaces apart,
  // the last column unpadded.
  void Print(std::ostream& out) const;
  // One object per row, keyed by the headers lower-cased ("JOB" -> "job"), each value as its
  // column's Kind says (a kNumber cell that is not an integer stays a string).
  nlohmann::json ToJson() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Kind> kinds_;
  std::vector<std::vector<std::string>> rows_;
};

// `value` on one line, UTF-8 kept as is (invalid bytes replaced), then a newline.
void PrintJson(std::ostream& out, const nlohmann::json& value);

}  // namespace elasticjob::cli

#endif  // ELASTICJOB_CLI_OUTPUT_H_

#include "cli/output.h"

#include <algorithm>
#include <cassert>
#include <cctype>

#include "infra/printable.h"

namespace elasticjob::cli {
namespace {

// UTF-8 code points in `s` (continuation bytes not counted), for column widths.
size_t Width(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::AddRow(std::vector<std::string> cells) {
  assert(cells.size() == headers_.size());
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::Print(std::ostream& out) const {
  std::vector<std::vector<std::string>> shown;  // one line per row (control chars escaped)
  for (const auto& row : rows_) {
    auto& cells = shown.emplace_back();
    for (const auto& cell : row) cells.push_back(infra::Printable(cell, std::string::npos));
  }
  std::vector<size_t> widths;
  for (const auto& h : headers_) widths.push_back(Width(h));
  for (const auto& row : shown) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t i = 0; i < cells.size(); ++i) {
      text += cells[i];
      if (i + 1 < cells.size()) text.append(widths[i] - Width(cells[i]) + 2, ' ');
    }
    out << text << '\n';
  };
  line(headers_);
  for (const auto& row : shown) line(row);
}

nlohmann::json Table::ToJson() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : rows_) {
    nlohmann::json obj = nlohmann::json::object();
    for (size_t i = 0; i < row.size(); ++i) obj[Lower(headers_[i])] = row[i];
    rows.push_back(std::move(obj));
  }
  return rows;
}

void PrintJson(std::ostream& out, const nlohmann::json& value) {
  out << value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace)
      << '\n';
}

}  // namespace elasticjob::cli

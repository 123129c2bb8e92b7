#include "cli/output.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <charconv>

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

// `cell` as a JSON value of `kind`.
nlohmann::json Typed(const std::string& cell, Table::Kind kind) {
  switch (kind) {
    case Table::Kind::kNumber: {
      if (cell.empty()) return nullptr;
      int64_t n = 0;
      auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), n);
      if (ec == std::errc() && end == cell.data() + cell.size()) return n;
      return cell;
    }
    case Table::Kind::kBool:
      return cell == "yes" || cell == "true";
    case Table::Kind::kText:
      break;
  }
  return cell;
}

}  // namespace

Table::Table(std::vector<std::string> headers, std::vector<Kind> kinds)
    : headers_(std::move(headers)), kinds_(std::move(kinds)) {
  assert(kinds_.empty() || kinds_.size() == headers_.size());
  kinds_.resize(headers_.size(), Kind::kText);
}

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
    for (size_t i = 0; i < row.size(); ++i) obj[Lower(headers_[i])] = Typed(row[i], kinds_[i]);
    rows.push_back(std::move(obj));
  }
  return rows;
}

void PrintJson(std::ostream& out, const nlohmann::json& value) {
  out << value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace)
      << '\n';
}

}  // namespace elasticjob::cli

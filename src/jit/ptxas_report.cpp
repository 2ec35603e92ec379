#include "jit/ptxas_report.h"

#include <charconv>
#include <utility>

namespace fusedgemm::jit {
namespace {

// The lines parsed (ptxas of CUDA 13.0; older releases add cmem/lmem items and print the
// properties line indented, without "ptxas ."):
//   ptxas info    : 0 bytes gmem
//   ptxas info    : Compiling entry function 'tiny' for 'sm_90a'
//   ptxas info    : Function properties for tiny
//   ptxas         .     800 bytes stack frame, 564 bytes spill stores, 720 bytes spill loads
//   ptxas info    : Used 32 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0]

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Reads the leading unsigned number of `item` and returns the rest after one space.
bool leading_number(std::string_view item, std::uint64_t& value, std::string_view& rest) {
  const char* end = item.data() + item.size();
  const auto [ptr, ec] = std::from_chars(item.data(), end, value);
  if (ec != std::errc() || ptr == item.data()) return false;
  rest = trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
  return true;
}

// Splits a comma-separated list of "<number> <unit>" items and hands each to `apply`.
template <class Apply>
void for_each_item(std::string_view list, Apply apply) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = trim(list.substr(0, comma));
    if (!item.empty()) apply(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// The quoted name in "... 'name' ...".
std::string_view quoted(std::string_view s) {
  const std::size_t open = s.find('\'');
  if (open == std::string_view::npos) return {};
  const std::size_t close = s.find('\'', open + 1);
  if (close == std::string_view::npos) return {};
  return s.substr(open + 1, close - open - 1);
}

class Parser {
 public:
  void line(std::string_view raw) {
    const std::string_view text = trim(raw);
    // ptxas before CUDA 12.x printed the properties line indented, without a prefix.
    if (!starts_with(text, "ptxas")) {
      if (text.find("bytes stack frame") != std::string_view::npos) properties(text);
      return;
    }
    const std::size_t colon = text.find(':');
    const std::size_t dot = text.find('.');
    if (starts_with(text, "ptxas warning") &&
        text.find("Potential Performance Loss") != std::string_view::npos) {
      report_.performance_warnings.emplace_back(text);
    } else if (starts_with(text, "ptxas info") && colon != std::string_view::npos) {
      info(trim(text.substr(colon + 1)));
    } else if (dot != std::string_view::npos && trim(text.substr(5, dot - 5)).empty()) {
      properties(trim(text.substr(dot + 1)));
    }
  }

  PtxasReport take() { return std::move(report_); }

 private:
  void info(std::string_view body) {
    if (starts_with(body, "Compiling entry function")) {
      select(quoted(body)).is_entry = true;
    } else if (starts_with(body, "Function properties for")) {
      select(trim(body.substr(std::string_view("Function properties for").size())));
    } else if (starts_with(body, "Used")) {
      used(body.substr(4));
    } else {
      // Module scope: "0 bytes gmem", or "16 bytes gmem, 8 bytes cmem[4]" in older ptxas.
      for_each_item(body, [&](std::string_view item) {
        std::uint64_t value = 0;
        std::string_view unit;
        if (leading_number(item, value, unit) && unit == "bytes gmem") report_.global_bytes = value;
      });
    }
  }

  // "Used 32 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0], ..."
  void used(std::string_view list) {
    if (current_ == kNone) return;
    FunctionResources& f = report_.functions[current_];
    for_each_item(list, [&](std::string_view item) {
      if (starts_with(item, "used ")) item.remove_prefix(5);
      std::uint64_t value = 0;
      std::string_view unit;
      if (!leading_number(item, value, unit)) return;
      if (unit == "registers") {
        f.registers = static_cast<int>(value);
      } else if (unit == "barriers") {
        f.barriers = static_cast<int>(value);
      } else if (unit == "bytes smem") {
        f.shared_static_bytes = value;
      } else if (starts_with(unit, "bytes cmem[")) {
        f.constant_bytes += value;
      } else if (unit == "bytes lmem") {
        f.local_bytes = value;
      } else if (unit == "bytes cumulative stack size") {
        f.cumulative_stack_bytes = value;
      }
    });
  }

  // "800 bytes stack frame, 564 bytes spill stores, 720 bytes spill loads"
  void properties(std::string_view list) {
    if (current_ == kNone) return;
    FunctionResources& f = report_.functions[current_];
    for_each_item(list, [&](std::string_view item) {
      std::uint64_t value = 0;
      std::string_view unit;
      if (!leading_number(item, value, unit)) return;
      if (unit == "bytes stack frame") {
        f.stack_frame_bytes = value;
      } else if (unit == "bytes spill stores") {
        f.spill_store_bytes = value;
      } else if (unit == "bytes spill loads") {
        f.spill_load_bytes = value;
      }
    });
  }

  // Makes `name` the function later lines describe, adding it on first sight (an entry is
  // announced by "Compiling entry function" and then again by "Function properties").
  FunctionResources& select(std::string_view name) {
    for (std::size_t i = 0; i < report_.functions.size(); ++i) {
      if (report_.functions[i].name == name) {
        current_ = i;
        return report_.functions[i];
      }
    }
    report_.functions.push_back(FunctionResources{.name = std::string(name)});
    current_ = report_.functions.size() - 1;
    return report_.functions.back();
  }

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  PtxasReport report_;
  std::size_t current_ = kNone;
};

}  // namespace

const FunctionResources* PtxasReport::find(std::string_view name) const {
  for (const FunctionResources& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool PtxasReport::spills() const {
  for (const FunctionResources& f : functions) {
    if (f.spills()) return true;
  }
  return false;
}

PtxasReport parse_ptxas_report(std::string_view log) {
  Parser parser;
  while (!log.empty()) {
    const std::size_t newline = log.find('\n');
    parser.line(log.substr(0, newline));
    if (newline == std::string_view::npos) break;
    log.remove_prefix(newline + 1);
  }
  return parser.take();
}

}  // namespace fusedgemm::jit

#include "codegen/emit.h"

#include <bit>
#include <cmath>

#include <fmt/format.h>

namespace fusedgemm::codegen {

std::string emit_f32(float value) {
  if (!std::isfinite(value)) {
    return fmt::format("__uint_as_float(0x{:08x}u)", std::bit_cast<std::uint32_t>(value));
  }
  // A float widens to double exactly, and "{:a}" prints a double's exact value; the 'f'
  // suffix then reads the same value back as a float (it is one).
  const std::string hex = fmt::format("{:a}f", static_cast<double>(std::fabs(value)));
  return std::signbit(value) ? fmt::format("(-{})", hex) : hex;
}

std::string emit_int(std::int64_t value) {
  return value < 0 ? fmt::format("({})", value) : fmt::format("{}", value);
}

std::string emit_identifier(std::string_view prefix, int index) {
  return fmt::format("{}{}", prefix, index);
}

std::string emit_comment_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const bool printable = c >= 0x20 && c < 0x7F && c != '\\';
    out.push_back(printable ? c : '?');
  }
  return out;
}

std::string emit_quoted(std::string_view name) {
  return fmt::format("'{}'", emit_comment_text(name));
}

void SourceWriter::line(std::string_view text) {
  text_.append(static_cast<std::size_t>(depth_) * 2, ' ');
  text_.append(text);
  text_.push_back('\n');
}

void SourceWriter::blank() {
  text_.push_back('\n');
}

void SourceWriter::comment(std::string_view text) {
  line("// " + emit_comment_text(text));
}

void SourceWriter::open(std::string_view head) {
  line(std::string(head) + " {");
  ++depth_;
}

void SourceWriter::close(std::string_view tail) {
  if (depth_ > 0) --depth_;
  line(tail);
}

void SourceWriter::directive(std::string_view text) {
  text_.append(text);
  text_.push_back('\n');
}

}  // namespace fusedgemm::codegen

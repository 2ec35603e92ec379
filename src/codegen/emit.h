// Typed emitters for generated source (STYLE.md rule 9): every value that enters a kernel's
// text goes through one of these, so the same input always gives the same characters —
// floats as exact hex literals, never through a decimal round trip.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fusedgemm::codegen {

// An fp32 constant that reads back bit for bit: "0x1.8p+1f" for 3, "(-0x1p-1f)" for -0.5
// (parenthesized so it can follow any operator), "0x0p+0f" / "(-0x0p+0f)" for the zeros.
// inf and NaN have no literal; they are spelled "__uint_as_float(0x7f800000u)" (device
// code only).
std::string emit_f32(float value);

std::string emit_int(std::int64_t value);

// "<prefix><index>", e.g. v3: generated names never derive from user text.
std::string emit_identifier(std::string_view prefix, int index);

// Text safe inside a // comment: printable ASCII except '\' (a trailing backslash would
// continue the comment onto the next line); anything else becomes '?'.
std::string emit_comment_text(std::string_view text);

// `name` quoted for a comment: 'name'.
std::string emit_quoted(std::string_view name);

// Lines of source with two-space indentation per open block.
class SourceWriter {
 public:
  void line(std::string_view text);
  void blank();
  void comment(std::string_view text);  // "// " + emit_comment_text(text)
  // `head` then " {", and one more level of indentation until close().
  void open(std::string_view head);
  void close(std::string_view tail = "}");
  // A line at column 0 whatever the indentation (#pragma, #include).
  void directive(std::string_view text);

  const std::string& str() const { return text_; }

 private:
  std::string text_;
  int depth_ = 0;
};

}  // namespace fusedgemm::codegen

// Typed emitters: floats as exact hex literals that read back bit for bit, text safe in a
// comment, and indentation.
#include "codegen/emit.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <limits>
#include <string>

using namespace fusedgemm::codegen;

namespace {

// Parses what emit_f32 wrote back to a float (hex, optional "(-...)", 'f' suffix).
float parse(std::string literal) {
  bool negative = false;
  if (literal.front() == '(') {
    negative = true;
    literal = literal.substr(2, literal.size() - 3);
  }
  EXPECT_EQ(literal.back(), 'f');
  literal.pop_back();
  const float v = std::strtof(literal.c_str(), nullptr);
  return negative ? -v : v;
}

TEST(EmitF32, HexLiteralsReadBackExactly) {
  const float values[] = {3.0f,    0.1f,          -1.5f, 6.0f,  0.70710678118654752f, 1e-45f,
                          -1e-40f, 3.4028235e38f, 0.0f,  -0.0f, 1.0f / 3.0f};
  for (const float v : values) {
    const std::string text = emit_f32(v);
    EXPECT_TRUE(text.rfind("0x", 0) == 0 || text.rfind("(-0x", 0) == 0) << text;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(parse(text)), std::bit_cast<std::uint32_t>(v)) << text;
  }
  EXPECT_EQ(emit_f32(3.0f), "0x1.8p+1f");
  EXPECT_EQ(emit_f32(-0.5f), "(-0x1p-1f)");
  EXPECT_EQ(emit_f32(0.0f), "0x0p+0f");
  EXPECT_EQ(emit_f32(-0.0f), "(-0x0p+0f)");
}

TEST(EmitF32, NonFiniteAsBits) {
  EXPECT_EQ(emit_f32(std::numeric_limits<float>::infinity()), "__uint_as_float(0x7f800000u)");
  EXPECT_EQ(emit_f32(-std::numeric_limits<float>::infinity()), "__uint_as_float(0xff800000u)");
  EXPECT_EQ(emit_f32(std::numeric_limits<float>::quiet_NaN()), "__uint_as_float(0x7fc00000u)");
}

TEST(EmitInt, NegativesAreParenthesized) {
  EXPECT_EQ(emit_int(42), "42");
  EXPECT_EQ(emit_int(-7), "(-7)");
}

TEST(EmitCommentText, KeepsPrintableAsciiOnly) {
  EXPECT_EQ(emit_comment_text("row_sum"), "row_sum");
  // A trailing backslash would splice the next line into the comment.
  EXPECT_EQ(emit_comment_text("a\\"), "a?");
  EXPECT_EQ(emit_comment_text("x\ny\r\t"), "x?y??");
  EXPECT_EQ(emit_quoted("it's"), "'it's'");
  EXPECT_EQ(emit_identifier("v", 12), "v12");
}

TEST(SourceWriter, IndentsOpenBlocks) {
  SourceWriter w;
  w.directive("#pragma once");
  w.open("void f()");
  w.comment("body\\");
  w.line("return;");
  w.directive("#if 0");
  w.close();
  EXPECT_EQ(w.str(), "#pragma once\nvoid f() {\n  // body?\n  return;\n#if 0\n}\n");
}

}  // namespace

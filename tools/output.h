// Where a command's findings go (issue 12): as text on stdout, or with --json as one JSON
// document on stdout once the command ends (docs/tool-json.md has its schema). Errors go to
// stderr in both modes, and into the document. Every command writes through one Output, so
// stdout carries either the text or the document, never both.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fusedgemm/status.h"

namespace fusedgemm::tool {

class Output {
 public:
  Output(std::string_view command, bool json);

  bool json() const noexcept { return json_; }

  // Text mode: printed to stdout as formatted. JSON mode: nothing (the fields say it).
  template <class... Args>
  void text(fmt::format_string<Args...> format, Args&&... args) {
    if (!json_) fmt::print(stdout, format, std::forward<Args>(args)...);
  }

  // Starts the entry of one graph file: {"path": path} at the end of "graphs".
  void begin_graph(const std::string& path);
  // The current graph's entry, or the document's top level before the first graph.
  nlohmann::json& at();
  nlohmann::json& top() { return document_; }

  // The status on stderr as "error (<code>):\n<message>", and as the entry's "error"
  // ({"code", "message"}); kExitFailed for a refused call, kExitCannotRun otherwise.
  int error(const Status& status);
  // An error that is no Status (bad usage found by the command): stderr and the entry, its
  // code spelled as a Status's is (to_string(ErrorCode)).
  int error(ErrorCode code, const std::string& message, int exit_code);

  // Long work: on a terminal, `what` as one line on stderr that the next progress() or done()
  // overwrites; nothing when stderr is not a terminal (scripts, CI, --json pipes).
  void progress(const std::string& what);
  void done();
  // One line on stderr in both modes (a kernel compiled: seconds of work, said as it ends).
  void note(const std::string& line);

  // JSON mode: prints the document with its "exit_code". Returns `exit_code`.
  int finish(int exit_code);

 private:
  bool json_;
  bool terminal_;
  bool progressing_ = false;
  nlohmann::json document_;
};

}  // namespace fusedgemm::tool

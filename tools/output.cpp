#include "output.h"

#include <unistd.h>  // isatty

#include "commands.h"

namespace fusedgemm::tool {

Output::Output(std::string_view command, bool json)
    : json_(json), terminal_(::isatty(STDERR_FILENO) == 1) {
  document_["command"] = std::string(command);
  document_["graphs"] = nlohmann::json::array();
}

void Output::begin_graph(const std::string& path) {
  document_["graphs"].push_back({{"path", path}});
}

nlohmann::json& Output::at() {
  auto& graphs = document_["graphs"];
  return graphs.empty() ? document_ : graphs.back();
}

int Output::error(const Status& status) {
  const int code = status.code() == ErrorCode::kIllegalCall ? kExitFailed : kExitCannotRun;
  return error(status.code(), status.message(), code);
}

int Output::error(ErrorCode code, const std::string& message, int exit_code) {
  done();
  const std::string name(to_string(code));
  std::fprintf(stderr, "error (%s):\n%s\n", name.c_str(), message.c_str());
  at()["error"] = {{"code", name}, {"message", message}};
  return exit_code;
}

void Output::progress(const std::string& what) {
  if (!terminal_) return;
  std::fprintf(stderr, "\r\033[K%s", what.c_str());
  std::fflush(stderr);
  progressing_ = true;
}

void Output::done() {
  if (!progressing_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  progressing_ = false;
}

void Output::note(const std::string& line) {
  done();
  std::fprintf(stderr, "%s\n", line.c_str());
}

int Output::finish(int exit_code) {
  done();
  if (json_) {
    document_["exit_code"] = exit_code;
    // Invalid UTF-8 from a graph's names is replaced, never a throw.
    std::printf("%s\n",
                document_.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  // What the command printed is its result: lost (a full disk, a closed stdout), it failed.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "error (io):\ncannot write the output to stdout\n");
    return kExitCannotRun;
  }
  return exit_code;
}

}  // namespace fusedgemm::tool

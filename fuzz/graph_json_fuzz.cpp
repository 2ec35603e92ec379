// libFuzzer target: any bytes given to the graph reader, and any graph it accepts given to
// validate() and the writer. A crash, a sanitizer report, a hang or an exception is a bug:
// the reader answers every input with a Graph or a Status. A graph the reader accepts
// writes back to text that reads back to the same text (docs/graph-json.md, "Lossless").
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fusedgemm/graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusedgemm;
  auto graph = graph_from_json(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!graph) return 0;
  const std::string text = graph_to_json(graph.value());
  auto again = graph_from_json(text);
  if (!again || graph_to_json(again.value()) != text) std::abort();
  (void)graph->validate();
  (void)graph_to_json(graph.value());
  return 0;
}

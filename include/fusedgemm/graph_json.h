// A graph as JSON (docs/graph-json.md): a graph can live in a file, be attached to a bug
// report and be read by the tool. Reading then writing a graph loses nothing.
#pragma once

#include <string>
#include <string_view>

#include "fusedgemm/graph.h"
#include "fusedgemm/status.h"

namespace fusedgemm {

Result<Graph> graph_from_json(std::string_view text);
std::string graph_to_json(const Graph& graph);

Result<Graph> load_graph(const std::string& path);
Status save_graph(const Graph& graph, const std::string& path);

}  // namespace fusedgemm

// A tensor of a graph: dims, strides (elements), data type, uid and name. Handles are
// shared, as in cuDNN's graph API: ops take handles and return the handle of their output.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fusedgemm/data_type.h"
#include "fusedgemm/layout.h"

namespace fusedgemm {

class TensorAttributes {
 public:
  TensorAttributes& set_name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  TensorAttributes& set_uid(std::int64_t uid) {
    uid_ = uid;
    uid_assigned_ = false;
    return *this;
  }
  TensorAttributes& set_dim(std::vector<std::int64_t> dims) {
    dims_ = std::move(dims);
    dims_inferred_ = false;
    return *this;
  }
  TensorAttributes& set_stride(std::vector<std::int64_t> strides) {
    strides_ = std::move(strides);
    strides_inferred_ = false;
    return *this;
  }
  TensorAttributes& set_data_type(DataType type) {
    data_type_ = type;
    data_type_inferred_ = false;
    return *this;
  }
  // An output is stored to memory; every other computed tensor stays inside the kernel.
  TensorAttributes& set_output(bool output) {
    output_ = output;
    return *this;
  }

  const std::string& name() const { return name_; }
  std::optional<std::int64_t> uid() const { return uid_; }
  // True when validate chose the uid because the user gave none.
  bool uid_assigned() const { return uid_assigned_; }
  const std::vector<std::int64_t>& dims() const { return dims_; }
  const std::vector<std::int64_t>& strides() const { return strides_; }
  DataType data_type() const { return data_type_; }
  bool is_output() const { return output_; }
  // True when validate inferred the field because the user declared none; a writer that
  // must reproduce the declaration (graph_to_json) leaves such fields out.
  bool dims_inferred() const { return dims_inferred_; }
  bool strides_inferred() const { return strides_inferred_; }
  bool data_type_inferred() const { return data_type_inferred_; }

  // The declared layout. @pre validate() succeeded (rank 3, dims and strides known).
  Layout layout() const;

 private:
  friend class Graph;
  friend class GraphValidator;

  std::string name_;
  std::optional<std::int64_t> uid_;
  bool uid_assigned_ = false;
  std::vector<std::int64_t> dims_;
  std::vector<std::int64_t> strides_;
  DataType data_type_ = DataType::kNotSet;
  bool output_ = false;
  // What validate filled in, so that a later validate infers it afresh.
  bool dims_inferred_ = false;
  bool strides_inferred_ = false;
  bool data_type_inferred_ = false;
};

using Tensor = std::shared_ptr<TensorAttributes>;

}  // namespace fusedgemm

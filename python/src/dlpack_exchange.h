// Arrays read through DLPack's C exchange API (DLPack 1.3, "__dlpack_c_exchange_api__"): a
// type that offers it carries a PyCapsule named "dlpack_exchange_api" holding a table of C
// functions, one of which fills a non-owning DLTensor from an array with no Python frame and
// another gives the producer's current work stream. PyTorch has it from 2.10; reading a
// tensor through it costs tens of nanoseconds where data_ptr(), shape, stride(), dtype and
// the device cost microseconds (docs/PERF.md, issue 11).
//
// The structures are DLPack's ABI, declared here with the fields this project reads.
#pragma once

#include <Python.h>

#include <cstdint>

#include "fusedgemm/data_type.h"

namespace fusedgemm::python::dlpack {

inline constexpr std::int32_t kCpu = 1;
inline constexpr std::int32_t kCuda = 2;
inline constexpr std::int32_t kCudaHost = 3;
// The most dimensions read through the table: every view of a call has at most 3, and a
// producer claiming more (or millions) goes to the array protocols, which refuse it by name.
inline constexpr std::int32_t kMaxRank = 8;

struct Device {
  std::int32_t type;
  std::int32_t id;
};

struct ElementType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  ElementType type;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null means compact row-major
  std::uint64_t byte_offset;
};

struct Version {
  std::uint32_t major;
  std::uint32_t minor;
};

struct ApiHeader {
  Version version;
  ApiHeader* previous;  // an older table of the same producer, or null
};

// Every function returns 0, or -1 with a Python exception set; the GIL is held.
struct ExchangeApi {
  ApiHeader header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object;
  void* managed_tensor_to_py_object;
  int (*tensor_from_py_object)(void* py_object, Tensor* out);  // may be null
  int (*current_work_stream)(std::int32_t device_type, std::int32_t device_id, void** stream);
};

// The exchange table of arrays of `type`, or null where it offers none this file can use
// (no attribute, not the named capsule, no major version 1 in its chain, no
// tensor_from_py_object). Never leaves a Python error set.
const ExchangeApi* exchange_api(PyTypeObject* type);

// The data type of a DLPack element type; kNotSet where fusedgemm has none (vectors,
// float64, ...).
DataType data_type_of(ElementType type);

}  // namespace fusedgemm::python::dlpack

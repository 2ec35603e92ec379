#include "dlpack_exchange.h"

namespace fusedgemm::python::dlpack {

namespace {

// DLDataTypeCode values (dlpack.h).
constexpr std::uint8_t kInt = 0;
constexpr std::uint8_t kFloat = 2;
constexpr std::uint8_t kBfloat = 4;
constexpr std::uint8_t kFloat8E4M3Fn = 10;
constexpr std::uint8_t kFloat8E5M2 = 12;
constexpr std::uint8_t kFloat8E8M0Fnu = 14;

constexpr std::uint32_t kMajorVersion = 1;

}  // namespace

const ExchangeApi* exchange_api(PyTypeObject* type) {
  PyObject* capsule =
      PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__dlpack_c_exchange_api__");
  if (capsule == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  void* pointer = PyCapsule_IsValid(capsule, "dlpack_exchange_api")
                      ? PyCapsule_GetPointer(capsule, "dlpack_exchange_api")
                      : nullptr;
  // The table outlives the capsule: DLPack requires it to live as long as the process.
  Py_DECREF(capsule);
  if (pointer == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  // A newer major version may chain the tables of older ones.
  for (const auto* header = static_cast<const ApiHeader*>(pointer); header != nullptr;
       header = header->previous) {
    if (header->version.major != kMajorVersion) continue;
    const auto* api = reinterpret_cast<const ExchangeApi*>(header);
    return api->tensor_from_py_object != nullptr && api->current_work_stream != nullptr ? api
                                                                                        : nullptr;
  }
  return nullptr;
}

DataType data_type_of(ElementType type) {
  if (type.lanes != 1) return DataType::kNotSet;
  switch (type.code) {
    case kFloat:
      return type.bits == 32   ? DataType::kFloat32
             : type.bits == 16 ? DataType::kFloat16
                               : DataType::kNotSet;
    case kBfloat: return type.bits == 16 ? DataType::kBFloat16 : DataType::kNotSet;
    case kFloat8E4M3Fn: return type.bits == 8 ? DataType::kFp8E4M3 : DataType::kNotSet;
    case kFloat8E5M2: return type.bits == 8 ? DataType::kFp8E5M2 : DataType::kNotSet;
    case kFloat8E8M0Fnu: return type.bits == 8 ? DataType::kE8M0 : DataType::kNotSet;
    case kInt:
      return type.bits == 8    ? DataType::kInt8
             : type.bits == 32 ? DataType::kInt32
                               : DataType::kNotSet;
    default: return DataType::kNotSet;
  }
}

}  // namespace fusedgemm::python::dlpack

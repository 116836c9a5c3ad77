#pragma once
/// \file
/// The one reader of constant values: what the analysis may know about an initializer or a Constant
/// node at analysis time (zero defaults, Slice bounds, Gather indices, a loop's condition, the type and
/// shape of a length constant). A payload that is not in memory — external data, or a large payload the
/// lazy reader left in the file (see model_file.h) — is unknown, never guessed; its type and dims are
/// still known.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph_path.h"
#include "graph/model_index.h"

namespace rnnstate {

/// True when the tensor's values are not in memory (external data, or a deferred payload placeholder).
bool PayloadUnknown(const onnx::TensorProto& tensor);

/// The values of an INT64 or INT32 tensor (plain fields or raw little-endian bytes), or nullopt when they
/// are unknown or the tensor has another type.
std::optional<std::vector<int64_t>> IntegerValues(const onnx::TensorProto& tensor);

/// The values of a BOOL tensor (raw bytes or int32_data), or nullopt when they are unknown or the tensor
/// has another type.
std::optional<std::vector<bool>> BoolValues(const onnx::TensorProto& tensor);

/// True when every element of the tensor is known to be zero; false when one is not, or when unknown.
bool KnownAllZero(const onnx::TensorProto& tensor);

/// A constant as it is written: an initializer, or the value attribute of a Constant node.
struct ConstantValue {
  /// Where the value is written.
  enum class Form {
    kTensor,   ///< an initializer, or a Constant's `value`
    kInt,      ///< value_int
    kInts,     ///< value_ints
    kFloat,    ///< value_float
    kFloats,   ///< value_floats
    kString,   ///< value_string
    kStrings,  ///< value_strings
    kSparse,   ///< sparse_value
    kNone,     ///< a Constant node without a value attribute
  };
  Form form = Form::kNone;
  const onnx::TensorProto* tensor = nullptr;        ///< kTensor
  const onnx::AttributeProto* attribute = nullptr;  ///< a Constant's value attribute (nullptr: an initializer)
  int32_t elem_type = 0;                            ///< an onnx::TensorProto::DataType; 0 for kNone
  std::vector<int64_t> dims;                        ///< value_ints: one axis of their count; scalars: none
};

/// An initializer's tensor as a constant.
ConstantValue ConstantOfTensor(const onnx::TensorProto& tensor);

/// A Constant node's value: its first value attribute (`value`, `value_int(s)`, `value_float(s)`,
/// `value_string(s)`, `sparse_value`; the operator allows one).
ConstantValue ConstantOfNode(const onnx::NodeProto& constant);

/// `name` seen from the graph at `path`, when it is an initializer that is not an overridable graph input,
/// or the output of an ai.onnx Constant node, in that graph or an enclosing one; else nullopt.
std::optional<ConstantValue> FindConstant(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// The integer values of a constant (an INT64 or INT32 tensor, value_int, value_ints), or nullopt when
/// they are unknown or of another type.
std::optional<std::vector<int64_t>> IntegerValues(const ConstantValue& constant);

/// The values of a numeric constant as doubles: integers (IntegerValues), FLOAT and DOUBLE tensors,
/// value_float(s); nullopt when they are unknown or of another type. tf2onnx writes a loop's length as a
/// float (`Less(Cast(t, FLOAT), 60.0)`).
std::optional<std::vector<double>> NumberValues(const ConstantValue& constant);

/// The value of a constant of one BOOL element, or nullopt.
std::optional<bool> OneBool(const ConstantValue& constant);

/// True when every element of a constant is known to be zero.
bool KnownAllZero(const ConstantValue& constant);

/// True when a Constant node's value is known to be all zeros.
bool ConstantNodeIsZero(const onnx::NodeProto& constant);

/// The integer values of `name` seen from the graph at `path`, when it is a constant (FindConstant).
std::optional<std::vector<int64_t>> ConstantIntegers(const ModelIndex& index, const GraphPath& path,
                                                     const std::string& name);

/// The dims of the constant `name` when it is a tensor, value_int or value_float; nullopt otherwise, also
/// for the forms the shape readers do not take (value_ints, value_floats, value_string(s), sparse_value).
std::optional<std::vector<int64_t>> ConstantDims(const ModelIndex& index, const GraphPath& path,
                                                 const std::string& name);

/// The one number of the constant `name` (a scalar or a one-element tensor, integer or floating point;
/// see NumberValues), or nullopt.
std::optional<double> ConstantNumber(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// The one integer of the constant `name` (a scalar or a one-element tensor), or nullopt.
std::optional<int64_t> ConstantScalar(const ModelIndex& index, const GraphPath& path, const std::string& name);

}  // namespace rnnstate

#pragma once
/// \file
/// How many state entries a metadata document can list for a model and be valid: a bound read off the
/// graph's size, so that a document listing a million entries for a model of one LSTM is refused before
/// its entries are converted and cross-checked (each would cost the pair, its problems and their messages).

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <optional>
#include <string>

#include "rnnstate/json.h"

namespace rnnstate {

/// The most state entries a valid document lists for `model`. Every valid entry pairs a state no other
/// entry pairs: a recurrent state enters its owner (or the Loop carrying it) at an input slot of a node, a
/// window's context is read at one, and a data input's context is a main-graph input. So: the input slots
/// of every node of every graph, plus the main graph's inputs. More entries name a state twice or one the
/// model does not have.
size_t MostStateEntries(const onnx::ModelProto& model);

/// The model's metadata document under `key` with its "states" left out (their entries are skipped as they are read),
/// or nullopt when there is none, it is no JSON object, or it lists more entries than MostStateEntries
/// (refused at the first past the bound): what a writer of new pairs keeps of the old document.
std::optional<Json> ReadDocumentBesideStates(const onnx::ModelProto& model, const std::string& key);

}  // namespace rnnstate

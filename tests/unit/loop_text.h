#pragma once
/// \file
/// ONNX text of the pieces the loop tests build their models from: a hand-written tanh cell in a Loop body,
/// zeros sized from the data's batch, an LSTM stepping inside a Loop. Each test keeps in its own lines what
/// it is about (the node it adds, the name it reads) and takes the rest from here.

#include <string>

#include "test_models.h"

namespace rnnstate::testing {

/// A Loop body's hand-written tanh cell, as scripted and tf2onnx loops write it; Text() gives the lines
///   x_t = Gather <axis = AXIS> (DATA, INDEX)
///   xw = MatMul (x_t, W)
///   hu = MatMul (h, U)
///   SUM = Add (xw, hu)
///   THEN (any lines)
///   h_next = Tanh (TANH_OF)
/// with INDEX `i`, AXIS 0, DATA `x`, SUM `s` and TANH_OF SUM unless a setter says otherwise.
class TanhCell {
 public:
  /// x_t is DATA read at `index` along `axis`.
  TanhCell& At(const std::string& index, int axis = 0);
  /// x_t is read from `data`.
  TanhCell& Of(const std::string& data);
  /// The input weights `w` and the recurrent weights `u`; without `u`, the sum is xw + h (no hu).
  TanhCell& Weights(const std::string& w, const std::string& u);
  /// The sum xw + hu is named `sum`.
  TanhCell& Sum(const std::string& sum);
  /// `lines` come between the sum and the Tanh, which reads `tanh_of`.
  TanhCell& Then(const std::string& lines, const std::string& tanh_of);
  /// The lines, each indented by four spaces and ended by a newline.
  std::string Text() const;

 private:
  std::string index_ = "i";
  int axis_ = 0;
  std::string data_ = "x";
  std::string w_ = "W";
  std::string u_ = "U";
  std::string sum_ = "s";
  std::string then_;
  std::string tanh_of_;
};

/// The value names of BatchZerosText's steps.
struct BatchZerosNames {
  std::string shape = "shape";  ///< Shape of the data
  std::string axis = "one";     ///< int64[1] constant: the batch axis
  std::string batch = "b";      ///< Gather: the batch size
  std::string width = "four";   ///< int64[1] constant: the width
  std::string dims = "dims";    ///< Concat(batch, width)
  std::string zeros = "zeros";  ///< ConstantOfShape(dims)
};

/// ONNX text: zeros [batch, `width`] for a loop's initial state, the batch read from axis `axis` of `from`'s
/// shape, its steps named by `names`. Starts with two spaces, ends with a newline.
std::string BatchZerosText(const std::string& from, int axis, int width, const BatchZerosNames& names = {});

/// ONNX text: a Loop body's cell h_next = tanh(h + x[:, t]) read at the int32 counter t (cast to int64 as
/// `t64`, as tf2onnx writes it), and the counter's step t_next = t + `step` (the int32 constant 1). Each line
/// indented by four spaces and ended by a newline.
std::string AddCellAtInt32CounterText();

/// ONNX text of a graph after its signature line, to its closing brace: an LSTM (hidden 3, weights W and R)
/// stepping inside a Loop of `steps` iterations on Unsqueeze(context, zero), the Loop carrying its h and c to
/// h_n and c_n from one PyTorch zero state of context's batch (ZeroStateOfBatchText("context", 0, 3)); with
/// `each_step`, the Loop also gives h at every step as its third output `ys`.
std::string LoopLstmOverContextText(bool each_step = false);

}  // namespace rnnstate::testing

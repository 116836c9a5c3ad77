#include "loop_text.h"

namespace rnnstate::testing {

TanhCell& TanhCell::At(const std::string& index, int axis) {
  index_ = index;
  axis_ = axis;
  return *this;
}

TanhCell& TanhCell::Of(const std::string& data) {
  data_ = data;
  return *this;
}

TanhCell& TanhCell::Weights(const std::string& w, const std::string& u) {
  w_ = w;
  u_ = u;
  return *this;
}

TanhCell& TanhCell::Sum(const std::string& sum) {
  sum_ = sum;
  return *this;
}

TanhCell& TanhCell::Then(const std::string& lines, const std::string& tanh_of) {
  then_ = lines;
  tanh_of_ = tanh_of;
  return *this;
}

std::string TanhCell::Text() const {
  std::string text = "    x_t = Gather <axis = " + std::to_string(axis_) + "> (" + data_ + ", " + index_ + ")\n";
  text += "    xw = MatMul (x_t, " + w_ + ")\n";
  if (u_.empty()) {
    text += "    " + sum_ + " = Add (xw, h)\n";
  } else {
    text += "    hu = MatMul (h, " + u_ + ")\n    " + sum_ + " = Add (xw, hu)\n";
  }
  if (!then_.empty()) text += "    " + then_ + "\n";
  return text + "    h_next = Tanh (" + (tanh_of_.empty() ? sum_ : tanh_of_) + ")\n";
}

std::string BatchZerosText(const std::string& from, int axis, int width, const BatchZerosNames& names) {
  const auto int64_constant = [](const std::string& name, int value) {
    return "  " + name + " = Constant <value = int64[1] {" + std::to_string(value) + "}> ()\n";
  };
  return "  " + names.shape + " = Shape (" + from + ")\n" + int64_constant(names.axis, axis) + "  " + names.batch +
         " = Gather <axis = 0> (" + names.shape + ", " + names.axis + ")\n" + int64_constant(names.width, width) +
         "  " + names.dims + " = Concat <axis = 0> (" + names.batch + ", " + names.width + ")\n  " + names.zeros +
         " = ConstantOfShape (" + names.dims + ")\n";
}

std::string AddCellAtInt32CounterText() {
  return R"(    t64 = Cast <to = 7> (t)
    x_t = Gather <axis = 1> (x, t64)
    s = Add (h, x_t)
    h_next = Tanh (s)
    step = Constant <value = int32 {1}> ()
    t_next = Add (t, step)
)";
}

std::string LoopLstmOverContextText(bool each_step) {
  const std::string ys = each_step ? ", ys" : "", y = each_step ? ", float[1, batch, 3] y" : "";
  return ZeroStateOfBatchText("context", 0, 3) + "  h_n, c_n" + ys +
         " = Loop (steps, , h0, h0) <body = body (int64 i, bool cond, float[1, batch, 3] h_prev, "
         "float[1, batch, 3] c_prev)\n      => (bool cond_out, float[1, batch, 3] h_next, float[1, batch, 3] c_next" +
         y +
         ") {\n    xs = Unsqueeze (context, zero)\n"
         "    Y, h_next, c_next = LSTM <hidden_size = 3> (xs, W, R, , , h_prev, c_prev)\n" +
         (each_step ? "    y = Identity (h_next)\n" : "") + "    cond_out = Identity (cond)\n  }>\n}";
}

}  // namespace rnnstate::testing

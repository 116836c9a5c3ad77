#pragma once
/// \file
/// `std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, variant)`: one lambda per alternative,
/// so that the compiler checks that every case of a variant is handled.

namespace rnnstate {

template <typename... Lambdas>
struct Overloaded : Lambdas... {
  using Lambdas::operator()...;
};
template <typename... Lambdas>
Overloaded(Lambdas...) -> Overloaded<Lambdas...>;

}  // namespace rnnstate

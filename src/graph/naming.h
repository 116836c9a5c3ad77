#pragma once
/// \file
/// Readable, collision-free names for everything a rewrite adds.

#include <functional>
#include <memory_resource>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>

namespace rnnstate {

/// Names in use, as views into the model that holds them (ModelIndex::used_dim_params).
using NameViews = std::pmr::unordered_set<std::string_view>;

/// Hands out names that are unique across the whole model (all scopes) and among each other.
class NameAllocator {
 public:
  explicit NameAllocator(const std::set<std::string>& used) : used_(used.begin(), used.end()) {}
  /// Names taken in `taken`, read where they are (not copied: a big model has millions), plus those this
  /// allocator hands out or reserves. `taken` must outlive the allocator.
  explicit NameAllocator(const NameViews& taken) : taken_(&taken) {}
  /// Names for which `taken` is true (a look-up in a model's index: ModelIndex::NewNames), plus those
  /// this allocator hands out or reserves.
  explicit NameAllocator(std::function<bool(const std::string&)> taken) : taken_by_(std::move(taken)) {}

  /// `wanted` if free, else `wanted_2`, `wanted_3`, ...; the result is reserved.
  std::string Allocate(const std::string& wanted);
  /// True when `name` is already taken.
  bool Taken(const std::string& name) const {
    return used_.count(name) > 0 || (taken_ && taken_->count(name) > 0) || (taken_by_ && taken_by_(name));
  }
  /// Marks `name` as taken.
  void Reserve(const std::string& name) { used_.insert(name); }

 private:
  const NameViews* taken_ = nullptr;
  std::function<bool(const std::string&)> taken_by_;
  // Hashed: a rewrite hands out several names per state, whose ordered look-ups compared long common
  // prefixes ("lstm_123.") a dozen times each.
  std::unordered_set<std::string> used_;
};

/// A node name made fit for use inside value names: a leading '/' is dropped and the remaining '/'
/// and ':' become '.' ("/encoder/lstm/LSTM" -> "encoder.lstm.LSTM").
std::string NodeStem(const std::string& node_name);

/// Expands a user template: `{node}` -> node stem, `{kind}` -> "h"/"c", `{op}` -> "LSTM"...
/// Throws rnnstate::Error(kUsage) for an unknown placeholder or a template without `{node}`.
std::string ExpandNameTemplate(const std::string& pattern, const std::string& node_stem, const std::string& kind,
                               const std::string& op);

}  // namespace rnnstate

#pragma once
/// \file
/// A fixture for the tests of tests/unit/io that write files: a fresh directory per test holding `model/`
/// (with a 16-byte external data file `w.bin`) and an empty `out/`, removed after the test.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rnnstate::testing {

class ModelDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("rnnstate_io_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "model");
    std::filesystem::create_directories(root_ / "out");
    Write(root_ / "model" / "w.bin", "0123456789abcdef");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  /// Writes `text` to `path`.
  static void Write(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

  std::filesystem::path root_;
};

}  // namespace rnnstate::testing

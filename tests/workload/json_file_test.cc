// SPDX-License-Identifier: MIT
// The checked JSON reader: files refused before they are read, syntax
// errors with line and column, schema errors with the JSON path, never an
// exception.
#include "swaplab/workload/json_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

namespace swaplab::workload {
namespace {

using nlohmann::json;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/json_file_test_" + std::to_string(::getpid()) + "_" + name;
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string p = TempPath(name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

TEST(JsonFile, ReadsARegularFile) {
  auto j = ReadJsonFile(Write("ok.json", "{\"a\": [1, 2]}"));
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ((*j)["a"][1], 2);
}

TEST(JsonFile, RefusesAFifoWithoutBlocking) {
  const std::string p = TempPath("fifo");
  ::unlink(p.c_str());
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  auto j = ReadJsonFile(p);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), -EINVAL);
  EXPECT_NE(j.status().message().find("not a regular file"), std::string::npos);
  ::unlink(p.c_str());
}

TEST(JsonFile, RefusesADirectoryAndADevice) {
  EXPECT_EQ(ReadJsonFile(::testing::TempDir()).status().code(), -EINVAL);
  EXPECT_EQ(ReadJsonFile("/dev/zero").status().code(), -EINVAL);
}

TEST(JsonFile, RefusesAMissingFile) {
  auto j = ReadJsonFile(TempPath("missing.json"));
  EXPECT_EQ(j.status().code(), -ENOENT);
  EXPECT_NE(j.status().message().find("missing.json"), std::string::npos);
}

TEST(JsonFile, RefusesAFileOverTheLimit) {
  const std::string p = Write("big.json", "[" + std::string(100, ' ') + "]");
  EXPECT_TRUE(ReadJsonFile(p, 102).ok());
  auto j = ReadJsonFile(p, 101);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), -EINVAL);
  EXPECT_NE(j.status().message().find("at most 101"), std::string::npos);
}

TEST(JsonFile, SyntaxErrorHasLineAndColumn) {
  auto j = ParseJson("{\n  \"a\": 1,\n  \"b\": tru\n}", "spec.json");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), -EINVAL);
  EXPECT_EQ(j.status().message().rfind("spec.json:3:", 0), 0u) << j.status().message();
}

TEST(JsonFile, SyntaxErrorOnTheFirstLine) {
  auto j = ParseJson("[1,,2]", "x.json");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message().rfind("x.json:1:4: ", 0), 0u) << j.status().message();
}

TEST(JsonFile, EmptyAndTruncatedInputsAreErrors) {
  for (const char* t : {"", "{", "{\"a\":", "\"abc", "[1, 2", "\xff"})
    EXPECT_EQ(ParseJson(t, "t").status().code(), -EINVAL) << t;
}

TEST(JsonFile, ControlCharactersInMessagesAreEscaped) {
  auto j = ParseJson("\x1b]0;pwned\x07", "a\x1b[2Jb");
  ASSERT_FALSE(j.ok());
  const Status st = j.status();  // a copy: message() refers into it
  for (char c : st.message()) EXPECT_FALSE(c == '\x1b' || c == '\x07');
}

TEST(JsonAt, SchemaErrorNamesThePath) {
  const json doc = json::parse(R"({"points": [{}, {}, {}, {"scale": "big"}]})");
  JsonAt root(doc, "sweep.json");
  auto x = root["points"][3]["scale"].Num(1e-4, 16);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().code(), -EINVAL);
  EXPECT_EQ(x.status().message(),
            "sweep.json: $.points[3].scale: expected a number in [0.0001, 16], not \"big\"");
}

TEST(JsonAt, MissingKeysAndWrongContainersAreAbsent) {
  const json doc = json::parse(R"({"a": 5, "l": [1]})");
  JsonAt root(doc, "f");
  EXPECT_FALSE(root["b"].present());
  EXPECT_FALSE(root["a"]["c"].present());  // a number has no keys
  EXPECT_FALSE(root["l"][1].present());
  EXPECT_FALSE(root["a"][0].present());
  EXPECT_NE(root["b"].Str().status().message().find("$.b: required"), std::string::npos);
}

TEST(JsonAt, NumRefusesOutOfRangeAndNonNumbers) {
  const json doc = json::parse(R"({"z": 0, "n": -1, "h": 1e300, "s": "1", "b": true, "ok": 2.5})");
  JsonAt root(doc, "in.json");
  for (const char* k : {"z", "n", "h", "s", "b", "missing"})
    EXPECT_EQ(root[k].Num(1e-4, 16).status().code(), -EINVAL) << k;
  EXPECT_EQ(*root["ok"].Num(1e-4, 16), 2.5);
  const json nan = {{"x", std::nan("")}};
  EXPECT_FALSE(JsonAt(nan, "f")["x"].Num(-1e9, 1e9).ok());
}

TEST(JsonAt, TypesChecked) {
  const json doc = json::parse(R"({"s": "x", "b": false, "o": {}, "l": [1, 2, 3]})");
  JsonAt root(doc, "f");
  EXPECT_EQ(*root["s"].Str(), "x");
  EXPECT_FALSE(root["b"].Str().ok());
  EXPECT_EQ(*root["b"].Bool(), false);
  EXPECT_FALSE(root["s"].Bool().ok());
  EXPECT_TRUE(root["o"].Object().ok());
  EXPECT_FALSE(root["l"].Object().ok());
  EXPECT_TRUE(root["l"].Array(3).ok());
  EXPECT_FALSE(root["l"].Array(2).ok());
  EXPECT_FALSE(root["o"].Array(9).ok());
  EXPECT_EQ(root["l"].size(), 3u);
}

}  // namespace
}  // namespace swaplab::workload

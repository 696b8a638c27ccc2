//===- ByteMessageTest.cpp - tests of packed plain values -----------------===//
//
// support/ByteMessage.h carries a stage's alignments and hypotheses between
// the ranks of a run: what is packed reads back the same, in order, and a
// message cut short is an error at the value that would run past its end.
//
//===----------------------------------------------------------------------===//

#include "support/ByteMessage.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace nn::support;

namespace {

TEST(ByteMessageTest, ValuesReadBackInOrder) {
  Packer packer;
  packer.put(int64_t{-7})
      .putAll(std::vector<int32_t>{3, -1, 2})
      .putText(std::string("a\0b", 3))
      .put(1.5f)
      .putAll(std::vector<int32_t>{})
      .putText("");
  Unpacker unpacker(packer.str());
  int64_t first = 0;
  std::vector<int32_t> path, empty{9};
  std::string text, none = "x";
  float value = 0;
  ASSERT_TRUE(unpacker.get(first).ok());
  ASSERT_TRUE(unpacker.getAll(path).ok());
  ASSERT_TRUE(unpacker.getText(text).ok());
  ASSERT_FALSE(unpacker.done());
  ASSERT_TRUE(unpacker.get(value).ok());
  ASSERT_TRUE(unpacker.getAll(empty).ok());
  ASSERT_TRUE(unpacker.getText(none).ok());
  EXPECT_TRUE(unpacker.done());
  EXPECT_EQ(first, -7);
  EXPECT_EQ(path, (std::vector<int32_t>{3, -1, 2}));
  EXPECT_EQ(text, std::string("a\0b", 3));
  EXPECT_EQ(value, 1.5f);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(none, "");
}

TEST(ByteMessageTest, AMessageCutShortIsAnError) {
  Packer packer;
  packer.putAll(std::vector<int32_t>{1, 2, 3}).putText("hello");
  const std::string &whole = packer.str();
  // Every cut before the end fails at some value, never reads past it.
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    std::string bytes = whole.substr(0, cut);
    Unpacker unpacker(bytes);
    std::vector<int32_t> values;
    std::string text;
    absl::Status status = unpacker.getAll(values);
    if (status.ok())
      status = unpacker.getText(text);
    EXPECT_FALSE(status.ok()) << "cut at " << cut;
    EXPECT_NE(std::string(status.message()).find("ends early"),
              std::string::npos)
        << status;
  }
  // A count larger than what follows.
  Packer lying;
  lying.put(int64_t{1} << 40);
  Unpacker unpacker(lying.str());
  std::vector<int32_t> values;
  EXPECT_FALSE(unpacker.getAll(values).ok());
  std::string text;
  Unpacker again(lying.str());
  EXPECT_FALSE(again.getText(text).ok());
}

} // namespace

//===- JsonLineTest.cpp - tests of the fixed-layout JSON writer -----------===//
//
// support/JsonLine.h writes nn-train's JSON lines, a documented contract:
// these pin the layout (separators, field order, number format) and the
// string tokens (escapes, invalid UTF-8), and read every line back with
// llvm::json.
//
//===----------------------------------------------------------------------===//

#include "support/JsonLine.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

using namespace nn::support;
namespace json = llvm::json;

namespace {

/// `text` parsed by llvm::json (a failed parse fails the test).
json::Value parsed(const std::string &text) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value) {
    ADD_FAILURE() << "not JSON: " << text << ": "
                  << llvm::toString(value.takeError());
    return nullptr;
  }
  return std::move(*value);
}

TEST(JsonLineTest, FieldsInTheOrderAdded) {
  JsonObject line;
  line.add("step", 1).add("lr", 0.001).add("applied", true).add("kind", "b");
  line.add("a", false);
  EXPECT_EQ(line.str(), "{\"step\": 1, \"lr\": 0.001, \"applied\": true, "
                        "\"kind\": \"b\", \"a\": false}");
  EXPECT_EQ(JsonObject().str(), "{}");
  EXPECT_TRUE(JsonObject().empty());
}

TEST(JsonLineTest, NestedObjectsAndArrays) {
  JsonArray list;
  list.push(1).push("two").push(JsonObject().add("three", 3.5));
  list.push(JsonArray());
  JsonObject line;
  line.add("losses", JsonObject().add("ce", 2.5).add("fer", 0.25))
      .add("list", list);
  EXPECT_EQ(line.str(), "{\"losses\": {\"ce\": 2.5, \"fer\": 0.25}, "
                        "\"list\": [1, \"two\", {\"three\": 3.5}, []]}");
  json::Value value = parsed(line.str());
  const json::Array *items = value.getAsObject()->getArray("list");
  ASSERT_NE(items, nullptr);
  EXPECT_EQ((*items)[1].getAsString(), std::optional<llvm::StringRef>("two"));
  EXPECT_EQ(value.getAsObject()->getObject("losses")->getNumber("fer"), 0.25);
}

TEST(JsonLineTest, ItemPerLineArrays) {
  JsonArray written(JsonArray::Layout::itemPerLine);
  EXPECT_EQ(written.str(), "[\n]");
  written.push("a/").push("a/b.npz");
  EXPECT_EQ(JsonObject().add("written", written).str(),
            "{\"written\": [\n  \"a/\",\n  \"a/b.npz\"\n]}");
}

TEST(JsonLineTest, AppendKeepsBothOrders) {
  JsonObject prefix;
  prefix.add("stage", "ctc");
  JsonObject line = prefix;
  line.add("step", 2);
  EXPECT_EQ(line.str(), "{\"stage\": \"ctc\", \"step\": 2}");
  EXPECT_EQ(prefix.str(), "{\"stage\": \"ctc\"}");
  JsonObject event;
  event.add("event", "done").append(JsonObject().add("a", 1).add("b", 2));
  EXPECT_EQ(event.str(), "{\"event\": \"done\", \"a\": 1, \"b\": 2}");
  EXPECT_EQ(JsonObject().append(prefix).str(), prefix.str());
  EXPECT_EQ(JsonObject(prefix).append(JsonObject()).str(), prefix.str());
}

TEST(JsonLineTest, StringsEscapeQuotesAndBackslashes) {
  EXPECT_EQ(jsonString("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  // Keys are string tokens too.
  EXPECT_EQ(JsonObject().add("say \"hi\"", "x").str(),
            "{\"say \\\"hi\\\"\": \"x\"}");
  EXPECT_EQ(jsonString(""), "\"\"");
}

TEST(JsonLineTest, StringsEscapeControlCharacters) {
  EXPECT_EQ(jsonString(llvm::StringRef("\x00\x01\x1f", 3)),
            "\"\\u0000\\u0001\\u001f\"");
  EXPECT_EQ(jsonString("\t\n\r"), "\"\\t\\n\\r\"");
  // DEL is no control character to JSON.
  EXPECT_EQ(jsonString("\x7f"), "\"\x7f\"");
  std::string all;
  for (char c = 1; c < 0x20; ++c)
    all.push_back(c);
  EXPECT_EQ(parsed(jsonString(all)).getAsString(),
            std::optional<llvm::StringRef>(all));
}

TEST(JsonLineTest, StringsKeepUtf8AndReplaceWhatIsNot) {
  EXPECT_EQ(jsonString("caf\xc3\xa9 \xe2\x82\xac"),
            "\"caf\xc3\xa9 \xe2\x82\xac\"");
  // A stray byte and a truncated sequence each become U+FFFD.
  EXPECT_EQ(jsonString("a\xff"
                       "b\xe2\x82"),
            "\"a\xef\xbf\xbd"
            "b\xef\xbf\xbd\"");
  std::string line = JsonObject().add("path", "/data/\xfe\xff").str();
  EXPECT_EQ(parsed(line).getAsObject()->getString("path"),
            std::optional<llvm::StringRef>("/data/\xef\xbf\xbd\xef\xbf\xbd"));
}

TEST(JsonLineTest, NumbersHaveNineDigits) {
  EXPECT_EQ(jsonNumber(0.001), "0.001");
  EXPECT_EQ(jsonNumber(1.0 / 3), "0.333333333");
  EXPECT_EQ(jsonNumber(76.258209), "76.258209");
  EXPECT_EQ(jsonNumber(1e-10), "1e-10");
  EXPECT_EQ(jsonNumber(2.5e20), "2.5e+20");
  EXPECT_EQ(jsonNumber(-0.0), "-0");
  EXPECT_EQ(jsonNumber(3), "3");
  // Nine digits round-trip every float32.
  float tenth = 0.1f;
  EXPECT_EQ(jsonNumber(tenth), "0.100000001");
  EXPECT_EQ((float)*parsed(jsonNumber(tenth)).getAsNumber(), tenth);
}

TEST(JsonLineTest, NonFiniteNumbersAreStrings) {
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(jsonNumber(inf), "\"Infinity\"");
  EXPECT_EQ(jsonNumber(-inf), "\"-Infinity\"");
  EXPECT_EQ(jsonNumber(std::nan("")), "\"NaN\"");
  EXPECT_EQ(jsonNumber(-std::nan("")), "\"NaN\"");
  EXPECT_EQ(JsonObject().add("ctc", inf).add("lr", (float)NAN).str(),
            "{\"ctc\": \"Infinity\", \"lr\": \"NaN\"}");
}

TEST(JsonLineTest, IntegersAreExact) {
  EXPECT_EQ(JsonObject()
                .add("max", std::numeric_limits<int64_t>::max())
                .add("min", std::numeric_limits<int64_t>::min())
                .add("u", std::numeric_limits<uint64_t>::max())
                .add("size", (size_t)3)
                .add("neg", -7)
                .str(),
            "{\"max\": 9223372036854775807, \"min\": -9223372036854775808, "
            "\"u\": 18446744073709551615, \"size\": 3, \"neg\": -7}");
}

} // namespace

#include "core/json_input.h"

#include <gtest/gtest.h>

#include "core/check.h"

namespace parplan {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonInput, RejectsDuplicateKeysWithPath) {
  const std::string msg =
      error_of([] { parse_json(R"({"plan": {"tp": 1, "tp": 2}})", "job.json"); });
  EXPECT_NE(msg.find("job.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("plan.tp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("duplicated"), std::string::npos) << msg;
}

TEST(JsonInput, RejectsDeepNesting) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "[";
  for (int i = 0; i < 200; ++i) text += "]";
  EXPECT_NE(error_of([&] { parse_json(text, "deep.json"); }).find("nesting"), std::string::npos);
}

TEST(JsonInput, RejectsInvalidJsonAndKeepsMessagePrintable) {
  const std::string msg = error_of([] { parse_json("{\"a\": \xff\xfe}", "bin.json"); });
  EXPECT_NE(msg.find("bin.json"), std::string::npos);
  for (unsigned char c : msg) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << msg;
}

TEST(JsonInput, NaNAndInfinityAreNotJson) {
  EXPECT_NE(error_of([] { parse_json(R"({"a": NaN})", "x.json"); }), "");
  EXPECT_NE(error_of([] { parse_json(R"({"a": Infinity})", "x.json"); }), "");
}

TEST(JsonReader, TypedValuesAndRanges) {
  const Json j = parse_json(
      R"({"a": 3, "b": -1, "c": 2.5, "d": "x", "e": 1e30, "f": 18446744073709551615})", "f.json");
  JsonReader in(j, "f.json", "plan");
  EXPECT_EQ(in.require_int("a", 1), 3);
  EXPECT_NE(
      error_of([&] { in.require_int("b", 1); }).find("plan.b: found -1; allowed: an integer >= 1"),
      std::string::npos);
  EXPECT_NE(error_of([&] { in.require_int("c", 1); }).find("2.5"), std::string::npos);
  EXPECT_NE(error_of([&] { in.require_int("d", 1); }).find("\"x\""), std::string::npos);
  EXPECT_NE(error_of([&] { in.require_int("e", 1); }).find("64-bit"), std::string::npos);
  EXPECT_NE(error_of([&] { in.require_int("f", 1); }).find("18446744073709551615"),
            std::string::npos);
}

TEST(JsonReader, UnknownKeySuggestsNearest) {
  const Json j = parse_json(R"({"tp": 2, "ppp": 4})", "job.json");
  JsonReader in(j, "job.json", "plan");
  in.int_or("tp", 1, 1);
  in.int_or("pp", 1, 1);
  const std::string msg = error_of([&] { in.finish(); });
  EXPECT_NE(msg.find("plan.ppp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean \"pp\""), std::string::npos) << msg;
}

TEST(JsonReader, ChoiceListsAllowedValues) {
  const Json j = parse_json(R"({"recompute": "some"})", "job.json");
  JsonReader in(j, "job.json", "plan");
  const std::string msg = error_of([&] { in.choice_or("recompute", "none", {"none", "full"}); });
  EXPECT_NE(msg.find("plan.recompute: found \"some\"; allowed: one of \"none\", \"full\""),
            std::string::npos)
      << msg;
}

TEST(JsonReader, ZeroIsBelowAPositiveMinimum) {
  // nlohmann stores 0 and every non-negative literal as unsigned: the minimum applies to them.
  const Json j = parse_json(R"({"tp": 0, "pp": 3})", "job.json");
  JsonReader in(j, "job.json", "plan");
  EXPECT_NE(error_of([&] { in.require_int("tp", 1); }).find("plan.tp: found 0"), std::string::npos);
  EXPECT_NE(error_of([&] { in.require_int("pp", 4, 8); }).find("plan.pp: found 3"),
            std::string::npos);
  EXPECT_EQ(in.require_int("pp", 0, 8), 3);
}

TEST(JsonInput, NumberBeyondDoubleNamesFileAndKey) {
  const std::string msg =
      error_of([] { parse_json(R"({"plan": {"tp": 2, "pp": 1e400}})", "job.json"); });
  EXPECT_NE(msg.find("job.json: plan.pp: found a number beyond the double range"),
            std::string::npos)
      << msg;
  EXPECT_NE(error_of([] { parse_json(R"([1, -1e999])", "a.json"); }).find("a.json"),
            std::string::npos);
}

TEST(JsonReader, MissingKeyNamesAMisspeltOne) {
  const Json j = parse_json(R"({"seq_lenght": 4096})", "job.json");
  JsonReader in(j, "job.json", "training");
  EXPECT_NE(error_of([&] { in.require_int("seq_length", 1); })
                .find("training.seq_length: found nothing (the key is missing; is \"seq_lenght\" "
                      "a misspelling?)"),
            std::string::npos);
}

TEST(JsonInput, CommentsAreNamedWithLineAndColumn) {
  std::string msg = error_of([] {
    parse_json("{\n  \"model\": \"gpt3-175b\",\n  // 8 nodes\n  \"plan\": {}\n}", "job.json");
  });
  EXPECT_EQ(msg,
            "job.json: line 3, column 3: found a comment (// 8 nodes); allowed: no comments: "
            "JSON does not allow comments (a job file keeps notes in its \"comment\" key)");
  msg = error_of([] { parse_json("{\"tp\": 1 /* one */}", "job.json"); });
  EXPECT_NE(msg.find("job.json: line 1, column 10: found a comment (/* one */})"),
            std::string::npos)
      << msg;
  // Other syntax errors keep the parser's whole reason, with the place.
  msg = error_of([] { parse_json("{\"tp\": 1,\n \"pp\" 2}", "job.json"); });
  EXPECT_NE(msg.find("job.json: line 2, column"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected ':'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("[json.exception"), std::string::npos) << msg;
}

TEST(ReadTextFile, DevicesAndMissingPathsAreErrors) {
  // /dev/zero never ends: the read stops one byte past the 64 MiB limit.
  EXPECT_NE(error_of([] { read_text_file("/dev/zero"); }).find("larger than the limit"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_text_file("/dev/null"); }).find("empty file"), std::string::npos);
  EXPECT_NE(error_of([] { read_text_file("/nonexistent/job.json"); }).find("no such file"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_text_file("/"); }).find("a directory"), std::string::npos);
}

TEST(EditDistance, ClosedForms) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("tp", "tp"), 0u);
}

}  // namespace
}  // namespace parplan

#include "yaml/yaml_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace fairq::yaml {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

YAML::Node Parse(const std::string& text) { return YAML::Load(text); }

TEST(FieldReaderTest, ReadsTypedScalars) {
  YAML::Node node = Parse("a: text\nb: 2.5\nc: -7\nd: true\ne: FALSE\n");
  FieldReader r("f.yaml", node, "", {"a", "b", "c", "d", "e", "f"});
  EXPECT_EQ(r.String("a"), "text");
  EXPECT_EQ(r.Number("b"), 2.5);
  EXPECT_EQ(r.OptInteger("c"), -7);
  EXPECT_EQ(r.OptBool("d"), true);
  EXPECT_EQ(r.OptBool("e"), false);
  EXPECT_EQ(r.OptNumber("f"), std::nullopt);
  EXPECT_EQ(r.OptBool("f"), std::nullopt);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(r.Keys(), ElementsAre("a", "b", "c", "d", "e"));
}

TEST(FieldReaderTest, UnknownFieldNamesFileLineAndPath) {
  YAML::Node node = Parse("x:\n  good: 1\n  gdoo: 2\n");
  FieldReader r("f.yaml", node["x"], "x", {"good"});
  EXPECT_EQ(r.status().message(),
            "f.yaml:3: x.gdoo: unknown field (expected one of: good)");
}

TEST(FieldReaderTest, DuplicateFieldIsAnError) {
  FieldReader r("f.yaml", Parse("a: 1\na: 2\n"), "", {"a"});
  EXPECT_EQ(r.status().message(), "f.yaml:2: a: duplicate field");
}

TEST(FieldReaderTest, NotAMapping) {
  FieldReader top("f.yaml", Parse("- 1\n"), "", {"a"});
  EXPECT_EQ(top.status().message(),
            "f.yaml:1: (top level): expected a mapping, got a list");
  FieldReader inner("f.yaml", Parse("a: 1\nb: 2\n")["b"], "b", {"a"});
  EXPECT_THAT(inner.status().message(), HasSubstr("b: expected a mapping"));
}

TEST(FieldReaderTest, WrongTypesNameTheValue) {
  YAML::Node node = Parse("n: abc\ni: 1.5\nb: yes\nl: [1]\n");
  auto error = [&](auto read) {
    FieldReader r("f.yaml", node, "", {"n", "i", "b", "l"});
    read(r);
    return r.status().message();
  };
  EXPECT_EQ(error([](FieldReader& r) { (void)r.OptNumber("n"); }),
            "f.yaml:1: n: expected a number, got \"abc\"");
  EXPECT_EQ(error([](FieldReader& r) { (void)r.OptInteger("i"); }),
            "f.yaml:2: i: expected a whole number, got \"1.5\"");
  EXPECT_EQ(error([](FieldReader& r) { (void)r.OptBool("b"); }),
            "f.yaml:3: b: expected true or false, got \"yes\"");
  EXPECT_EQ(error([](FieldReader& r) { (void)r.OptString("l"); }),
            "f.yaml:4: l: expected a single value, got a list");
}

TEST(FieldReaderTest, MissingRequiredFieldPointsAtTheMapping) {
  YAML::Node node = Parse("top:\n  other: 1\n");
  FieldReader r("f.yaml", node["top"], "top", {"other", "name"});
  EXPECT_EQ(r.String("name"), "");
  EXPECT_EQ(r.status().message(), "f.yaml:2: top.name: missing required field");
}

TEST(FieldReaderTest, FirstProblemSticks) {
  FieldReader r("f.yaml", Parse("a: x\nb: y\n"), "", {"a", "b"});
  EXPECT_EQ(r.OptNumber("a"), std::nullopt);
  EXPECT_EQ(r.OptString("b"), std::nullopt);  // fallback after the error
  r.Fail("b", "later problem");
  EXPECT_THAT(r.status().message(), HasSubstr("f.yaml:1: a:"));
}

TEST(FieldReaderTest, AdoptReplacesTheValidatorsFieldName) {
  FieldReader r("f.yaml", Parse("x: 1\nweight: 0\n"), "t[3]", {"x", "weight"});
  r.Adopt("weight", Status::Ok());
  EXPECT_TRUE(r.ok());
  Status valid = InvalidArgument("weight: must be > 0");
  EXPECT_EQ(FieldOf(valid), "weight");
  EXPECT_EQ(ProblemOf(valid), "must be > 0");
  r.Adopt("weight", valid);
  EXPECT_EQ(r.status().message(), "f.yaml:2: t[3].weight: must be > 0");
}

TEST(FieldReaderTest, FreeFormKeys) {
  FieldReader r("f.yaml", Parse("gpu: 2\ncpu: 8\n"), "pools");
  EXPECT_TRUE(r.ok());
  EXPECT_THAT(r.Keys(), ElementsAre("gpu", "cpu"));
  EXPECT_EQ(r.FieldPath("cpu"), "pools.cpu");
  EXPECT_EQ(r.Line("cpu"), 2);
}

TEST(YamlFieldsTest, ErrorAtAndFormatNumber) {
  EXPECT_EQ(ErrorAt("f.yaml", 0, "", "bad").message(), "f.yaml: bad");
  EXPECT_EQ(ErrorAt("f.yaml", 4, "a.b", "bad").message(), "f.yaml:4: a.b: bad");
  EXPECT_EQ(FormatNumber(0.5), "0.5");
  EXPECT_EQ(FormatNumber(-1), "-1");
  EXPECT_EQ(FormatNumber(1e20), "1e+20");
}

}  // namespace
}  // namespace fairq::yaml

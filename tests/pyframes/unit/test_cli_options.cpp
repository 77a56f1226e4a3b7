#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "command/options.h"

using namespace pyframes;
using namespace pyframes::cli;

TEST_CASE("cli options: flags and PIDs in any order, duplicates dropped") {
  auto parsed = parse_options({"12", "--json", "7", "--lock", "12", "--", "9"});
  REQUIRE(parsed.ok());
  CHECK(parsed->action == Action::Dump);
  CHECK(parsed->json);
  CHECK(parsed->lock);
  CHECK(parsed->targets == std::vector<Target>{{12, {}}, {7, {}}, {9, {}}});
}

TEST_CASE("cli options: defaults are text output and no locking") {
  auto parsed = parse_options({"1"});
  REQUIRE(parsed.ok());
  CHECK_FALSE(parsed->json);
  CHECK_FALSE(parsed->lock);
}

TEST_CASE("cli options: --help and --version need no PID, --help wins") {
  CHECK(parse_options({"--help"})->action == Action::Help);
  CHECK(parse_options({"-h", "not-a-pid"})->action == Action::Help);
  CHECK(parse_options({"--version"})->action == Action::Version);
  CHECK(parse_options({"--version", "--help"})->action == Action::Help);
  CHECK(parse_options({"--help", "--version"})->action == Action::Help);
}

TEST_CASE("cli options: usage errors name the bad argument") {
  struct Case {
    std::vector<std::string> args;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {{}, "no PID"},
      {{"--json"}, "no PID"},
      {{"--frobnicate", "1"}, "--frobnicate"},
      {{"-x", "1"}, "-x"},
      {{"--json=yes", "1"}, "--json"},
      {{"0"}, "'0'"},
      {{"-5"}, "-5"},
      {{"99999999999999999999"}, "99999999999999999999"},
      {{"4194305"}, "4194305"},
  };
  for (const Case& c : cases) {
    auto parsed = parse_options(c.args);
    INFO("mentions: " << c.mentions);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().kind == ErrorKind::Usage);
    CHECK(parsed.error().message.find(c.mentions) != std::string::npos);
    CHECK_FALSE(parsed.error().hint.empty());
  }
}

TEST_CASE("cli options: the largest PID Linux allows is accepted") {
  CHECK(parse_pid("4194304").value() == 4194304);
  CHECK(parse_pid("1").value() == 1);
  CHECK_FALSE(parse_pid("").ok());
  CHECK_FALSE(parse_pid("+3").ok());
  CHECK_FALSE(parse_pid(" 3").ok());
}

TEST_CASE("cli options: --help lists every option with its help line") {
  const std::string help = help_text();
  CHECK(help.find("Usage: pyframes") != std::string::npos);
  for (const OptionSpec& spec : option_specs()) {
    CHECK(help.find(std::string(spec.name)) != std::string::npos);
    CHECK(help.find(std::string(spec.help)) != std::string::npos);
  }
  CHECK(version_text("9.8.7").find("9.8.7") != std::string::npos);
}

TEST_CASE("cli options: anything that is not digits names a core file") {
  auto parsed = parse_options({"core.12", "7", "12x", "--", "--json"});
  REQUIRE(parsed.ok());
  CHECK(parsed->targets == std::vector<Target>{{0, "core.12"}, {7, {}}, {0, "12x"}, {0, "--json"}});
  CHECK(parsed->targets[0].name() == "core core.12");
  CHECK(parsed->targets[1].name() == "process 7");
}

// Symbol tables as binutils' nm prints them: independent truth for the ELF reader and the
// native symbolizer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "run_program.h"

struct NmSymbol {
  uint64_t value = 0;
  char type = 0;  // nm's letter: upper case global, lower case local; T/t for code
};

// Runs nm on `path` (dynamic table when `dynamic`), returns name -> symbol; empty if nm fails.
inline std::map<std::string, NmSymbol> nm_symbols(const std::string& path, bool dynamic) {
  std::map<std::string, NmSymbol> out;
  std::vector<std::string> argv = {"nm", "--defined-only"};
  if (dynamic) argv.push_back("-D");
  argv.push_back(path);
  std::string text;
  if (test_support::run_program(argv, &text) != 0) return out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string value, type, name;
    if (!(in >> value >> type >> name)) continue;
    out.emplace(name, NmSymbol{std::stoull(value, nullptr, 16), type[0]});
  }
  return out;
}

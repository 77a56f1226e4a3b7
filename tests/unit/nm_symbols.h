// Symbol tables as binutils' nm prints them: independent truth for the ELF reader and the
// native symbolizer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>

struct NmSymbol {
  uint64_t value = 0;
  char type = 0;  // nm's letter: upper case global, lower case local; T/t for code
};

// Runs nm on `path` (dynamic table when `dynamic`), returns name -> symbol; empty if nm fails.
inline std::map<std::string, NmSymbol> nm_symbols(const std::string& path, bool dynamic) {
  std::map<std::string, NmSymbol> out;
  std::string command = "nm --defined-only " + std::string(dynamic ? "-D " : "") + "'" + path + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::istringstream in(line);
    std::string value, type, name;
    if (!(in >> value >> type >> name)) continue;
    out.emplace(name, NmSymbol{std::stoull(value, nullptr, 16), type[0]});
  }
  return out;
}

//===- JsonFile.cpp - JSON that users write, read strictly ----------------===//

#include "training/JsonFile.h"

#include "llvm/Support/ConvertUTF.h"

#include <map>
#include <vector>

using namespace nn::training;

namespace {

struct Place {
  int line = 1, column = 1;
};

/// One open object or array while scanning.
struct Scope {
  bool object = false;
  /// Objects: the next string is a key (after '{' or ',').
  bool expectKey = false;
  std::map<std::string, Place> keys;
};

/// Appends the UTF-8 encoding of `code` (a code point) to `out`.
void appendUtf8(uint32_t code, std::string &out) {
  char buffer[8];
  char *end = buffer;
  if (llvm::ConvertCodePointToUTF8(code, end))
    out.append(buffer, end);
}

/// The value of four hex digits at `text[at..at+4)`, or -1.
int hex4(llvm::StringRef text, size_t at) {
  if (at + 4 > text.size())
    return -1;
  unsigned value = 0;
  if (text.substr(at, 4).getAsInteger(16, value))
    return -1;
  return (int)value;
}

} // namespace

absl::StatusOr<llvm::json::Value>
nn::training::parseJsonStrictly(llvm::StringRef text, const std::string &file) {
  std::vector<Scope> scopes;
  Place place;
  auto at = [&](const Place &where) {
    return file + ":" + std::to_string(where.line) + ":" +
           std::to_string(where.column);
  };
  auto advance = [&](char c) {
    if (c == '\n') {
      ++place.line;
      place.column = 1;
    } else {
      ++place.column;
    }
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // A string: decoded when it is a key, skipped otherwise. Malformed
      // escapes are left to llvm::json, which reports them.
      Place start = place;
      bool isKey =
          !scopes.empty() && scopes.back().object && scopes.back().expectKey;
      std::string key;
      advance(c);
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        char d = text[j];
        if (d == '\\' && j + 1 < text.size()) {
          char e = text[j + 1];
          advance(d);
          advance(e);
          ++j;
          if (!isKey)
            continue;
          switch (e) {
          case 'b':
            key += '\b';
            break;
          case 'f':
            key += '\f';
            break;
          case 'n':
            key += '\n';
            break;
          case 'r':
            key += '\r';
            break;
          case 't':
            key += '\t';
            break;
          case 'u': {
            int code = hex4(text, j + 1);
            if (code < 0)
              break;
            j += 4;
            place.column += 4;
            // A surrogate pair spells one code point in two escapes.
            if (code >= 0xd800 && code < 0xdc00 && j + 2 < text.size() &&
                text[j + 1] == '\\' && text[j + 2] == 'u') {
              int low = hex4(text, j + 3);
              if (low >= 0xdc00 && low < 0xe000) {
                code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                j += 6;
                place.column += 6;
              }
            }
            appendUtf8((uint32_t)code, key);
            break;
          }
          default:
            key += e;
          }
          continue;
        }
        advance(d);
        if (isKey)
          key += d;
      }
      if (j < text.size())
        advance('"');
      i = j;
      if (isKey) {
        Scope &scope = scopes.back();
        scope.expectKey = false;
        auto [found, added] = scope.keys.emplace(key, start);
        if (!added)
          return absl::InvalidArgumentError(
              at(start) + ": the key '" + key + "' is given twice in one " +
              "object (first at " + at(found->second) +
              "); JSON would keep only the last");
      }
      continue;
    }
    if (c == '{' || c == '[') {
      if ((int)scopes.size() >= kMaxJsonDepth)
        return absl::InvalidArgumentError(
            at(place) + ": objects and lists nest deeper than " +
            std::to_string(kMaxJsonDepth) + " levels");
      Scope scope;
      scope.object = c == '{';
      scope.expectKey = scope.object;
      scopes.push_back(std::move(scope));
    } else if (c == '}' || c == ']') {
      if (!scopes.empty())
        scopes.pop_back();
    } else if (c == ',' && !scopes.empty() && scopes.back().object) {
      scopes.back().expectKey = true;
    }
    advance(c);
  }
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return absl::InvalidArgumentError(
        file + ": not valid JSON: " + llvm::toString(value.takeError()));
  return std::move(*value);
}

// The launch-file readers of launch_text.h.
#include "tools/import/launch_text.h"

#include <cctype>

#include "core/check.h"

namespace parplan::tools {

namespace {

[[noreturn]] void fail_at(const std::string& file, int line, const std::string& found,
                          const std::string& allowed) {
  throw InputError(file + ":" + std::to_string(line), "", found, allowed);
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find('\n', start);
    lines.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

// Where a "#" comment starts outside quotes (YAML/TOML: at the line start or after a blank).
std::size_t comment_start(std::string_view s) {
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return i;
    }
  }
  return std::string_view::npos;
}

// Bracket depth change of a line, quotes skipped.
int bracket_balance(std::string_view s) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return depth;
}

// A quoted scalar without its quotes ("a\"b" -> a"b, 'it''s' -> it's); others trimmed.
std::string unquote(std::string_view raw, const std::string& file, int line) {
  const std::string s = trim(raw);
  if (s.size() >= 1 && (s.front() == '"' || s.front() == '\'')) {
    const char q = s.front();
    std::string out;
    std::size_t i = 1;
    for (; i < s.size() && s[i] != q; ++i) {
      if (q == '"' && s[i] == '\\' && i + 1 < s.size()) {
        const char e = s[++i];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else if (q == '\'' && s[i] == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
        out += '\'';
        ++i;
      } else {
        out += s[i];
      }
    }
    if (i >= s.size() || trim(s.substr(i + 1)).size() > 0) {
      fail_at(file, line, "the quoted value " + s, "one quoted string, closed on its line");
    }
    return out;
  }
  return s;
}

// --- Megatron-LM: shell words -------------------------------------------------------------

struct Word {
  std::string text;
  int line;
  bool quoted;
};

// Shell words of a whole script, one vector per command (split at newlines outside
// continuations, ";", "&&", "||", "|").
std::vector<std::vector<Word>> shell_commands(std::string_view text, const std::string& file) {
  std::vector<std::vector<Word>> commands(1);
  std::string word;
  bool in_word = false, quoted = false;
  int line = 1, word_line = 1;
  char quote = 0;
  auto end_word = [&] {
    if (in_word) commands.back().push_back({word, word_line, quoted});
    word.clear();
    in_word = quoted = false;
  };
  auto end_command = [&] {
    end_word();
    if (!commands.back().empty()) commands.emplace_back();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() && text[i + 1] != '\n') {
        word += text[++i];
      } else {
        if (c == '\n') fail_at(file, word_line, "a quote not closed on its line", "\"...\"");
        word += c;
      }
      continue;
    }
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      i += text[i + 1] == '\r' && i + 2 < text.size() ? 2 : 1;  // continuation
      ++line;
      end_word();
      continue;
    }
    if (c == '\n') {
      end_command();
      ++line;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      continue;
    }
    if (c == '#' && !in_word) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == ';' || ((c == '&' || c == '|') && i + 1 < text.size() && text[i + 1] == c)) {
      if (c != ';') ++i;
      end_command();
      continue;
    }
    if (!in_word) word_line = line;
    in_word = true;
    if (c == '"' || c == '\'') {
      quote = c;
      quoted = true;
      continue;
    }
    word += c;
  }
  if (quote) fail_at(file, word_line, "a quote not closed", "\"...\"");
  end_command();
  commands.pop_back();
  return commands;
}

bool is_flag(const Word& w) { return !w.quoted && w.text.rfind("--", 0) == 0 && w.text.size() > 2; }

}  // namespace

std::vector<LaunchSetting> read_megatron_arguments(std::string_view text, const std::string& file) {
  std::vector<LaunchSetting> out;
  for (const auto& words : shell_commands(text, file)) {
    std::string prefix;  // "torchrun " while reading torchrun's own flags
    for (std::size_t i = 0; i < words.size(); ++i) {
      const Word& w = words[i];
      if (!w.quoted && (w.text == "export" || w.text == "unset") && i + 1 < words.size()) {
        const std::string& assignment = words[i + 1].text;
        const auto eq = assignment.find('=');
        out.push_back(
            {"env " + assignment.substr(0, eq),
             w.text == "unset" || eq == std::string::npos ? "" : assignment.substr(eq + 1),
             w.line});
        ++i;
        continue;
      }
      if (!w.quoted && (w.text == "torchrun" || w.text == "torch.distributed.run")) {
        prefix = "torchrun ";
        continue;
      }
      if (w.text.size() > 3 && w.text.compare(w.text.size() - 3, 3, ".py") == 0) {
        prefix.clear();  // the training script: Megatron's flags follow
        continue;
      }
      if (!is_flag(w)) continue;  // array brackets, "${ARGS[@]}", python, ...
      std::string key = w.text, value;
      if (const auto eq = key.find('='); eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
      } else if (i + 1 < words.size() && !is_flag(words[i + 1]) && words[i + 1].line == w.line &&
                 words[i + 1].text != ")" &&
                 !(words[i + 1].text.size() > 3 &&
                   words[i + 1].text.compare(words[i + 1].text.size() - 3, 3, ".py") == 0)) {
        value = words[++i].text;
        // Flags of several values (argparse nargs='+'): the following words of the line.
        if (key == "--recompute-modules") {
          while (i + 1 < words.size() && !is_flag(words[i + 1]) && words[i + 1].line == w.line &&
                 words[i + 1].text != ")") {
            value += " " + words[++i].text;
          }
        }
      }
      out.push_back({prefix + key, value, w.line});
    }
  }
  return out;
}

std::vector<LaunchSetting> read_yaml_settings(std::string_view text, const std::string& file) {
  const auto lines = split_lines(text);
  std::vector<LaunchSetting> out;
  struct Parent {
    std::size_t indent;
    std::string key;
    bool has_children;
    int line;
  };
  std::vector<Parent> parents;
  auto dotted = [&](const std::string& key) {
    std::string path;
    for (const auto& p : parents) path += p.key + ".";
    return path + key;
  };
  auto close_to = [&](std::size_t indent) {
    while (!parents.empty() && parents.back().indent >= indent) {
      const Parent p = parents.back();
      parents.pop_back();
      if (!p.has_children) out.push_back({dotted(p.key), "", p.line});  // "key:" alone: null
    }
  };
  bool seen_content = false;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const int line = static_cast<int>(n) + 1;
    std::string raw = lines[n];
    if (const auto c = comment_start(raw); c != std::string::npos) raw = raw.substr(0, c);
    if (trim(raw).empty()) continue;
    const std::size_t indent = raw.find_first_not_of(' ');
    if (raw[indent] == '\t') fail_at(file, line, "a tab in the indentation", "spaces");
    std::string content = trim(raw);
    if (content == "---" && !seen_content) continue;
    seen_content = true;
    if (content == "---" || content == "...") {
      fail_at(file, line, "a second YAML document", "one document");
    }
    if (content.rfind("- ", 0) == 0 || content == "-") {
      fail_at(file, line, "a block sequence item (" + content + ")",
              "key: value mappings; write lists as [a, b]");
    }
    std::size_t colon = std::string::npos;
    char quote = 0;
    for (std::size_t i = 0; i < content.size(); ++i) {
      if (quote) {
        if (content[i] == quote) quote = 0;
      } else if (content[i] == '"' || content[i] == '\'') {
        quote = content[i];
      } else if (content[i] == ':' && (i + 1 == content.size() || content[i + 1] == ' ')) {
        colon = i;
        break;
      }
    }
    if (colon == std::string::npos || colon == 0) {
      fail_at(file, line, "'" + content + "'", "key: value, or key: followed by indented keys");
    }
    const std::string key = unquote(content.substr(0, colon), file, line);
    std::string value = trim(content.substr(colon + 1));
    close_to(indent);
    if (!parents.empty()) parents.back().has_children = true;
    if (value.empty()) {
      parents.push_back({indent, key, false, line});
      continue;
    }
    const char first = value.front();
    if (first == '&' || first == '*' || first == '|' || first == '>' || first == '!') {
      fail_at(file, line, std::string("'") + first + "' (anchor, alias, tag or block scalar)",
              "plain, quoted or flow values");
    }
    int depth = bracket_balance(value);
    while (depth > 0 && n + 1 < lines.size()) {  // a flow value over several lines
      std::string next = lines[++n];
      if (const auto c = comment_start(next); c != std::string::npos) next = next.substr(0, c);
      value += " " + trim(next);
      depth += bracket_balance(next);
    }
    if (depth != 0) fail_at(file, line, "unbalanced brackets in " + value, "[...] or {...}");
    if (first == '[' || first == '{') {
      out.push_back({dotted(key), value, line});
    } else {
      out.push_back({dotted(key), unquote(value, file, line), line});
    }
  }
  close_to(0);
  return out;
}

std::vector<LaunchSetting> read_toml_settings(std::string_view text, const std::string& file) {
  const auto lines = split_lines(text);
  std::vector<LaunchSetting> out;
  std::string table;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const int line = static_cast<int>(n) + 1;
    std::string content = lines[n];
    if (const auto c = comment_start(content); c != std::string::npos) {
      content = content.substr(0, c);
    }
    content = trim(content);
    if (content.empty()) continue;
    if (content.rfind("[[", 0) == 0) {
      fail_at(file, line, content + " (an array of tables)", "[table] and key = value");
    }
    if (content.front() == '[') {
      if (content.back() != ']') fail_at(file, line, content, "[table]");
      table = trim(content.substr(1, content.size() - 2));
      continue;
    }
    const auto eq = content.find('=');
    if (eq == std::string::npos || eq == 0) fail_at(file, line, "'" + content + "'", "key = value");
    std::string key = unquote(content.substr(0, eq), file, line);
    std::string value = trim(content.substr(eq + 1));
    if (value.empty()) fail_at(file, line, key + " without a value", "key = value");
    if (value.rfind("\"\"\"", 0) == 0 || value.rfind("'''", 0) == 0) {
      fail_at(file, line, "a multi-line string", "one-line strings");
    }
    if (value.front() == '{') fail_at(file, line, "an inline table", "[table] sections");
    if (value.front() == '[') {
      int depth = bracket_balance(value);
      while (depth > 0 && n + 1 < lines.size()) {
        std::string next = lines[++n];
        if (const auto c = comment_start(next); c != std::string::npos) next = next.substr(0, c);
        next = trim(next);
        value += (value.back() == '[' || value.back() == ',' ? "" : " ") + next;
        depth += bracket_balance(next);
      }
      if (depth != 0) fail_at(file, line, "an array not closed", "[a, b]");
    } else {
      value = unquote(value, file, line);
    }
    out.push_back({table.empty() ? key : table + "." + key, value, line});
  }
  return out;
}

std::optional<std::vector<std::string>> split_flow_list(std::string_view text) {
  const std::string s = trim(text);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return std::nullopt;
  std::vector<std::string> items;
  std::string item;
  int depth = 0;
  char quote = 0;
  auto push = [&] {
    std::string t = trim(item);
    if (!t.empty() && (t.front() == '"' || t.front() == '\'') && t.back() == t.front()) {
      t = t.substr(1, t.size() - 2);
    }
    if (!trim(item).empty()) items.push_back(t);
    item.clear();
  };
  for (std::size_t i = 1; i + 1 < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      push();
      continue;
    }
    item += c;
  }
  push();
  return items;
}

}  // namespace parplan::tools

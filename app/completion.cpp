// The shell completion scripts (see completion.hpp).
#include "completion.hpp"

#include <cctype>

namespace app {

namespace {

// What a flag's value completes to.
enum class value_kind { none, words, dirs, files, typed };

struct flag_completion {
    std::vector<std::string> names;  // "-n", "--seq-len"
    value_kind kind = value_kind::none;  // none: a switch
    std::vector<std::string> words, forms;  // words end with a space, forms ("window:") do not
    std::string description;
};

// "window:W" -> "window:"; a plain value -> "".
std::string form_head(const std::string& v) {
    const std::size_t colon = v.find(':');
    if (colon == std::string::npos || colon + 1 >= v.size()) return "";
    return std::isupper(static_cast<unsigned char>(v[colon + 1])) ? v.substr(0, colon + 1) : "";
}

flag_completion classify(const flag_info& f) {
    flag_completion c;
    c.names = f.names;
    c.description = f.description;
    for (const std::string& v : f.accepts.values) {
        const std::string head = form_head(v);
        if (head.empty()) c.words.push_back(v);
        else
            c.forms.push_back(head);
    }
    if (f.is_switch || (f.value_name.empty() && !f.positional)) c.kind = value_kind::none;  // takes no value
    else if (!c.words.empty() || !c.forms.empty())
        c.kind = value_kind::words;
    else if (f.value_name == "DIR")
        c.kind = value_kind::dirs;
    else if (f.value_name == "FILE")
        c.kind = value_kind::files;
    else
        c.kind = value_kind::typed;
    return c;
}

struct command_completion {
    std::string name;
    std::vector<flag_completion> flags;  // the named ones
    bool positional = false;
    flag_completion argument;  // its positional argument, when it has one
    std::string flag_words;  // "--seq-len -n --help"
};

std::vector<command_completion> classify(const std::vector<completion_command>& commands) {
    std::vector<command_completion> out;
    for (const completion_command& c : commands) {
        command_completion cc;
        cc.name = c.name;
        for (const flag_info& f : c.flags) {
            if (f.positional) {
                if (!cc.positional) cc.argument = classify(f), cc.positional = true;
                continue;
            }
            cc.flags.push_back(classify(f));
            for (const std::string& n : f.names)
                if (n.rfind("--", 0) == 0) cc.flag_words += n + " ";
        }
        cc.flag_words += "--help";
        out.push_back(std::move(cc));
    }
    return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
    return out;
}

std::string command_names(const std::vector<command_completion>& commands) {
    std::vector<std::string> names;
    for (const command_completion& c : commands) names.push_back(c.name);
    return join(names, " ");
}

// ---- bash ---------------------------------------------------------------------------------------

std::string bash_value(const flag_completion& f) {
    switch (f.kind) {
        case value_kind::words:
            return "_attn_explain_words \"" + join(f.words, " ") + "\" \"" + join(f.forms, " ") + "\"";
        case value_kind::dirs: return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))";
        case value_kind::files: return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))";
        default: return ":";
    }
}

std::string bash_completion(const std::vector<command_completion>& commands) {
    std::string out =
        "# bash completion for attn-explain (attn-explain completion bash)\n"
        "# Words (then a space) and forms such as window: (no space) that start with $cur.\n"
        "_attn_explain_words() {\n"
        "    COMPREPLY=($(compgen -W \"$1 $2\" -- \"$cur\"))\n"
        "    if [ ${#COMPREPLY[@]} -eq 1 ] && [[ ${COMPREPLY[0]} == *: ]]; then compopt -o nospace 2>/dev/null; fi\n"
        "}\n"
        "_attn_explain() {\n"
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
        "    COMPREPLY=()\n"
        "    if [ \"$COMP_CWORD\" -eq 1 ]; then _attn_explain_words \"" +
        command_names(commands) +
        " --help --version\" \"\"; return; fi\n"
        "    # the numbers after window: (bash splits words at the colon)\n"
        "    if [ \"$cur\" = : ] || [ \"$prev\" = : ]; then return; fi\n"
        "    case ${COMP_WORDS[1]} in\n";
    for (const command_completion& c : commands) {
        out += "        " + c.name + ")\n            case $prev in\n";
        for (const flag_completion& f : c.flags) {
            if (f.kind == value_kind::none) continue;
            out += "                " + join(f.names, "|") + ") " + bash_value(f) + "; return;;\n";
        }
        out += "            esac\n";
        const std::string flags = "_attn_explain_words \"" + c.flag_words + "\" \"\"";
        if (c.positional && c.argument.kind != value_kind::typed)
            out += "            if [[ $cur == -* ]]; then " + flags + "; else " + bash_value(c.argument) + "; fi;;\n";
        else
            out += "            " + flags + ";;\n";
    }
    return out + "    esac\n}\ncomplete -F _attn_explain attn-explain\n";
}

// ---- zsh ----------------------------------------------------------------------------------------

std::string zsh_value(const flag_completion& f) {
    switch (f.kind) {
        case value_kind::words: {
            std::string out;
            if (!f.words.empty()) out += "compadd -- " + join(f.words, " ");
            if (!f.forms.empty())
                out += std::string(out.empty() ? "" : "; ") + "compadd -S '' -- " + join(f.forms, " ");
            return out;
        }
        case value_kind::dirs: return "_files -/";
        case value_kind::files: return "_files";
        default: return ":";
    }
}

std::string zsh_completion(const std::vector<command_completion>& commands) {
    std::string out =
        "#compdef attn-explain\n# zsh completion for attn-explain (attn-explain completion zsh)\n"
        "_attn_explain() {\n"
        "  local cur=${words[CURRENT]} prev=${words[CURRENT-1]}\n"
        "  if (( CURRENT == 2 )); then compadd -- " +
        command_names(commands) +
        " --help --version; return; fi\n"
        "  case $words[2] in\n";
    for (const command_completion& c : commands) {
        out += "    " + c.name + ")\n      case $prev in\n";
        for (const flag_completion& f : c.flags) {
            if (f.kind == value_kind::none) continue;
            out += "        " + join(f.names, "|") + ") " + zsh_value(f) + "; return;;\n";
        }
        out += "      esac\n";
        const std::string flags = "compadd -- " + c.flag_words;
        if (c.positional && c.argument.kind != value_kind::typed)
            out += "      if [[ $cur == -* ]]; then " + flags + "; else " + zsh_value(c.argument) + "; fi;;\n";
        else
            out += "      " + flags + ";;\n";
    }
    return out + "  esac\n}\n_attn_explain \"$@\"\n";
}

// ---- fish ---------------------------------------------------------------------------------------

// Text inside fish's single quotes.
std::string fish_quoted(const std::string& s) {
    std::string out = "'";
    for (char ch : s) {
        if (ch == '\'' || ch == '\\') out += '\\';
        out += ch;
    }
    return out + "'";
}

std::string fish_value(const flag_completion& f) {
    switch (f.kind) {
        case value_kind::words: {
            std::vector<std::string> all = f.words;
            all.insert(all.end(), f.forms.begin(), f.forms.end());
            return " -x -a " + fish_quoted(join(all, " "));
        }
        case value_kind::dirs: return " -x -a '(__fish_complete_directories)'";
        case value_kind::files: return " -r -F";
        case value_kind::typed: return " -x";
        default: return "";
    }
}

std::string fish_completion(const std::vector<command_completion>& commands) {
    const std::string names = command_names(commands);
    std::string out =
        "# fish completion for attn-explain (attn-explain completion fish)\n"
        "complete -c attn-explain -f\n"
        "complete -c attn-explain -n " +
        fish_quoted("not __fish_seen_subcommand_from " + names) + " -a " + fish_quoted(names) + "\n";
    for (const command_completion& c : commands) {
        const std::string when = " -n " + fish_quoted("__fish_seen_subcommand_from " + c.name);
        for (const flag_completion& f : c.flags) {
            std::string line = "complete -c attn-explain" + when;
            for (const std::string& n : f.names)
                line += n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1);
            line += fish_value(f);
            if (!f.description.empty()) line += " -d " + fish_quoted(f.description);
            out += line + "\n";
        }
        if (c.positional && c.argument.kind != value_kind::typed && c.argument.kind != value_kind::none)
            out += "complete -c attn-explain" + when +
                (c.argument.kind == value_kind::words ? " -a " +
                         fish_quoted(join(c.argument.words, " ") + (c.argument.forms.empty() ? "" : " ") +
                                     join(c.argument.forms, " "))
                     : c.argument.kind == value_kind::dirs ? " -a '(__fish_complete_directories)'"
                                                           : " -F") +
                "\n";
    }
    return out;
}

}  // namespace

std::string completion_script(const std::vector<completion_command>& commands, const std::string& shell) {
    const std::vector<command_completion> all = classify(commands);
    if (shell == "bash") return bash_completion(all);
    if (shell == "zsh") return zsh_completion(all);
    if (shell == "fish") return fish_completion(all);
    return "";
}

}  // namespace app

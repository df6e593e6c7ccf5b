// Library errors in the words of the command line (see errors.hpp).
#include "errors.hpp"

#include "cli_text.hpp"

#include <cctype>
#include <map>
#include <utility>

namespace app {

namespace {
// The one table: a parameter as core/ names it, and the flag that sets it.
// clang-format off
constexpr std::pair<const char*, const char*> param_flags[] = {
    {"batch", "--batch"},       {"seq_len", "--seq-len"},   {"d_model", "--d-model"}, {"d_head", "--d-head"},
    {"heads", "--heads"},       {"kv_heads", "--kv-heads"}, {"layers", "--layers"},   {"block_q", "--block-q"},
    {"block_k", "--block-k"},   {"lengths", "--lengths"},   {"pad_side", "--pad-side"}, {"align", "--align"},
    {"mask", "--mask"},         {"loss", "--loss"},         {"d_ff", "--d-ff"},       {"vocab", "--vocab"},
    {"kv_latent", "--kv-latent"}, {"rope_dim", "--rope-dim"}, {"devices", "--devices"}};
// clang-format on

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The first place `word` stands in `text` as a word of its own, or npos.
std::size_t find_word(const std::string& text, const std::string& word) {
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
        const bool starts = at == 0 || !word_char(text[at - 1]);
        const bool ends = at + word.size() == text.size() || !word_char(text[at + word.size()]);
        if (starts && ends) return at;
    }
    return std::string::npos;
}
}  // namespace

std::string flag_of_param(const std::string& param) {
    for (const auto& [name, flag] : param_flags)
        if (param == name) return flag;
    return "";
}

std::string user_message(const attn::error& e) {
    // Translated first (the templates are the library's English), then each parameter named by its flag.
    const std::string what = translate_message(e.what());
    const auto* a = dynamic_cast<const attn::argument_error*>(&e);
    if (!a) return what;
    // Found in the library's message first, replaced from the last: a flag put in ("--kv-heads")
    // is never searched again (for "heads").
    std::map<std::size_t, std::pair<std::size_t, std::string>> edits;  // at -> (length, flag)
    for (const std::string& p : a->params) {
        const std::string flag = flag_of_param(p);
        const std::size_t at = find_word(what, p);
        if (!flag.empty() && at != std::string::npos) edits.emplace(at, std::make_pair(p.size(), flag));
    }
    std::string text = what;
    for (auto it = edits.rbegin(); it != edits.rend(); ++it)
        text.replace(it->first, it->second.first, it->second.second);
    return text;
}

}  // namespace app

// Reading a Hugging Face config.json (see hf_config.hpp).
#include "attn/io/hf_config.hpp"

#include <cstdint>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/io/read_text.hpp"

namespace attn {
namespace {

using json = nlohmann::json;
constexpr std::size_t hf_max_bytes = 1 << 20;
constexpr std::int64_t hf_max_size = std::int64_t{1} << 30;

// A positive whole number under `key`, or nullopt when the key is absent or null.
std::optional<std::size_t> hf_size(const json& j, const char* key, const std::string& name, bool zero_ok = false) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer())
        throw error(fmt::format("{}: {} must be a whole number (got {})", name, key, it->dump().substr(0, 40)));
    const std::int64_t v = it->get<std::int64_t>();
    if (v < (zero_ok ? 0 : 1) || v > hf_max_size)
        throw error(fmt::format("{}: {} = {} is out of range (1 to {})", name, key, v, hf_max_size));
    return static_cast<std::size_t>(v);
}

std::size_t hf_required(const json& j, const char* key, const std::string& name) {
    const auto v = hf_size(j, key, name);
    if (!v) throw error(fmt::format("{} has no {}: is it a decoder model's config.json?", name, key));
    return *v;
}

std::optional<std::string> hf_string(const json& j, const char* key, const std::string& name) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw error(fmt::format("{}: {} must be a string", name, key));
    return it->get<std::string>();
}

roofline::mlp_kind hf_mlp(const std::string& act, const std::string& name) {
    if (act == "silu" || act == "swish" || act == "swiglu") return roofline::mlp_kind::swiglu;
    if (act.rfind("gelu", 0) == 0 || act == "relu") return roofline::mlp_kind::gelu;
    throw error(fmt::format("{}: unknown hidden_act '{}': use --mlp gelu or swiglu instead of --hf-config", name,
                            act.substr(0, 40)));
}

roofline::dtype hf_dtype(const std::string& t, const std::string& name) {
    if (t == "float32") return roofline::dtype::float32;
    if (t == "float16") return roofline::dtype::float16;
    if (t == "bfloat16") return roofline::dtype::bfloat16;
    if (t.rfind("float8", 0) == 0) return roofline::dtype::fp8;
    throw error(
        fmt::format("{}: unknown dtype '{}': use float32, float16, bfloat16 or float8_*", name, t.substr(0, 40)));
}

}  // namespace

hf_model parse_hf_config(const std::string& text, const std::string& name) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) throw error(name + ": not valid JSON: give a model's config.json");
    if (!j.is_object()) throw error(name + ": not a JSON object: give a model's config.json");
    hf_model out;
    roofline::model& m = out.m;
    m.layers = hf_required(j, "num_hidden_layers", name);
    m.d_model = hf_required(j, "hidden_size", name);
    m.heads = hf_required(j, "num_attention_heads", name);
    auto take = [&](const char* key, std::size_t& into, std::size_t fallback) {
        const auto v = hf_size(j, key, name);
        if (!v) out.defaulted.emplace_back(key);
        into = v.value_or(fallback);
    };
    take("num_key_value_heads", m.kv_heads, m.heads);
    take("head_dim", m.d_head, m.d_model / m.heads);
    take("intermediate_size", m.d_ff, 4 * m.d_model);
    take("vocab_size", m.vocab, 32000);
    const auto act = hf_string(j, "hidden_act", name);
    if (!act) out.defaulted.emplace_back("hidden_act");
    m.mlp = act ? hf_mlp(*act, name) : roofline::mlp_kind::gelu;
    const auto tie = j.find("tie_word_embeddings");
    if (tie == j.end() || tie->is_null()) out.defaulted.emplace_back("tie_word_embeddings");
    else if (!tie->is_boolean())
        throw error(name + ": tie_word_embeddings must be true or false");
    else
        m.tie_embeddings = tie->get<bool>();
    if (const auto rank = hf_size(j, "kv_lora_rank", name)) {  // MLA (DeepSeek-V2, V3)
        m.kv_latent = *rank;
        m.kv_heads = m.heads;
        if (const auto nope = hf_size(j, "qk_nope_head_dim", name)) m.d_head = *nope;
        m.rope_dim = hf_size(j, "qk_rope_head_dim", name, true).value_or(0);
        m.d_v = hf_size(j, "v_head_dim", name).value_or(0);
    }
    auto dtype = hf_string(j, "torch_dtype", name);
    if (!dtype) dtype = hf_string(j, "dtype", name);
    if (!dtype) out.defaulted.emplace_back("torch_dtype");
    m.weights = dtype ? hf_dtype(*dtype, name) : roofline::dtype::float16;
    out.model_type = hf_string(j, "model_type", name).value_or("");
    if (m.heads % m.kv_heads != 0)
        throw error(fmt::format("{}: num_key_value_heads {} does not divide num_attention_heads {}", name, m.kv_heads,
                                m.heads));
    return out;
}

hf_model read_hf_config(const std::string& path) {
    return parse_hf_config(read_text_file(path, hf_max_bytes, path), path);
}

}  // namespace attn

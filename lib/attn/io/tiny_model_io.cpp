// learn --save's model folder, written and read back (see tiny_model_io.hpp).
#include "attn/io/tiny_model_io.hpp"

#include <cmath>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "attn/core/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/read_text.hpp"
#include "attn/io/write_file.hpp"

namespace attn {

namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;
constexpr std::size_t tiny_json_max_bytes = 16 << 10;  // model.json is a few hundred bytes
const char* const tiny_resave = "save the model again with attn-explain learn --save DIR";

const char* position_name(position_kind k) {
    switch (k) {
        case position_kind::learned: return "learned";
        case position_kind::sinusoidal: return "sinusoidal";
        case position_kind::rope: return "rope";
        case position_kind::none: return "none";
    }
    return "learned";
}

// The shape of tensor `id` in a model of config c.
std::vector<std::size_t> tiny_shape(const tiny_config& c, const std::string& id) {
    if (id == "embed") return {c.vocab, c.d_model};
    if (id == "pos") return {c.seq_len, c.d_model};
    if (id == "unembed") return {c.d_model, c.vocab};
    if (id.size() > 5 && id.compare(id.size() - 5, 5, "_norm") == 0) return {c.d_head()};
    if (id.size() > 4 && (id.compare(id.size() - 4, 4, "_W_K") == 0 || id.compare(id.size() - 4, 4, "_W_V") == 0))
        return {c.d_model, c.kv_dim()};
    return {c.d_model, c.d_model};
}

std::size_t tiny_size(const json& j, const char* key, std::size_t lo, std::size_t hi, const std::string& name) {
    const auto it = j.find(key);
    if (it == j.end()) throw error(fmt::format("{} has no \"{}\": {}", name, key, tiny_resave));
    if (!it->is_number_integer())
        throw error(fmt::format("{}: \"{}\" must be a whole number (got {})", name, key, it->dump().substr(0, 40)));
    const std::int64_t v = it->get<std::int64_t>();
    if (v < static_cast<std::int64_t>(lo) || v > static_cast<std::int64_t>(hi))
        throw error(fmt::format("{}: \"{}\" = {} is outside {} … {}, the sizes learn trains", name, key, v, lo, hi));
    return static_cast<std::size_t>(v);
}

bool tiny_bool(const json& j, const char* key, const std::string& name) {
    const auto it = j.find(key);
    if (it == j.end()) throw error(fmt::format("{} has no \"{}\": {}", name, key, tiny_resave));
    if (!it->is_boolean()) throw error(fmt::format("{}: \"{}\" must be true or false", name, key));
    return it->get<bool>();
}

std::string tiny_string(const json& j, const char* key, const std::string& name) {
    const auto it = j.find(key);
    if (it == j.end()) throw error(fmt::format("{} has no \"{}\": {}", name, key, tiny_resave));
    if (!it->is_string() || it->get<std::string>().size() > 64)
        throw error(fmt::format("{}: \"{}\" must be a short string", name, key));
    return it->get<std::string>();
}

// model.json's settings, every one checked against learn's own limits.
tiny_model_file parse_tiny_json(const std::string& text, const std::string& name) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception&) {
        throw error(fmt::format("{}: not JSON: {}", name, tiny_resave));
    }
    if (!j.is_object()) throw error(fmt::format("{}: not a JSON object: {}", name, tiny_resave));
    tiny_model_file f;
    tiny_config& c = f.model.c;
    c.vocab = tiny_size(j, "vocab", 2, 256, name);
    c.seq_len = tiny_size(j, "seq_len", 2, 64, name);
    c.d_model = tiny_size(j, "d_model", 2, 256, name);
    c.heads = tiny_size(j, "heads", 1, c.d_model, name);
    c.layers = tiny_size(j, "layers", 1, 4, name);
    if (c.d_model % c.heads != 0)
        throw error(fmt::format("{}: heads = {} does not divide d_model = {}", name, c.heads, c.d_model));
    // GQA: "kv_heads" is written only when it is fewer than heads; without it, kv_heads = heads.
    c.kv_heads = j.contains("kv_heads") ? tiny_size(j, "kv_heads", 1, c.heads, name) : c.heads;
    if (c.heads % c.kv_heads != 0)
        throw error(fmt::format("{}: kv_heads = {} does not divide heads = {}", name, c.kv_heads, c.heads));
    const std::string pos = tiny_string(j, "positions", name);
    if (pos == "learned") c.positions = position_kind::learned;
    else if (pos == "sinusoidal")
        c.positions = position_kind::sinusoidal;
    else if (pos == "rope")
        c.positions = position_kind::rope;
    else if (pos == "none")
        c.positions = position_kind::none;
    else
        throw error(fmt::format("{}: unknown positions '{}' (learned, sinusoidal, rope or none)", name, pos));
    if (c.positions == position_kind::rope && c.d_head() % 2 != 0)
        throw error(fmt::format("{}: positions rope needs an even d_model / heads (got {})", name, c.d_head()));
    c.causal = tiny_bool(j, "causal", name);
    c.scale = tiny_bool(j, "scale", name);
    c.qk_norm = tiny_bool(j, "qk_norm", name);
    const auto cap = j.find("softcap");
    if (cap == j.end()) throw error(fmt::format("{} has no \"softcap\": {}", name, tiny_resave));
    if (!cap->is_null()) {
        if (!cap->is_number() || !(cap->get<double>() > 0) || !std::isfinite(cap->get<double>()))
            throw error(fmt::format("{}: \"softcap\" must be a positive number or null", name));
        c.softcap = cap->get<double>();
    }
    f.task = tiny_string(j, "task", name);
    const auto seed = j.find("seed");
    if (seed == j.end() || !seed->is_number_unsigned())
        throw error(fmt::format("{}: \"seed\" must be a whole number of at least 0", name));
    f.seed = seed->get<std::uint64_t>();
    return f;
}

}  // namespace

std::string tiny_model_json(const tiny_config& c, const std::string& task, std::uint64_t seed) {
    json j = json::object();
    j["vocab"] = c.vocab;
    j["seq_len"] = c.seq_len;
    j["d_model"] = c.d_model;
    j["heads"] = c.heads;
    if (c.kv_count() < c.heads) j["kv_heads"] = c.kv_count();  // absent: as many as heads (older files too)
    j["layers"] = c.layers;
    j["positions"] = position_name(c.positions);
    j["causal"] = c.causal;
    j["scale"] = c.scale;
    j["qk_norm"] = c.qk_norm;
    j["softcap"] = c.softcap > 0 ? json(c.softcap) : json(nullptr);
    j["task"] = task;
    j["seed"] = seed;
    return j.dump(1) + "\n";
}

void write_tiny_model(const tiny_model& m, const std::string& task, std::uint64_t seed, const std::string& folder) {
    const fs::path dir(folder);
    write_file((dir / "model.json").string(), tiny_model_json(m.c, task, seed), "--save");
    for (const auto& [id, p] : m.tensors())
        npy::write((dir / (id + ".npy")).string(), tiny_shape(m.c, id), *p, npy::dtype::float64);
}

tiny_model_file read_tiny_model(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw error(fmt::format("{}: no such folder: {}", dir, "train one with attn-explain learn --save DIR"));
    const std::string json_path = (fs::path(dir) / "model.json").string();
    if (!fs::exists(json_path, ec))
        throw error(
            fmt::format("{}: missing: {}", json_path, "the folder was not written by learn --save, or is older"));
    tiny_model_file f = parse_tiny_json(read_text_file(json_path, tiny_json_max_bytes, json_path), json_path);
    const tiny_config c = f.model.c;
    f.model = init_tiny_model(c, f.seed);  // the shapes (and sinusoidal positions); every trained tensor replaced
    for (auto& [id, p] : f.model.tensors()) {
        const std::string path = (fs::path(dir) / (id + ".npy")).string();
        if (!fs::exists(path, ec)) throw error(fmt::format("{}: missing: {}", path, tiny_resave));
        const std::vector<std::size_t> want = tiny_shape(c, id);
        npy::array a;
        try {
            a = npy::read(path, p->size() * 8 + 4096);  // no larger than the tensor this config needs
        } catch (const npy::error& e) {
            // tiny_resave's words, written out so that the message's template can be checked (error_catalogue.py)
            throw error(fmt::format("{}: save the model again with attn-explain learn --save DIR", e.what()));
        }
        if (a.shape != want)
            throw error(fmt::format("{}: shape ({}) but model.json needs ({}): {}", path, fmt::join(a.shape, ", "),
                                    fmt::join(want, ", "), tiny_resave));
        for (double x : a.data)
            if (!std::isfinite(x)) throw error(fmt::format("{}: holds a non-finite value: {}", path, tiny_resave));
        *p = std::move(a.data);
    }
    return f;
}

tiny_model load_tiny_model(const std::string& dir) { return read_tiny_model(dir).model; }

}  // namespace attn

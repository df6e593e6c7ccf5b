// `attn-explain batching --format json` (see json_batching.hpp).
#include "attn/render/json_batching.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

namespace attn {

namespace {

std::string ints(const std::vector<std::size_t>& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
    return out + "]";
}

std::string strategy_json(const strategy_cost& c, const std::vector<std::size_t>& lengths) {
    std::string batches = "[";
    for (std::size_t k = 0; k < c.steps.size(); ++k) {
        const batch_step& s = c.steps[k];
        std::vector<std::size_t> ls;
        for (std::size_t i : s.items) ls.push_back(lengths[i]);
        batches += k ? ", " : "";
        if (c.kind == strategy::packing)
            batches += fmt::format("{{\"lengths\": {}, \"tokens\": {}, \"cu_seqlens\": {}}}", ints(ls), s.padded_to,
                                   ints(s.cu_seqlens));
        else
            batches += fmt::format("{{\"lengths\": {}, \"padded_to\": {}}}", ints(ls), s.padded_to);
    }
    batches += "]";
    std::string out = fmt::format(
        "    {{\"name\": {}, \"flops\": {}, \"padding_flops\": {}, \"wasted_share\": {}, \"peak_bytes\": {}, "
        "\"useful_flops\": {}, \"bytes\": {}, \"padding_bytes\": {}, \"steps\": {}, \"tokens\": {}, \"padded_tokens\": "
        "{}",
        json_string(name_of(c.kind)), json_number(c.flops), json_number(c.padding_flops), json_number(c.wasted_share),
        json_number(c.peak_bytes), json_number(c.useful_flops), json_number(c.bytes), json_number(c.padding_bytes),
        c.steps.size(), c.tokens, c.padded_tokens);
    if (c.kind == strategy::packing) out += ", \"dense_mask_flops\": " + json_number(c.dense_mask_flops);
    return out + ",\n     \"batches\": " + batches + "}";
}

}  // namespace

std::string render_batching_json(const batching_report& r) {
    const batching_config& c = r.config;
    std::string out = "{\n";
    out += fmt::format(
        "  \"config\": {{\"lengths\": {}, \"source\": {}, \"dist\": {}, \"batch\": {}, \"d_model\": {}, \"heads\": {}, "
        "\"bytes\": {}, \"buckets\": {}, \"seed\": {}}},\n",
        ints(c.lengths), json_string(c.source), c.dist.empty() ? "null" : json_string(c.dist), c.batch, c.dims.d_model,
        c.dims.heads, c.dims.bytes, ints(c.buckets), c.seed);
    out += "  \"strategies\": [\n" + strategy_json(r.padding, c.lengths) + ",\n" +
        strategy_json(r.bucketing, c.lengths) + ",\n" + strategy_json(r.packing, c.lengths) + "\n  ],\n";
    out += "  \"buckets\": [";
    for (std::size_t k = 0; k < r.buckets.size(); ++k) {
        const bucket_row& b = r.buckets[k];
        out += fmt::format(
            "{}{{\"lo\": {}, \"hi\": {}, \"sequences\": {}, \"steps\": {}, \"padded_to\": {}, \"flops\": {}, "
            "\"padding_flops\": {}}}",
            k ? ", " : "", b.lo, b.hi ? std::to_string(b.hi) : "null", b.sequences, b.steps,
            b.padded_to ? std::to_string(b.padded_to) : "null", json_number(b.flops), json_number(b.padding_flops));
    }
    out += "],\n";
    const packed_check& k = r.check;
    std::string per = "[";
    for (std::size_t s = 0; s < k.per_sequence.size(); ++s) per += (s ? ", " : "") + json_number(k.per_sequence[s]);
    per += "]";
    out += fmt::format(
        "  \"packed_check\": {{\"lengths\": {}, \"trimmed\": {}, \"cu_seqlens\": {}, \"d_model\": {}, \"heads\": {}, "
        "\"dtype\": \"float32\", \"max_diff\": {}, \"unmasked_max_diff\": {}, \"per_sequence_max_diff\": {}}}\n",
        ints(k.lengths), k.trimmed ? "true" : "false", ints(k.cu_seqlens), k.d_model, k.heads, json_number(k.max_diff),
        json_number(k.unmasked_diff), per);
    return out + "}\n";
}

}  // namespace attn

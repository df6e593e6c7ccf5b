// `attn-explain flash` and `attn-explain cost` as JSON (see json_flash.hpp).
#include "attn/render/json_flash.hpp"

#include <fmt/format.h>

#include "attn/render/json.hpp"

#include <xtensor/xadapt.hpp>

namespace attn {

namespace {
// --backward: every (key tile, query block) step, the max differences against grad's, the memory
// and the gradients themselves.
std::string flash_backward_json(const flash_report& r) {
    const flash_backward_report& b = *r.backward;
    std::string tiles = "[";
    for (std::size_t i = 0; i < b.tiled.tiles.size(); ++i) {
        const flash_bw_tile& t = b.tiled.tiles[i];
        tiles += fmt::format(
            "{}{{\"tile_k\": {}, \"tile_q\": {}, \"keys\": [{}, {}], \"rows\": [{}, {}], \"skipped\": {}, "
            "\"sram_bytes\": {}, \"p_sum\": {}}}",
            i ? ",\n   " : "", t.tile_k, t.tile_q, t.k_from, t.k_to, t.q_from, t.q_to, t.skipped ? "true" : "false",
            t.skipped ? 0 : t.sram_bytes, json_number(t.p_sum, dtype::float64));
    }
    const std::vector<std::size_t> shape{r.result.lse.size()};
    return fmt::format(
        ",\n \"backward\": {{\"tiles\": {}],\n  \"max_diff\": {{\"d_Q\": {}, \"d_K\": {}, \"d_V\": {}}},\n  "
        "\"softmax_lse\": {},\n  \"D\": {},\n  \"d_output\": {},\n  \"d_Q\": {},\n  \"d_K\": {},\n  "
        "\"d_V\": {},\n  \"sram_peak_bytes\": {}, \"p_bytes\": {}, \"kept_bytes\": {}, \"flops_run\": {}}}",
        tiles, json_number(b.diff_q, dtype::float64), json_number(b.diff_k, dtype::float64),
        json_number(b.diff_v, dtype::float64), json_tensor(xt::adapt(r.result.lse, shape), dtype::float64),
        json_tensor(xt::adapt(b.tiled.d_rows, std::vector<std::size_t>{b.tiled.d_rows.size()}), dtype::float64),
        json_tensor(b.d_output, dtype::float64), json_tensor(b.tiled.d_q, dtype::float64),
        json_tensor(b.tiled.d_k, dtype::float64), json_tensor(b.tiled.d_v, dtype::float64), b.tiled.sram_peak,
        b.tiled.p_bytes, b.tiled.kept_bytes, json_number(b.tiled.flops_run, dtype::float64));
}

// --io: one (n, d) case's traffic in bytes and FA-1's blocks ("block_q", "block_k": null when the
// SRAM holds no block).
std::string flash_io_case_json(const flash_io::io_case& c, std::size_t e) {
    const auto bytes = [e](std::uint64_t elements) { return std::to_string(elements * e); };
    const auto opt = [](bool has, const std::string& v) { return has ? v : std::string("null"); };
    const bool fits = c.b.has_value();
    return fmt::format(
        "\"seq_len\": {}, \"d\": {}, \"standard_bytes\": {}, \"tiled_bytes\": {}, \"block_q\": {}, "
        "\"block_k\": {}, \"tiles_q\": {}, \"tiles_k\": {}, \"standard_backward_bytes\": {}, "
        "\"tiled_backward_bytes\": {}, \"crossover_elements\": {}, \"crossover_bytes\": {}",
        c.n, c.d, bytes(c.standard_fw.total()), opt(fits, bytes(c.tiled_fw.total())),
        opt(fits, fits ? std::to_string(c.b->block_q) : ""), opt(fits, fits ? std::to_string(c.b->block_k) : ""),
        opt(fits, fits ? std::to_string(c.b->tiles_q) : ""), opt(fits, fits ? std::to_string(c.b->tiles_k) : ""),
        bytes(c.standard_bw.total()), opt(fits, bytes(c.tiled_bw.total())),
        opt(c.crossover.has_value(), c.crossover ? std::to_string(*c.crossover) : ""),
        opt(c.crossover.has_value(), c.crossover ? bytes(*c.crossover) : ""));
}

std::string flash_version_json(const flash_io::version_work& w) {
    return fmt::format(
        "{{\"rescale_rows\": {}, \"rescale_multiplies\": {}, \"divide_rows\": {}, \"divisions\": {}, "
        "\"o_writes\": {}, \"stats_writes\": {}, \"thread_blocks_per_head\": {}}}",
        w.rescale_rows, w.rescale_mults, w.divide_rows, w.divide_elems, w.o_writes, w.stats_writes, w.parallel);
}

std::string flash_io_json(const flash_report& r) {
    const flash_io_report& io = *r.io;
    std::string large = "[";
    for (std::size_t i = 0; i < io.large.size(); ++i)
        large += (i ? ",\n   {" : "{") + flash_io_case_json(io.large[i], io.element) + "}";
    return fmt::format(
        ",\n \"io\": {{\"element_bytes\": {}, \"sram_bytes\": {}, \"sram_elements\": {}, {},\n  "
        "\"large\": {}]}},\n \"versions\": {{\"row_tiles\": {}, \"fa1\": {}, \"fa2\": {}}}",
        io.element, io.sram_bytes, io.run.b->m, flash_io_case_json(io.run, io.element), large, io.versions.row_tiles,
        flash_version_json(io.versions.fa1), flash_version_json(io.versions.fa2));
}
}  // namespace

std::string render_flash_json(const flash_report& r) {
    std::string tiles = "[";
    for (std::size_t i = 0; i < r.result.row.size(); ++i) {
        const tile_record& t = r.result.row[i];
        std::string s = "[", a = "[";
        for (std::size_t j = 0; j < t.scores.size(); ++j)
            s += (j ? ", " : "") + json_number(t.scores[j], dtype::float64);
        for (std::size_t j = 0; j < t.acc.size(); ++j) a += (j ? ", " : "") + json_number(t.acc[j], dtype::float64);
        tiles += fmt::format(
            "{}{{\"tile\": {}, \"keys\": [{}, {}], \"scores\": {}], \"m_old\": {}, \"m_new\": {}, "
            "\"alpha\": {}, \"l_old\": {}, \"l_new\": {}, \"acc\": {}], \"skipped\": {}}}",
            i ? ", " : "", t.tile, t.from, t.to, s, json_number(t.m_old, dtype::float64),
            json_number(t.m_new, dtype::float64), json_number(t.alpha, dtype::float64),
            json_number(t.l_old, dtype::float64), json_number(t.l_new, dtype::float64), a,
            t.skipped ? "true" : "false");
    }
    tiles += "]";
    std::string out = fmt::format(
        "{{\"config\": {{\"seq_len\": {}, \"d_k\": {}, \"d_v\": {}, \"block_q\": {}, \"block_k\": {}, \"seed\": {}, "
        "\"mask\": {}, \"dtype\": {}}},\n \"row\": {}, \"tiles\": {},\n \"output\": {},\n \"full\": {},\n "
        "\"max_diff\": {}, "
        "\"extra_bytes\": {}, \"full_bytes\": {}",
        r.n, r.d_k, r.d_v, r.block_q, r.block_k, r.seed, json_string(spec_text(r.mask)), json_string(r.dtype),
        r.result.row_index, tiles, json_tensor(r.result.tiled, dtype::float64),
        json_tensor(r.result.full, dtype::float64), json_number(r.result.max_diff, dtype::float64),
        r.result.extra_bytes, r.result.full_bytes);
    std::string runs = "[";
    for (std::size_t tq = 0; tq < r.result.runs.size(); ++tq) {
        runs += tq ? ", [" : "[";
        for (std::size_t tk = 0; tk < r.result.runs[tq].size(); ++tk)
            runs += (tk ? ", " : "") + std::string(r.result.runs[tq][tk] ? "true" : "false");
        runs += "]";
    }
    out += fmt::format(
        ",\n \"tile_runs\": {}],\n \"tiles_run\": {}, \"tiles_skipped\": {}, \"flops_all\": {}, \"flops_run\": {}",
        runs, r.result.tiles_run, r.result.tiles_skipped, json_number(r.result.flops_all, dtype::float64),
        json_number(r.result.flops_run, dtype::float64));
    if (r.precision)
        out += fmt::format(",\n \"precision\": {{\"dtype\": {}, \"tiled_error\": {}, \"naive_error\": {}}}",
                           json_string(r.low_name), json_number(r.precision->tiled_error, dtype::float64),
                           json_number(r.precision->naive_error, dtype::float64));
    if (r.backward) out += flash_backward_json(r);
    if (r.io) out += flash_io_json(r);
    return out + "\n}\n";
}

std::string render_cost_json(const cost_input& in, const cost_result& c) {
    auto n = [](double x) { return json_number(x, dtype::float64); };
    std::string out = fmt::format(
        "{{\"batch\": {}, \"seq_len\": {}, \"d_model\": {}, \"heads\": {}, \"d_head\": {}, \"kv_heads\": {}, "
        "\"layers\": {}, "
        "\"bytes\": {}, "
        "\"flops\": {}, \"flops_breakdown\": {{\"proj_q\": {}, \"proj_kv\": {}, \"qk\": {}, \"softmax\": {}, \"pv\": "
        "{}, "
        "\"proj_o\": {}}}, \"scores_bytes\": {}, \"kv_cache_bytes\": {}, \"kv_bytes_per_token\": {}, \"tiled_bytes\": "
        "{}, "
        "\"crossover_seq_len\": {}, \"mask\": {}, \"pairs\": {}, \"density\": {}, \"dense_flops\": {}, "
        "\"sparse_scores_bytes\": {}, \"kv_cache_tokens\": {}}}\n",
        in.batch, in.seq_len, in.d_model, in.heads, n(c.d_head), in.kv_heads, in.layers, in.bytes, n(c.flops),
        n(c.proj_q), n(c.proj_kv), n(c.qk), n(c.softmax), n(c.pv), n(c.proj_o), n(c.scores_bytes), n(c.kv_cache_bytes),
        n(c.kv_per_token), n(c.tiled_bytes), n(c.crossover_n), json_string(spec_text(in.mask)), n(c.pairs),
        n(c.density), n(c.dense_flops), n(c.sparse_scores_bytes), n(c.kv_cache_tokens));
    if (in.kv_quant != kv_dtype::none) {  // --kv-dtype: the format, and the cache in --dtype beside it
        out.pop_back(), out.pop_back();  // "}\n": the fields go inside
        out += fmt::format(", \"kv_dtype\": {}, \"float_kv_bytes_per_token\": {}, \"kv_scale_bytes\": {}}}\n",
                           json_string(name_of(in.kv_quant)), n(c.float_kv_per_token), n(c.kv_scale_bytes));
    }
    if (in.kv_latent == 0) return out;
    out.pop_back(), out.pop_back();  // "}\n": the MLA fields go inside
    return out +
        fmt::format(", \"kv_latent\": {}, \"rope_dim\": {}, \"mha_kv_bytes_per_token\": {}}}\n", in.kv_latent,
                    in.rope_dim, n(c.mha_kv_per_token));
}

}  // namespace attn

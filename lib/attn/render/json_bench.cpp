// The bench JSON writer (see json_bench.hpp).
#include "attn/render/json_bench.hpp"

#include <fmt/format.h>

namespace attn {

std::string render_bench_json(const bench_report& rep) {
    std::string s =
        fmt::format("{{\"peak_gflops\": {:.3f}, \"batch\": {}, \"heads\": {}, \"isa\": \"{}\", \"results\": [",
                    rep.peak_gflops, rep.batch, rep.heads, rep.isa);
    for (std::size_t i = 0; i < rep.rows.size(); ++i) {
        const bench_row& r = rep.rows[i];
        s += fmt::format(
            "{}{{\"n\": {}, \"d\": {}, \"impl\": \"{}\", \"ms\": {:.4f}, \"gflops\": {:.3f}, \"extra_bytes\": {}, "
            "\"max_diff\": {:.3e}{}}}",
            i ? ", " : "", r.n, r.d, r.impl, r.ms, r.gflops, r.extra_bytes, r.max_diff,
            r.impl == "tiled-window" ? fmt::format(", \"window\": {}, \"ratio_to_tiled\": {:.4f}", r.window, r.ratio)
                : r.impl == "tiled-causal" ? fmt::format(", \"ratio_to_tiled\": {:.4f}", r.ratio)
                                           : std::string());
    }
    return s + "]}\n";
}

}  // namespace attn

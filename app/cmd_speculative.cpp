// `attn-explain speculative`: a draft model's chain or tree of candidates verified by the target in
// one tree-masked forward pass, accepted greedily or by speculative sampling, with the expected
// accepted length beside the measured one.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/doc/speculative.hpp"
#include "attn/io/save.hpp"
#include "attn/io/tiny_model_io.hpp"
#include "attn/render/json_speculative.hpp"
#include "attn/trace/speculative.hpp"
#include "registry.hpp"

namespace app {
namespace {

struct spec_options {
    attn::spec_request request;
    std::string save;
};

void spec_flags(flags& f, spec_options& opt) {
    attn::spec_request& r = opt.request;
    f.add("--chain", r.chain, "The draft proposes a chain of K candidates (default 4)").value_name("K");
    f.add("--tree", r.tree, "A tree of candidates: branches per depth, e.g. 2,2,1").value_name("B1,B2,...");
    f.add("--accept", r.accept, "greedy | sample").show_default();
    f.flag("--untrained", r.untrained, "Random models instead of trained ones");
    f.add("--seed", r.seed, "Seed of the language, the models and the rounds").show_default();
    f.add("--prompt-len", r.prompt_len, "Tokens of the prompt").show_default();
    f.add("--rounds", r.rounds, "Rounds measured for the accepted length").show_default();
    f.add("--steps", r.steps, "Training steps of each model").show_default();
    f.add("--target-d-model", r.target_d_model, "The target's width").show_default();
    f.add("--target-heads", r.target_heads, "The target's heads").show_default();
    f.add("--target-layers", r.target_layers, "The target's layers").show_default();
    f.add("--draft-d-model", r.draft_d_model, "The draft's width").show_default();
    f.add("--draft-heads", r.draft_heads, "The draft's heads").show_default();
    f.add("--draft-layers", r.draft_layers, "The draft's layers").show_default();
    f.add("--save", opt.save, "Write both models as DIR/target and DIR/draft (as learn --save writes one)")
        .value_name("DIR");
    f.after_parse([&r](const flags& parsed) { r.chain_given = parsed.given("--chain"); });
}

// DIR/target and DIR/draft, each a model folder as `learn --save` writes one (io/tiny_model_io.hpp),
// inside save_folder's fresh private folder.
void spec_save(const attn::spec_report& r, const std::string& dir) {
    attn::save_folder(dir, [&](const std::string& folder) {
        for (const auto& [name, model] : {std::pair{"target", &r.target}, std::pair{"draft", &r.draft}}) {
            const std::string sub = folder + "/" + name;
            if (::mkdir(sub.c_str(), 0777) != 0)
                throw attn::error(fmt::format("cannot create {}: {}", sub, std::strerror(errno)));
            attn::write_tiny_model(*model, "next-token", r.config.seed, sub);
        }
    });
}

std::optional<attn::spec_report> spec_run(const spec_options& opt, run_context&) {
    const attn::spec_config c = attn::validate_speculative(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    attn::spec_report r = attn::run_speculative(c);
    if (!opt.save.empty()) spec_save(r, opt.save);
    return r;
}

// The mask (a row of P + N per candidate), the tree, check and acceptance rows, before anything is
// computed; the rounds write nothing one by one (N ≤ 48, P ≤ 8: small whatever the flags).
output_size spec_size(const spec_options& opt, const run_context&) {
    attn::spec_config c;
    try {
        c = attn::validate_speculative(opt.request);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    const double n = static_cast<double>(attn::spec_tree_nodes(c.branching)), p = static_cast<double>(c.prompt_len);
    output_size s;
    s.values = (p + n) * n + 24 * n + p + 16;
    s.smaller = "--tree";
    return s;
}

attn::doc::document spec_page(const attn::spec_report& r, const run_context& ctx) {
    return attn::speculative_document(r, ctx.L());
}
std::string spec_json(const attn::spec_report& r, const run_context&) { return attn::render_speculative_json(r); }

report_spec<spec_options, attn::spec_report> spec() {
    auto s = spec_about<report_spec<spec_options, attn::spec_report>>(
        "speculative", "Speculative decoding: a draft's tree of guesses verified in one masked pass", 166,
        pages_and_json, pages, {{""}, {"--tree 2,2,1 --accept sample"}, {"--chain 6 --accept sample --untrained"}});
    s.flags = spec_flags;
    s.size = spec_size;
    s.run = spec_run;
    s.page = spec_page;
    s.json = spec_json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app

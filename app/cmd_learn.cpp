// `attn-explain learn`: train a tiny transformer on a task and watch its attention pattern.
#include "attn/core/error.hpp"
#include "attn/doc/learn.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/save.hpp"
#include "attn/io/tiny_model_io.hpp"
#include "attn/render/json_learn.hpp"
#include "attn/trace/learn.hpp"
#include "registry.hpp"

namespace app {
namespace {

struct learn_options {
    attn::learn_request request;
    std::string save;
};

void flags_of(flags& f, learn_options& opt) {
    attn::learn_request& r = opt.request;
    f.add("--task", r.task, "previous | reverse | max | induction | next-token")
        .show_default()
        .named(attn::learn_task_ids(), "learn.task.", ".name");  // 归纳 for induction, as the zh pages name it
    f.add("-n,--seq-len", r.seq_len, "Tokens per sequence (default: the task's)");
    f.add("--vocab", r.vocab, "Vocabulary size (default: the task's)");
    f.add("--d-model", r.d_model, "Width of the residual stream (default: the task's)");
    f.add("--heads", r.heads, "Heads per layer (default: the task's)");
    f.add("--kv-heads", r.kv_heads, "K/V heads shared by the query heads (GQA; default: --heads, MHA)").value_name("G");
    f.add("--layers", r.layers, "Attention layers (default: the task's; induction needs 2)");
    f.add("--steps", r.steps, "Adam steps (default: the task's)");
    f.add("--lr", r.lr, "Adam's learning rate (default: the task's)");
    f.add("--batch", r.batch, "Sequences per step (default: the task's)");
    f.add("--seed", r.seed, "Seed for the weights and the data").show_default();
    f.add("--positions", r.positions, "learned | sinusoidal | rope | none").show_default();
    f.flag("--no-scale", r.no_scale, "Drop the 1/sqrt(d_head) (break it on purpose)");
    f.flag("--qk-norm", r.qk_norm, "RMSNorm on q and k per head before RoPE, learned scales (Qwen3, Gemma 3)");
    f.add("--softcap", r.softcap, "Soft-cap the scaled scores to C*tanh(s/C) before the mask (Gemma 2)")
        .value_name("C");
    f.add("--z-loss", r.z_loss, "Add lambda*log^2 Z of the output logits to the loss trained on (PaLM)")
        .value_name("LAMBDA");
    f.flag("--compare-logit-control", r.compare_logit_control,
           "Run plain, --qk-norm, --softcap and --z-loss side by side at a high --lr");
    f.add("--save", opt.save, "Write the trained weights and final attention weights as DIR/<id>.npy")
        .value_name("DIR");
    f.after_parse([&r](const flags& parsed) {  // 0 means "the task's default" only when the flag is absent
        for (auto [flag, v] : {std::pair<const char*, long*>{"--seq-len", &r.seq_len},
                               {"--vocab", &r.vocab},
                               {"--d-model", &r.d_model},
                               {"--heads", &r.heads},
                               {"--kv-heads", &r.kv_heads},
                               {"--layers", &r.layers},
                               {"--steps", &r.steps},
                               {"--batch", &r.batch}})
            if (parsed.given(flag) && *v == 0) *v = attn::learn_given_zero;
        if (parsed.given("--lr") && r.lr == 0) r.lr = -1;
        r.softcap_given = parsed.given("--softcap");
        r.task_given = parsed.given("--task");
        r.z_loss_given = parsed.given("--z-loss");
    });
}
// The trained model (model.json and every tensor, io/tiny_model_io.hpp), the final attention
// weights of each layer on the example ([heads, T, T]), the example and the curve.
void save_learn(const attn::learn_report& r, const std::string& dir) {
    const attn::tiny_config& m = r.config.model;
    const std::size_t T = m.seq_len;
    auto put = [](const std::string& folder, const std::string& id, const std::vector<double>& v,
                  std::vector<std::size_t> shape) {
        attn::npy::write(folder + "/" + id + ".npy", shape, v, attn::npy::dtype::float64);
    };
    attn::save_folder(dir, [&](const std::string& folder) {
        attn::write_tiny_model(r.model, r.config.task_name, r.config.seed, folder);
        for (std::size_t l = 0; l < m.layers; ++l) {
            std::vector<double> all;
            for (const attn::learn_snapshot& s : r.snapshots)
                if (s.step == r.config.steps && s.layer == l) all.insert(all.end(), s.weights.begin(), s.weights.end());
            put(folder, "layer" + std::to_string(l) + "_weights", all, {m.heads, T, T});
        }
        std::vector<double> tokens(r.example.tokens.begin(), r.example.tokens.end()), losses, accs;
        for (const auto& p : r.curve) {
            losses.push_back(p.loss);
            accs.push_back(p.accuracy);
        }
        put(folder, "tokens", tokens, {T});
        put(folder, "losses", losses, {losses.size()});
        put(folder, "accuracies", accs, {accs.size()});
    });
}
std::optional<attn::learn_report> run(const learn_options& opt, run_context&) {
    const attn::learn_config config = attn::validate_learn(opt.request);
    if (!opt.save.empty()) attn::check_save_dir(opt.save);
    attn::learn_report report = attn::run_learn(config);
    if (!opt.save.empty()) save_learn(report, opt.save);
    return report;
}

// The curve (a point per step; with --compare-logit-control four runs of two series more), the snapshots of every head's T×T weights, the model the run keeps
// (embeddings, four d×d projections a layer) and its activations on a batch, before training.
output_size size_of(const learn_options& opt, const run_context&) {
    attn::learn_config c;
    try {
        c = attn::validate_learn(opt.request);
    } catch (const attn::error&) {
        return {};  // the run says what is wrong
    }
    const double T = static_cast<double>(c.model.seq_len), d = static_cast<double>(c.model.d_model);
    const double h = static_cast<double>(c.model.heads), layers = static_cast<double>(c.model.layers);
    const double snapshots = 8;
    output_size s;
    s.values = 3 * static_cast<double>(c.steps) + snapshots * layers * h * T * T;
    if (c.compare) s.values += 4 * 2 * static_cast<double>(c.steps);  // the four runs' max logit and entropy
    if (c.model.kv_count() < c.model.heads) s.values += 3 * static_cast<double>(c.steps);  // the MHA run's curve
    s.kept = s.values + static_cast<double>(c.model.vocab + c.model.seq_len) * d * 3 + layers * 4 * d * d * 3 +
        static_cast<double>(c.batch) * T * (layers * (6 * d + 2 * h * T));
    s.float64 = true;
    s.smaller = "--seq-len";
    return s;
}

attn::doc::document page(const attn::learn_report& r, const run_context& ctx) {
    return attn::learn_document(r, ctx.L());
}
std::string json(const attn::learn_report& r, const run_context&) { return attn::render_learn_json(r); }

report_spec<learn_options, attn::learn_report> spec() {
    auto s = spec_about<report_spec<learn_options, attn::learn_report>>(
        "learn", "Train a tiny transformer on a task and watch its attention pattern emerge", 120, pages_and_json,
        pages, {{"--task previous --steps 40"}});
    s.flags = flags_of;
    s.size = size_of;
    s.run = run;
    s.page = page;
    s.json = json;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app

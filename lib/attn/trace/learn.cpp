// `attn-explain learn`: validation and the training run (see learn.hpp).
#include "attn/trace/learn.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "attn/core/backward.hpp"
#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"

namespace attn {

namespace {

struct task_defaults {
    long seq_len, vocab, d_model, heads, layers, steps, batch;
    double lr;
};
// Chosen by measurement (tests/bench/learn_speed.sh): every task reaches the bar for seeds 1…5.
task_defaults defaults_of(task_kind k) {
    switch (k) {
        case task_kind::previous: return {8, 10, 16, 1, 1, 300, 16, 1e-2};
        case task_kind::reverse: return {8, 10, 16, 1, 1, 300, 16, 1e-2};
        case task_kind::max: return {8, 10, 16, 1, 1, 800, 16, 1e-2};
        case task_kind::induction: return {12, 12, 16, 2, 2, 1000, 16, 1e-2};
        case task_kind::next_token: return {16, 8, 32, 2, 1, 300, 16, 1e-2};
    }
    return {};
}

long pick(long given, long fallback) { return given ? given : fallback; }

void check_range(const char* flag, long v, long lo, long hi) {
    if (v < lo || v > hi)
        throw error(fmt::format("{} must be between {} and {} (got {})", flag, lo, hi, v == learn_given_zero ? 0 : v));
}

std::string num3(double v) { return fmt::format("{:.3g}", v); }
// The score's and the accuracy's text on the page; the verdicts compare these, not the raw values.
std::string score_text(double v) { return fmt::format("{:.2f}", v); }
std::string pct(double v) { return fmt::format("{:.1f}", 100 * v); }

struct held_out_set {
    std::vector<std::vector<int>> tokens, targets;
    std::vector<task_example> examples;
};

held_out_set make_set(const learn_config& c, std::size_t n, std::uint64_t salt) {
    rng g(c.seed ^ salt);
    held_out_set s;
    for (std::size_t i = 0; i < n; ++i) {
        task_example e = make_task_example(c.task, c.model.seq_len, c.model.vocab, g, c.source.get());
        s.tokens.push_back(e.tokens);
        s.targets.push_back(e.targets);
        s.examples.push_back(std::move(e));
    }
    return s;
}

struct evaluation {
    double loss = 0, accuracy = 0;
    std::vector<std::vector<double>> task_scores, previous_scores;  // [layer][head]
};

evaluation evaluate(const learn_config& c, const tiny_model& m, const held_out_set& s) {
    const tiny_config& mc = m.c;
    evaluation ev;
    ev.task_scores.assign(mc.layers, std::vector<double>(mc.heads, 0.0));
    ev.previous_scores = ev.task_scores;
    std::size_t scored = 0, correct = 0;
    for (std::size_t b = 0; b < s.tokens.size(); ++b) {
        const tiny_forward f = tiny_forward_pass(m, s.tokens[b]);
        ev.loss += tiny_loss_backward(m, f, s.targets[b], 1.0, nullptr, scored, correct);
        const auto need = pattern_positions(c.task, s.examples[b], false);
        const auto prev = pattern_positions(c.task, s.examples[b], true);
        for (std::size_t l = 0; l < mc.layers; ++l)
            for (std::size_t h = 0; h < mc.heads; ++h) {
                ev.task_scores[l][h] += pattern_score(f.a[l][h], mc.seq_len, need);
                ev.previous_scores[l][h] += pattern_score(f.a[l][h], mc.seq_len, prev);
            }
    }
    const double n = static_cast<double>(std::max<std::size_t>(1, s.tokens.size()));
    for (auto* sc : {&ev.task_scores, &ev.previous_scores})
        for (auto& row : *sc)
            for (double& x : row) x /= n;
    ev.loss /= static_cast<double>(std::max<std::size_t>(1, scored));
    ev.accuracy = scored ? static_cast<double>(correct) / static_cast<double>(scored) : 0.0;
    return ev;
}

void snapshot(learn_report& r, const tiny_model& m, std::size_t step) {
    const tiny_forward f = tiny_forward_pass(m, r.example.tokens);
    for (std::size_t l = 0; l < m.c.layers; ++l)
        for (std::size_t h = 0; h < m.c.heads; ++h) r.snapshots.push_back({step, l, h, f.a[l][h]});
    r.snapshot_steps.push_back(step);
}

}  // namespace

const std::vector<std::string>& learn_task_ids() {
    static const std::vector<std::string> ids = {"previous", "reverse", "max", "induction", "next-token"};
    return ids;
}

namespace {

// --qk-norm, --softcap C, --z-loss λ and --compare-logit-control.
void validate_logit_control(const learn_request& r, learn_config& c) {
    if (r.softcap_given && !(r.softcap > 0 && std::isfinite(r.softcap)))
        throw error(fmt::format("--softcap must be a positive number, e.g. 20 (got {})", r.softcap));
    if (r.z_loss_given && !(r.z_loss > 0 && r.z_loss <= 10))
        throw error(fmt::format("--z-loss must be a positive number no larger than 10, e.g. 1e-4 (got {})", r.z_loss));
    c.compare = r.compare_logit_control;
    if (c.compare && r.qk_norm)
        throw error("--compare-logit-control runs with and without --qk-norm itself: drop --qk-norm");
    if (c.compare) {  // the four runs take C and λ from here; the base run has neither
        c.compare_softcap = r.softcap_given ? r.softcap : compare_default_softcap;
        c.compare_z_loss = r.z_loss_given ? r.z_loss : compare_default_z_loss;
        if (r.lr == 0) c.lr = compare_default_lr(c.task);
        return;
    }
    c.model.qk_norm = r.qk_norm;
    c.model.softcap = r.softcap_given ? r.softcap : 0;
    c.z_loss = r.z_loss_given ? r.z_loss : 0;
}

}  // namespace

learn_config validate_learn(const learn_request& given) {
    learn_request r = given;
    if (r.compare_logit_control && !r.task_given) r.task = "next-token";
    learn_config c;
    const auto& ids = learn_task_ids();
    const auto it = std::find(ids.begin(), ids.end(), r.task);
    if (it == ids.end())
        throw error("unknown task '" + r.task + "': use previous, reverse, max, induction or next-token");
    c.task = static_cast<task_kind>(it - ids.begin());
    c.task_name = r.task;
    const task_defaults d = defaults_of(c.task);
    tiny_config& m = c.model;
    const long T = pick(r.seq_len, d.seq_len), V = pick(r.vocab, d.vocab), D = pick(r.d_model, d.d_model);
    const long H = pick(r.heads, d.heads), L = pick(r.layers, d.layers), S = pick(r.steps, d.steps),
               B = pick(r.batch, d.batch);
    check_range("--seq-len", T, static_cast<long>(task_min_seq_len(c.task)), 64);
    check_range("--vocab", V, 2, c.task == task_kind::next_token ? 32 : 256);  // next-token: V² contexts
    const long min_v = static_cast<long>(task_min_vocab(c.task, static_cast<std::size_t>(T)));
    if (V < min_v)
        throw error(
            fmt::format("--vocab {} is too small for {} at --seq-len {}: the repeated segment needs up to "
                        "{} different tokens; use --vocab {} or more",
                        V, r.task, T, min_v, min_v));
    check_range("--d-model", D, 2, 256);
    check_range("--heads", H, 1, D);
    if (D % H != 0) {
        std::string divisors;
        for (long h = 1; h <= std::min(D, 16L); ++h)
            if (D % h == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(h);
        throw error(fmt::format("--heads {} must divide --d-model {}: try --heads {}", H, D, divisors));
    }
    const long G = r.kv_heads ? r.kv_heads : H;
    check_range("--kv-heads", G, 1, H);
    if (H % G != 0)
        throw error(
            fmt::format("--kv-heads {} must divide --heads {}: each K/V head serves heads / kv-heads query "
                        "heads",
                        G, H));
    if (G < H && r.compare_logit_control)
        throw error("--kv-heads and --compare-logit-control each train extra runs: give one of them");
    check_range("--layers", L, 1, 4);
    check_range("--steps", S, 1, 20000);
    check_range("--batch", B, 1, 1024);
    const double lr = r.lr != 0 ? r.lr : d.lr;
    if (!(lr > 0) || !std::isfinite(lr) || lr > 1) throw error("--lr must be a positive number no larger than 1");
    // A guard against runs that would take minutes: steps · batch · T² · D, roughly the work.
    const double work = static_cast<double>(S) * static_cast<double>(B) * static_cast<double>(L) *
        static_cast<double>(T) * static_cast<double>(D) * static_cast<double>(std::max(T, 3 * D));
    if (work * (r.kv_heads && r.kv_heads < H ? 2 : 1) > 4e10)
        throw error("this run would take minutes: lower --steps, --batch, --seq-len or --d-model");
    if (r.positions == "learned") m.positions = position_kind::learned;
    else if (r.positions == "sinusoidal")
        m.positions = position_kind::sinusoidal;
    else if (r.positions == "rope")
        m.positions = position_kind::rope;
    else if (r.positions == "none")
        m.positions = position_kind::none;
    else
        throw error("unknown --positions '" + r.positions + "': use learned, sinusoidal, rope or none");
    if (m.positions == position_kind::rope && (D / H) % 2 != 0)
        throw error(fmt::format("--positions rope turns pairs of columns: d_model / heads = {} must be even", D / H));
    c.positions_name = r.positions;
    m.seq_len = static_cast<std::size_t>(T);
    m.vocab = static_cast<std::size_t>(V);
    m.d_model = static_cast<std::size_t>(D);
    m.heads = static_cast<std::size_t>(H);
    m.kv_heads = static_cast<std::size_t>(G);
    m.layers = static_cast<std::size_t>(L);
    m.causal = task_causal(c.task);
    m.scale = !r.no_scale;
    c.steps = static_cast<std::size_t>(S);
    c.batch = static_cast<std::size_t>(B);
    c.lr = lr;
    c.seed = r.seed;
    validate_logit_control(r, c);
    if (c.task == task_kind::next_token)
        c.source = std::make_shared<const markov_source>(make_markov_source(m.vocab, c.seed));
    return c;
}

learn_bars bars_of(task_kind k) {
    learn_bars b;
    if (k == task_kind::induction) b.pattern = 0.6;
    return b;
}

// Both sides as printed (the very text the page shows, read back), so a sentence never calls 0.90
// short of 0.90.
bool score_meets(double score, double bar) { return std::stod(score_text(score)) >= std::stod(score_text(bar)); }
bool accuracy_meets(double accuracy, double bar) { return std::stod(pct(accuracy)) >= std::stod(pct(bar)); }

namespace {

// One training batch: the loss and its gradient (tiny_batch_loss's, with the z-loss), the
// accuracy, and the attention's largest logit and mean entropy over the batch.
learn_point batch_step(const learn_config& c, const tiny_model& m, const std::vector<std::vector<int>>& tokens,
                       const std::vector<std::vector<int>>& targets, tiny_model& grad) {
    for (auto& [name, p] : grad.tensors()) std::fill(p->begin(), p->end(), 0.0);
    std::size_t n = 0, scored = 0, correct = 0;
    for (const auto& y : targets)
        for (int t : y) n += t >= 0;
    const double w = n ? 1.0 / static_cast<double>(n) : 0.0;
    learn_point p;
    p.max_logit = -std::numeric_limits<double>::infinity();
    for (std::size_t b = 0; b < tokens.size(); ++b) {
        const tiny_forward f = tiny_forward_pass(m, tokens[b]);
        p.loss += tiny_loss_backward(m, f, targets[b], w, &grad, scored, correct, c.z_loss, &p.z);
        p.max_logit = std::isnan(f.max_logit) ? f.max_logit : std::max(p.max_logit, f.max_logit);
        p.entropy += tiny_attention_entropy(f) / static_cast<double>(tokens.size());
    }
    p.loss *= w;
    p.z *= w;
    p.accuracy = scored ? static_cast<double>(correct) / static_cast<double>(scored) : 0.0;
    return p;
}

// Trains m with Adam on fresh batches for c.steps steps: the loss and accuracy of every step into
// r.curve, snapshots of the weights at 0, 1/10, 1/4, 1/2 of the way and at the end.
void train(const learn_config& c, tiny_model& m, learn_report& r) {
    tiny_model grad = m.zeros_like();
    std::vector<std::size_t> marks = {0, c.steps / 10, c.steps / 4, c.steps / 2, c.steps};
    marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
    adam opt;
    opt.lr = c.lr;
    std::vector<std::vector<double>*> params;
    for (auto& [name, p] : m.tensors()) params.push_back(p);
    std::vector<std::vector<double>> grads(params.size());
    rng data(c.seed ^ 0x7a5cULL);
    std::vector<std::vector<int>> tokens(c.batch), targets(c.batch);
    std::size_t next_mark = 0;
    for (std::size_t step = 0; step < c.steps; ++step) {
        if (next_mark < marks.size() && marks[next_mark] == step) snapshot(r, m, marks[next_mark++]);
        for (std::size_t b = 0; b < c.batch; ++b) {
            task_example e = make_task_example(c.task, c.model.seq_len, c.model.vocab, data, c.source.get());
            tokens[b] = std::move(e.tokens);
            targets[b] = std::move(e.targets);
        }
        r.curve.push_back(batch_step(c, m, tokens, targets, grad));
        r.curve.back().step = step;
        if (!std::isfinite(r.curve.back().loss)) {  // diverged: nothing after this is training
            r.diverged = static_cast<long>(step);
            break;
        }
        std::size_t i = 0;
        for (auto& [name, p] : grad.tensors()) grads[i++] = *p;
        opt.step(params, grads);
    }
    snapshot(r, m, c.steps);
}

// The pattern scores at the start and the end, the pattern head (the best), the previous-token
// head of induction, and the verdicts against the task's bars.
void judge(const learn_config& c, const evaluation& init, const evaluation& fin, learn_report& r) {
    r.head_scores = fin.task_scores;
    r.previous_scores = fin.previous_scores;
    r.init_head_scores = init.task_scores;
    // The head with the best score: in the last layer for induction (the induction head reads
    // what layer 0 wrote), in any layer for the one-step tasks.
    const std::size_t first_layer = c.task == task_kind::induction ? c.model.layers - 1 : 0;
    r.pattern_score = -1;
    for (std::size_t l = first_layer; l < c.model.layers; ++l)
        for (std::size_t h = 0; h < c.model.heads; ++h)
            if (fin.task_scores[l][h] > r.pattern_score) {
                r.pattern_score = fin.task_scores[l][h];
                r.pattern_layer = l;
                r.pattern_head = h;
            }
    r.init_pattern_score = init.task_scores[r.pattern_layer][r.pattern_head];
    if (c.task == task_kind::induction && c.model.layers > 1) {
        const auto& first = fin.previous_scores[0];
        r.previous_head = static_cast<std::size_t>(std::max_element(first.begin(), first.end()) - first.begin());
        r.previous_score = first[r.previous_head];
    }
    r.bars = bars_of(c.task);
    if (c.source) r.bars.solved = c.source->best_accuracy;  // next-token: the best predictor's accuracy
    r.pattern_learned = score_meets(r.pattern_score, r.bars.pattern);
    r.solved = accuracy_meets(r.final_accuracy, r.bars.solved);
    r.previous_learned = score_meets(r.previous_score, r.bars.previous);
    for (const learn_point& p : r.curve)
        if (accuracy_meets(p.accuracy, r.bars.reach)) {
            r.reach = static_cast<long>(p.step);
            break;
        }
}

// The numbers the lessons fill in.
vars report_values(const learn_config& c, const learn_report& r) {
    const tiny_config& mc = c.model;
    return {{"task", c.task_name},
            {"positions", c.positions_name},
            {"seq_len", std::to_string(mc.seq_len)},
            {"vocab", std::to_string(mc.vocab)},
            {"d_model", std::to_string(mc.d_model)},
            {"heads", std::to_string(mc.heads)},
            {"layers", std::to_string(mc.layers)},
            {"steps", std::to_string(c.steps)},
            {"lr", fmt::format("{:g}", c.lr)},
            {"batch", std::to_string(c.batch)},
            {"seed", std::to_string(c.seed)},
            {"held_out", std::to_string(c.held_out)},
            {"initial_loss", num3(r.curve.front().loss)},
            {"final_loss", num3(r.final_loss)},
            {"accuracy", pct(r.final_accuracy)},
            {"init_accuracy", pct(r.init_accuracy)},
            {"score", score_text(r.pattern_score)},
            {"init_score", score_text(r.init_pattern_score)},
            {"pattern_bar", score_text(r.bars.pattern)},
            {"previous_bar", score_text(r.bars.previous)},
            {"solved_bar", fmt::format("{:g}", 100 * r.bars.solved)},
            {"reach_bar", fmt::format("{:g}", 100 * r.bars.reach)},
            {"layer", std::to_string(r.pattern_layer)},
            {"head", std::to_string(r.pattern_head)},
            {"prev_score", score_text(r.previous_score)},
            {"prev_head", std::to_string(r.previous_head)},
            {"chance", pct(1.0 / static_cast<double>(mc.vocab))},
            {"final_loss_train", num3(r.curve.back().loss)},
            {"reach", std::to_string(r.reach)},
            {"sqrt_dh", fmt::format("{:.3g}", std::sqrt(static_cast<double>(mc.d_head())))},
            {"base_accuracy", pct(r.base_accuracy)},
            {"base_score", score_text(r.base_score)},
            {"base_reach", std::to_string(r.base_reach)}};
}

// next-token: the source's numbers, and the loss against them.
void source_values(const learn_config& c, const learn_report& r, vars& v) {
    if (!c.source) return;
    const markov_source& s = *c.source;
    v["entropy_rate"] = num3(s.entropy_rate);
    v["order1"] = num3(s.order1_entropy);
    v["unigram"] = num3(s.unigram_entropy);
    v["best_accuracy"] = pct(s.best_accuracy);
    v["branches"] = std::to_string(s.branches);
    v["smoothing"] = fmt::format("{:g}", s.smoothing);
    v["gap"] = num3(r.final_loss - s.entropy_rate);
}

}  // namespace

namespace {

// What happened to one run, from its curve: the first and the last finite max logit and entropy.
logit_run logit_run_of(const std::string& name, const learn_report& r) {
    logit_run x;
    x.name = name;
    for (const learn_point& p : r.curve) {
        x.max_logit.push_back(p.max_logit);
        x.entropy.push_back(p.entropy);
    }
    x.final_loss = r.final_loss;
    x.diverged = r.diverged;
    x.first_logit = r.curve.front().max_logit;
    x.first_entropy = r.curve.front().entropy;
    for (const learn_point& p : r.curve)
        if (std::isfinite(p.max_logit) && std::isfinite(p.entropy)) {
            x.last_logit = p.max_logit;
            x.last_entropy = p.entropy;
        }
    x.growth = x.first_logit > 0 ? x.last_logit / x.first_logit : 0.0;
    x.grew = x.growth >= logit_growth_bar;
    x.at_cap = r.config.model.softcap > 0 && x.last_logit >= 0.99 * r.config.model.softcap;
    x.collapsed = x.last_entropy <= entropy_collapse_bar;
    return x;
}

// --compare-logit-control: the same seed, data and lr four times; the report is the plain run's,
// with the four runs beside it.
learn_report run_compare(const learn_config& c) {
    learn_config base = c;
    base.compare = false;
    learn_report plain;
    std::vector<logit_run> runs;
    for (const char* name : {"plain", "qk-norm", "softcap", "z-loss"}) {
        learn_config v = base;
        const std::string n = name;
        v.model.qk_norm = n == "qk-norm";
        v.model.softcap = n == "softcap" ? c.compare_softcap : 0;
        v.z_loss = n == "z-loss" ? c.compare_z_loss : 0;
        learn_report r = run_learn(v, false);
        runs.push_back(logit_run_of(n, r));
        if (n == "plain") plain = std::move(r);
    }
    plain.config = c;
    plain.runs = std::move(runs);
    plain.values["softcap"] = fmt::format("{:g}", c.compare_softcap);
    plain.values["z_loss"] = fmt::format("{:g}", c.compare_z_loss);
    plain.values["logit_bar"] = fmt::format("{:g}", logit_growth_bar);
    plain.values["entropy_bar"] = fmt::format("{:g}", entropy_collapse_bar);
    return plain;
}

}  // namespace

double compare_default_lr(task_kind) { return 0.1; }

task_example learn_example(const learn_config& c) {
    rng ex(c.seed ^ 0xe8a3b1eULL);
    return make_task_example(c.task, c.model.seq_len, c.model.vocab, ex, c.source.get());
}

learn_batch learn_held_out(const learn_config& c) {
    held_out_set s = make_set(c, c.held_out, 0x4e1d0a7ULL);
    return {std::move(s.tokens), std::move(s.targets)};
}

learn_config learn_config_of_saved(const tiny_config& m, const std::string& task, std::uint64_t seed) {
    const auto& ids = learn_task_ids();
    const auto it = std::find(ids.begin(), ids.end(), task);
    if (it == ids.end())
        throw error("model.json: unknown task '" + task + "': save the model again with attn-explain learn --save DIR");
    learn_config c;
    c.task = static_cast<task_kind>(it - ids.begin());
    if (m.seq_len < task_min_seq_len(c.task) || m.vocab < task_min_vocab(c.task, m.seq_len) ||
        (c.task == task_kind::next_token && m.vocab > 32))  // learn's own limits for the task
        throw error(
            fmt::format("model.json: seq_len {} and vocab {} are not sizes learn trains --task {} at: save "
                        "the model again with attn-explain learn --save DIR",
                        m.seq_len, m.vocab, task));
    c.task_name = task;
    c.model = m;
    c.seed = seed;
    if (c.task == task_kind::next_token)
        c.source = std::make_shared<const markov_source>(make_markov_source(m.vocab, seed));
    return c;
}

gqa_comparison gqa_cache_of(const tiny_config& m) {
    gqa_comparison g;
    g.kv_heads = m.kv_count();
    g.heads = m.heads;
    g.d_head = m.d_head();
    g.gqa_elements = 2 * g.kv_heads * g.d_head;  // one K and one V row per K/V head
    g.mha_elements = 2 * g.heads * g.d_head;
    return g;
}

namespace {

// --kv-heads g < heads: the MHA run (g = heads) from the same seed and data, beside this one.
void gqa_compare(const learn_config& c, learn_report& r) {
    learn_config mha = c;
    mha.model.kv_heads = c.model.heads;
    const learn_report base = run_learn(mha, false);
    gqa_comparison& g = r.gqa;
    g = gqa_cache_of(c.model);
    g.on = true;
    g.mha_loss = base.final_loss;
    g.mha_accuracy = base.final_accuracy;
    g.gqa_loss = r.final_loss;
    g.gqa_accuracy = r.final_accuracy;
    vars& v = r.values;
    v["kv_heads"] = std::to_string(g.kv_heads);
    v["group"] = std::to_string(g.heads / g.kv_heads);
    v["d_head"] = std::to_string(g.d_head);
    v["kv_dim"] = std::to_string(g.kv_heads * g.d_head);
    v["mha_loss"] = num3(g.mha_loss);
    v["mha_accuracy"] = pct(g.mha_accuracy);
    v["gqa_elements"] = std::to_string(g.gqa_elements);
    v["mha_elements"] = std::to_string(g.mha_elements);
    v["gqa_bytes"] = std::to_string(g.gqa_elements * gqa_comparison::f16_bytes);
    v["mha_bytes"] = std::to_string(g.mha_elements * gqa_comparison::f16_bytes);
    v["gqa_bytes64"] = std::to_string(g.gqa_elements * gqa_comparison::f64_bytes);
    v["mha_bytes64"] = std::to_string(g.mha_elements * gqa_comparison::f64_bytes);
    v["cache_ratio"] = fmt::format("{:g}", static_cast<double>(g.mha_elements) / static_cast<double>(g.gqa_elements));
    v["loss_diff"] = fmt::format("{:+.3g}", g.gqa_loss - g.mha_loss);
    v["accuracy_diff"] = fmt::format("{:+.1f}", 100 * (g.gqa_accuracy - g.mha_accuracy));
}

}  // namespace

learn_report run_learn(const learn_config& c, bool baseline) {
    if (c.compare) return run_compare(c);
    learn_report r;
    r.config = c;
    r.example = learn_example(c);
    const held_out_set test = make_set(c, c.held_out, 0x4e1d0a7ULL);  // learn_held_out's
    tiny_model m = init_tiny_model(c.model, c.seed);
    const evaluation init = evaluate(c, m, test);
    train(c, m, r);
    const evaluation fin = evaluate(c, m, test);
    r.final_loss = fin.loss;
    r.final_accuracy = fin.accuracy;
    r.init_accuracy = init.accuracy;
    judge(c, init, fin, r);
    const bool broken = c.model.positions == position_kind::none || !c.model.scale;
    if (baseline && broken) {
        learn_config b = c;
        if (b.model.positions == position_kind::none) b.model.positions = position_kind::learned;
        b.model.scale = true;
        const learn_report base = run_learn(b, false);
        r.has_baseline = true;
        r.base_accuracy = base.final_accuracy;
        r.base_score = base.pattern_score;
        r.base_reach = base.reach;
    }
    r.model = std::move(m);
    r.values = report_values(c, r);
    source_values(c, r, r.values);
    r.values["softcap"] = fmt::format("{:g}", c.model.softcap);
    r.values["z_loss"] = fmt::format("{:g}", c.z_loss);
    r.values["z_final"] = num3(r.curve.back().z);
    r.values["max_logit_first"] = num3(r.curve.front().max_logit);
    r.values["max_logit_last"] = num3(r.curve.back().max_logit);
    r.values["entropy_first"] = num3(r.curve.front().entropy);
    r.values["entropy_last"] = num3(r.curve.back().entropy);
    r.values["diverged"] = std::to_string(r.diverged);
    if (baseline && c.model.kv_count() < c.model.heads) gqa_compare(c, r);
    return r;
}

}  // namespace attn

// learn: the tiny transformer's backward pass against finite differences (every parameter, every
// position kind, masked and not, scaled and not), the tasks, determinism, and small runs that
// must reach the accuracy and pattern-score bars.
#include <cmath>
#include <map>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "files.hpp"

#include "attn/core/error.hpp"
#include "attn/core/kvcache.hpp"
#include "attn/core/tasks.hpp"
#include "attn/core/tiny_model.hpp"
#include "attn/core/backward.hpp"
#include "attn/io/npy.hpp"
#include "attn/doc/learn.hpp"
#include "attn/io/lessons.hpp"
#include "attn/render/text.hpp"
#include "attn/render/json_learn.hpp"
#include "attn/trace/learn.hpp"

namespace {

// Max relative error of the analytic gradient against central differences, over every element.
double gradcheck(const attn::tiny_config& c, std::uint64_t seed, attn::task_kind task, double z_loss = 0) {
    attn::tiny_model m = attn::init_tiny_model(c, seed);
    attn::rng g(seed);
    std::vector<std::vector<int>> tokens, targets;
    for (int b = 0; b < 2; ++b) {
        const attn::task_example e = attn::make_task_example(task, c.seq_len, c.vocab, g);
        tokens.push_back(e.tokens);
        targets.push_back(e.targets);
    }
    if (c.qk_norm)  // scales away from 1, so that a wrong gradient through them shows
        for (std::size_t l = 0; l < c.layers; ++l)
            for (std::size_t e = 0; e < c.d_head(); ++e) {
                m.q_norm[l][e] = 1 + 0.3 * g.normal();
                m.k_norm[l][e] = 1 + 0.3 * g.normal();
            }
    attn::tiny_model grad = m.zeros_like();
    attn::tiny_batch_loss(m, tokens, targets, &grad, nullptr, nullptr, z_loss);
    // The objective whose gradient that is: the cross-entropy plus λ·mean (log Z)².
    auto objective = [&] {
        double z = 0;
        const double ce = attn::tiny_batch_loss(m, tokens, targets, nullptr, nullptr, nullptr, z_loss, &z);
        return ce + z_loss * z;
    };
    double worst = 0;
    const double h = 1e-6;
    auto params = m.tensors();
    auto grads = grad.tensors();
    for (std::size_t k = 0; k < params.size(); ++k) {
        std::vector<double>& p = *params[k].second;
        for (std::size_t i = 0; i < p.size(); ++i) {
            const double keep = p[i];
            p[i] = keep + h;
            const double up = objective();
            p[i] = keep - h;
            const double down = objective();
            p[i] = keep;
            const double numeric = (up - down) / (2 * h);
            const double analytic = (*grads[k].second)[i];
            const double err = std::fabs(numeric - analytic) / std::max(1e-6, std::fabs(numeric) + std::fabs(analytic));
            INFO(params[k].first << "[" << i << "] analytic " << analytic << " numeric " << numeric);
            CHECK(std::fabs(numeric - analytic) < 1e-6);
            worst = std::max(worst, err);
        }
    }
    return worst;
}

attn::learn_report small_run(const std::string& task, long steps, std::uint64_t seed) {
    attn::learn_request r;
    r.task = task;
    r.seed = seed;
    r.seq_len = 6;
    r.vocab = 6;
    r.d_model = 16;
    r.steps = steps;
    attn::learn_config c = attn::validate_learn(r);
    c.held_out = 64;
    return attn::run_learn(c);
}

}  // namespace

TEST_CASE("the tiny transformer's gradients agree with finite differences", "[learn][grad]") {
    using attn::position_kind;
    struct one {
        position_kind pos;
        std::size_t heads, layers;
        bool causal, scale;
        attn::task_kind task;
    };
    for (const one& o : {one{position_kind::learned, 1, 1, true, true, attn::task_kind::previous},
                         one{position_kind::learned, 2, 2, true, true, attn::task_kind::induction},
                         one{position_kind::sinusoidal, 2, 1, false, true, attn::task_kind::reverse},
                         one{position_kind::rope, 2, 2, true, false, attn::task_kind::max},
                         one{position_kind::none, 1, 1, false, false, attn::task_kind::reverse}}) {
        attn::tiny_config c;
        c.vocab = 7;
        c.seq_len = 6;
        c.d_model = 8;
        c.heads = o.heads;
        c.layers = o.layers;
        c.positions = o.pos;
        c.causal = o.causal;
        c.scale = o.scale;
        INFO("positions " << static_cast<int>(o.pos) << " heads " << o.heads << " layers " << o.layers);
        CHECK(gradcheck(c, 3, o.task) < 1e-5);
    }
}

// Issue 34: grouped-query attention, g K/V heads shared by the query heads: W_K and W_V are
// [D, g·d_head] and a K/V head's gradient sums over the query heads that read it.
TEST_CASE("the tiny transformer's gradients with grouped K/V heads agree with finite differences",
          "[learn][grad][gqa]") {
    using attn::position_kind;
    struct one {
        position_kind pos;
        std::size_t heads, kv_heads, layers;
        bool causal, qk_norm;
        double softcap;
    };
    for (const one& o :
         {one{position_kind::learned, 4, 2, 1, true, false, 0}, one{position_kind::learned, 4, 1, 2, false, false, 0},
          one{position_kind::rope, 2, 1, 2, true, true, 0.9}, one{position_kind::sinusoidal, 4, 2, 2, true, true, 0}}) {
        attn::tiny_config c;
        c.vocab = 7;
        c.seq_len = 6;
        c.d_model = 8;
        c.heads = o.heads;
        c.kv_heads = o.kv_heads;
        c.layers = o.layers;
        c.positions = o.pos;
        c.causal = o.causal;
        c.qk_norm = o.qk_norm;
        c.softcap = o.softcap;
        const attn::tiny_model m = attn::init_tiny_model(c, 3);
        REQUIRE(m.wk[0].size() == c.d_model * o.kv_heads * c.d_head());
        INFO("heads " << o.heads << " kv_heads " << o.kv_heads << " layers " << o.layers);
        CHECK(gradcheck(c, 3, attn::task_kind::reverse) < 1e-5);
    }
}

// Issue 31: QK-norm (before RoPE, learned scales), the soft cap (before the mask) and z-loss.
TEST_CASE("the tiny transformer's gradients with QK-norm, soft cap and z-loss agree with finite differences",
          "[learn][grad]") {
    using attn::position_kind;
    struct one {
        position_kind pos;
        std::size_t heads, layers;
        bool qk_norm;
        double softcap, z_loss;
    };
    for (const one& o :
         {one{position_kind::learned, 2, 1, true, 0, 0}, one{position_kind::rope, 2, 2, true, 0, 0},
          one{position_kind::learned, 1, 2, false, 0.8, 0}, one{position_kind::none, 2, 1, false, 0, 0.3},
          one{position_kind::rope, 2, 2, true, 1.2, 0.1}}) {
        attn::tiny_config c;
        c.vocab = 7;
        c.seq_len = 6;
        c.d_model = 8;
        c.heads = o.heads;
        c.layers = o.layers;
        c.positions = o.pos;
        c.qk_norm = o.qk_norm;
        c.softcap = o.softcap;
        INFO("qk_norm " << o.qk_norm << " softcap " << o.softcap << " z_loss " << o.z_loss);
        CHECK(gradcheck(c, 5, attn::task_kind::previous, o.z_loss) < 1e-5);
    }
}

TEST_CASE("the tasks' targets and patterns", "[learn]") {
    attn::rng g(1);
    const auto prev = attn::make_task_example(attn::task_kind::previous, 6, 5, g);
    CHECK(prev.targets[0] == -1);
    for (std::size_t t = 1; t < 6; ++t) CHECK(prev.targets[t] == prev.tokens[t - 1]);
    const auto rev = attn::make_task_example(attn::task_kind::reverse, 6, 5, g);
    for (std::size_t t = 0; t < 6; ++t) CHECK(rev.targets[t] == rev.tokens[5 - t]);
    const auto mx = attn::make_task_example(attn::task_kind::max, 6, 5, g);
    for (std::size_t t = 1; t < 6; ++t) CHECK(mx.targets[t] >= mx.targets[t - 1]);
    for (int i = 0; i < 20; ++i) {
        const auto ind = attn::make_task_example(attn::task_kind::induction, 12, 7, g);
        const auto need = attn::pattern_positions(attn::task_kind::induction, ind, false);
        for (std::size_t t = 0; t < 12; ++t) {
            if (ind.targets[t] < 0) continue;
            REQUIRE(!need[t].empty());
            for (std::size_t s : need[t]) CHECK(ind.tokens[s] == ind.targets[t]);  // the token after the match
        }
    }
    // A perfect previous-token pattern scores 1.
    std::vector<double> w(16, 0.0);
    w[0] = 1;
    for (std::size_t t = 1; t < 4; ++t) w[t * 4 + t - 1] = 1;
    CHECK(attn::pattern_score(w, 4, attn::pattern_positions(attn::task_kind::previous, prev, false)) == 1.0);
}

TEST_CASE("bad learn flags are one-line errors", "[learn]") {
    attn::learn_request r;
    r.task = "sort";
    CHECK_THROWS_AS(attn::validate_learn(r), attn::error);
    r.task = "induction";
    r.seq_len = 16;
    r.vocab = 5;
    CHECK_THROWS_WITH(attn::validate_learn(r), Catch::Contains("--vocab 8"));
    r.vocab = 0;
    r.d_model = 10;
    r.heads = 3;
    CHECK_THROWS_WITH(attn::validate_learn(r), Catch::Contains("divide"));
    r.heads = 0;
    r.positions = "alibi";
    CHECK_THROWS_AS(attn::validate_learn(r), attn::error);
}

TEST_CASE("same seed, same curve", "[learn]") {
    const auto a = small_run("previous", 30, 7), b = small_run("previous", 30, 7);
    REQUIRE(a.curve.size() == b.curve.size());
    for (std::size_t i = 0; i < a.curve.size(); ++i) CHECK(a.curve[i].loss == b.curve[i].loss);
    CHECK(a.final_accuracy == b.final_accuracy);
    CHECK(small_run("previous", 30, 8).curve.back().loss != a.curve.back().loss);
}

TEST_CASE("small runs learn their task and its pattern", "[learn][slow]") {
    for (const char* task : {"previous", "reverse", "max"}) {
        INFO(task);
        const attn::learn_report r = small_run(task, 200, 1);
        CHECK(r.final_accuracy >= 0.99);
        CHECK(r.pattern_score >= 0.9);
        CHECK(r.init_pattern_score < r.pattern_score);
    }
    attn::learn_request q;  // two layers: an induction head in layer 1
    q.task = "induction";
    q.seed = 1;
    q.seq_len = 8;
    q.vocab = 8;
    q.d_model = 16;
    q.steps = 300;
    attn::learn_config c = attn::validate_learn(q);
    c.held_out = 64;
    const attn::learn_report r = attn::run_learn(c);
    CHECK(r.final_accuracy >= 0.95);
    CHECK(r.pattern_layer == 1);
    CHECK(r.pattern_score >= 0.6);
}

// Issue 24, point 13: the page judges a run by the bars it prints, compared as printed, and says
// so when a run misses one.
TEST_CASE("learn: the bars that call a pattern learned are the ones printed, and a miss says so", "[learn]") {
    // As printed: 0.8996 shows as 0.90 and meets 0.90; 94.96% shows as 95.0% and meets 95%.
    CHECK(attn::score_meets(0.8996, 0.9));
    CHECK_FALSE(attn::score_meets(0.8949, 0.9));
    CHECK(attn::accuracy_meets(0.94951, 0.95));
    CHECK_FALSE(attn::accuracy_meets(0.9494, 0.95));
    CHECK(attn::bars_of(attn::task_kind::previous).pattern == 0.9);
    CHECK(attn::bars_of(attn::task_kind::induction).pattern == 0.6);
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::text_options o;
    o.width = 1000;
    auto number_after = [](const std::string& text, const std::string& before) {
        const std::size_t at = text.find(before);
        REQUIRE(at != std::string::npos);
        return std::stod(text.substr(at + before.size()));
    };
    for (long steps : {2L, 60L}) {
        const attn::learn_report r = small_run("previous", steps, 3);
        std::string text;  // one line: the prose wraps at a reading width whatever the terminal
        for (char ch : attn::render_text_joined(attn::learn_document(r, L), o))
            if (ch != '\n' && !(ch == ' ' && !text.empty() && text.back() == ' ')) text += ch;
            else if (!text.empty() && text.back() != ' ')
                text += ' ';
        INFO("steps " << steps << "\n" << text);
        // The sentence that judges the pattern prints the score and the bar it was judged by.
        const double score = number_after(text, r.pattern_learned ? "head 0 puts " : "puts only ");
        const double bar = number_after(text, r.pattern_learned ? "at or above the " : "short of the ");
        CHECK(bar == 0.9);
        CHECK(r.pattern_learned == (score >= bar));
        CHECK_THAT(text, Catch::Contains(r.pattern_learned ? "The pattern is there" : "The pattern did not form"));
        const double acc = number_after(text, "With ");
        CHECK(r.solved == (acc >= 95.0));
        CHECK_THAT(text,
                   Catch::Contains(r.solved ? "at or above the 95% this page calls solved"
                                            : "short of the 95% this page calls solved, the model has not"));
        if (steps == 2) {
            CHECK_FALSE(r.pattern_learned);
            CHECK_FALSE(r.solved);
            CHECK_THAT(text, Catch::Contains("never reached 99% in 2 steps"));
        }
    }
}

namespace {

// tests/fixtures/<name> (make_fixtures.py): the loss, every gradient and the parameters after one
// Adam step, computed by torch autograd and torch.optim.Adam in float64, with z-loss λ.
void check_learn_fixture(const std::string& name, attn::tiny_config c, std::size_t batch, double z_loss) {
    const std::string dir = std::string(ATTN_FIXTURES) + "/" + name + "/";
    auto load = [](const std::string& path) { return attn::npy::read(path).data; };
    attn::tiny_model m = attn::init_tiny_model(c, 0);
    for (auto& [id, p] : m.tensors()) {
        *p = load(dir + id + ".npy");
        REQUIRE(p->size() > 0);
    }
    const std::vector<double> tok = load(dir + "tokens.npy"), tgt = load(dir + "targets.npy");
    std::vector<std::vector<int>> tokens(batch), targets(batch);
    for (std::size_t i = 0; i < tok.size(); ++i) {
        tokens[i / c.seq_len].push_back(static_cast<int>(tok[i]));
        targets[i / c.seq_len].push_back(static_cast<int>(tgt[i]));
    }
    attn::tiny_model grad = m.zeros_like();
    double z = 0;
    const double loss = attn::tiny_batch_loss(m, tokens, targets, &grad, nullptr, nullptr, z_loss, &z);
    CHECK(std::fabs(loss - load(dir + "expected/loss.npy")[0]) < 1e-12);
    if (z_loss > 0) CHECK(std::fabs(z - load(dir + "expected/z.npy")[0]) < 1e-12);
    auto gs = grad.tensors();
    std::vector<std::vector<double>*> params;
    std::vector<std::vector<double>> grads;
    for (std::size_t k = 0; k < gs.size(); ++k) {
        const std::vector<double> want = load(dir + "expected/d_" + gs[k].first + ".npy");
        REQUIRE(want.size() == gs[k].second->size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            INFO(name << " d_" << gs[k].first << "[" << i << "]");
            CHECK(std::fabs((*gs[k].second)[i] - want[i]) < 1e-12);
        }
        grads.push_back(*gs[k].second);
    }
    for (auto& [id, p] : m.tensors()) params.push_back(p);
    attn::adam opt;
    opt.lr = 1e-2;
    opt.step(params, grads);
    for (auto& [id, p] : m.tensors()) {
        const std::vector<double> want = load(dir + "expected/after_" + id + ".npy");
        for (std::size_t i = 0; i < want.size(); ++i) {
            INFO(name << " after_" << id << "[" << i << "]");
            CHECK(std::fabs((*p)[i] - want[i]) < 1e-12);
        }
    }
}

}  // namespace

TEST_CASE("the tiny transformer's first step agrees with torch autograd and Adam", "[learn][golden]") {
    attn::tiny_config c;
    c.vocab = 6, c.seq_len = 5, c.d_model = 8, c.heads = 2, c.layers = 2;
    check_learn_fixture("learn_step", c, 3, 0);
    // Issue 31: QK-norm (with RoPE), the soft cap with z-loss, and all of them at once.
    attn::tiny_config q = c;
    q.positions = attn::position_kind::rope;
    q.qk_norm = true;
    check_learn_fixture("learn_step_qk_norm", q, 3, 0);
    attn::tiny_config s = c;
    s.softcap = 1.5;
    check_learn_fixture("learn_step_softcap_z", s, 3, 0.1);
    attn::tiny_config all = q;
    all.vocab = 5, all.seq_len = 6, all.layers = 1, all.softcap = 1.0;
    check_learn_fixture("learn_step_all", all, 2, 0.05);
    // Issue 34: GQA (4 query heads on 2 K/V heads) and MQA with RoPE, QK-norm and the soft cap:
    // torch repeats each K/V head with repeat_interleave and autograd sums the shared gradients.
    attn::tiny_config g = c;
    g.heads = 4, g.kv_heads = 2;
    check_learn_fixture("learn_step_gqa", g, 3, 0);
    attn::tiny_config mq = c;
    mq.vocab = 5, mq.seq_len = 6, mq.kv_heads = 1, mq.positions = attn::position_kind::rope, mq.qk_norm = true;
    mq.softcap = 1.0;
    check_learn_fixture("learn_step_mqa_rope", mq, 2, 0);
}

TEST_CASE("attn-explain learn: JSON contract, text width and exit codes", "[learn][cli]") {
    const std::string exe = std::string(ATTN_EXE) + " learn --seq-len 6 --vocab 6 --steps 40 ";
    const test::command_result j = test::capture(exe + "--task induction --layers 2 --format json");
    REQUIRE(j.code == 0);
    const nlohmann::json doc = nlohmann::json::parse(j.out);
    for (const char* key : {"task", "config", "curve", "final", "snapshots"}) CHECK(doc.contains(key));
    CHECK(doc["curve"].size() == 40);
    CHECK(doc["curve"][0].contains("accuracy"));
    for (const char* key : {"loss", "accuracy", "pattern_score"}) CHECK(doc["final"].contains(key));
    // The verdicts beside the bars they were judged by (as printed: two decimals).
    const nlohmann::json& fin = doc["final"];
    CHECK(fin["bars"]["pattern"].get<double>() == 0.6);
    CHECK(fin["pattern_learned"].get<bool>() ==
          attn::score_meets(fin["pattern_score"].get<double>(), fin["bars"]["pattern"].get<double>()));
    CHECK(fin["solved"].get<bool>() ==
          attn::accuracy_meets(fin["accuracy"].get<double>(), fin["bars"]["solved"].get<double>()));
    CHECK(fin.contains("previous_token_learned"));
    CHECK(doc["snapshots"][0]["weights"].size() == 6);
    for (const char* cols : {"60", "80"}) {
        const test::command_result t =
            test::capture("COLUMNS=" + std::string(cols) + " " + exe + "--no-pause --color never");
        REQUIRE(t.code == 0);
        std::size_t start = 0, widest = 0;
        while (start < t.out.size()) {
            std::size_t end = t.out.find('\n', start);
            if (end == std::string::npos) end = t.out.size();
            std::size_t w = 0;  // display columns: count UTF-8 lead bytes
            for (std::size_t i = start; i < end; ++i) w += (static_cast<unsigned char>(t.out[i]) & 0xC0) != 0x80;
            widest = std::max(widest, w);
            start = end + 1;
        }
        CHECK(widest <= static_cast<std::size_t>(std::stoi(cols)));
    }
    CHECK(test::capture(exe + "--task sort 2>/dev/null").code == 2);
    CHECK(test::capture(exe + "--task induction --seq-len 16 --vocab 4 2>/dev/null").code == 2);
}

// next-token (issue 31): the order-2 source's stationary distribution, entropy rate and baselines.
TEST_CASE("learn next-token: the Markov source's numbers come from its transition table", "[learn][next-token]") {
    const attn::markov_source s = attn::make_markov_source(6, 4);
    const std::size_t V = 6;
    double total = 0;
    for (double p : s.stationary) total += p;
    CHECK(std::fabs(total - 1) < 1e-12);
    // π is still under one step of the pair chain: π'(b, c) = Σ_a π(a, b)·P(c | a, b).
    std::vector<double> next(V * V, 0.0);
    for (std::size_t a = 0; a < V; ++a)
        for (std::size_t b = 0; b < V; ++b) {
            const std::vector<double> p = s.row(a, b);
            for (std::size_t c = 0; c < V; ++c) next[b * V + c] += s.stationary[a * V + b] * p[c];
        }
    for (std::size_t i = 0; i < V * V; ++i) CHECK(std::fabs(next[i] - s.stationary[i]) < 1e-13);
    // Stationary: the first and the second token of a pair have the same marginal, so every
    // position of a sample has the same distribution (positions alone tell nothing).
    for (std::size_t x = 0; x < V; ++x) {
        double first = 0, second = 0;
        for (std::size_t y = 0; y < V; ++y) {
            first += s.stationary[x * V + y];
            second += s.stationary[y * V + x];
        }
        CHECK(std::fabs(first - second) < 1e-13);
    }
    CHECK(s.entropy_rate < s.order1_entropy);
    CHECK(s.order1_entropy < s.unigram_entropy);
    CHECK(s.unigram_entropy <= std::log(6.0) + 1e-12);
    // A long sample's mean −log P(x_{t+1} | x_{t−1}, x_t) is the entropy rate (Monte Carlo).
    attn::rng g(9);
    const std::vector<int> x = attn::sample_markov(s, 200000, g);
    double nll = 0;
    for (std::size_t t = 2; t < x.size(); ++t)
        nll -= std::log(s.row(static_cast<std::size_t>(x[t - 2]), static_cast<std::size_t>(x[t - 1]))[x[t]]);
    CHECK(std::fabs(nll / static_cast<double>(x.size() - 2) - s.entropy_rate) < 0.01);
    // Hand values: smoothing 1 is the uniform source, every entropy log V, accuracy 1/V.
    const attn::markov_source u = attn::make_markov_source(5, 1, 3, 1.0);
    CHECK(std::fabs(u.entropy_rate - std::log(5.0)) < 1e-12);
    CHECK(std::fabs(u.order1_entropy - std::log(5.0)) < 1e-12);
    CHECK(std::fabs(u.unigram_entropy - std::log(5.0)) < 1e-12);
    CHECK(std::fabs(u.best_accuracy - 0.2) < 1e-12);
    // The task: y_t = x_{t+1} for t ≥ 1, position 0 unscored; the pattern rows from t = 2.
    const attn::task_example e = attn::make_task_example(attn::task_kind::next_token, 8, 6, g, &s);
    CHECK(e.targets[0] == -1);
    for (std::size_t t = 1; t + 1 < 8; ++t) CHECK(e.targets[t] == e.tokens[t + 1]);
    const auto need = attn::pattern_positions(attn::task_kind::next_token, e, false);
    CHECK(need[1].empty());
    CHECK(need[5] == std::vector<std::size_t>{4, 5});
    CHECK_THROWS_AS(attn::make_task_example(attn::task_kind::next_token, 8, 6, g), attn::error);
}

TEST_CASE("learn --task next-token beats the unigram baseline and reports the entropy rate", "[learn][next-token]") {
    attn::learn_request r;
    r.task = "next-token";
    r.seed = 2;
    r.steps = 150;
    attn::learn_config c = attn::validate_learn(r);
    c.held_out = 64;
    const attn::learn_report rep = attn::run_learn(c);
    REQUIRE(c.source);
    CHECK(rep.final_loss < c.source->unigram_entropy);
    CHECK(rep.final_loss > c.source->entropy_rate - 0.05);  // no model beats the floor (up to sampling)
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::text_options o;
    o.width = 1000;
    std::string text;  // one line, single spaces
    for (char ch : attn::render_text_joined(attn::learn_document(rep, L), o))
        if (ch != '\n' && !(ch == ' ' && !text.empty() && text.back() == ' ')) text += ch;
        else if (!text.empty() && text.back() != ' ')
            text += ' ';
    CHECK_THAT(text, Catch::Contains(fmt::format("entropy rate is {:.3g} nats", c.source->entropy_rate)));
    r.vocab = 33;
    CHECK_THROWS_WITH(attn::validate_learn(r), Catch::Contains("--vocab must be between 2 and 32"));
}

// Issue 31: --compare-logit-control at its defaults (next-token, lr 0.1, seed 0): the plain run's
// attention logits blow up and its entropy collapses, QK-norm holds them, the soft cap bounds
// them, and every verdict is the one its own numbers give.
TEST_CASE("learn --compare-logit-control: four runs and verdicts computed from what happened", "[learn][logits]") {
    attn::learn_request req;  // the defaults, as `learn --compare-logit-control` runs them
    req.compare_logit_control = true;
    const attn::learn_report rep = attn::run_learn(attn::validate_learn(req));
    const nlohmann::json doc = nlohmann::json::parse(attn::render_learn_json(rep));
    CHECK(doc["task"] == "next-token");
    CHECK(doc["config"]["lr"].get<double>() == 0.1);
    for (const char* key : {"max_logit", "entropy", "z"}) CHECK(doc["curve"][0].contains(key));
    REQUIRE(doc["runs"].size() == 4);
    std::map<std::string, nlohmann::json> runs;
    for (const auto& r : doc["runs"]) {
        const std::string name = r["name"];
        runs[name] = r;
        const auto logits = r["max_logit"].get<std::vector<double>>();
        const auto entropy = r["entropy"].get<std::vector<double>>();
        REQUIRE(logits.size() == 300);
        const nlohmann::json& v = r["verdict"];
        CHECK(v["first_max_logit"].get<double>() == logits.front());
        CHECK(v["last_max_logit"].get<double>() == logits.back());
        CHECK(v["grew"].get<bool>() == (logits.back() / logits.front() >= attn::logit_growth_bar));
        CHECK(v["entropy_collapsed"].get<bool>() == (entropy.back() <= attn::entropy_collapse_bar));
        CHECK(v["diverged_at"].is_null());
    }
    CHECK(runs["plain"]["verdict"]["grew"].get<bool>());
    CHECK(runs["plain"]["verdict"]["entropy_collapsed"].get<bool>());
    CHECK_FALSE(runs["qk-norm"]["verdict"]["grew"].get<bool>());
    for (double x : runs["softcap"]["max_logit"].get<std::vector<double>>()) CHECK(x <= 20);
    // The page says what happened to the z-loss run, whichever way it went.
    attn::text_options o;
    o.width = 1000;
    std::string text;
    for (char ch : attn::render_text_joined(attn::learn_document(rep, attn::lessons::embedded("en")), o))
        if (ch != '\n' && !(ch == ' ' && !text.empty() && text.back() == ' ')) text += ch;
        else if (!text.empty() && text.back() != ' ')
            text += ' ';
    const bool z_grew = runs["z-loss"]["verdict"]["grew"].get<bool>();
    CHECK_THAT(text,
               Catch::Contains(z_grew ? "z-loss did not stop the attention logits"
                                      : "The z-loss run's attention logits stayed in check"));
    CHECK_THAT(text, Catch::Contains("qk-norm: the largest attention logit went from"));
    CHECK(test::capture(std::string(ATTN_EXE) + " learn --softcap 0 2>/dev/null").code == 2);
    CHECK(test::capture(std::string(ATTN_EXE) + " learn --z-loss -1 2>/dev/null").code == 2);
    CHECK(test::capture(std::string(ATTN_EXE) + " learn --compare-logit-control --qk-norm 2>/dev/null").code == 2);
}

namespace {

attn::tiny_model stream_model(attn::position_kind pos, std::size_t layers, bool qk_norm, double softcap,
                              std::uint64_t seed) {
    attn::tiny_config c;
    c.vocab = 7, c.seq_len = 9, c.d_model = 8, c.heads = 2, c.layers = layers;
    c.positions = pos, c.qk_norm = qk_norm, c.softcap = softcap;
    attn::tiny_model m = attn::init_tiny_model(c, seed);
    attn::rng g(seed + 1);
    if (qk_norm)
        for (std::size_t l = 0; l < layers; ++l)
            for (std::size_t e = 0; e < c.d_head(); ++e) m.q_norm[l][e] = 1 + 0.5 * g.normal(), m.k_norm[l][e] = 1.2;
    return m;
}

// The full forward pass's next-token loss at every position but the last.
std::vector<double> full_losses(const attn::tiny_model& m, const std::vector<int>& tokens) {
    const attn::tiny_forward f = attn::tiny_forward_pass(m, tokens);
    const std::size_t V = m.c.vocab;
    std::vector<double> out;
    for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
        const double* z = &f.logits[t * V];
        const double mx = *std::max_element(z, z + V);
        double sum = 0;
        for (std::size_t i = 0; i < V; ++i) sum += std::exp(z[i] - mx);
        out.push_back(std::log(sum) - (z[tokens[t + 1]] - mx));
    }
    return out;
}

}  // namespace

TEST_CASE("tiny_streaming_eval: a cache that keeps everything is the full forward pass", "[learn][streaming]") {
    const std::vector<int> tokens = {3, 1, 4, 1, 5, 2, 6, 5, 3};
    for (auto pos : {attn::position_kind::rope, attn::position_kind::none})
        for (bool qk : {false, true}) {
            const attn::tiny_model m = stream_model(pos, 2, qk, qk ? 2.0 : 0.0, 7);
            const std::vector<double> want = full_losses(m, tokens);
            const attn::tiny_forward f = attn::tiny_forward_pass(m, tokens);
            for (auto [sinks, window] : {std::pair<std::size_t, std::size_t>{0, 9}, {2, 7}, {4, 20}}) {
                const attn::tiny_stream_result r = attn::tiny_streaming_eval(m, tokens, sinks, window);
                REQUIRE(r.loss.size() == want.size());
                for (std::size_t t = 0; t < want.size(); ++t) CHECK(std::fabs(r.loss[t] - want[t]) < 1e-12);
                for (std::size_t t = 0; t < tokens.size(); ++t) {
                    CHECK(r.kept[t] == attn::streaming_kept(t + 1, sinks, window));
                    for (std::size_t l = 0; l < 2; ++l)
                        for (std::size_t h = 0; h < 2; ++h) {
                            double mass = 0;  // the weight on the first `sinks` keys
                            for (std::size_t s = 0; s < std::min(sinks, t + 1); ++s) mass += f.a[l][h][t * 9 + s];
                            CHECK(std::fabs(r.sink_mass[t][l][h] - mass) < 1e-12);
                        }
                }
            }
        }
}

TEST_CASE("tiny_streaming_eval: evicted keys are gone, the kept are rotated at their cache positions",
          "[learn][streaming]") {
    // One layer: at step t the model sees exactly the kept tokens, at positions 0 … kept − 1, so
    // its loss is the full forward pass's on that shorter sequence, at its last position.
    const attn::tiny_model m = stream_model(attn::position_kind::rope, 1, true, 3.0, 11);
    const std::vector<int> tokens = {3, 1, 4, 1, 5, 2, 6, 5, 3};
    const std::size_t sinks = 1, window = 3;
    const attn::tiny_stream_result r = attn::tiny_streaming_eval(m, tokens, sinks, window);
    for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
        const std::vector<std::size_t>& kept = r.kept[t];
        CHECK(kept.size() == std::min(t + 1, sinks + window));
        std::vector<int> seen;
        for (std::size_t p : kept) seen.push_back(tokens[p]);
        seen.push_back(tokens[t + 1]);  // the target, so that full_losses scores the last kept position
        attn::tiny_model sub = m;
        sub.c.seq_len = seen.size();
        CHECK(std::fabs(r.loss[t] - full_losses(sub, seen).back()) < 1e-12);
    }
    // Changing a token the cache evicted before step 6 (position 2: kept are 0, 4, 5, 6) changes
    // nothing at step 6; changing a kept one does.
    REQUIRE(r.kept[6] == std::vector<std::size_t>{0, 4, 5, 6});
    std::vector<int> other = tokens;
    other[2] = 0;
    CHECK(attn::tiny_streaming_eval(m, other, sinks, window).loss[6] == r.loss[6]);
    other = tokens;
    other[4] = 0;
    CHECK(attn::tiny_streaming_eval(m, other, sinks, window).loss[6] != r.loss[6]);
    // sinks = 0: nothing is a sink.
    for (const auto& step : attn::tiny_streaming_eval(m, tokens, 0, 3).sink_mass) CHECK(step[0][0] == 0);
    // What it refuses.
    CHECK_THROWS_WITH(
        attn::tiny_streaming_eval(stream_model(attn::position_kind::learned, 1, false, 0, 1), tokens, 1, 3),
        Catch::Contains("rope or no positions"));
    attn::tiny_model bidirectional = m;
    bidirectional.c.causal = false;
    CHECK_THROWS_WITH(attn::tiny_streaming_eval(bidirectional, tokens, 1, 3), Catch::Contains("causal"));
    CHECK_THROWS_WITH(attn::tiny_streaming_eval(m, tokens, 1, 0), Catch::Contains("window"));
    CHECK_THROWS_WITH(attn::tiny_streaming_eval(m, {1, 9}, 1, 3), Catch::Contains("vocabulary"));
}

TEST_CASE("learn next-token: the source's numbers agree with NumPy's exact solve", "[learn][next-token][external]") {
    if (test::capture("/usr/bin/python3 -c 'import numpy' 2>/dev/null").code != 0) {
        WARN("python3-numpy is not installed: the source is not compared");
        return;
    }
    for (std::size_t V : {2, 5, 12}) {
        const attn::markov_source s = attn::make_markov_source(V, V + 100);
        const test::temp_dir dir;
        std::vector<double> next(s.next.begin(), s.next.end());
        attn::npy::write(dir / "next.npy", {V * V, s.branches}, next, attn::npy::dtype::float64);
        attn::npy::write(dir / "weight.npy", {V * V, s.branches}, s.weight, attn::npy::dtype::float64);
        const test::command_result r =
            test::capture(fmt::format("/usr/bin/python3 {}/tests/python/markov_source.py {} {} {}", ATTN_SOURCE_DIR,
                                      dir.path.string(), V, s.smoothing));
        INFO(r.out << r.err);
        REQUIRE(r.code == 0);
        const nlohmann::json ref = nlohmann::json::parse(r.out);
        CHECK(std::fabs(s.entropy_rate - ref["entropy_rate"].get<double>()) < 1e-12);
        CHECK(std::fabs(s.order1_entropy - ref["order1_entropy"].get<double>()) < 1e-12);
        CHECK(std::fabs(s.unigram_entropy - ref["unigram_entropy"].get<double>()) < 1e-12);
        CHECK(std::fabs(s.best_accuracy - ref["best_accuracy"].get<double>()) < 1e-12);
        const auto pi = ref["stationary"].get<std::vector<double>>();
        REQUIRE(pi.size() == s.stationary.size());
        for (std::size_t i = 0; i < pi.size(); ++i) CHECK(std::fabs(s.stationary[i] - pi[i]) < 1e-13);
    }
}

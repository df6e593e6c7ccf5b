// The content linter: every step and mistake has its text, every placeholder can be filled, and
// every key in lessons/ is used by some output.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "attn/doc/batching.hpp"
#include "attn/doc/parallel.hpp"
#include "attn/doc/serve.hpp"
#include "attn/doc/speculative.hpp"
#include "attn/doc/block.hpp"
#include "attn/doc/paged.hpp"
#include "attn/render/json_paged.hpp"
#include "attn/render/python_paged.hpp"
#include "attn/trace/paged.hpp"
#include "attn/doc/roofline.hpp"
#include "attn/render/json_roofline.hpp"
#include "attn/trace/roofline_report.hpp"
#include "attn/doc/exercise.hpp"
#include "attn/render/json_batching.hpp"
#include "attn/render/json_parallel.hpp"
#include "attn/render/json_serve.hpp"
#include "attn/render/python_parallel.hpp"
#include "attn/render/json_speculative.hpp"
#include "attn/render/json_block.hpp"
#include "attn/render/python_block.hpp"
#include "attn/trace/batching.hpp"
#include "attn/trace/exercise.hpp"

#include "attn/drill/drill.hpp"
#include "attn/trace/trace_grad.hpp"
#include "attn/trace/train.hpp"
#include "attn/trace/learn.hpp"
#include "attn/doc/learn.hpp"
#include "attn/render/json_learn.hpp"
#include "attn/core/error.hpp"
#include "attn/doc/drill.hpp"
#include "attn/doc/mask.hpp"
#include "attn/doc/train.hpp"
#include "attn/render/html.hpp"
#include "attn/render/json_drill.hpp"
#include "attn/render/json_mask.hpp"
#include "attn/render/json_train.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/format.hpp"
#include "attn/render/text.hpp"
#include "attn/trace/flash_report.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/doc/block_depth.hpp"
#include "attn/doc/cost_training.hpp"
#include "attn/doc/flash.hpp"
#include "attn/doc/kvcache.hpp"
#include "attn/render/json_flash.hpp"
#include "attn/render/json_kvcache.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/format.hpp"
#include "attn/render/text.hpp"
#include "attn/render/html.hpp"
#include "attn/doc/course.hpp"
#include "attn/doc/interview.hpp"
#include "attn/io/lessons.hpp"
#include "attn/io/tiny_model_io.hpp"
#include "files.hpp"
#include "attn/doc/variant.hpp"
#include "attn/trace/mistakes.hpp"
#include "attn/doc/bench.hpp"
#include "attn/doc/positions.hpp"
#include "attn/doc/walkthrough.hpp"
#include "attn/render/json_positions.hpp"
#include "attn/trace/positions.hpp"
#include "attn/render/html.hpp"
#include "attn/render/json.hpp"
#include "attn/render/python.hpp"
#include "attn/render/svg.hpp"
#include "attn/render/markdown.hpp"
#include "attn/render/format.hpp"
#include "attn/render/text.hpp"
#include "attn/trace/trace.hpp"

namespace fs = std::filesystem;

namespace {
attn::trace lesson_trace(attn::step_request r) {
    const attn::step_config c = attn::validate(r);
    return attn::build_trace(c, attn::make_inputs(c), 4);
}

void render_all(const attn::trace& t) {
    const attn::lessons& L = attn::lessons::embedded("en");
    attn::text_options o;
    const attn::doc::document d = attn::doc::walkthrough(t, L, {});
    for (bool color : {false, true}) {
        o.color = color;
        CHECK_NOTHROW(attn::render_text(d, o));
    }
    CHECK_NOTHROW(attn::render_json(t, L));
    CHECK_NOTHROW(attn::render_python(t, L, "step"));
    CHECK_NOTHROW(attn::render_markdown(d));
    CHECK_NOTHROW(attn::render_html(d));
}

// A document through every renderer: text (plain and coloured, wide and narrow), Markdown, HTML.
void draw_all(const attn::doc::document& d) {
    attn::text_options o;
    for (bool color : {false, true}) {
        o.color = color;
        CHECK_NOTHROW(attn::render_text(d, o));
    }
    o.width = 60;
    CHECK_NOTHROW(attn::render_text(d, o));
    CHECK_NOTHROW(attn::render_markdown(d));
    CHECK_NOTHROW(attn::render_html(d));
}
}  // namespace

TEST_CASE("every step id and mistake has its text", "[lessons]") {
    const attn::lessons& L = attn::lessons::embedded("en");
    for (const std::string& id : attn::step_ids())
        for (const char* field : {"title", "formula", "pytorch", "note", "pitfall"}) {
            INFO("step." << id << "." << field);
            CHECK(L.has("step." + id + "." + field));
        }
    for (const attn::mistake_info& m : attn::mistake_catalogue()) {
        for (const char* field : {"summary", "title", "buggy_code", "fixed_code", "catch", "interview"}) {
            INFO("mistake." << m.id << "." << field);
            CHECK(L.has("mistake." + m.id + "." + field));
        }
        CHECK(L.has("group." + m.group));
        CHECK(L.has("kind." + m.kind));
    }
    CHECK(attn::embedded_languages() == std::vector<std::string>{"en", "zh"});
}

TEST_CASE("every placeholder is filled and every lesson key is used", "[lessons]") {
    attn::step_request base;
    base.tokens = "the cat sat";
    render_all(lesson_trace(base));
    attn::step_request causal = base;
    causal.mask = "causal";
    causal.init = "xavier";
    render_all(lesson_trace(causal));
    attn::step_request wide;
    wide.seq_len = 4;
    wide.d_model = 6;
    wide.mistake = "no-transpose";  // n == d_k: silent
    render_all(lesson_trace(wide));
    attn::step_request clash;
    clash.mistake = "no-transpose";  // 3 != 4: shape error
    render_all(lesson_trace(clash));
    attn::step_request sparse = base;  // a sparse pattern's own masked step
    sparse.mask = "dilated:2,1";  // stacking reaches every position
    render_all(lesson_trace(sparse));
    sparse.seq_len = 8;
    sparse.tokens = "";
    sparse.mask = "block:2";  // stacking never leaves a block
    render_all(lesson_trace(sparse));
    sparse.mask = "bigbird:2,1,1";  // BigBird's rand
    render_all(lesson_trace(sparse));
    sparse.kv_len = 6;  // cross-attention: stacking does not compose the pattern
    sparse.mask = "window:2";
    render_all(lesson_trace(sparse));
    attn::step_request noscale;
    noscale.mistake = "no-scale";
    render_all(lesson_trace(noscale));
    attn::step_request loaded;
    loaded.load_dir = ATTN_FIXTURES "/causal";
    loaded.mask = "causal";
    {
        attn::step_config c = attn::validate(loaded);
        const attn::inputs in = attn::load_inputs(c);
        render_all(attn::build_trace(c, in, 4));
    }
    // d_k = 1: the scale is 1 (its own saturation sentence).
    {
        attn::step_request one = base;
        one.d_k = 1;
        render_all(lesson_trace(one));
    }
    // Weights rows filled with zeros (as SDPA >= 2.5 returns a fully masked row), and every row NaN.
    {
        attn::trace t = lesson_trace(base);
        for (attn::step& s : t.steps)
            if (s.id == "weights") s.value(0, 0) = s.value(0, 1) = s.value(0, 2) = 0;
        render_all(t);
        for (attn::step& s : t.steps)
            if (s.id == "weights") s.value.fill(std::nan(""));
        render_all(t);
    }
    // A row with every key blocked (a NaN row) has its own reading.
    {
        attn::trace t = lesson_trace(base);
        for (attn::step& s : t.steps)
            if (s.id == "weights") s.value(0, 0) = s.value(0, 1) = s.value(0, 2) = std::nan("");
        render_all(t);
    }
    // Every mistake, through `mistake NAME` in every format, and through `step --mistake`.
    for (const attn::mistake_info& m : attn::mistake_catalogue()) {
        INFO(m.id);
        attn::step_request r;
        r.mistake = m.id;
        r.walkthrough = false;
        const attn::trace t = lesson_trace(r);
        const attn::lessons& L = attn::lessons::embedded("en");
        const attn::doc::document d = attn::doc::mistake_document(t, L, {});
        CHECK_NOTHROW(attn::render_text(d, {}));
        CHECK_NOTHROW(attn::render_mistake_json(t, L));
        CHECK_NOTHROW(attn::render_python(t, L, "mistake " + m.id));
        CHECK_NOTHROW(attn::render_markdown(d));
        CHECK_NOTHROW(attn::render_html(d));
        if (m.in_step) {
            r.walkthrough = true;
            render_all(lesson_trace(r));
        }
    }
    {  // single-head cross-attention
        attn::step_request cross;
        cross.kv_len = 5;
        cross.d_v = 3;
        cross.mask = "causal";
        cross.align = "bottom-right";
        render_all(lesson_trace(cross));
        cross.align = "top-left";
        render_all(lesson_trace(cross));
    }
    {  // `heads`: padded, causal, biased; then cross-attention without a mask
        attn::step_request h;
        h.multihead = true;
        h.walkthrough = false;
        h.batch = 2;
        h.seq_len = 4;
        h.d_model = 8;
        h.tokens = "the cat sat on";
        h.mask = "causal";
        h.bias = true;
        h.lengths = "4,2";
        render_all(lesson_trace(h));
        h.mask = "block:2";  // a sparse pattern's own masked step
        render_all(lesson_trace(h));
        h.init = "xavier";  // nn.MultiheadAttention's own init, the command's default
        render_all(lesson_trace(h));
        h.init = "randn";
        h.mask = "none";
        h.lengths.clear();
        h.bias = false;
        h.kv_len = 3;
        render_all(lesson_trace(h));
        h.mask = "causal";  // cross-attention under a causal mask: the alignment note, a key, keys,
        h.lengths.clear();  // and no key at all
        h.batch = 1;
        h.tokens.clear();
        h.seq_len = 5;
        h.align = "bottom-right";
        render_all(lesson_trace(h));
        h.align = "top-left";
        render_all(lesson_trace(h));
    }
    {  // the drill: every question of the bank and every generator, through every piece of text
        using namespace attn::drill;
        const attn::lessons& D = attn::lessons::embedded("en");
        std::vector<question> all = concept_bank(D);
        for (const question& q : bug_bank(D, 1)) all.push_back(q);
        for (int v = 0; v < shape_variants; ++v) all.push_back(gen_shape(D, 3, v));
        for (int v = 0; v < numeric_variants; ++v) all.push_back(gen_numeric(D, 3, v));
        draw_all(sheet_document(all, D, "all", 3));
        CHECK_NOTHROW(sheet_json(all, "all", 3));
        draw_all(header_document(D, all.size(), "all", 3));
        draw_all(header_document(D, 1, "all", 3));  // "1 question"
        CHECK_NOTHROW(prompt_text(D));
        for (std::size_t i = 0; i < all.size(); ++i) {
            draw_all(question_document(D, all[i], i + 1, all.size()));
            draw_all(hint_document(D, all[i]));
            for (outcome o : {outcome::right, outcome::wrong, outcome::skipped})
                draw_all(verdict_document(D, all[i], o));
            draw_all(unreadable_document(D, all[i]));
        }
        draw_all(line_too_long_document(D, 4096, false));
        draw_all(line_too_long_document(D, 4096, true));
        draw_all(input_not_text_document(D));
        draw_all(summary_document(D, {{"shapes", {2, 1}}}, 1, 2, 3));
        draw_all(summary_document(D, {{"shapes", {2, 2}}}, 2, 2, 2));
        draw_all(summary_document(D, {{"shapes", {2, 2}}}, 2, 2, 4, 2));  // two skipped
        progress pr;
        draw_all(stats_document(D, pr, "/tmp/x"));
        pr.topics["shapes"] = {2, 1};
        pr.missed["concept.x"] = 1;
        pr.sessions.push_back("s");
        pr.exercises.push_back("sdpa seed 1");
        draw_all(stats_document(D, pr, "/tmp/x"));
        draw_all(reset_document(D, true, "/tmp/x", "/tmp/interview-history.txt"));
        draw_all(reset_document(D, false, "/tmp/x", ""));
    }
    {  // the interview: every page, every part, every level's questions, the report and history
        const attn::lessons& D = attn::lessons::embedded("en");
        namespace iv = attn::interview;
        iv::session s;
        s.level = "mid", s.exercise = "causal", s.date = "2026-12-06T14:30Z";
        for (int minutes : {0, 45}) {
            s.minutes = minutes;
            draw_all(iv::intro_document(D, s));
            CHECK_NOTHROW(iv::clock_prefix(D, minutes, 60, 30));
        }
        for (int p = 0; p < iv::part_count; ++p) draw_all(iv::part_document(D, p));
        draw_all(iv::coding_document(D, "causal", "/tmp/x"));
        CHECK_NOTHROW(iv::coding_prompt(D));
        for (auto n : {iv::coding_note::unknown, iv::coding_note::passed, iv::coding_note::failed})
            draw_all(iv::coding_note_document(D, n, "/tmp/x"));
        draw_all(iv::followups_document(D, 3, 1));
        draw_all(iv::time_up_document(D, true));
        draw_all(iv::time_up_document(D, false));
        draw_all(iv::ended_document(D));
        for (const std::string& level : iv::level_names()) {
            CHECK(iv::warmup_questions(D, level, 1).size() == 5);
            CHECK_NOTHROW(iv::design_question(D, level, 1));
            CHECK_NOTHROW(iv::followup_questions(D, level, {"no-scale"}, 1));
        }
        draw_all(iv::report_document(D, s));  // never checked
        s.checks = 1;
        draw_all(iv::report_document(D, s));  // checked, no mistake
        s.mistakes = {"no-scale", "mask-fill-zero"};
        s.partial = s.time_up = true;
        s.parts[0].reached = true;
        s.answers.push_back({0, "x", "prompt", "(2, 3)", "", false});
        s.answers.push_back({0, "y", "prompt", "(2, 3)", "(3, 2)", false});
        draw_all(iv::report_document(D, s));
        draw_all(iv::files_document(D, "/tmp/x/report.md", "/tmp/x/report.html"));
        draw_all(iv::history_document(D, {}, "/tmp/x"));
        draw_all(iv::history_document(
            D, {{"2026-12-06T14:30Z", "mid", 3, 12, true, "d"}, {"d", "junior", 1, 1, false, "e"}}, "/tmp/x"));
    }
    {  // the course: the path (nothing done, some done, all done) and every lesson's pages
        const attn::lessons& D = attn::lessons::embedded("en");
        const auto path = attn::course::load_path(D);
        attn::drill::progress pr;
        draw_all(attn::course::path_document(D, path, pr));
        attn::course::mark_done(pr, "step");
        draw_all(attn::course::path_document(D, path, pr));
        draw_all(attn::drill::stats_document(D, pr, "/tmp/x"));
        for (const auto& u : path)
            for (const auto& l : u.lessons) {
                draw_all(attn::course::intro_document(D, path, l));
                for (bool done : {true, false}) {
                    draw_all(attn::course::outcome_document(D, path, pr, l, done));
                    draw_all(attn::course::exercise_document(D, l, "/tmp/x", done));
                }
                attn::course::mark_done(pr, l.id);
            }
        draw_all(attn::course::path_document(D, path, pr));
        draw_all(attn::course::questions_document(D, 2));
        draw_all(attn::course::finished_document(D));
        draw_all(attn::course::reset_document(D, true, "/tmp/x"));
        draw_all(attn::course::reset_document(D, false, "/tmp/x"));
        CHECK_NOTHROW(attn::course::reset_prompt(D, "/tmp/x"));
    }
    {  // grad (with the check and the sweep, both losses) and train (every mistake)
        attn::step_request g;
        g.mask = "causal";
        const attn::step_config gc = attn::validate(g);
        const attn::inputs gin = attn::make_inputs(gc);
        for (attn::loss_kind loss : {attn::loss_kind::mse, attn::loss_kind::sum}) {
            attn::grad_options go;
            go.loss = loss;
            go.check = go.sweep = true;
            attn::trace gt = attn::build_grad_trace(gc, gin, go, 4);
            render_all(gt);
            gt.gradcheck[0].max_rel = 1;  // a failing check has its own verdict
            render_all(gt);
        }
        attn::train_request tr;
        tr.steps = 20;
        for (const char* m : {"", "random-target", "no-scale", "no-zero-grad"}) {
            tr.mistake = m;
            const auto rep = attn::run_training(gc, gin, tr);
            draw_all(attn::train_document(rep, attn::lessons::embedded("en")));
            CHECK_NOTHROW(attn::render_train_json(rep));
        }
        // Logit control (#31): grad and train with QK-norm, the soft cap, and both.
        for (int v = 0; v < 3; ++v) {
            attn::step_request gl = g;
            gl.qk_norm = v != 1;
            gl.softcap = v > 0 ? 2.0 : 0.0;
            const attn::step_config lc = attn::validate(gl);
            const attn::inputs lin = attn::make_inputs(lc);
            attn::grad_options go;
            go.check = true;
            render_all(attn::build_grad_trace(lc, lin, go, 4));
            attn::train_request lt;
            lt.steps = 5;
            const auto rep = attn::run_training(lc, lin, lt);
            draw_all(attn::train_document(rep, attn::lessons::embedded("en")));
            CHECK_NOTHROW(attn::render_train_json(rep));
        }
        // no-zero-grad at its own default lr and 200 steps, where the damage shows (verdict_hurt).
        tr.mistake = "no-zero-grad";
        tr.steps = 200;
        tr.lr = attn::no_zero_grad_default_lr;
        draw_all(attn::train_document(attn::run_training(gc, gin, tr), attn::lessons::embedded("en")));
    }
    {  // flash (with the low-precision comparison) and cost
        const attn::lessons& F = attn::lessons::embedded("en");
        attn::flash_report fr;
        fr.n = 5, fr.d_k = 2, fr.d_v = 2, fr.block_q = 2, fr.block_k = 2;
        const attn::matrix<double> m{{1, 0}, {0, 1}, {1, 1}, {0.5, -1}, {2, 0}};
        fr.result = attn::flash_forward(m, m, m, 2, 2, true, 1);
        fr.precision = attn::low_precision_errors(m, m, m, 2, 2, true, attn::low_precision::float16);
        fr.low_name = "float16";
        attn::text_options o;
        const attn::doc::document fd = attn::flash_document(fr, F, 4);
        CHECK_NOTHROW(attn::render_text(fd, o));
        CHECK_NOTHROW(attn::render_markdown(fd));
        CHECK_NOTHROW(attn::render_html(fd));  // the cells' notes
        CHECK_NOTHROW(attn::render_flash_json(fr));
        attn::cost_input ci;
        for (std::size_t n : {std::size_t{256}, std::size_t{8192}}) {  // both sides of the crossover
            ci.seq_len = n;
            o.color = true;
            const attn::doc::document cd = attn::cost_document(ci, attn::attention_cost(ci), F);
            CHECK_NOTHROW(attn::render_text(cd, o));
            CHECK_NOTHROW(attn::render_markdown(cd));
            CHECK_NOTHROW(attn::render_cost_json(ci, attn::attention_cost(ci)));
        }
        for (const char* spec : {"window:256", "block:64"}) {  // a pattern: pairs, rolling cache
            ci.mask = attn::parse_pattern(spec);
            CHECK_NOTHROW(attn::render_text(attn::cost_document(ci, attn::attention_cost(ci), F), o));
        }
        ci.mask = attn::mask_pattern{};
        attn::flash_report fw = fr;  // a sparse pattern: the tile map, skipped tiles
        fw.mask = attn::parse_pattern("window:2");
        fw.result = attn::flash_forward(m, m, m, 2, 2, fw.mask, 4);
        CHECK_NOTHROW(attn::render_text(attn::flash_document(fw, F, 4), o));
        CHECK_NOTHROW(attn::render_html(attn::flash_document(fw, F, 4)));  // a skipped tile's note
        CHECK_NOTHROW(attn::render_flash_json(fw));
        // --backward: causal (skipped steps, P larger than L and D) and n = 2 with a loaded dO (no
        // step skipped, P no larger than L and D).
        for (bool small : {false, true}) {
            attn::flash_report fb = fr;
            const attn::matrix<double> q = small ? attn::matrix<double>{{1, 0}, {0, 1}} : m;
            fb.n = q.shape(0);
            fb.mask = small ? attn::mask_pattern{} : attn::parse_pattern("causal");
            fb.result = attn::flash_forward(q, q, q, 2, 2, fb.mask, 0);
            attn::flash_backward_report b;
            b.d_output = q, b.loaded = small;
            b.tiled = attn::flash_backward(q, q, q, fb.result.tiled, fb.result.lse, q, 2, 2, fb.mask);
            b.grad_d_q = b.tiled.d_q, b.grad_d_k = b.tiled.d_k, b.grad_d_v = b.tiled.d_v;
            fb.backward = b;
            CHECK_NOTHROW(attn::render_text(attn::flash_document(fb, F, 4), o));
            CHECK_NOTHROW(attn::render_flash_json(fb));
        }
        // --io: the default SRAM (above M*; d = 128 at n = 4096 below its M*), a typed SRAM below M*
        // (no block at n = 4096), a causal run (skipped tiles), n = 2 with d = 8 (no crossover).
        for (const auto& [n, d, sram, mask] :
             {std::tuple{8L, 4L, -1L, "none"}, std::tuple{16L, 4L, 128L, "causal"}, std::tuple{2L, 8L, -1L, "none"}}) {
            attn::flash_request req;
            req.run.seq_len = n, req.run.d_model = d, req.run.d_k = d, req.run.d_v = d, req.run.mask = mask;
            req.io = true, req.sram = sram;
            attn::flash_config fc = attn::validate_flash(req);
            const attn::flash_report fi = attn::run_flash(fc, false).report;
            CHECK_NOTHROW(attn::render_text(attn::flash_document(fi, F, 4), o));
            CHECK_NOTHROW(attn::render_flash_json(fi));
        }
        // What each mask does to the KV cache: causal, dilated (its reach), bidirectional, and a
        // pattern that is neither (block:1).
        for (const char* spec : {"causal", "dilated:4,2", "local:8", "block:1"}) {
            ci.mask = attn::parse_pattern(spec);
            CHECK_NOTHROW(attn::render_text(attn::cost_document(ci, attn::attention_cost(ci), F), o));
        }
        ci.mask = attn::mask_pattern{};
        ci.d_head = 128;  // --d-head apart from d_model: the h·d_head formulas and crossover
        CHECK_NOTHROW(attn::render_text(attn::cost_document(ci, attn::attention_cost(ci), F), o));
        ci.d_head = 0;
        ci.kv_latent = 512, ci.rope_dim = 64;  // the MLA cache rows and sentence
        CHECK_NOTHROW(attn::render_text(attn::cost_document(ci, attn::attention_cost(ci), F), o));
        ci.kv_latent = 0, ci.rope_dim = 0;
        for (attn::kv_dtype q : {attn::kv_dtype::float16, attn::kv_dtype::bfloat16, attn::kv_dtype::fp8,
                                 attn::kv_dtype::int8})  // --kv-dtype: its formulas, dense and rolling
            for (const char* spec : {"none", "window:256"}) {
                ci.kv_quant = q;
                ci.mask = attn::parse_pattern(spec);
                CHECK_NOTHROW(attn::render_text(attn::cost_document(ci, attn::attention_cost(ci), F), o));
            }
        ci.kv_quant = attn::kv_dtype::none;
        ci.mask = attn::mask_pattern{};
        // cost --training: the paper's case, GQA, --no-dropout, float32 (no master copy).
        for (int variant = 0; variant < 4; ++variant) {
            attn::train_memory::input ti;
            ti.kv_heads = variant == 1 ? 4 : 12, ti.dropout = variant != 2, ti.bytes = variant == 3 ? 4 : 2;
            const attn::train_memory::result tr = attn::train_memory::training_memory(ti);
            attn::doc::document td;
            td.pages.push_back(attn::cost_training_page(ti, tr, "bfloat16", F));
            CHECK_NOTHROW(attn::render_text(td, o));
        }
        // block --depth: the default run at 12 (the classic picture), then a report made to take the
        // other sentences (a shrinking stream, one layer, a non-finite and a diverged run, post's
        // gradients not leaning, and warm-up doing worse).
        attn::block_config bc;
        bc.heads = 2, bc.d_ff = attn::default_d_ff(8, bc.mlp);
        attn::block_depth_request bq;
        bq.depth = 12;
        CHECK_NOTHROW(attn::render_text(attn::block_depth_document(attn::run_block_depth(4, 8, bc, 0, bq), F), o));
        bq.depth = 3, bq.steps = 4, bq.warmup = 2;
        attn::block_depth_report br = attn::run_block_depth(4, 8, bc, 1, bq);
        br.init.pre.residual_norm = {2.0, 1.5, 1.2, 1.0}, br.init.post.residual_norm = {2.0, 0.9, 1.0, 1.1};
        br.init.pre.grad_norm = {1.0, 2.0, 4.0}, br.init.post.grad_norm = {1.0, 1.0, 1.0};
        br.runs[0].loss = {1.0, NAN}, br.runs[0].nonfinite_at = 2, br.runs[0].diverged = true;
        br.runs[2].loss = {1.0, 0.5, 0.2, 0.1, 0.05}, br.runs[2].diverged = br.runs[2].stalled = false;
        br.runs[3].loss = {1.0, 1.5, 2.0, 2.5, 3.0}, br.runs[3].diverged = true;
        CHECK_NOTHROW(attn::render_text(attn::block_depth_document(br, F), o));
        bq.depth = 1;
        CHECK_NOTHROW(attn::render_text(attn::block_depth_document(attn::run_block_depth(4, 8, bc, 1, bq), F), o));
        br.runs[1].stalled = true, br.runs[1].diverged = false;
        CHECK_NOTHROW(attn::render_text(attn::block_depth_document(br, F), o));
    }
    attn::step_request layout;  // the shape-error side of linear-weight-layout
    layout.mistake = "linear-weight-layout";
    layout.d_k = 3;
    layout.dims_given = true;
    render_all(lesson_trace(layout));
    CHECK_NOTHROW(attn::render_text(attn::doc::mistakes_catalogue(attn::lessons::embedded("en")), {}));
    for (const char* isa : {"portable", "avx2", "avx512"}) {  // bench: every note, each instruction set
        const bool avx2 = std::string(isa) != "portable";
        attn::bench_report br;
        br.isa = isa;
        br.busy = avx2;
        br.heads = avx2 ? 4 : 1;  // and a batched run: its two notes
        br.peak_gflops = 50;
        br.rows = {{64, 8, "reference", 1, 1, 8, 0, false},
                   {64, 8, "tiled", 1, 2, 8, 1e-7, false},
                   {2048, 8, "reference", 1, 1, 8, 0, false},
                   {8192, 8, "reference", 1, 1, 8, 0, true},
                   {8192, 8, "tiled", 1, 2, 8, 1e-7, true},
                   {64, 8, "tiled-causal", 0.5, 2, 8, 1e-7, false, 0, 0.5},
                   {64, 8, "tiled-window", 0.2, 2, 8, 1e-7, false, 16, 0.2}};
        CHECK_NOTHROW(attn::render_text(attn::doc::bench_document(br, attn::lessons::embedded("en")), {}));
    }
    CHECK_NOTHROW(attn::lessons::embedded("en").raw("ui.pause"));
    {
        // The pause's strings (app/output.cpp draws them): each fills, and all but the error
        // (which lists the steps) fit 60 columns, the narrowest terminal the tests use.
        const attn::lessons& U = attn::lessons::embedded("en");
        const attn::vars v = {{"line", "38"}, {"lines", "160"}, {"typed", "bogus"}, {"valid", "a step number 1 to 13"}};
        for (const char* k :
             {"ui.pause", "ui.more", "ui.keys.title", "ui.keys.next", "ui.keys.back", "ui.keys.goto", "ui.keys.list",
              "ui.keys.quit", "ui.keys.help", "ui.keys.list_title", "ui.keys.goto_prompt", "ui.keys.not_a_step"}) {
            INFO(k);
            std::string s;
            REQUIRE_NOTHROW(s = U.text(k, v));
            if (std::string(k) != "ui.keys.not_a_step") CHECK(attn::display_width(s) <= 60);
        }
    }
    {
        attn::step_request big;  // elided matrices have their own note
        big.seq_len = 40;
        const attn::step_config c = attn::validate(big);
        const attn::trace t = attn::build_trace(c, attn::make_inputs(c), 4);
        attn::text_options narrow;
        narrow.width = 60;
        narrow.height = 24;
        const auto pages = attn::render_text(attn::doc::walkthrough(t, attn::lessons::embedded("en"), {}), narrow);
        CHECK(pages[7].find("…") != std::string::npos);
    }
    // `attn-explain mask` in every format: self causal, padding right and left, both, n != m with
    // both alignments, fully blocked rows, an elided grid, no mask, and a convention that disagrees.
    {
        const attn::lessons& ml = attn::lessons::embedded("en");
        auto mask_all = [&](const attn::mask_report& r) {
            draw_all(attn::mask_document(r, ml));
            CHECK_NOTHROW(attn::render_mask_json(r, ml));
        };
        auto mask_of = [](std::int64_t n, std::int64_t m, const char* mask, const char* lengths, const char* side,
                          const char* align) {
            attn::mask_request q;
            q.seq_len = n, q.kv_len = m, q.mask = mask, q.lengths = lengths, q.pad_side = side, q.align = align;
            return attn::analyze_mask(attn::validate_mask(q));
        };
        mask_all(mask_of(4, 0, "causal", "", "right", "top-left"));
        mask_all(mask_of(4, 0, "none", "4,2", "right", "top-left"));
        mask_all(mask_of(4, 0, "none", "4,2", "left", "top-left"));
        mask_all(mask_of(4, 0, "causal", "4,2", "left", "top-left"));  // fully blocked rows
        mask_all(mask_of(2, 4, "causal", "4,3", "right", "top-left"));
        mask_all(mask_of(2, 4, "causal", "", "right", "bottom-right"));
        mask_all(mask_of(2, 4, "causal", "", "right", "top-left"));  // is_causal, n != m
        mask_all(mask_of(4, 2, "causal", "", "right", "bottom-right"));  // n > m: fully blocked rows
        mask_all(mask_of(40, 50, "none", "", "right", "top-left"));  // elided
        mask_all(mask_of(3, 0, "none", "", "right", "top-left"));  // no mask at all
        // sparse patterns: each rule, the receptive field (and its closed form for window), bigbird's
        // random blocks, and a pattern too long for the receptive field
        for (const char* spec : {"window:3", "local:2", "global:1,1", "dilated:2,2", "block:3", "bigbird:2,1,1"})
            mask_all(mask_of(12, 0, spec, "12,9", "left", "top-left"));
        mask_all(mask_of(1100, 0, "window:4", "", "right", "top-left"));
        attn::mask_report bad = mask_of(3, 0, "causal", "", "right", "top-left");
        bad.items[0].sdpa[0][2] = true;
        mask_all(bad);
    }
    // `attn-explain kv-cache` in every format: MHA, GQA, MQA, one head, a prompt of one token, a
    // loaded run, a failing check and caches of KiB and MiB.
    {
        const attn::lessons& kl = attn::lessons::embedded("en");
        auto kv_all = [&](const attn::kv_report& r) {
            attn::text_options o;
            const attn::doc::document d = attn::kvcache_document(r, kl, 4);
            for (bool color : {false, true}) {
                o.color = color;
                CHECK_NOTHROW(attn::render_text(d, o));
            }
            CHECK_NOTHROW(attn::render_kvcache_json(r, kl));
            CHECK_NOTHROW(attn::render_kvcache_python(r, kl));
            CHECK_NOTHROW(attn::render_markdown(d));
            CHECK_NOTHROW(attn::render_html(d));
        };
        auto kv_of = [](std::int64_t p, std::int64_t h, std::int64_t g) {
            attn::kv_request q;
            q.prompt_len = p, q.heads = h, q.kv_heads = g;
            const attn::kv_config c = attn::validate_kv(q);
            return attn::run_kvcache(c, attn::make_kv_inputs(c));
        };
        kv_all(kv_of(4, 4, 4));  // MHA
        kv_all(kv_of(4, 4, 2));  // GQA
        kv_all(kv_of(1, 4, 1));  // MQA, a one-token prompt
        attn::kv_report one = kv_of(3, 1, 1);
        kv_all(one);
        one.config.load_dir = "in/";
        one.max_diff = one.steps[1].max_diff = 1;  // a failing check
        one.cache_bytes = 4096;
        one.mha_cache_bytes = 4.0 * 1024 * 1024;
        kv_all(one);
        attn::kv_request wq;  // the rolling window cache, passing and failing
        wq.prompt_len = 2, wq.steps = 4, wq.mask = "window:3";  // fills, then overwrites
        const attn::kv_config wc = attn::validate_kv(wq);
        attn::kv_report win = attn::run_kvcache(wc, attn::make_kv_inputs(wc));
        kv_all(win);
        win.max_diff = win.steps[1].max_diff = 1;
        kv_all(win);
        for (const char* kvq : {"float16", "bfloat16", "fp8", "int8"}) {  // --kv-dtype, with and without a window
            attn::kv_request qq;
            qq.prompt_len = 2, qq.steps = 3, qq.kv_dtype_name = kvq;
            const attn::kv_config qc = attn::validate_kv(qq);
            attn::kv_report quant = attn::run_kvcache(qc, attn::make_kv_inputs(qc));
            kv_all(quant);
            quant.steps[1].saturated = 2;  // a saturated step, and a float cache that fails its check
            quant.float_max_diff = 1;
            kv_all(quant);
            qq.mask = "window:2";
            const attn::kv_config wqc = attn::validate_kv(qq);
            kv_all(attn::run_kvcache(wqc, attn::make_kv_inputs(wqc)));
        }
        for (const char* spec : {"window:3", "window:7", "window:9"}) {  // prompt > W; W >= T, with g < h
            attn::kv_request rq;
            rq.prompt_len = 5, rq.steps = 2, rq.mask = spec, rq.heads = 2, rq.kv_heads = 1;
            const attn::kv_config rc = attn::validate_kv(rq);
            kv_all(attn::run_kvcache(rc, attn::make_kv_inputs(rc)));
            rq.kv_heads = 2;  // g = h
            const attn::kv_config rh = attn::validate_kv(rq);
            kv_all(attn::run_kvcache(rh, attn::make_kv_inputs(rh)));
        }
        // --sinks: with and without RoPE, a cache that evicts and one that never fills (sinks only
        // at first), a failing check, and each verdict (no head, some heads, every head leaning).
        for (bool rope : {false, true})
            for (std::int64_t s : {1, 4}) {
                attn::kv_request sq;
                sq.prompt_len = 2, sq.steps = 4, sq.mask = "window:2", sq.sinks = s, sq.sinks_given = true;
                sq.rope = rope;
                const attn::kv_config sc = attn::validate_kv(sq);
                attn::kv_report sr = attn::run_kvcache(sc, attn::make_kv_inputs(sc));
                kv_all(sr);
                sr.max_diff = sr.steps[1].max_diff = 1;
                sr.mean_sink_mass = {0.0, 1.0};
                kv_all(sr);
                sr.mean_sink_mass = {1.0, 1.0};
                kv_all(sr);
                sr.mean_sink_mass = {0.0, 0.0};
                kv_all(sr);
            }
        // --evict: both policies with and without eviction, H2O without a recent part, RoPE
        for (const char* policy : {"h2o", "snapkv"})
            for (std::int64_t budget : {4, 40}) {
                attn::kv_request eq;
                eq.evict = policy, eq.budget = budget, eq.budget_given = true, eq.steps = 2, eq.rope = budget == 4;
                eq.kv_heads = 1, eq.recent = 0, eq.recent_given = budget == 4 && std::string(policy) == "h2o";
                const attn::kv_config ec = attn::validate_kv(eq);
                kv_all(attn::run_kvcache(ec, attn::make_kv_inputs(ec)));
            }
        // --model: sinks formed or not, each verdict on the difference, a text within and past the
        // training length (a report made by hand: the command's run is tests/test_kvcache.cpp's).
        attn::kv_model_report mr;
        mr.request = {"m/", 1, 3, 8, 24, 35};
        mr.model.seq_len = 16, mr.model.positions = attn::position_kind::rope, mr.task = "next-token";
        mr.runs = {{"sinks", 4, 1.3, {1.3}}, {"window", 4, 1.4, {1.4}}, {"full", 32, 2.0, {2.0}}};
        mr.sink_mass = {{0.9, 0.1}};
        mr.uniform_share = 0.25;
        for (bool formed : {false, true})
            for (double diff : {0.1, -0.1, 0.0}) {
                mr.formed_sinks = formed, mr.diff_mean = diff, mr.diff_se = 0.01;
                const attn::doc::document d = attn::kvcache_model_document(mr, kl);
                CHECK_NOTHROW(attn::render_text(d, attn::text_options{}));
                CHECK_NOTHROW(attn::render_kv_model_json(mr, kl));
                mr.request.steps = mr.request.steps == 24 ? 4 : 24;  // within the 16 trained positions, then past
            }
    }

    {  // learn: every task, a failing run, a multi-layer run, and both ways to break it
        for (const char* task : {"previous", "reverse", "max", "induction"})
            for (int variant = 0; variant < 4; ++variant) {
                attn::learn_request q;
                q.task = task;
                q.seq_len = 6;
                q.vocab = 6;
                q.d_model = 8;
                q.steps = variant == 0 ? 1 : 20;
                q.positions = variant == 1 ? "none" : variant == 3 ? "rope" : "learned";
                if (variant == 0 && std::string(task) == "max") q.positions = "sinusoidal";
                q.no_scale = variant == 2;
                attn::learn_config lc = attn::validate_learn(q);
                lc.held_out = 8;
                attn::learn_report lr = attn::run_learn(lc);
                draw_all(attn::learn_document(lr, attn::lessons::embedded("en")));
                CHECK_NOTHROW(attn::render_learn_json(lr));
                lr.final_accuracy = 1, lr.pattern_score = 1, lr.previous_score = 1,
                lr.reach = 3;  // the success sentences
                lr.solved = lr.pattern_learned = lr.previous_learned = true;
                lr.base_reach = 5;
                draw_all(attn::learn_document(lr, attn::lessons::embedded("en")));
                lr.reach = 9;  // slower than the baseline
                draw_all(attn::learn_document(lr, attn::lessons::embedded("en")));
                lr.pattern_score = lr.previous_score = 0;  // solved without the pattern
                lr.pattern_learned = lr.previous_learned = false;
                draw_all(attn::learn_document(lr, attn::lessons::embedded("en")));
            }
        attn::learn_request q;  // next-token: the loss below order 1, below unigram only, not below
        q.task = "next-token";
        q.seq_len = 6;
        q.vocab = 6;
        q.d_model = 8;
        q.steps = 2;
        attn::learn_config lc = attn::validate_learn(q);
        lc.held_out = 8;
        attn::learn_report lr = attn::run_learn(lc);
        for (double loss : {lc.source->entropy_rate, lc.source->unigram_entropy - 0.01, 9.0}) {
            lr.final_loss = loss;
            lr.pattern_learned = loss < 1;
            draw_all(attn::learn_document(lr, attn::lessons::embedded("en")));
        }
        q.qk_norm = true;  // the logit controls on a single run, and a run that diverged
        q.softcap = 5, q.softcap_given = true;
        q.z_loss = 1e-3, q.z_loss_given = true;
        attn::learn_config lq = attn::validate_learn(q);
        lq.held_out = 8;
        attn::learn_report rq = attn::run_learn(lq);
        rq.diverged = 1;  // as a diverged run ends: a non-finite last point
        rq.curve.back().loss = rq.curve.back().max_logit = rq.curve.back().entropy = std::nan("");
        draw_all(attn::learn_document(rq, attn::lessons::embedded("en")));
        attn::learn_request cq;  // --compare-logit-control, and every verdict its runs can get
        cq.compare_logit_control = true;
        cq.seq_len = 6, cq.vocab = 6, cq.d_model = 8, cq.steps = 3;
        attn::learn_config cc = attn::validate_learn(cq);
        cc.held_out = 8;
        attn::learn_report rc = attn::run_learn(cc);
        REQUIRE(rc.runs.size() == 4);
        draw_all(attn::learn_document(rc, attn::lessons::embedded("en")));
        for (attn::logit_run& x : rc.runs) {
            x.grew = x.collapsed = true, x.at_cap = x.name == "softcap", x.diverged = 2;
            x.max_logit.back() = x.entropy.back() = std::nan("");
        }
        draw_all(attn::learn_document(rc, attn::lessons::embedded("en")));
        rc.runs[3].grew = false;  // the z-loss run held while the plain run grew
        draw_all(attn::learn_document(rc, attn::lessons::embedded("en")));
        rc.runs[0].grew = false;  // nothing to control
        draw_all(attn::learn_document(rc, attn::lessons::embedded("en")));
    }
    {  // learn --kv-heads (GQA beside MHA); variant gqa-from-mha on random weights and a saved model
        attn::learn_request gq;
        gq.seq_len = 6, gq.vocab = 6, gq.d_model = 8, gq.heads = 2, gq.kv_heads = 1, gq.steps = 3;
        attn::learn_config gc = attn::validate_learn(gq);
        gc.held_out = 8;
        const attn::learn_report gr = attn::run_learn(gc);
        REQUIRE(gr.gqa.on);
        draw_all(attn::learn_document(gr, attn::lessons::embedded("en")));
        CHECK_NOTHROW(attn::render_learn_json(gr));
        attn::variant_request vr;
        vr.kind = "gqa-from-mha";
        vr.run.seq_len = 6, vr.run.d_model = 8, vr.run.mask = "causal";
        draw_all(attn::variant_document(attn::run_variant(vr), attn::lessons::embedded("en"), 4));
        gq.kv_heads = 0;
        const attn::learn_report mr = attn::run_learn(attn::validate_learn(gq));
        const test::temp_dir tmp;
        attn::write_tiny_model(mr.model, "previous", 0, tmp.path.string());
        vr.run.load_dir = tmp.path.string(), vr.run.mask = "none", vr.kv_heads = 1;
        draw_all(attn::variant_document(attn::run_variant(vr), attn::lessons::embedded("en"), 4));
    }
    // `exercise` and `check`: the list, every TASK.md and starter, and a report of every kind.
    {
        namespace ex = attn::exercise;
        const attn::lessons& E = attn::lessons::embedded("en");
        draw_all(attn::doc::exercise_list(E));
        for (const ex::info& e : ex::catalogue()) {
            ex::config c = ex::make_config(e.id, 1);
            c.budget_minutes = e.id == "sdpa" ? 20 : 0;
            CHECK_NOTHROW(attn::doc::exercise_task(c, E, "dir"));
            CHECK_NOTHROW(attn::doc::exercise_starter(c, E, "numpy"));
            CHECK_NOTHROW(attn::doc::exercise_starter(c, E, "torch"));
        }
        CHECK_NOTHROW(attn::doc::exercise_task(ex::make_config("rope", 1, {}, "interleaved"), E, "dir"));
        CHECK_NOTHROW(attn::doc::exercise_created(E, "d") + attn::doc::exercise_exists(E, "d") +
                      attn::doc::exercise_not_regular(E, "p") + attn::doc::check_no_exercise(E, "d"));
        using fk = attn::folder::failure::kind;
        for (fk k : {fk::not_regular, fk::not_folder, fk::cannot_create, fk::cannot_write, fk::cannot_move})
            CHECK_NOTHROW(attn::doc::exercise_folder_failure(E, attn::folder::failure(k, "p", "No space left")));
        CHECK_NOTHROW(attn::doc::exercise_backup(E, "d", "backup-20261202T112745Z", 3));
        for (unsigned mode : {unsigned{S_IFREG}, unsigned{S_IFIFO}, unsigned{S_IFCHR}, unsigned{S_IFSOCK}, 0u})
            for (bool link : {false, true})
                CHECK_NOTHROW(attn::doc::check_answer_not_folder(E, "d/answer", mode, link, false));
        CHECK_NOTHROW(attn::doc::check_answer_not_folder(E, "d/answer", 0, true, true));
        const ex::config c = ex::make_config("sdpa", 1);
        const ex::tensors in = ex::make_inputs(c), ref = ex::reference(c, in);
        draw_all(attn::doc::check_document({ex::grade(c, ref)}, E, 3.5));  // passed
        draw_all(attn::doc::check_document({ex::grade(c, {{"Q", ref.at("Q")}})}, E, -1));  // required missing
        draw_all(attn::doc::check_document({ex::grade(c, ex::buggy_runs(c, in, "no-scale")[0])}, E, -1));  // diagnosed
        ex::tensors odd = ref;
        odd["output"].data[0] += 1;
        draw_all(attn::doc::check_document({ex::grade(c, odd)}, E, -1));  // no mistake matches
        odd = {{"output", ref.at("output")}};
        odd["output"].shape = {4, 4, 1};  // batch_dim
        draw_all(attn::doc::check_document({ex::grade(c, odd)}, E, -1));
        const ex::config x = ex::make_config("cross", 1);
        ex::tensors t = {{"output", ex::reference(x, ex::make_inputs(x)).at("output")}};
        t["output"].shape = {6, 3};  // transposed
        draw_all(attn::doc::check_document({ex::grade(x, t)}, E, -1));
        const ex::config m = ex::make_config("mha", 1);
        draw_all(attn::doc::check_document(
            {ex::grade(m, ex::buggy_runs(m, ex::make_inputs(m), "heads-no-transpose")[0])}, E, -1));
        CHECK_NOTHROW(attn::doc::check_both_answers(E, "d/answer", "d/answer.npz"));
        // every case of every exercise, passing and failing; a wrong tile or step is named; FA-1 accepted
        for (const ex::info& e : ex::catalogue()) {
            std::vector<ex::report> pass, fail;
            for (const ex::config& k : ex::all_cases(ex::make_config(e.id, 1))) {
                const ex::tensors kin = ex::make_inputs(k);
                pass.push_back(ex::grade(k, kin, ex::reference(k, kin)));
                ex::tensors wrong = ex::reference(k, kin);
                wrong[ex::answers_of(k).back()].data[0] += 1;
                fail.push_back(ex::grade(k, kin, wrong));
            }
            draw_all(attn::doc::check_document(pass, E, -1));
            draw_all(attn::doc::check_document(fail, E, 2));
        }
        for (const char* bug : {"online-softmax-sum-not-rescaled", "kv-cache-not-appended"}) {
            const ex::config o = ex::make_config(bug[0] == 'o' ? "online-softmax" : "kv-decode", 1);
            const ex::tensors oin = ex::make_inputs(o);
            draw_all(attn::doc::check_document({ex::grade(o, oin, ex::buggy_runs(o, oin, bug)[0])}, E, -1));
        }
        const ex::config o = ex::make_config("online-softmax", 1);
        const ex::tensors oin = ex::make_inputs(o);
        ex::tensors fa1 = ex::reference(o, oin);
        fa1["acc_steps"] = ex::accepted_variants(o, oin).front().second.at("acc_steps");
        draw_all(attn::doc::check_document({ex::grade(o, oin, fa1)}, E, -1));
        // every sentence of the structural diagnosis, through the page (trace/diagnose.cpp makes them)
        ex::report every = ex::grade(c, odd);
        for (const std::string& key : E.keys()) {
            if (key.rfind("finding.", 0) != 0 || key == "finding.heading" || key == "finding.named") continue;
            ex::finding f{"output", key.substr(8), {}, "no-scale", true};
            for (const std::string& p : attn::placeholders(E.raw(key))) f.args[p] = "1";
            every.findings.push_back(f);
        }
        draw_all(attn::doc::check_document({every}, E, -1));
        // check --run: a run that passed, one stopped by the time limit, one without a traceback,
        // and one per explained error (trace/traceback.cpp chooses the key)
        ex::run_record ran;
        ran.command = "python3 solution_numpy.py", ran.dir = "ex", ran.seconds = 0.4;
        CHECK(attn::doc::check_run_text(ran, E).size() == 1);
        ex::run_record slow = ran;
        slow.timed_out = true, slow.exit_code = -1, slow.timeout = 60;
        CHECK_NOTHROW(attn::doc::check_run_text(slow, E));
        ex::run_record quiet = ran;
        quiet.exit_code = 1, quiet.output = "not implemented yet\n";
        CHECK_NOTHROW(attn::doc::check_run_text(quiet, E));
        for (const std::string& key : E.keys()) {
            if (key.rfind("run.", 0) != 0) continue;
            const std::string k = key.substr(4);
            if (k == "ran" || k == "timed_out" || k == "failed" || k == "error_at" || k == "error" ||
                k == "no_traceback")
                continue;
            attn::vars v;
            for (const std::string& p : attn::placeholders(E.raw(key))) v[p] = "1";
            if (k == "no_starter" || k == "watching" || k == "watch_passed") {  // app/cmd_exercise.cpp's
                CHECK_NOTHROW(E.text(key, v));
                continue;
            }
            ex::run_record failed = ran;
            failed.exit_code = 1, failed.traceback.found = true, failed.traceback.key = k, failed.traceback.args = v;
            failed.traceback.file = "solution_numpy.py", failed.traceback.line = 12, failed.traceback.code = "Q @ K";
            failed.traceback.error = "ValueError: matmul";
            CHECK(attn::doc::check_run_text(failed, E).size() == 5);
        }
    }
    {  // kv-cache --mla
        const attn::doc::document md =
            attn::variant_document(attn::run_mla_decode(attn::kv_request{}, 4, 2), attn::lessons::embedded("en"), 4);
        CHECK_NOTHROW(attn::render_text(md, {}));
    }
    for (const char* kind : {"linear", "performer", "linformer", "additive", "mla"})  // variant: both masks
        for (const char* mask : {"none", "causal"}) {
            attn::step_request vr;
            vr.mask = mask;
            if (std::string(mask) == "causal" && (std::string(kind) == "performer" || std::string(kind) == "linformer"))
                continue;
            const attn::doc::document vd =
                attn::variant_document(attn::run_variant(kind, vr), attn::lessons::embedded("en"), 4);
            CHECK_NOTHROW(attn::render_text(vd, {}));
            CHECK_NOTHROW(attn::render_markdown(vd));
        }
    for (const std::int64_t n : {32, 100}) {  // nsa: with its grids of reads, and past them (n > 48)
        attn::variant_request vr;
        vr.kind = "nsa";
        vr.run.seq_len = n, vr.run.mask = "causal";
        const attn::doc::document nd = attn::variant_document(attn::run_variant(vr), attn::lessons::embedded("en"), 4);
        CHECK_NOTHROW(attn::render_text(nd, {}));
        CHECK_NOTHROW(attn::render_markdown(nd));
    }
    {  // performer: features that are not orthogonal (a loaded ω), and blocks of one row (d_k = 1)
        attn::step_request vr;
        attn::variant_report pr = attn::run_variant("performer", vr);
        pr.omega_cosine = 0.5;
        CHECK_NOTHROW(attn::render_text(attn::variant_document(pr, attn::lessons::embedded("en"), 4), {}));
        vr.d_model = vr.d_k = vr.d_v = 1;
        vr.dims_given = true;
        CHECK_NOTHROW(attn::render_text(
            attn::variant_document(attn::run_variant("performer", vr), attn::lessons::embedded("en"), 4), {}));
    }
    // `attn-explain positions` in every format, on runs that reach every conditional sentence; then
    // step --rope, heads --rope and kv-cache --rope.
    {
        const attn::lessons& pl = attn::lessons::embedded("en");
        auto pos_all = [&](const attn::positions_report& r) {
            const attn::doc::document d = attn::positions_document(r, pl, 4);
            attn::text_options o;
            for (bool color : {false, true}) {
                o.color = color;
                CHECK_NOTHROW(attn::render_text(d, o));
            }
            CHECK_NOTHROW(attn::render_markdown(d));
            CHECK_NOTHROW(attn::render_html(d));
            CHECK_NOTHROW(attn::render_positions_json(r, pl));
        };
        auto pos_of = [](std::int64_t n, std::int64_t d, const char* mask, const char* style, std::int64_t heads) {
            attn::positions_request q;
            q.run.seq_len = n, q.run.d_model = d, q.run.d_k = 8, q.mask = mask, q.rope.style = style, q.heads = heads;
            const attn::positions_config c = attn::validate_positions(q);
            return attn::run_positions(c, attn::make_inputs(c.run), 4);
        };
        pos_all(pos_of(6, 8, "", "half", 8));
        {  // issue 33: --rope-scaling (fixed, fewer, same; short-range scores kept) and T5 both ways
            struct scaling_run {
                const char* kind;
                double base, factor;
                std::int64_t len, d_k;
            };
            // linear ×1024: no sampled distance but 0 inside L (short-range scores kept)
            for (const scaling_run& sr :
                 {scaling_run{"linear", 10000, 4, 4096, 8}, scaling_run{"ntk", 10000, 4, 4096, 16},
                  scaling_run{"yarn", 10000, 4, 4096, 8}, scaling_run{"yarn", 1.5, 4, 2, 8},
                  scaling_run{"linear", 10000, 1024, 4096, 8}}) {
                attn::positions_request q;
                q.run.seq_len = 6, q.run.d_model = 8, q.run.d_k = sr.d_k, q.encoding = "rope";
                q.rope.base = sr.base, q.scaling.kind = sr.kind, q.scaling.original_len = sr.len;
                q.scaling.factor = sr.factor;
                const attn::positions_config c = attn::validate_positions(q);
                pos_all(attn::run_positions(c, attn::make_inputs(c.run), 4));
            }
            for (const char* mask : {"none", "causal"}) {
                attn::positions_request q;
                q.run.seq_len = 6, q.run.d_model = 8, q.run.d_k = 8, q.encoding = "t5", q.mask = mask, q.heads = 2;
                const attn::positions_config c = attn::validate_positions(q);
                pos_all(attn::run_positions(c, attn::make_inputs(c.run), 4));
            }
        }
        {  // d_k = 2: one pair, a bound that does not fall on the whole
            attn::positions_request q;
            q.run.seq_len = 6, q.run.d_model = 2, q.run.d_k = 2, q.encoding = "rope";
            const attn::positions_config c = attn::validate_positions(q);
            pos_all(attn::run_positions(c, attn::make_inputs(c.run), 4));
        }
        pos_all(pos_of(5, 7, "none", "interleaved", 12));  // odd d_model, no mask, h not a power of 2
        attn::positions_report one = pos_of(1, 8, "", "half", 1);  // every check trivially equal
        pos_all(one);
        one.eq.no_mask_max_diff = 1;  // the sentences for results that should not happen
        for (attn::encoding_run& e : one.runs)
            e.norm_diff = e.converted_diff = e.shift_diff = e.rotation_error = e.diag_spread = 1;
        pos_all(one);
        {
            attn::positions_request q;  // one encoding, loaded inputs
            q.run.load_dir = ATTN_FIXTURES "/positions_rope_half";
            q.encoding = "rope";
            attn::positions_config c = attn::validate_positions(q);
            const attn::inputs in = attn::load_inputs(c.run);
            pos_all(attn::run_positions(c, in, 4));
            q = {};
            q.run.seq_len = 3, q.run.d_model = 4, q.run.d_k = 4;  // the classic X
            q.encoding = "sinusoidal";
            const attn::positions_config cc = attn::validate_positions(q);
            pos_all(attn::run_positions(cc, attn::make_inputs(cc.run), 4));
        }
        attn::step_request rs;
        rs.rope = true;
        render_all(lesson_trace(rs));
        // Logit control (#31): QK-norm alone, with RoPE and a soft cap, the cap alone.
        for (int v = 0; v < 3; ++v) {
            attn::step_request rl;
            rl.qk_norm = v < 2;
            rl.rope = v == 1;
            rl.softcap = v > 0 ? 1.0 : 0.0;
            rl.mask = v == 2 ? "causal" : "none";
            render_all(lesson_trace(rl));
            rl.multihead = true;
            rl.seq_len = 4, rl.d_model = 8;
            render_all(lesson_trace(rl));
        }
        attn::step_request rh;
        rh.multihead = true;
        rh.rope = true;
        rh.seq_len = 4, rh.d_model = 8;
        render_all(lesson_trace(rh));
        attn::kv_request kq;
        kq.rope = true;
        const attn::kv_config kc = attn::validate_kv(kq);
        const attn::kv_report kr = attn::run_kvcache(kc, attn::make_kv_inputs(kc));
        CHECK_NOTHROW(attn::render_text(attn::kvcache_document(kr, pl, 4), {}));
        CHECK_NOTHROW(attn::render_kvcache_json(kr, pl));
    }

    // `attn-explain batching` in every format: typed, uniform, lognormal and file lengths; sorted and
    // fixed buckets; a mask small enough for a heatmap, for characters, and only for blocks; a check
    // that fails (the sentence for a result that should not happen).
    {
        const attn::lessons& bl = attn::lessons::embedded("en");
        auto batch_all = [&](const attn::batching_report& r) {
            draw_all(attn::batching_document(r, bl));
            CHECK_NOTHROW(attn::render_batching_json(r));
        };
        auto report = [](attn::batching_request q) { return attn::run_batching(attn::validate_batching(q)); };
        attn::batching_request q;
        q.lengths = "3,2,3";
        q.d_model = 8, q.heads = 2, q.batch = 3;
        batch_all(report(q));  // one packed row of 8: the heatmap
        q.lengths = "5,3,8,2,6,4,7,1,9,3,5,2,6,8,4,3,2,7,5,6";
        q.batch = 2;
        attn::batching_report chars = report(q);  // more steps than shown, the character mask
        batch_all(chars);
        chars.check.max_diff = 1;
        batch_all(chars);
        q = {};
        q.dist = "uniform:16,2000";
        q.count = 40;
        q.count_given = true;
        q.buckets = "64,128,256";
        batch_all(report(q));  // long sequences, fixed buckets with an open one, a trimmed check
        q = {};
        batch_all(report(q));  // the default lognormal, sorted buckets
        std::ofstream(fs::temp_directory_path() / "attn-lessons-lengths.txt") << "40 12 7\n90\n";
        q = {};
        q.dist = "file:" + (fs::temp_directory_path() / "attn-lessons-lengths.txt").string();
        batch_all(report(q));
        fs::remove(fs::temp_directory_path() / "attn-lessons-lengths.txt");
    }

    // `attn-explain paged` in every format: the default mix (sharing), samples (copy-on-write, a table
    // without writes), a full pool (preemption, no free block), long prefills (more events and
    // blocks than shown), more steps than pages, no sharing, and checks that fail.
    {
        const attn::lessons& gl = attn::lessons::embedded("en");
        auto paged_all = [&](const attn::paged_report& r) {
            draw_all(attn::paged_document(r, gl));
            CHECK_NOTHROW(attn::render_paged_json(r));
            CHECK_NOTHROW(attn::render_paged_python(r, gl));
        };
        auto paged_run = [](attn::paged_request q) { return attn::run_paged(attn::validate_paged(q)); };
        attn::paged_request q;
        paged_all(paged_run(q));
        q.requests = "6+4,9+2", q.shared_prefix = 6, q.samples = 2;
        paged_all(paged_run(q));
        q.samples = 3;  // "2 more samples" (plural)
        paged_all(paged_run(q));
        q = {};
        q.requests = "6+6,6+6,6+6", q.blocks = 6, q.block_size = 2;
        paged_all(paged_run(q));
        q = {};
        q.requests = "40+2,2+50", q.block_size = 2, q.shared_prefix = 0;
        attn::paged_report bad = paged_run(q);
        paged_all(bad);
        bad.max_diff = 1;
        for (attn::paged_step& st : bad.steps)
            for (attn::paged_walk& w : st.follow) w.max_diff = 1;
        paged_all(bad);
    }

    // `attn-explain serve` in every format: the default drawn trace (continuous ahead), a file whose
    // static batching does more tokens per pass (the other verdict), one policy alone, and priced.
    {
        const attn::lessons& sl = attn::lessons::embedded("en");
        auto serve_all = [&](const attn::serve_report& r) {
            draw_all(attn::serve_document(r, sl));
            CHECK_NOTHROW(attn::render_serve_json(r));
        };
        attn::serve_request q;
        attn::serve_report r = attn::run_serve(attn::validate_serve(q));
        serve_all(r);
        std::vector<std::vector<double>> ms;
        for (const auto& p : r.policies) ms.emplace_back(p.run.passes.size(), 1.5);
        attn::set_serve_prices(r, ms);
        serve_all(r);
        const fs::path trickle = fs::temp_directory_path() / "attn-lessons-trace.csv";
        std::ofstream(trickle) << "arrival,prompt,output\n0,10,1\n1,10,1\n";
        q = {};
        q.trace = trickle.string();
        serve_all(attn::run_serve(attn::validate_serve(q)));
        q.policies = "continuous-chunked";
        serve_all(attn::run_serve(attn::validate_serve(q)));
        fs::remove(trickle);
    }

    // `attn-explain parallel` in every format: each scheme, causal and not, g < P (Ulysses replicates
    // K/V heads), P = 1 (no messages), float32; the other schemes that cannot run on the dims.
    {
        const attn::lessons& pl = attn::lessons::embedded("en");
        for (const char* scheme : {"ring", "ulysses", "heads"})
            for (const char* mask : {"none", "causal"})
                for (const long devices : {1L, 2L, 4L}) {
                    attn::parallel_request q;
                    q.scheme = scheme, q.mask = mask, q.devices = devices, q.seq_len = 16, q.heads = 4;
                    q.kv_heads = std::string(scheme) == "heads" ? 4 : 2, q.d_model = 16;
                    q.dtype = devices == 2 ? "float32" : "float64";
                    const attn::parallel_report r = attn::run_parallel(attn::validate_parallel(q));
                    draw_all(attn::parallel_document(r, pl));
                    CHECK_NOTHROW(attn::render_parallel_json(r));
                    CHECK_NOTHROW(attn::render_parallel_python(r, pl));
                }
    }

    // `attn-explain speculative`: a trained chain (greedy: the chain's length page, the trained
    // models' sentence), an untrained sampled tree (the tree's length page, the untrained sentence,
    // the residual and bonus rows), a tree of more than ten candidates, in en and zh.
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& xl = attn::lessons::embedded(lang);
        attn::spec_request q;
        q.rounds = 10, q.steps = 20;
        for (int k = 0; k < 4; ++k) {
            if (k == 1) q = {}, q.tree = "2,2,1", q.accept = "sample", q.untrained = true, q.rounds = 10;
            if (k == 3) q = {}, q.tree = "3,4", q.untrained = true, q.rounds = 2;  // 15 candidates: digits wrap
            if (k == 2) q.tree = "", q.chain = 3, q.chain_given = true, q.seed = 1;
            const attn::spec_report r = attn::run_speculative(attn::validate_speculative(q));
            draw_all(attn::speculative_document(r, xl));
            CHECK_NOTHROW(attn::render_speculative_json(r));
        }
    }

    // `attn-explain block`: every placement, norm, MLP, arch and a --d-ff given, pages, JSON and the
    // script, in en and zh.
    for (const char* lang : {"en", "zh"}) {
        const attn::lessons& bl = attn::lessons::embedded(lang);
        for (int k = 0; k < 4; ++k) {
            attn::block_request q;
            q.norm = k % 2 ? "post" : "pre", q.norm_type = k < 2 ? "layernorm" : "rmsnorm";
            q.mlp = k == 1 || k == 2 ? "swiglu" : "gelu", q.arch = k == 3 ? "encoder" : "decoder";
            if (k == 3) q.d_ff = 12, q.d_ff_given = true;
            const attn::block_report r = attn::run_block(attn::validate_block(q));
            draw_all(attn::block_document(r, bl, 4, k == 0));
            CHECK_NOTHROW(attn::render_block_json(r, bl));
            CHECK_NOTHROW(attn::render_block_python(r, bl));
        }
    }

    // `attn-explain roofline`: every sentence its numbers can choose — decode memory-bound with no
    // compute-bound batch, one from some batch on, compute-bound already; a memory-bound prefill;
    // weights that do not fit, a sequence that does not; MLA; a config.json; the measured machine, your
    // own figures; --measure's points, one faster than predicted.
    {
        const attn::lessons& rl_en = attn::lessons::embedded("en");
        attn::roofline_input in;
        in.hw = attn::roofline::datasheets()[1];
        auto roof_all = [&](const attn::roofline_input& i) {
            const attn::roofline_report r = attn::run_roofline(i);
            draw_all(attn::roofline_document(r, rl_en));
            CHECK_NOTHROW(attn::render_roofline_json(r));
        };
        roof_all(in);
        attn::roofline_input x = in;
        x.context = 16;
        roof_all(x);
        x.batch = 4096;
        roof_all(x);
        x = in;
        x.m.layers = 1, x.m.d_model = 8, x.m.heads = 2, x.m.kv_heads = 2, x.m.d_head = 4, x.m.d_ff = 32, x.m.vocab = 16;
        x.context = 4;
        roof_all(x);
        x = in;
        x.hw.memory = 1e9;
        roof_all(x);
        x.hw.memory = 80e9, x.context = attn::roofline_max_context;  // no sequence of 16M tokens fits
        x.m.mlp = attn::roofline::mlp_kind::swiglu, x.m.tie_embeddings = true;
        roof_all(x);
        x = in;
        x.m.kv_latent = 512, x.m.rope_dim = 64;
        x.hf_config = "config.json", x.defaulted = {"head_dim"}, x.typed = {"--layers"};
        x.hw.name = "cpu", x.hw.fp8_flops = 0;
        roof_all(x);
        x.hw.name = "custom", x.defaulted = {}, x.typed = {};
        attn::roofline_report m = attn::run_roofline(x);
        m.measured = true;
        m.measurement.copy_bandwidth = 1e10, m.measurement.threads = 2, m.measurement.kv_heads = 1;
        m.measurement.rows = 128, m.measurement.d_head = 576, m.measurement.repeats = 3;
        m.measurement.points = {{1024, 4.7e6, 4.7e-4, 4.0e-4, 1.2e10}, {2048, 9.4e6, 9.4e-4, 1.9e-3, 4.9e9}};
        draw_all(attn::roofline_document(m, rl_en));
        attn::roofline_report plain = attn::run_roofline(in);  // measured with the model's own K/V heads
        plain.measured = true;
        plain.measurement = m.measurement;
        draw_all(attn::roofline_document(plain, rl_en));
    }

    // Flag values typed by the name a page shows (--topic 掩码, --task 归纳): each name in each
    // language gives its own value back, and only it.
    for (const std::string& language : attn::embedded_languages()) {
        const attn::lessons& T = attn::lessons::embedded(language);
        for (const auto& [values, prefix, suffix] :
             {std::tuple{attn::drill::topic_names(), std::string("drill.topic."), std::string()},
              std::tuple{attn::learn_task_ids(), std::string("learn.task."), std::string(".name")}})
            for (const std::string& v : values) {
                INFO(language << ": " << prefix << v << suffix);
                REQUIRE(T.has(prefix + v + suffix));
                CHECK(attn::value_named(T, values, prefix, suffix, T.raw(prefix + v + suffix)) == v);
                if (language == "en") CHECK(T.raw(prefix + v + suffix) == v);
            }
    }

    const attn::lessons& L = attn::lessons::embedded("en");
    CHECK(attn::heads_svg_options(L, 0, 2).head_titles.size() == 2);  // heads --svg's titles
    for (const std::string& key : L.keys()) {
        if (L.file_of(key).rfind("en/help/", 0) == 0) continue;  // the help pages: tests/test_help.cpp
        if (key.rfind("error.", 0) == 0) continue;  // messages' templates: tests/lessons/error_catalogue.py
        if (key == "charset.opencc_missing") continue;  // app's warning without OpenCC: tests/test_charset.cpp
        INFO(key << " (in lessons/" << L.file_of(key) << ") is never used: remove it or use it");
        CHECK(L.was_used(key));
    }
}

TEST_CASE("placeholders: filled - escaped - and missing ones reported", "[lessons]") {
    CHECK(attn::fill("d_k = {d_k}, √d_k = {sqrt_d_k}", {{"d_k", "4"}, {"sqrt_d_k", "2"}}) == "d_k = 4, √d_k = 2");
    CHECK(attn::fill("a set {{x}} and {not a name}", {}) == "a set {x} and {not a name}");
    CHECK_THROWS_WITH(attn::fill("{nope}", {}, "step.X.note"), Catch::Contains("step.X.note uses {nope}"));
    CHECK(attn::placeholders("{a} and {b_2} but not {{c}}") == std::vector<std::string>{"a", "b_2"});
}

TEST_CASE("lesson files are parsed strictly", "[lessons]") {
    CHECK_THROWS_WITH(attn::lessons::parse({{"en/x.toml", "format_version = 1\n[a\n"}}),
                      Catch::Contains("en/x.toml:2"));
    CHECK_THROWS_WITH(attn::lessons::parse({{"en/x.toml", "a = 'x'"}}), Catch::Contains("format_version"));
    CHECK_THROWS_WITH(attn::lessons::parse({{"en/x.toml", "format_version = 1\n[a]\nb = 'x'"},
                                            {"en/y.toml", "format_version = 1\n[a]\nb = 'y'"}}),
                      Catch::Contains("defined twice"));
    CHECK_THROWS_WITH(attn::lessons::parse({{"en/x.toml", "format_version = 1\nn = 3"}}),
                      Catch::Contains("must be a string"));
    const attn::lessons L = attn::lessons::parse({{"fr/x.toml", "format_version = 1\n[step.X]\ntitle = \"Entrée X\""}});
    CHECK(L.raw("step.X.title") == "Entrée X");
    CHECK_THROWS_AS(attn::lessons::embedded("xx"), attn::error);
    // A partial translation falls back to English key by key.
    attn::lessons fr = attn::lessons::parse({{"fr/step.toml", "format_version = 1\n[step.X]\ntitle = \"L'entrée X\""}});
    fr.fill_missing_from(attn::lessons::embedded("en"));
    CHECK(fr.raw("step.X.title") == "L'entrée X");
    CHECK(fr.raw("step.Q.title") == attn::lessons::embedded("en").raw("step.Q.title"));
    CHECK(fr.file_of("step.Q.title") == "en/step.toml");
}

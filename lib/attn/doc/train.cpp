// The pages of `attn-explain train` (see train.hpp).
#include "attn/doc/train.hpp"
#include "attn/doc/chrome.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace attn {

namespace {

using doc::block;
using doc::tone;

// The loss every `every` steps, and at the last step.
block loss_table(const train_result& run, std::size_t every, const std::string& title, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    const std::size_t n = run.losses.size();
    for (std::size_t s = 0; s < n; s += every)
        rows.push_back({std::to_string(s), fmt::format("{:.6g}", run.losses[s])});
    if (n && (n - 1) % every != 0) rows.push_back({std::to_string(n - 1), fmt::format("{:.6g}", run.losses.back())});
    block b = doc::table({L.raw("train.step"), L.raw("train.loss")}, std::move(rows), "rr");
    b.title = title;
    return b;
}

}  // namespace

doc::document train_document(const train_report& r, const lessons& L) {
    const vars& v = r.values;
    const std::size_t every = std::max<std::size_t>(1, r.request.every);
    const bool mistake = !r.request.mistake.empty();
    const std::string key = "train.mistake." + r.request.mistake;
    doc::document d;
    d.title = L.raw("train.title");
    d.ui = doc::chrome_from(L);

    doc::page setup;
    setup.id = "setup";
    setup.blocks.push_back(doc::banner(L.text("train.banner", {{"config", L.text("train.config", v)}})));
    setup.blocks.push_back(doc::gap());
    setup.blocks.push_back(doc::prose(L.text("train.intro", v)));
    if (v.count("logits")) {  // --qk-norm, --softcap C: the flags are on, and the scales are trained
        setup.blocks.push_back(doc::gap());
        setup.blocks.push_back(doc::prose(L.text("train.logits." + v.at("logits"), v)));
    }
    if (mistake) {
        setup.title = L.raw(key + ".title");
        setup.blocks.push_back(doc::gap());
        setup.blocks.push_back(doc::heading(setup.title, 1, tone::error));
        setup.blocks.push_back(
            doc::field(doc::kind::code, L.raw("label.buggy"), L.text(key + ".buggy_code", v), tone::error));
        setup.blocks.push_back(
            doc::field(doc::kind::code, L.raw("label.fixed"), L.raw(key + ".fixed_code"), tone::code));
    }
    d.pages.push_back(std::move(setup));

    doc::page loss;
    loss.id = "loss";
    loss.title = L.raw("train.curve");
    loss.blocks.push_back(doc::heading(loss.title));
    if (!mistake) {
        loss.blocks.push_back(loss_table(r.run, every, "", L));
        loss.blocks.push_back(doc::gap());
        loss.blocks.push_back(doc::chart("", r.run.losses, tone::good));
    } else {
        const std::string fixed = L.raw("train.fixed"), buggy = L.raw("train.buggy");
        loss.blocks.push_back(doc::row({loss_table(r.run, every, fixed, L), loss_table(r.buggy, every, buggy, L)}));
        loss.blocks.push_back(doc::gap());
        loss.blocks.push_back(
            doc::row({doc::chart(fixed, r.run.losses, tone::good), doc::chart(buggy, r.buggy.losses, tone::error)}));
    }
    loss.blocks.push_back(doc::gap());
    loss.blocks.push_back(doc::prose(L.text("train.result", v)));
    if (v.count("g_q_min")) loss.blocks.push_back(doc::prose(L.text("train.logits.scales", v)));
    if (mistake) {
        loss.blocks.push_back(doc::gap());
        loss.blocks.push_back(doc::prose(L.text(key + ".explain", v)));
        if (r.values.count("verdict"))
            loss.blocks.push_back(doc::prose(L.text(key + ".verdict_" + r.values.at("verdict"), v)));
    }
    d.pages.push_back(std::move(loss));
    return d;
}

}  // namespace attn

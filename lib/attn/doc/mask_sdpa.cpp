// The SDPA page of `attn-explain mask`: how the mask reaches F.scaled_dot_product_attention, which
// backends it allows (computed in trace/sdpa_backends), the PyTorch line, and the full table of the
// backends' conditions (its text in lessons/{en,zh}/mask_sdpa.toml).
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/doc/mask.hpp"

namespace attn {

namespace {

using doc::tone;

std::string sdpa_backend_name(const lessons& L, const std::string& id) { return L.raw("mask.sdpa.backend." + id); }

// The verdict of this mask: backend, yes / no, why.
doc::block sdpa_verdict_table(const sdpa_verdict& v, const lessons& L) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<tone>> tones;
    for (const sdpa_backend_verdict& b : v.backends) {
        rows.push_back({sdpa_backend_name(L, b.id), L.raw(b.allowed ? "mask.sdpa.yes" : "mask.sdpa.no"),
                        L.raw("mask.sdpa.reason." + b.id + "." + b.reason)});
        tones.push_back({tone::plain, b.allowed ? tone::good : tone::error, tone::plain});
    }
    doc::block t =
        doc::table({L.raw("mask.sdpa.col_backend"), L.raw("mask.sdpa.col_allowed"), L.raw("mask.sdpa.col_reason")},
                   std::move(rows), "lll");
    t.cell_tones = std::move(tones);
    return t;
}

// The lines a learner would write, with the mask's first allowed backend forced.
std::vector<std::string> sdpa_python_lines(const sdpa_verdict& v) {
    std::string enum_name = "MATH";
    for (const sdpa_backend_info& b : sdpa_backends())
        if (v.first_allowed == b.id) enum_name = b.enum_name;
    const char* args = v.passes == sdpa_passes::is_causal ? ", is_causal=True"
        : v.passes == sdpa_passes::attn_mask              ? ", attn_mask=mask"
                                                          : "";
    return {"import torch.nn.functional as F", "from torch.nn.attention import sdpa_kernel, SDPBackend",
            fmt::format("with sdpa_kernel(SDPBackend.{}):", enum_name),
            fmt::format("    out = F.scaled_dot_product_attention(q, k, v{})", args)};
}

// Every backend's conditions, one row per condition, then the functions each row comes from.
void sdpa_conditions_blocks(const lessons& L, doc::page& p) {
    p.blocks.push_back(doc::heading(L.raw("mask.sdpa.table_title"), 2));
    std::vector<std::string> header = {L.raw("mask.sdpa.col_condition")};
    for (const sdpa_backend_info& b : sdpa_backends()) header.push_back(sdpa_backend_name(L, b.id));
    std::vector<std::vector<std::string>> rows;
    for (const std::string& c : sdpa_condition_ids()) {
        std::vector<std::string> row = {L.raw("mask.sdpa.cond." + c + ".name")};
        for (const sdpa_backend_info& b : sdpa_backends()) row.push_back(L.raw("mask.sdpa.cond." + c + "." + b.id));
        rows.push_back(std::move(row));
    }
    p.blocks.push_back(doc::table(std::move(header), std::move(rows), "lllll"));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.raw("mask.sdpa.order_note")));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.raw("mask.sdpa.sources_intro")));
    for (const std::string& c : sdpa_condition_ids())
        p.blocks.push_back(doc::prose(
            fmt::format("{}: {}", L.raw("mask.sdpa.cond." + c + ".name"), L.raw("mask.sdpa.cond." + c + ".checks")),
            tone::dim, "  - ", "    "));
}

}  // namespace

doc::page mask_sdpa_page(const mask_report& r, const lessons& L) {
    const mask_spec& s = r.config.spec;
    const sdpa_verdict& v = r.sdpa;
    const vars nm = {{"n", std::to_string(s.queries)}, {"m", std::to_string(s.keys)}};
    doc::page p;
    p.id = "sdpa";
    p.title = L.raw("mask.sdpa.title");
    p.blocks.push_back(doc::heading(p.title));
    p.blocks.push_back(doc::prose(
        L.text("mask.sdpa.passes", {{"passes", L.raw(std::string("mask.sdpa.passes_") + name_of(v.passes))}}),
        tone::bold));
    p.blocks.push_back(doc::prose(L.text("mask.sdpa.why." + v.why, nm)));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.raw("mask.sdpa.verdict_intro")));
    p.blocks.push_back(sdpa_verdict_table(v, L));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.raw("mask.sdpa.mask_only")));
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.raw("mask.sdpa.python_intro")));
    p.blocks.push_back(doc::listing(sdpa_python_lines(v), tone::code));
    if (v.passes == sdpa_passes::attn_mask) p.blocks.push_back(doc::prose(L.text("mask.sdpa.python_mask_note", nm)));
    if (v.lower_right_bias) {
        p.blocks.push_back(doc::gap());
        p.blocks.push_back(doc::prose(L.text("mask.sdpa.lower_right", nm)));
    }
    p.blocks.push_back(doc::gap());
    sdpa_conditions_blocks(L, p);
    p.blocks.push_back(doc::gap());
    p.blocks.push_back(doc::prose(L.text("mask.sdpa.source", {{"source", sdpa_pytorch_source}}), tone::dim));
    return p;
}

}  // namespace attn

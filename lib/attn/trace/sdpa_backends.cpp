// PyTorch's SDPA backends and the mask's verdict (see sdpa_backends.hpp for the source pinned).
#include "attn/trace/sdpa_backends.hpp"

#include "attn/trace/mask_report.hpp"

namespace attn {

const char* name_of(sdpa_passes p) {
    switch (p) {
        case sdpa_passes::none: return "none";
        case sdpa_passes::is_causal: return "is_causal";
        case sdpa_passes::attn_mask: return "attn_mask";
    }
    return "none";
}

const std::vector<sdpa_backend_info>& sdpa_backends() {
    // Context.h: sdp_priority_order = {flash_attention, efficient_attention, math, cudnn_attention}.
    static const std::vector<sdpa_backend_info> table = {
        {"flash", "FLASH_ATTENTION", "can_use_flash_attention", false, false},
        {"efficient", "EFFICIENT_ATTENTION", "can_use_mem_efficient_attention", true, true},
        {"math", "MATH", "select_sdp_backend (math: no check)", true, true},
        {"cudnn", "CUDNN_ATTENTION", "can_use_cudnn_attention", true, true},
    };
    return table;
}

const std::vector<std::string>& sdpa_condition_ids() {
    static const std::vector<std::string> ids = {"device",  "dtype",  "head_dim", "attn_mask", "is_causal",
                                                 "dropout", "nested", "gqa",      "grad",      "seq_len",
                                                 "layout",  "other",  "order"};
    return ids;
}

namespace {

using sdpa_grid = std::vector<std::vector<bool>>;

bool sdpa_all_false(const sdpa_grid& g) {
    for (const auto& row : g)
        for (bool b : row)
            if (b) return false;
    return true;
}

// The way the mask is passed, as the key of each backend's reason (mask.sdpa.reason.<id>.<case>).
const char* sdpa_case(sdpa_passes p, bool non_square) {
    if (p == sdpa_passes::is_causal && non_square) return "is_causal_non_square";
    return name_of(p);
}

// Whether the backend accepts the mask passed that way: the two flags of the table.
bool sdpa_accepts(const sdpa_backend_info& b, sdpa_passes p, bool non_square) {
    if (p == sdpa_passes::attn_mask) return b.accepts_attn_mask;
    if (p == sdpa_passes::is_causal && non_square) return b.accepts_causal_non_square;
    return true;
}

}  // namespace

sdpa_verdict sdpa_verdict_for(const mask_spec& s) {
    sdpa_verdict v;
    v.non_square = s.queries != s.keys;
    for (const auto& row : key_padding(s))
        for (bool pad : row) v.padding = v.padding || pad;
    const sdpa_grid structure = structure_blocked(s);
    const bool causal_top_left = structure == causal_blocked(s.queries, s.keys, causal_align::top_left);
    const bool causal_bottom_right = structure == causal_blocked(s.queries, s.keys, causal_align::bottom_right);
    if (v.padding) {
        v.passes = sdpa_passes::attn_mask;
        v.why = "padding";
    } else if (sdpa_all_false(structure)) {
        v.passes = sdpa_passes::none;
        v.why = "none";
    } else if (causal_top_left) {
        v.passes = sdpa_passes::is_causal;
        v.why = v.non_square ? "causal_top_left" : "causal";
    } else if (causal_bottom_right) {
        v.passes = sdpa_passes::attn_mask;
        v.why = "bottom_right";
        v.lower_right_bias = true;
    } else {
        v.passes = sdpa_passes::attn_mask;
        v.why = "pattern";
    }
    for (const sdpa_backend_info& b : sdpa_backends()) {
        sdpa_backend_verdict bv;
        bv.id = b.id;
        bv.reason = sdpa_case(v.passes, v.non_square);
        bv.allowed = sdpa_accepts(b, v.passes, v.non_square);
        if (bv.allowed && v.first_allowed.empty()) v.first_allowed = b.id;
        v.backends.push_back(std::move(bv));
    }
    return v;
}

}  // namespace attn

// `attn-explain flash`: one run of online-softmax tiling, as the command made it (the sizes and flags
// it ran with, the tiled and full results, the low-precision comparison). doc/flash.hpp builds its
// pages, render/json_flash.hpp writes its JSON.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "attn/core/flash.hpp"

namespace attn {

struct flash_report {
    std::size_t n = 0, d_k = 0, d_v = 0, block_q = 0, block_k = 0;
    std::uint64_t seed = 0;
    bool causal = false;  // any mask (causal or a sparse pattern)
    mask_pattern mask;  // --mask as parsed (bigbird with its seed)
    flash_result result;
    std::optional<precision_result> precision;  // with --dtype float16|bfloat16
    std::string low_name;  // "float16" | "bfloat16"
    std::string dtype = "float64";  // the run's own dtype: "float32" | "float64"
};

}  // namespace attn

// PyTorch's F.scaled_dot_product_attention (SDPA) backends — flash, memory-efficient, math, cuDNN —
// as data: the default priority order, the conditions of each (the text of every cell is in
// lessons/{en,zh}/mask_sdpa.toml, keys mask.sdpa.cond.<row>.<backend>), and which backends the
// mask of `attn-explain mask` lets run.
//
// Pinned to ONE PyTorch source, read for this table (Debian's PyTorch 1.13 has no SDPA, so none of
// this is run here; tests/test_mask_sdpa.cpp checks the data's consistency and the mask logic):
//   pytorch/pytorch, main branch at commit 001f694aef6f922b4fdf6d27d59162d27bf3df58 (the stored
//   snapshot of sdp_utils.cpp: it checks GPUs up to sm121, cites issue #169849 and cuDNN 9.15.1).
//   Its version.txt was not readable, so no 2.x.y release number is claimed for it. The other
//   files were stored at other commits of main (sdp_utils_cpp.h at 0119c205, sdp_utils_cpp.cpp at
//   02315a42, bias.py at 04a372ff); where they differ from sdp_utils.cpp (the template arguments
//   of check_batch_size_and_num_heads_dense), sdp_utils.cpp is followed.
//   aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:
//     select_sdp_backend, priority_order, check_prefer_cudnn_attention (the order);
//     can_use_flash_attention: check_for_attn_mask, check_head_dim_size_flash,
//       check_flash_attention_hardware_support, check_flash_causal_non_square_seqlens,
//       check_requires_grad_and_head_dim_gt192_constraints_on_sm86_89_or_120,
//       check_dtypes_flash_attention, check_head_dim_size_flash_nested;
//     can_use_mem_efficient_attention: check_mem_efficient_hardware_support,
//       check_head_dim_size_mem_efficient (minimum_gemm_alignment),
//       check_data_ptr_alignment_mem_efficient, check_requires_grad_and_nested;
//     can_use_cudnn_attention: check_cudnn_hardware_support, check_dtypes_low_precision,
//       check_attn_mask_shape, check_cudnn_dropout, check_cudnn_tensor_shapes,
//       check_cudnn_d256_bprop_head_dim, check_for_nested_inputs, check_cudnn_deterministic.
//   aten/src/ATen/native/transformers/sdp_utils_cpp.h: check_for_attn_mask, check_attn_mask_shape,
//     check_batch_size_and_num_heads_dense, check_grouped_query_attention,
//     check_nonzero_sequence_lengths_dense, check_last_dim_stride_equals_1_dense.
//   aten/src/ATen/native/transformers/sdp_utils_cpp.cpp: select_sdp_backend_cpp (CPU: flash, math).
//   aten/src/ATen/Context.h: sdp_priority_order = flash, efficient, math, cudnn.
//   torch/nn/attention/bias.py: CausalBias._dispatch (causal_lower_right).
//   The documentation of torch.nn.functional.scaled_dot_product_attention: is_causal is top-left
//   (tril) and an error is thrown if both attn_mask and is_causal are set.
#pragma once
#include <string>
#include <vector>

#include "attn/core/masks.hpp"

namespace attn {

// The source the table is pinned to (JSON "pytorch"; shown on the page).
inline constexpr const char* sdpa_pytorch_source = "main@001f694a";

// How the mask reaches SDPA.
enum class sdpa_passes { none, is_causal, attn_mask };
const char* name_of(sdpa_passes p);  // "none", "is_causal", "attn_mask"

// One backend, in PyTorch's default priority order (Context.h). The two flags are what the mask
// decides; everything else (dtype, head size, device, …) is the conditions table.
struct sdpa_backend_info {
    const char* id;  // flash, efficient, math, cudnn: lesson keys mask.sdpa.backend.<id>
    const char* enum_name;  // SDPBackend.<enum_name>
    const char* gate;  // the function of sdp_utils.cpp that decides
    bool accepts_attn_mask;  // flash: check_for_attn_mask refuses any; cuDNN: check_attn_mask_shape
    bool accepts_causal_non_square;  // is_causal with n != m: flash refuses
        // (check_flash_causal_non_square_seqlens)
};
const std::vector<sdpa_backend_info>& sdpa_backends();

// The rows of the conditions table: lesson keys mask.sdpa.cond.<id>.{name,flash,efficient,math,cudnn}.
const std::vector<std::string>& sdpa_condition_ids();

struct sdpa_backend_verdict {
    std::string id;
    bool allowed = false;
    std::string reason;  // lesson key mask.sdpa.reason.<id>.<reason>
};

struct sdpa_verdict {
    sdpa_passes passes = sdpa_passes::none;
    // Why it passes that way: lesson key mask.sdpa.why.<why>: none, causal, causal_top_left,
    // bottom_right, padding, pattern.
    std::string why;
    bool padding = false;  // some key is padding
    bool non_square = false;  // n != m
    bool lower_right_bias = false;  // bottom-right causal, n != m, no padding: causal_lower_right fits
    std::vector<sdpa_backend_verdict> backends;  // in priority order
    std::string first_allowed;  // the first allowed backend in the default order
};

// Reads the mask's structure (without padding) as blocked pairs and compares it with no mask and
// with is_causal's top-left triangle, so window:W with W ≥ n is is_causal and local:W with W ≥ n
// is no mask; any padding needs an attn_mask tensor.
sdpa_verdict sdpa_verdict_for(const mask_spec& s);

}  // namespace attn

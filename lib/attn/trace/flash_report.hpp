// `attn-explain flash`: one run of online-softmax tiling, as the command made it (the sizes and flags
// it ran with, the tiled and full results, the low-precision comparison), and the run itself:
// validate_flash checks the flags, run_flash projects Q, K, V and tiles. doc/flash.hpp builds its
// pages, render/json_flash.hpp writes its JSON.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "attn/core/flash.hpp"
#include "attn/core/flash_backward.hpp"
#include "attn/core/flash_io.hpp"
#include "attn/core/lowp.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

// --backward: FlashAttention-2's tiled backward against `grad`'s full-matrix backward (core/backward)
// on the same upstream gradient dO: `grad --loss sum`'s G at the same seed (L = Σ O ⊙ G, so dO = G).
struct flash_backward_report {
    flash_backward_result tiled;
    matrix<double> d_output;  // dO [n, d_v]
    bool loaded = false;  // dO is --load's G.npy (else drawn from the seed)
    matrix<double> grad_d_q, grad_d_k, grad_d_v;  // grad's
    double diff_q = 0, diff_k = 0, diff_v = 0;  // max |tiled − grad's|
};

// --io: the HBM ↔ SRAM traffic of the standard and the tiled kernels (core/flash_io.hpp), for the run
// and for n = 4096 at d = 64 and 128 with the same SRAM, and FlashAttention-1 against -2 on the run's
// own blocks.
struct flash_io_report {
    std::size_t element = 4;  // bytes an element (the run's --dtype)
    std::size_t sram_bytes = 0;  // --sram
    flash_io::io_case run;  // n, d = d_k = d_v of the run
    std::vector<flash_io::io_case> large;  // n = 4096, d = 64 and 128
    flash_io::versions versions;  // on --block-q, --block-k and the tiles that run
};
// --sram's default: the A100's 192 KiB of shared memory / L1 per SM (Dao et al. 2022, §2.1; NVIDIA's
// A100 whitepaper).
constexpr std::size_t default_sram_bytes = 192 * 1024;
constexpr std::size_t io_large_n = 4096;

struct flash_report {
    std::size_t n = 0, d_k = 0, d_v = 0, block_q = 0, block_k = 0;
    std::uint64_t seed = 0;
    bool causal = false;  // any mask (causal or a sparse pattern)
    mask_pattern mask;  // --mask as parsed (bigbird with its seed)
    flash_result result;
    std::optional<precision_result> precision;  // with --dtype float16|bfloat16
    std::string low_name;  // "float16" | "bfloat16"
    std::string dtype = "float64";  // the run's own dtype: "float32" | "float64"
    std::optional<flash_backward_report> backward;  // with --backward
    std::optional<flash_io_report> io;  // with --io
};

// The flags of one run: the shared run flags, --block-q, --block-k and --row as typed.
struct flash_request {
    step_request run;
    long block_q = 4, block_k = 3, row = 0;
    bool backward = false;
    bool io = false;
    long sram = -1;  // --sram BYTES (-1: not given)
};

// A request checked: the run's config (float32 or float64: a float16 / bfloat16 run is exact and
// compared with its emulated low precision), the low precision asked for, the tile sizes.
struct flash_config {
    step_config run;
    std::optional<low_precision> low;
    std::string low_name;  // "float16" | "bfloat16" | ""
    std::size_t block_q = 0, block_k = 0, row = 0;  // as typed; run_flash clamps the blocks to n
    bool backward = false;
    std::optional<std::size_t> sram;  // with --io: the SRAM's bytes
};
// Throws attn::error (one line naming the flag) for sizes below 1, dimensions typed beside --load,
// files in --load the command would not read, and anything validate() refuses.
flash_config validate_flash(const flash_request& r);

// One run: the inputs drawn from the seed or read from --load (`c.run` takes the files' sizes),
// Q, K and V projected (in float32 for a float32 run, as PyTorch would), the tiles run against
// full attention, and the low-precision errors when asked. Throws attn::error for a --row past the
// last row and for cross-attention (--kv-len).
struct flash_run {
    flash_report report;
    trace tensors;  // with `keep_tensors`: X, W_Q, W_K, W_V, Q, K, V, output, full_output (float64) for --save,
        // and with --backward d_output, softmax_lse [n], d_Q, d_K, d_V (the tiled backward's)
};
flash_run run_flash(flash_config& c, bool keep_tensors);

}  // namespace attn

// `attn-explain parallel`: one attention layer on P simulated devices (core/parallel.hpp) — the
// flags and their validation, the run in float32 or float64, and the table of the three schemes'
// communication and memory for the run and for a large case. The page builder is doc/parallel.hpp,
// the JSON writer render/json_parallel.hpp, the PyTorch script render/python_parallel.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/parallel.hpp"

namespace attn {

// Limits: the simulation holds a few n × d_model blocks per device and n² scores per head.
inline constexpr std::int64_t parallel_max_seq_len = 4096;
inline constexpr std::int64_t parallel_max_d_model = 1024;
inline constexpr std::int64_t parallel_max_devices = 64;
inline constexpr double parallel_max_work = 2e9;  // n²·d_model multiply-adds
inline constexpr std::int64_t parallel_max_scale = std::int64_t{1} << 40;  // any --scale-* value

struct parallel_request {
    std::string scheme = "ring";
    std::int64_t devices = 2, seq_len = 8, heads = 2, kv_heads = 0, d_model = 8;  // kv_heads 0: = heads
    std::string mask = "none", dtype = "float64";
    std::uint64_t seed = 0;
    // the large case (bfloat16, 2 bytes an element)
    std::int64_t scale_seq_len = 131072, scale_heads = 32, scale_kv_heads = 8, scale_d_head = 128, scale_devices = 8;
};

struct parallel_config {
    parallel::scheme scheme = parallel::scheme::ring;
    parallel::dims dims;
    std::string dtype = "float64";
    std::uint64_t seed = 0;
    parallel::dims scale;
};

// Throws attn::error (or argument_error) with one line naming the flag.
parallel_config validate_parallel(const parallel_request& r);

// One row of the table: a scheme on some dims, by formula.
struct parallel_row {
    parallel::scheme scheme = parallel::scheme::ring;
    parallel::cost cost;
};

struct parallel_report {
    parallel_config config;
    parallel::inputs inputs;
    parallel::result result;
    std::vector<parallel_row> run_table, scale_table;  // ring, ulysses, heads
    double scale_element_bytes = 2;
    // ring causal: the same run in the contiguous order's work (the page's idle comparison)
};

parallel_report run_parallel(const parallel_config& c);

// A scheme's name -> scheme; throws attn::error naming --scheme.
parallel::scheme parse_parallel_scheme(const std::string& s);

}  // namespace attn

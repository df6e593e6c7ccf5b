// The trained tiny model of `learn --save DIR` as files another command can rebuild it from:
//   DIR/model.json  {"vocab", "seq_len", "d_model", "heads", "kv_heads" (only when fewer than
//                   heads: grouped-query attention; absent = heads), "layers", "positions" (learned |
//                   sinusoidal | rope | none), "causal", "scale", "qk_norm", "softcap" (C, or null
//                   when off), "task", "seed"}
//   DIR/<id>.npy    every trained tensor of tiny_model::tensors(), float64: embed [V, D], pos [T, D]
//                   (learned only), layer<l>_W_Q, _W_O [D, D], _W_K, _W_V [D, kv_heads·d_head],
//                   layer<l>_q_norm and layer<l>_k_norm [d_head] (qk_norm only), unembed [D, V].
// Reading checks everything before it allocates: a missing folder or file, JSON that is not
// what learn writes, sizes outside learn's own limits, a tensor of the wrong shape or with a
// non-finite value: one-line attn::error saying what to do.
#pragma once
#include <cstdint>
#include <string>

#include "attn/core/tiny_model.hpp"

namespace attn {

struct tiny_model_file {
    tiny_model model;
    std::string task;  // the task it was trained on ("previous", "next-token", …)
    std::uint64_t seed = 0;
};

// model.json's text.
std::string tiny_model_json(const tiny_config& c, const std::string& task, std::uint64_t seed);
// Writes model.json and every tensor into `folder`, which exists (save_folder's fresh folder).
void write_tiny_model(const tiny_model& m, const std::string& task, std::uint64_t seed, const std::string& folder);

// Reads DIR back. Throws attn::error (one line, naming the file and what to do).
tiny_model_file read_tiny_model(const std::string& dir);
tiny_model load_tiny_model(const std::string& dir);

}  // namespace attn

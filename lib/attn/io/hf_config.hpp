// Reading a model's sizes from a Hugging Face config.json (the file every model card ships), for
// roofline, serve and cost: num_hidden_layers, hidden_size, num_attention_heads (required), and
// num_key_value_heads, head_dim, intermediate_size, vocab_size, hidden_act, tie_word_embeddings,
// kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim and the dtype (`torch_dtype`, or
// `dtype` as newer transformers write it) when present. A key that is absent or null takes the
// default roofline::model's page lists (d_head = d_model / h, d_ff = 4·d_model, gelu, vocab 32000,
// untied, float16); hidden_act "silu" means a SwiGLU MLP. With kv_lora_rank (DeepSeek's MLA) the
// head width is qk_nope_head_dim, the RoPE key qk_rope_head_dim and the value head v_head_dim.
#pragma once
#include <string>
#include <vector>

#include "attn/core/roofline.hpp"

namespace attn {

struct hf_model {
    roofline::model m;
    std::vector<std::string> defaulted;  // the optional keys absent (or null), in the order above
    std::string model_type;  // "llama", "deepseek_v2", … ("" when absent)
};

// Parses the text of a config.json. `name` starts every error (the path as typed). Throws
// attn::error, one line: not JSON, not an object, a required key missing ("… has no
// num_hidden_layers"), a value of the wrong type or out of range, an unknown hidden_act or dtype.
hf_model parse_hf_config(const std::string& text, const std::string& name);
// Reads the file (at most 1 MB, a regular file: see read_text_file) and parses it.
hf_model read_hf_config(const std::string& path);

}  // namespace attn

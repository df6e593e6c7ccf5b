// The memory of one training step for the attention layers (see train_memory.hpp).
#include "attn/core/train_memory.hpp"

#include <fmt/format.h>

#include "attn/core/error.hpp"

namespace attn::train_memory {

namespace {

item tm_item(const input& in, std::string id, term kind, std::size_t element_bytes, std::size_t width = 0) {
    const double s = static_cast<double>(in.seq_len), b = static_cast<double>(in.batch);
    const double a = static_cast<double>(in.heads);
    item it{std::move(id), kind, element_bytes, width, 0};
    const double e = static_cast<double>(element_bytes);
    if (kind == term::token) it.bytes = e * s * b * static_cast<double>(width);
    else if (kind == term::score)
        it.bytes = e * a * s * s * b;
    else
        it.bytes = e * a * s * b;
    return it;
}

double tm_sum(const std::vector<item>& items, bool scores) {
    double total = 0;
    for (const item& it : items)
        if (scores || it.kind != term::score) total += it.bytes;
    return total;
}

}  // namespace

result training_memory(const input& in) {
    if (in.batch == 0 || in.seq_len == 0 || in.d_model == 0 || in.heads == 0 || in.kv_heads == 0 || in.d_head == 0 ||
        in.layers == 0)
        throw argument_error({"batch", "seq_len", "d_model", "heads", "kv_heads", "d_head", "layers"},
                             "training memory needs every size positive");
    if (in.bytes != 2 && in.bytes != 4)
        throw argument_error({"bytes"}, fmt::format("bytes {} must be 2 or 4", in.bytes));
    if (in.heads % in.kv_heads != 0)
        throw argument_error({"kv_heads", "heads"},
                             fmt::format("kv_heads {} must divide heads {}", in.kv_heads, in.heads));
    result r;
    const std::size_t e = in.bytes, q_width = in.heads * in.d_head, kv_width = in.kv_heads * in.d_head;
    const double d = static_cast<double>(in.d_model);
    r.params_per_layer = d * static_cast<double>(q_width) * 2 + d * static_cast<double>(kv_width) * 2;
    r.params = r.params_per_layer * static_cast<double>(in.layers);
    r.bpp.weights = r.bpp.gradients = e;
    r.bpp.master = e == 4 ? 0 : 4;  // fp32 weights are their own master copy
    r.parameter_bytes = r.params * static_cast<double>(r.bpp.total());

    // The paper's order: QKV input, Q, K, softmax output, its dropout mask and output, V, W_O's
    // input, the output's dropout mask.
    r.eager.push_back(tm_item(in, "qkv_input", term::token, e, in.d_model));
    r.eager.push_back(tm_item(in, "q", term::token, e, q_width));
    r.eager.push_back(tm_item(in, "k", term::token, e, kv_width));
    r.eager.push_back(tm_item(in, "softmax_output", term::score, e));
    if (in.dropout) {
        r.eager.push_back(tm_item(in, "softmax_dropout_mask", term::score, 1));
        r.eager.push_back(tm_item(in, "dropout_output", term::score, e));
    }
    r.eager.push_back(tm_item(in, "v", term::token, e, kv_width));
    r.eager.push_back(tm_item(in, "proj_input", term::token, e, q_width));
    if (in.dropout) r.eager.push_back(tm_item(in, "output_dropout_mask", term::token, 1, in.d_model));

    for (const item& it : r.eager)
        if (it.kind == term::token) r.flash.push_back(it);
    r.flash.insert(r.flash.end() - (in.dropout ? 1 : 0), tm_item(in, "lse", term::row, 4));

    const double layers = static_cast<double>(in.layers);
    r.eager_per_layer = tm_sum(r.eager, true);
    r.flash_per_layer = tm_sum(r.flash, true);
    r.activation_bytes = r.eager_per_layer * layers;
    r.activation_bytes_flash = r.flash_per_layer * layers;
    r.selective_per_layer = tm_sum(r.eager, false);
    r.selective_bytes = r.selective_per_layer * layers;
    r.full_per_layer = static_cast<double>(e) * static_cast<double>(in.seq_len) * static_cast<double>(in.batch) * d;
    r.full_bytes = r.full_per_layer * layers;
    return r;
}

}  // namespace attn::train_memory

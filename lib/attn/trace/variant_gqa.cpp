// `attn-explain variant gqa-from-mha` (see variant.hpp): an MHA tiny model's K and V heads
// mean-pooled into g groups (Ainslie et al. 2023, "GQA: Training Generalized Multi-Query Transformer
// Models from Multi-Head Checkpoints", §2.2), and the error that makes before any uptraining: per
// layer on the model's own example, for the whole model's logits, and (a learn --save model) on
// the task learn trained it for.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "attn/core/error.hpp"
#include "attn/core/rng.hpp"
#include "attn/io/tiny_model_io.hpp"
#include "attn/trace/learn.hpp"
#include "attn/trace/variant.hpp"

namespace attn {

namespace {

// max |b − a| and ‖b − a‖_F / ‖a‖_F (0 when a is all zero and b equals it).
gqa_layer_error gqa_error_of(const std::vector<double>& a, const std::vector<double>& b) {
    gqa_layer_error e;
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = b[i] - a[i];
        e.max_abs = std::max(e.max_abs, std::fabs(d));
        diff += d * d;
        norm += a[i] * a[i];
    }
    e.relative = norm > 0 ? std::sqrt(diff / norm) : (diff > 0 ? INFINITY : 0.0);
    return e;
}

// The K/V groups g against the model's heads: g divides heads, g < heads.
void gqa_check_groups(long g, std::size_t heads, const std::string& where) {
    if (g < 1 || g > static_cast<long>(heads))
        throw error(fmt::format("--kv-heads must be between 1 and the {} heads of {} (got {})", heads, where, g));
    if (heads % static_cast<std::size_t>(g) != 0)
        throw error(fmt::format("--kv-heads {} must divide the {} heads of {}: each group pools heads / kv-heads heads",
                                g, heads, where));
}

// The random MHA model: the usual step sizes, gqa_default_heads unless --heads is given.
tiny_config gqa_random_config(const variant_request& vr) {
    const step_request& r = vr.run;
    const long h = vr.heads_given ? vr.heads : gqa_default_heads;
    if (r.seq_len < 2 || r.seq_len > static_cast<std::int64_t>(gqa_max_seq_len))
        throw error(fmt::format("--seq-len must be between 2 and {} (got {})", gqa_max_seq_len, r.seq_len));
    if (r.d_model < 1 || r.d_model > static_cast<std::int64_t>(gqa_max_d_model))
        throw error(fmt::format("--d-model must be between 1 and {} (got {})", gqa_max_d_model, r.d_model));
    if (h < 1 || h > r.d_model || r.d_model % h != 0)
        throw error(
            fmt::format("--heads {} must divide --d-model {} (each head has d_model / heads columns)", h, r.d_model));
    if (r.mask != "none" && r.mask != "causal")
        throw error("variant gqa-from-mha runs the tiny model's own masks: --mask none or causal");
    tiny_config c;
    c.vocab = gqa_random_vocab;
    c.seq_len = static_cast<std::size_t>(r.seq_len);
    c.d_model = static_cast<std::size_t>(r.d_model);
    c.heads = static_cast<std::size_t>(h);
    c.layers = gqa_random_layers;
    c.causal = r.mask == "causal";
    c.kv_heads = c.heads;
    return c;
}

// The flags that mean nothing here.
void gqa_refuse_flags(const variant_request& vr) {
    const step_request& r = vr.run;
    if (!r.mistake.empty()) throw error("variant runs no mistakes: drop --mistake");
    if (r.kv_len > 0) throw error("variant is self-attention: drop --kv-len");
    if (r.dtype_given) throw error("gqa-from-mha runs the tiny model in float64, as learn does: drop --dtype");
    if (!r.tokens.empty()) throw error("gqa-from-mha runs the model on its own example tokens: drop --tokens");
    if (!r.load_dir.empty() && r.dims_given)
        throw error("--load takes the sizes from the model's model.json: drop --seq-len/--d-model/--d-k/--d-v");
    if (!r.load_dir.empty() && r.mask != "none")
        throw error("--load runs the model with the mask it was trained with: drop --mask");
}

}  // namespace

void check_gqa_request(const variant_request& vr) {
    gqa_refuse_flags(vr);
    if (!vr.run.load_dir.empty()) return;  // the model's sizes are checked when it is read
    const tiny_config c = gqa_random_config(vr);
    gqa_check_groups(vr.kv_heads, c.heads, "the random model");
}

namespace {

// DIR written by learn --save: an MHA model whose heads g divides.
tiny_model_file gqa_load(const variant_request& vr) {
    const std::string& dir = vr.run.load_dir;
    tiny_model_file f = read_tiny_model(dir);
    const tiny_config& c = f.model.c;
    if (c.kv_count() < c.heads)
        throw error(
            fmt::format("{}: its model already shares {} K/V heads among {} heads: give an MHA model "
                        "(learn --save without --kv-heads)",
                        dir, c.kv_count(), c.heads));
    if (vr.heads_given && static_cast<std::size_t>(vr.heads) != c.heads)
        throw error(fmt::format("--heads {} but the model in {} has {} heads: drop --heads", vr.heads, dir, c.heads));
    gqa_check_groups(vr.kv_heads, c.heads, dir);
    return f;
}

// Layer by layer on the MHA model's own stream, then the logits.
void gqa_measure(gqa_merge& m) {
    const tiny_forward f = tiny_forward_pass(m.mha, m.tokens);
    const tiny_forward g = tiny_forward_pass(m.gqa, m.tokens);
    for (std::size_t l = 0; l < m.mha.c.layers; ++l)
        m.layers.push_back(gqa_error_of(tiny_layer_output(m.mha, l, f.h[l]), tiny_layer_output(m.gqa, l, f.h[l])));
    m.logits = gqa_error_of(f.logits, g.logits);
}

// learn's held-out sequences, scored by both models.
void gqa_task(gqa_merge& m, std::uint64_t seed) {
    learn_config c = learn_config_of_saved(m.mha.c, m.task, seed);
    c.held_out = gqa_held_out;
    const learn_batch b = learn_held_out(c);
    std::size_t scored = 0, correct = 0;
    m.loss_before = tiny_batch_loss(m.mha, b.tokens, b.targets, nullptr, &scored, &correct);
    m.accuracy_before = scored ? static_cast<double>(correct) / static_cast<double>(scored) : 0.0;
    m.loss_after = tiny_batch_loss(m.gqa, b.tokens, b.targets, nullptr, &scored, &correct);
    m.accuracy_after = scored ? static_cast<double>(correct) / static_cast<double>(scored) : 0.0;
    m.held_out = c.held_out;
    m.tokens = learn_example(c).tokens;
}

tensor gqa_tensor(const std::vector<double>& v, std::vector<std::size_t> shape) {
    tensor t = xt::zeros<double>(shape);
    std::copy(v.begin(), v.end(), t.begin());
    return t;
}

// A model tensor's shape, as learn --save writes it (io/tiny_model_io.hpp).
std::vector<std::size_t> gqa_shape(const tiny_config& c, const std::string& id) {
    if (id == "embed") return {c.vocab, c.d_model};
    if (id == "pos") return {c.seq_len, c.d_model};
    if (id == "unembed") return {c.d_model, c.vocab};
    if (id.find("_norm") != std::string::npos) return {c.d_head()};
    return {c.d_model, c.d_model};
}

// What --save writes: the model's tensors as learn --save names them, the pooled W_K and W_V, and
// per layer its input on the example and both outputs; the logits of both.
void gqa_saved(variant_report& r) {
    const gqa_merge& m = r.gqa;
    const tiny_config& c = m.mha.c;
    const std::size_t T = c.seq_len, D = c.d_model, V = c.vocab;
    r.saved.push_back({"tokens", gqa_tensor(std::vector<double>(m.tokens.begin(), m.tokens.end()), {T})});
    const tiny_forward f = tiny_forward_pass(m.mha, m.tokens);
    const auto pooled = m.gqa.tensors();
    std::size_t i = 0;
    for (const auto& [id, p] : m.mha.tensors()) {
        r.saved.push_back({id, gqa_tensor(*p, gqa_shape(c, id))});
        if (id.find("_W_K") != std::string::npos || id.find("_W_V") != std::string::npos)
            r.saved.push_back({id + "_pooled", gqa_tensor(*pooled[i].second, {D, m.gqa.c.kv_dim()})});
        ++i;
    }
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "layer" + std::to_string(l) + "_";
        r.saved.push_back({p + "input", gqa_tensor(f.h[l], {T, D})});
        r.saved.push_back({p + "output_mha", gqa_tensor(tiny_layer_output(m.mha, l, f.h[l]), {T, D})});
        r.saved.push_back({p + "output_gqa", gqa_tensor(tiny_layer_output(m.gqa, l, f.h[l]), {T, D})});
    }
    r.saved.push_back({"logits_mha", gqa_tensor(f.logits, {T, V})});
    r.saved.push_back({"logits_gqa", gqa_tensor(tiny_forward_pass(m.gqa, m.tokens).logits, {T, V})});
}

}  // namespace

variant_report run_gqa_from_mha(const variant_request& vr) {
    check_gqa_request(vr);
    variant_report r;
    r.kind = "gqa-from-mha";
    gqa_merge& m = r.gqa;
    std::uint64_t seed = vr.run.seed;
    if (!vr.run.load_dir.empty()) {
        tiny_model_file f = gqa_load(vr);
        m.loaded = true;
        m.dir = vr.run.load_dir;
        m.task = f.task;
        m.mha = std::move(f.model);
        seed = f.seed;
    } else {
        m.mha = init_tiny_model(gqa_random_config(vr), seed);
        rng g(seed ^ 0x67716154ULL);  // "gqaT": the example's tokens
        for (std::size_t t = 0; t < m.mha.c.seq_len; ++t) m.tokens.push_back(static_cast<int>(g.below(m.mha.c.vocab)));
    }
    m.gqa = tiny_gqa_from_mha(m.mha, static_cast<std::size_t>(vr.kv_heads));
    if (m.loaded) gqa_task(m, seed);
    gqa_measure(m);
    const tiny_config& c = m.mha.c;
    r.config.seq_len = c.seq_len, r.config.d_model = c.d_model, r.config.d_k = r.config.d_v = c.d_head();
    r.config.seed = seed, r.config.mask = c.causal ? mask_kind::causal : mask_kind::none;
    r.config.load_dir = m.dir;
    r.heads = c.heads;
    gqa_saved(r);
    return r;
}

}  // namespace attn

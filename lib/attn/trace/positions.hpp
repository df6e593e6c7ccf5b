// `attn-explain positions`: where order comes from. The permutation demo (attention alone is
// blind to order), then each position encoding run on the same X and weights, every intermediate
// recorded as a step (ids: X pe X_pos Q K V Q_rot K_rot alibi_bias scores scaled_scores weights
// output) plus the measurements its page shows. The math is in core/positions.hpp; the pages are
// built by doc/positions.hpp, the JSON written by render/json_positions.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/core/positions.hpp"
#include "attn/trace/config.hpp"
#include "attn/trace/inputs.hpp"
#include "attn/trace/trace.hpp"

namespace attn {

enum class encoding { none, sinusoidal, learned, rope, alibi, t5 };
const char* name_of(encoding e);
const char* name_of(rope_style s);
const char* name_of(rope_scaling_kind k);
// Unknown names throw attn::error listing the valid ones.
encoding parse_encoding(const std::string& s);
rope_style parse_rope_style(const std::string& s);
// The ids --save may write, in order (a run writes those that apply to its encoding).
const std::vector<std::string>& positions_step_ids();

// RoPE flags shared by positions, step, heads and kv-cache: checked once here.
struct rope_request {
    std::string style = "half";
    double base = 10000.0;
};
struct rope_config {
    rope_style style = rope_style::half;
    double base = 10000.0;
};
// Throws attn::error: unknown style, base <= 1 or not finite, odd d_k (`what` names the width).
rope_config validate_rope(const rope_request& r, std::size_t d_k, const std::string& what);

// --rope-scaling linear|ntk|yarn --factor s --original-len L (positions --encoding rope only).
struct rope_scaling_request {
    std::string kind;  // "" = none
    double factor = 4;
    std::int64_t original_len = 4096;
    bool factor_given = false, original_len_given = false;
};
// --encoding t5: T5's bucketed relative bias.
struct t5_request {
    std::int64_t num_buckets = 32, max_distance = 128;
    bool given = false;  // either flag given
};

struct positions_request {
    step_request run;  // --seq-len --d-model --d-k --seed --init --dtype --tokens --load
    std::string encoding;  // "" = the tour: none, sinusoidal, learned, rope, alibi
    rope_request rope;
    rope_scaling_request scaling;
    t5_request t5;
    std::int64_t heads = 8;  // ALiBi (and T5) heads
    std::int64_t shift = 3;  // the relative-offset demo
    std::string mask;  // "" = each encoding's own default (causal for none and alibi)
    bool saving = false;  // --save was given: one encoding only
};

struct positions_config {
    step_config run;
    std::vector<encoding> encodings;  // one, or the tour
    bool tour = false;
    rope_config rope;
    rope_scaling scaling;  // kind none unless --rope-scaling
    std::size_t num_buckets = 32, max_distance = 128;  // t5
    std::size_t heads = 8, shift = 3;
    std::string mask;  // as given ("" = defaults)
    bool causal_for(encoding e) const;
};

// Checks every flag (one-line errors that say what to do). Dimensions are re-checked after --load.
positions_config validate_positions(const positions_request& r);
// After --load: d_k even for RoPE, sizes sane.
void check_positions(const positions_config& c);

// Section 1: f(PX) against P·f(X), without a mask and with the causal mask.
struct equivariance_check {
    std::vector<std::size_t> perm;  // P·X takes row perm[i] of X as its row i
    matrix<double> p_f, f_p;  // P·f(X) and f(P·X), no mask [n, d_v]
    matrix<double> p_f_causal, f_p_causal;
    double no_mask_max_diff = 0, causal_max_diff = 0;
};

// One encoding's run, its steps and what its page measures.
struct encoding_run {
    encoding enc = encoding::none;
    bool causal = false;
    trace t;  // steps (the --save ids), lessons "positions"
    vars values;  // numbers for its lesson text
    double perm_diff = 0;  // f(P·X) against P·f(X) with this encoding, no mask
    // sinusoidal and learned: the table's Gram matrix PE·PEᵀ and how far its diagonals vary
    matrix<double> gram;
    double diag_spread = 0;
    double rotation_error = 0;  // sinusoidal: |PE(i + shift) − R(shift)·PE(i)|, max
    // rope
    matrix<double> other_scores;  // the other pairing's scores on the same weights
    double style_diff = 0;  // max |half − interleaved| scores
    double converted_diff = 0;  // interleaved(W) against half(W[:, perm])
    matrix<double> shifted_scores;  // every position + shift
    double shift_diff = 0, norm_diff = 0;
    std::vector<double> thetas;  // θ_i, i < d_k / 2
    std::vector<double> decay_run, decay_128;  // the bound for distances 0, 8, 16, …
    // rope with --rope-scaling: the scaled frequencies, and one query's scores (q = Q row 0, k = K
    // row 0, before rotation, ·1/√d_k) at distances 0 … s·L − 1 sampled, before and after (after:
    // times attention_scale²)
    rope_scaled scaled;
    std::size_t new_len = 0;  // ⌊s·L⌋
    std::vector<double> distances, scores_before, scores_after;
    // per pair: meets angles at distance new_len − 1 that training (distance L − 1) never reached
    std::vector<bool> unseen_before, unseen_after;
    // alibi (and t5: ALiBi's slopes beside it)
    std::vector<double> slopes;
    // t5: the learned values per bucket and head (here drawn from the seed) [num_buckets, h]
    matrix<double> bucket_values;
    bool bidirectional = false;
};

struct positions_report {
    positions_config config;
    bool classic_x = false;
    equivariance_check eq;
    std::vector<encoding_run> runs;  // in the order of config.encodings
    matrix<double> learned_table;  // [n, d_model], drawn from the seed
    matrix<double> t5_values;  // [num_buckets, heads], drawn from the seed (T5 learns them)
};

// Runs the permutation demo and every asked encoding in the config's dtype.
positions_report run_positions(const positions_config& c, const inputs& in, int precision);

// Note for the exercise issue (#12), not landed when this was written: the `rope` exercise (answer
// ids Q_rot K_rot scores weights output) can take its expected tensors from run_positions with
// encodings = {rope}: runs[0].t.at("Q_rot") … at("output"), for the learner's --rope-style/--rope-base;
// the golden cases tests/fixtures/positions_rope_{half,interleaved} already hold PyTorch's values.

// The decay bound is sampled at distances 0, step, 2·step, … (count points).
inline constexpr std::size_t decay_points = 64, decay_step = 8;
// The long-range scores of --rope-scaling: this many distances, evenly from 0 to s·L − 1.
inline constexpr std::size_t scaling_points = 48;
// Pair i meets angles training never reached: its angle at distance far − 1 with θ' passes L·θ_i
// (training's distances stay below L) while L·θ_i is under a full turn.
bool rope_pair_unseen(double theta, double scaled_theta, std::size_t original_len, std::size_t far);

}  // namespace attn

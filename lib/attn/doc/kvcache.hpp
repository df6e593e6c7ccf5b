// `attn-explain kv-cache` as pages: the setup and the prefill, one page per decode step, the summary
// (all prose from lessons/*/kvcache.toml). Also the sentences the JSON writer carries beside the
// numbers (render/json_kvcache.hpp), so both say the same.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "attn/doc/document.hpp"
#include "attn/io/lessons.hpp"
#include "attn/trace/kvcache.hpp"
#include "attn/trace/kvcache_model.hpp"

namespace attn {

// Page ids: "prefill", "step-1" … "step-t", "summary".
doc::document kvcache_document(const kv_report& r, const lessons& L, int precision);

// "query heads 0,1 → kv head 0; 2,3 → kv head 1"
std::string gqa_map(const kv_config& c, const lessons& L);
// window:W: the rolling cache's length and bytes after every step, and the check (empty otherwise).
std::string window_summary(const kv_report& r, const lessons& L);
// The placeholders every kv-cache lesson may use ({p}, {t}, {h}, {g}, {bytes}, {diff}, …).
vars kv_vars(const kv_report& r, const lessons& L);
// "Grouped-query attention (g = 2 of h = 4): …"
std::string kv_attention_kind(const kv_report& r, const lessons& L);
// The title of r.steps[index]: "Prefill: …" or "Step 2 of 4: token position 5".
std::string kv_step_title(const kv_report& r, std::size_t index, const lessons& L);
// What the cache costs against multi-head attention's.
std::string kv_cache_summary(const kv_report& r, const lessons& L);

// The summary's first line: does cached decoding match full attention (with --kv-dtype: the float
// cache does, and the quantized one differs by its error).
std::string kv_summary_line(const kv_report& r, const lessons& L);

// --kv-dtype (doc/kvcache_quant.cpp): kv_vars plus {kv_dtype}, {err} (max |quantized − float
// cache|), {fdiff}, {sat}, {bpt} and {fbpt} (bytes a token and layer), {saved} (%), {ratio},
// {scale_bytes}, {float_bytes}, {formula}.
vars kv_quant_vars(const kv_report& r, const lessons& L);
// The float cache matches full attention (the quantized one is then judged by its error).
bool kv_quant_matches(const kv_report& r);
// A step's check line against the float cache; v holds {rows}.
std::string kv_quant_check(const kv_report& r, const kv_step& s, const vars& v, const lessons& L);
// A step's rows as the cache holds them, their scales and what saturated (nothing without --kv-dtype).
void add_quant_rows(std::vector<doc::block>& out, const kv_report& r, const kv_step& s, const vars& rv,
                    const lessons& L, int precision);
// The summary page's section on the quantized cache (nothing without --kv-dtype).
std::vector<doc::block> kv_quant_summary(const kv_report& r, const lessons& L);
// --sinks (doc/kvcache_sinks.cpp): kv_vars plus {s}, {w}, {cap} = S + W, {uniform} (the mean share
// equal weights give the sinks), {means} (each head's mean weight on them), {lens}.
vars kv_sinks_vars(const kv_report& r, const lessons& L);
// A step's cache layout, what it evicted, and the weight its last query gives the sinks.
void add_sinks_step(std::vector<doc::block>& out, const kv_report& r, const kv_step& s, const vars& rv,
                    const lessons& L);
// The summary's paragraph: the cache's lengths, each head's mean weight on the sinks against equal
// weights, and the verdict on which heads lean on them (computed from the run).
std::string kv_sinks_summary(const kv_report& r, const lessons& L);
// --evict (doc/kvcache_evict.cpp): kv_vars plus {policy}, {snap_top} = B − W, {evicted_total},
// {len} (the final entries per K/V head), {diffs} (each step's max |out − full|).
vars kv_evict_vars(const kv_report& r, const lessons& L);
// The first page's paragraph on the policy (and, when nothing was evicted, that it equals full attention).
std::string kv_evict_intro(const kv_report& r, const lessons& L);
// A step's kept positions per K/V head, what each evicted, H2O's scores or SnapKV's votes, and the
// error against the full cache.
void add_evict_step(std::vector<doc::block>& out, const kv_report& r, const kv_step& s, const vars& rv,
                    const lessons& L);
// The summary's line on the run's errors.
std::string kv_evict_summary(const kv_report& r, const lessons& L);
// --model DIR (doc/kvcache_model.cpp): one page, the three readings' losses, the sink weight per
// head and the verdicts; the placeholders and the verdict are shared with the JSON.
doc::document kvcache_model_document(const kv_model_report& r, const lessons& L);
vars kv_model_vars(const kv_model_report& r);
std::string kv_model_verdict(const kv_model_report& r, const lessons& L);
// What each policy of the run does on write and on read, a line each.
std::vector<std::string> kv_policy_lines(const kv_report& r, const lessons& L);

}  // namespace attn

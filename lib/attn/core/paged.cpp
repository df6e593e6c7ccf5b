// A paged KV cache's scheduler and the attention that reads through a block table (see paged.hpp).
#include "attn/core/paged.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <xtensor/xview.hpp>

namespace attn::paged {

scheduler::scheduler(std::size_t num_blocks, std::size_t block_size, std::vector<request_spec> specs,
                     std::vector<std::vector<std::int64_t>> tokens, std::size_t samples,
                     std::vector<std::vector<std::int64_t>> sample_tokens)
    : block_size_(block_size), refcount_(num_blocks, 0), hash_(num_blocks, 0) {
    if (block_size == 0 || num_blocks == 0)
        throw std::invalid_argument("the pool needs at least one block of one slot");
    if (tokens.size() != specs.size() || specs.empty()) throw std::invalid_argument("one token list per request");
    if (samples == 0 || sample_tokens.size() + 1 != samples) throw std::invalid_argument("one token list per sample");
    for (std::size_t b = 0; b < num_blocks; ++b) free_.push_back(b);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        if (tokens[i].size() != specs[i].prompt + specs[i].generate || specs[i].prompt == 0)
            throw std::invalid_argument("a request's tokens are its prompt (at least one) and what it generates");
        request r;
        r.id = i;
        r.tokens = std::move(tokens[i]);
        r.prompt = r.restart = specs[i].prompt;
        requests_.push_back(std::move(r));
        waiting_.push_back(i);
    }
    for (std::size_t k = 1; k < samples; ++k) {  // request 0's other continuations
        request r;
        r.id = specs.size() + k - 1;
        r.prompt = r.restart = requests_[0].prompt;
        r.tokens.assign(requests_[0].tokens.begin(), requests_[0].tokens.begin() + static_cast<long>(r.prompt));
        if (sample_tokens[k - 1].size() != specs[0].generate)
            throw std::invalid_argument("a sample generates as many tokens as request 0");
        r.tokens.insert(r.tokens.end(), sample_tokens[k - 1].begin(), sample_tokens[k - 1].end());
        r.parent = 0;
        requests_.push_back(std::move(r));
    }
    for (const request& r : requests_)
        if (blocks_for(r.tokens.size()) > num_blocks)
            throw std::invalid_argument("a request needs more blocks than the pool has");
}

bool scheduler::done() const {
    return std::all_of(requests_.begin(), requests_.end(),
                       [](const request& r) { return r.state == status::finished; });
}

std::size_t scheduler::take_block() {
    const std::size_t b = free_.front();
    free_.erase(free_.begin());
    refcount_[b] = 1;
    hash_[b] = 0;
    return b;
}

// Drops one reference to each block of r's table; a block nobody uses returns to the pool.
void scheduler::release(request& r, step_record& rec) {
    for (const std::size_t b : r.block_table) {
        --refcount_[b];
        if (refcount_[b] == 0) {
            const auto it = by_hash_.find(hash_[b]);
            if (it != by_hash_.end() && it->second == b) by_hash_.erase(it);
            hash_[b] = 0;
            free_.insert(std::lower_bound(free_.begin(), free_.end(), b), b);
        }
        rec.events.push_back({event_kind::free, r.id, b, none, refcount_[b]});
    }
    r.block_table.clear();
}

// FNV-1a over every token up to the end of logical block `logical`: two blocks share a hash only
// when they hold the same tokens after the same prefix (as vLLM's prefix-caching block hash).
std::uint64_t scheduler::prefix_hash(const request& r, std::size_t logical) const {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t p = 0; p < (logical + 1) * block_size_; ++p) {
        auto t = static_cast<std::uint64_t>(r.tokens[p]);
        for (int byte = 0; byte < 8; ++byte, t >>= 8) h = (h ^ (t & 0xff)) * 1099511628211ULL;
    }
    return h == 0 ? 1 : h;
}

void scheduler::seal(request& r, std::size_t logical) {
    const std::size_t b = r.block_table[logical];
    if (hash_[b] != 0) return;
    hash_[b] = prefix_hash(r, logical);
    by_hash_.emplace(hash_[b], b);  // the first block with these tokens is the one others share
}

// New blocks an admission needs: its restart tokens' blocks, but full ones found by hash.
std::size_t scheduler::admission_cost(const request& r) const {
    std::size_t cost = 0;
    for (std::size_t b = 0; b < blocks_for(r.restart); ++b) {
        const bool full = (b + 1) * block_size_ <= r.restart;
        if (!(full && by_hash_.count(prefix_hash(r, b)))) ++cost;
    }
    return cost;
}

void scheduler::admit(request& r, step_record& rec) {
    for (std::size_t b = 0; b < blocks_for(r.restart); ++b) {
        const bool full = (b + 1) * block_size_ <= r.restart;
        const auto found = full ? by_hash_.find(prefix_hash(r, b)) : by_hash_.end();
        if (found != by_hash_.end()) {
            r.block_table.push_back(found->second);
            ++refcount_[found->second];
            ++shared_hits_;
            rec.events.push_back({event_kind::share, r.id, found->second, none, refcount_[found->second]});
            continue;
        }
        r.block_table.push_back(take_block());
        rec.events.push_back({event_kind::allocate, r.id, r.block_table.back(), none, 1});
        const std::size_t end = std::min(r.restart, (b + 1) * block_size_);
        for (std::size_t p = b * block_size_; p < end; ++p)
            rec.writes.push_back({r.id, p, r.block_table.back() * block_size_ + p % block_size_, true});
        if (full) seal(r, b);
    }
    r.computed = r.restart;
    r.state = status::running;
    r.admitted = admissions_++;
    if (r.id != 0 || r.preemptions != 0) return;
    for (request& fork : requests_)  // request 0's first admission: its samples share every block
        if (fork.parent == 0 && fork.state == status::waiting && fork.preemptions == 0) {
            fork.block_table = r.block_table;
            for (const std::size_t b : fork.block_table)
                rec.events.push_back({event_kind::share, fork.id, b, none, ++refcount_[b]});
            fork.computed = r.computed;
            fork.state = status::running;
            fork.admitted = admissions_++;
        }
}

bool scheduler::append(request& r, step_record& rec) {
    const std::size_t p = r.computed, logical = p / block_size_, offset = p % block_size_;
    if (offset == 0) {
        if (free_.empty()) return false;
        r.block_table.push_back(take_block());
        rec.events.push_back({event_kind::allocate, r.id, r.block_table.back(), none, 1});
    } else if (refcount_[r.block_table[logical]] > 1) {  // a shared partial block: copy it first
        if (free_.empty()) return false;
        const std::size_t old = r.block_table[logical], fresh = take_block();
        --refcount_[old];
        r.block_table[logical] = fresh;
        rec.events.push_back({event_kind::copy_on_write, r.id, fresh, old, 1});
    }
    rec.writes.push_back({r.id, p, r.block_table[logical] * block_size_ + offset, false});
    ++r.computed;
    if (offset + 1 == block_size_) seal(r, logical);
    return true;
}

void scheduler::preempt(request& r, step_record& rec) {
    rec.events.push_back({event_kind::preempt, r.id, none, none, 0});
    release(r, rec);
    r.restart = r.computed;
    r.computed = 0;
    r.state = status::waiting;
    ++r.preemptions;
    ++preemptions_;
    waiting_.insert(waiting_.begin(), r.id);
}

std::size_t scheduler::newest_running() const {
    std::size_t best = none;
    for (std::size_t i = 0; i < requests_.size(); ++i)
        if (requests_[i].state == status::running && (best == none || requests_[i].admitted > requests_[best].admitted))
            best = i;
    return best;
}

// As vLLM's scheduler: the running requests decode first, oldest first, preempting the newest when
// the pool is out of blocks; only a step without preemption admits waiting requests (first come,
// first served), whose prefill is the step's work for them; finished requests release at the end.
// So within a step every copy-on-write reads its block before any write lands in it, and a client
// applies the step's copies, then its writes.
step_record scheduler::step() {
    step_record rec;
    rec.step = steps_++;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < requests_.size(); ++i)
        if (requests_[i].state == status::running) order.push_back(i);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return requests_[a].admitted < requests_[b].admitted; });
    const std::size_t preempted_before = preemptions_;
    for (const std::size_t i : order) {
        request& r = requests_[i];
        while (r.state == status::running && r.computed < r.tokens.size() && !append(r, rec))
            preempt(requests_[newest_running()], rec);
    }
    while (preemptions_ == preempted_before && !waiting_.empty() &&
           admission_cost(requests_[waiting_.front()]) <= free_.size()) {
        request& r = requests_[waiting_.front()];
        waiting_.erase(waiting_.begin());
        admit(r, rec);
    }
    for (request& r : requests_)
        if (r.state == status::running && r.computed == r.tokens.size()) {
            r.final_table = r.block_table;
            release(r, rec);
            r.state = status::finished;
        }
    rec.free_blocks = free_;
    peak_used_ = std::max(peak_used_, refcount_.size() - free_.size());
    return rec;
}

pool_values::pool_values(std::size_t blocks, std::size_t block_size, std::size_t kv_heads, std::size_t d_head)
    : key_cache(xt::zeros<double>({blocks, block_size, kv_heads, d_head})),
      value_cache(xt::zeros<double>({blocks, block_size, kv_heads, d_head})) {}

void pool_values::put(std::size_t slot, const std::vector<double>& k_row, const std::vector<double>& v_row) {
    const std::size_t b = slot / key_cache.shape(1), off = slot % key_cache.shape(1);
    const std::size_t g = key_cache.shape(2), dh = key_cache.shape(3);
    for (std::size_t kv = 0; kv < g; ++kv)
        for (std::size_t d = 0; d < dh; ++d) {
            key_cache(b, off, kv, d) = k_row[kv * dh + d];
            value_cache(b, off, kv, d) = v_row[kv * dh + d];
        }
}

void pool_values::copy_block(std::size_t from, std::size_t to) {
    xt::view(key_cache, to) = xt::view(key_cache, from);
    xt::view(value_cache, to) = xt::view(value_cache, from);
}

std::vector<double> attend_paged(const std::vector<double>& query, std::size_t position,
                                 const std::vector<std::size_t>& block_table, const pool_values& pool,
                                 const gqa_sizes& s) {
    const std::size_t B = pool.key_cache.shape(1), dh = s.d_head;
    const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
    std::vector<double> out(s.heads * dh, 0.0), score(position + 1);
    for (std::size_t head = 0; head < s.heads; ++head) {
        const std::size_t kv = s.kv_head_of(head);
        double top = -std::numeric_limits<double>::infinity(), sum = 0;
        for (std::size_t j = 0; j <= position; ++j) {
            const std::size_t b = block_table[j / B], off = j % B;
            double dot = 0;
            for (std::size_t d = 0; d < dh; ++d) dot += query[head * dh + d] * pool.key_cache(b, off, kv, d);
            score[j] = dot * scale;
            top = std::max(top, score[j]);
        }
        for (std::size_t j = 0; j <= position; ++j) sum += (score[j] = std::exp(score[j] - top));
        for (std::size_t j = 0; j <= position; ++j) {
            const std::size_t b = block_table[j / B], off = j % B;
            for (std::size_t d = 0; d < dh; ++d) out[head * dh + d] += score[j] / sum * pool.value_cache(b, off, kv, d);
        }
    }
    return out;
}

}  // namespace attn::paged

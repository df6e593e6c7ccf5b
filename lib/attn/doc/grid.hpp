// A read-only rows × cols matrix of doubles, row-major, as a page shows it. A grid either owns its
// numbers (made from a matrix, shared when the block is copied) or views numbers owned elsewhere,
// so that a page shows a trace's n × n scores without copying them (at n = 5000 a copy is 200 MB).
// A viewing grid must not outlive what it views: walkthrough() documents that its pages view the
// trace they were made from. It is not attn::matrix<double> on purpose: a matrix always owns its
// numbers, and the view is what keeps the pages of a large run from copying it.
#pragma once
#include <cstddef>
#include <memory>

#include "attn/core/attention.hpp"

namespace attn {

class grid {
public:
    grid() = default;
    grid(matrix<double> m)  // NOLINT(google-explicit-constructor): a matrix is a grid that owns it
        : owned_(std::make_shared<const matrix<double>>(std::move(m))),
          data_(owned_->data()),
          rows_(owned_->shape(0)),
          cols_(owned_->shape(1)) {}
    // rows × cols numbers at `data`, row after row; the caller keeps them alive.
    static grid view(const double* data, std::size_t rows, std::size_t cols) {
        grid g;
        g.data_ = data;
        g.rows_ = rows;
        g.cols_ = cols;
        return g;
    }

    std::size_t rows() const { return rows_; }
    std::size_t cols() const { return cols_; }
    bool empty() const { return rows_ == 0 || cols_ == 0; }
    bool same_shape(const grid& o) const { return rows_ == o.rows_ && cols_ == o.cols_; }
    double operator()(std::size_t i, std::size_t j) const { return data_[i * cols_ + j]; }
    const double* begin() const { return data_; }
    const double* end() const { return data_ + rows_ * cols_; }

private:
    std::shared_ptr<const matrix<double>> owned_;
    const double* data_ = nullptr;
    std::size_t rows_ = 0, cols_ = 0;
};

}  // namespace attn

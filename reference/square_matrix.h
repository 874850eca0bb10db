// square_matrix: a dense n×n matrix for the matrix forms (RoPE's R^d_{Θ,m}, the sinusoidal
// shift T(Δ)). Deliberately naive: the reference applies full matrix–vector products.
#pragma once

#include <span>
#include <vector>

namespace ropecheck::reference {

template <class Real>
struct square_matrix {
  explicit square_matrix(int size) : n(size), entries(static_cast<std::size_t>(size) * size) {}

  Real& operator()(int row, int col) { return entries[static_cast<std::size_t>(row) * n + col]; }
  const Real& operator()(int row, int col) const {
    return entries[static_cast<std::size_t>(row) * n + col];
  }

  static square_matrix identity(int size) {
    square_matrix m(size);
    for (int i = 0; i < size; ++i) m(i, i) = 1;
    return m;
  }

  std::vector<Real> apply(std::span<const Real> x) const {
    std::vector<Real> y(n);
    for (int r = 0; r < n; ++r) {
      Real sum = 0;
      for (int c = 0; c < n; ++c) sum += (*this)(r, c) * x[c];
      y[r] = sum;
    }
    return y;
  }

  square_matrix transpose() const {
    square_matrix t(n);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) t(c, r) = (*this)(r, c);
    return t;
  }

  square_matrix operator*(const square_matrix& rhs) const {
    square_matrix p(n);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        Real sum = 0;
        for (int k = 0; k < n; ++k) sum += (*this)(r, k) * rhs(k, c);
        p(r, c) = sum;
      }
    return p;
  }

  int n;
  std::vector<Real> entries;  // row-major
};

}  // namespace ropecheck::reference

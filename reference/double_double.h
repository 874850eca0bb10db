// double_double: just enough double-word arithmetic (value = hi + lo) for the double tier's
// cos/sin table to combine MPFR anchors by angle addition (reference/cos_sin_table.cpp).
// Error-free transformations (Knuth's TwoSum; Dekker's split product, no FMA needed) and the
// products and sums built on them, with the bounds docs/double-tier.md ("Building the table")
// derives, u = 2^-53:
//   two_sum, two_prod: exact (a + b = s + e, a·b = p + e), barring overflow;
//   mul(a, b):  |result − a·b| <= 9u²·|a.hi·b.hi|         (a, b normalized: |lo| <= u·|hi|)
//   add(a, b):  |result − (a + b)| <= 4u²·(|a.hi| + |b.hi|)   (8u² and 3u² plus O(u³))
// Every operation must round on its own: the reference target is built with -ffp-contract=off
// so no compiler fuses a·b + c into an FMA and breaks the exactness of two_prod.
#pragma once

namespace ropecheck::reference::dd {

struct number {
  double hi = 0;
  double lo = 0;
};

inline number two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

// Veltkamp's split: a = high + low with each half fitting 26 bits, so their products are exact.
inline number split(double a) {
  const double t = 134217729.0 * a;  // 2^27 + 1
  const double high = t - (t - a);
  return {high, a - high};
}

inline number two_prod(double a, double b) {
  const double p = a * b;
  const number x = split(a);
  const number y = split(b);
  return {p, ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo};
}

inline number mul(number a, number b) {
  number p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;  // a.lo·b.lo (<= u²·|a.hi·b.hi|) is dropped
  return two_sum(p.hi, p.lo);
}

inline number add(number a, number b) {
  const number s = two_sum(a.hi, b.hi);
  const number t = two_sum(a.lo, b.lo);
  const number u = two_sum(s.hi, s.lo + t.hi);
  return two_sum(u.hi, u.lo + t.lo);
}

inline number neg(number a) { return {-a.hi, -a.lo}; }

}  // namespace ropecheck::reference::dd

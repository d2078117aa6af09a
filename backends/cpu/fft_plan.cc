#include "backends/cpu/fft_plan.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

namespace kiln::cpu::fft::KILN_FFT_ISA {
namespace {

// Prime radices above this always go through Bluestein's algorithm: a
// direct pass costs about radix operations per element and keeps radix
// elements per line on the stack.
constexpr int kLargestDirectRadix = 61;

// exp(-2 pi i j / n), computed in long double so that f64 plans are
// accurate to their last bits.
template <typename T>
std::complex<T> Root(int64_t j, int64_t n) {
  const long double angle =
      -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(j % n) / static_cast<long double>(n);
  return {static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle))};
}

// The radices of the passes for `n`: the power of two as 8s and at most two
// 4s (2^10 = 8 8 4 4: four passes, where 8 8 8 2 would end on a radix-2
// pass, the most memory traffic per operation), or a single 2 or 4, then
// the odd primes in increasing order. Fewer passes move the block through
// the cache fewer times.
std::vector<int64_t> Radices(int64_t n) {
  std::vector<int64_t> radices;
  int twos = 0;
  while (n % 2 == 0) {
    ++twos;
    n /= 2;
  }
  const int fours = twos < 3 ? 0 : twos % 3 == 1 ? 2 : twos % 3 == 2 ? 1 : 0;
  for (int eight = 0; eight < (twos - 2 * fours) / 3; ++eight) radices.push_back(8);
  for (int four = 0; four < fours; ++four) radices.push_back(4);
  if (twos < 3) {
    if (twos == 1) radices.push_back(2);
    if (twos == 2) radices.push_back(4);
  }
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) {
      radices.push_back(p);
      n /= p;
    }
  }
  if (n > 1) radices.push_back(n);
  return radices;
}

// Arithmetic per element of the passes for `radices` (a rough count used
// only to choose between the direct passes and Bluestein's algorithm).
int64_t CostPerElement(const std::vector<int64_t>& radices) {
  int64_t cost = 0;
  for (int64_t radix : radices) cost += radix == 8 ? 4 : radix == 4 ? 3 : radix;
  return cost;
}

// Radices with a butterfly of their own; the other primes use ButterflyOdd.
bool HasOwnButterfly(int64_t radix) { return radix <= 5 || radix == 8; }

bool NeedsChirp(int64_t n) {
  const std::vector<int64_t> radices = Radices(n);
  int64_t largest = 1;  // the largest radix without a butterfly of its own
  for (int64_t radix : radices) {
    if (!HasOwnButterfly(radix)) largest = std::max(largest, radix);
  }
  if (largest == 1) return false;
  if (largest > kLargestDirectRadix) return true;
  const int64_t padded = SmoothLength(2 * n - 1);
  const int64_t direct = n * CostPerElement(radices);
  const int64_t chirp = 2 * padded * CostPerElement(Radices(padded)) + 4 * padded + 2 * n;
  return chirp < direct;
}

// ---- Butterflies: the DFT of radix elements, in place -------------------

template <typename E>
inline void Butterfly2(Cx<E>* a) {
  const Cx<E> t = a[0];
  a[0] = t + a[1];
  a[1] = t - a[1];
}

template <typename E>
inline void Butterfly4(Cx<E>* a) {
  const Cx<E> t0 = a[0] + a[2], t1 = a[0] - a[2], t2 = a[1] + a[3];
  const Cx<E> t3 = TimesMinusI(a[1] - a[3]);
  a[0] = t0 + t2;
  a[1] = t1 + t3;
  a[2] = t0 - t2;
  a[3] = t1 - t3;
}

// The 8-point DFT as a radix-2 step and two 4-point DFTs: the differences
// are twisted by exp(-2 pi i j/8), j < 4, which are (1 - i)/sqrt(2), -i
// and -(1 + i)/sqrt(2) for j = 1, 2, 3.
template <typename T, typename E>
inline void Butterfly8(Cx<E>* a) {
  constexpr T kHalfSqrt2 = T(0.707106781186547524400844362104849039L);
  Cx<E> sums[4], differences[4];
  for (int j = 0; j < 4; ++j) {
    sums[j] = a[j] + a[j + 4];
    differences[j] = a[j] - a[j + 4];
  }
  const Cx<E> d1 = differences[1], d3 = differences[3];
  differences[1] = {(d1.re + d1.im) * kHalfSqrt2, (d1.im - d1.re) * kHalfSqrt2};
  differences[2] = TimesMinusI(differences[2]);
  differences[3] = {(d3.im - d3.re) * kHalfSqrt2, -(d3.re + d3.im) * kHalfSqrt2};
  Butterfly4(sums);
  Butterfly4(differences);
  for (int k = 0; k < 4; ++k) {
    a[2 * k] = sums[k];
    a[2 * k + 1] = differences[k];
  }
}

template <typename T, typename E>
inline void Butterfly3(Cx<E>* a) {
  constexpr T kHalf = T(0.5);
  constexpr T kSin = T(0.866025403784438646763723170752936183L);  // sin(2 pi / 3)
  const Cx<E> t = a[1] + a[2];
  const Cx<E> d = a[1] - a[2];
  const Cx<E> m = {a[0].re - t.re * kHalf, a[0].im - t.im * kHalf};
  const Cx<E> s = {d.im * kSin, -d.re * kSin};  // -i sin(2 pi/3) (a1 - a2)
  a[0] = a[0] + t;
  a[1] = m + s;
  a[2] = m - s;
}

template <typename T, typename E>
inline void Butterfly5(Cx<E>* a) {
  constexpr T kC1 = T(0.309016994374947424102293417182819059L);   // cos(2 pi / 5)
  constexpr T kC2 = T(-0.809016994374947424102293417182819059L);  // cos(4 pi / 5)
  constexpr T kS1 = T(0.951056516295153572116439333379382143L);   // sin(2 pi / 5)
  constexpr T kS2 = T(0.587785252292473129168705954639072769L);   // sin(4 pi / 5)
  const Cx<E> t1 = a[1] + a[4], t2 = a[2] + a[3], t3 = a[1] - a[4], t4 = a[2] - a[3];
  const Cx<E> b1 = {a[0].re + t1.re * kC1 + t2.re * kC2, a[0].im + t1.im * kC1 + t2.im * kC2};
  const Cx<E> b2 = {a[0].re + t1.re * kC2 + t2.re * kC1, a[0].im + t1.im * kC2 + t2.im * kC1};
  const Cx<E> d1 = {t3.re * kS1 + t4.re * kS2, t3.im * kS1 + t4.im * kS2};
  const Cx<E> d2 = {t3.re * kS2 - t4.re * kS1, t3.im * kS2 - t4.im * kS1};
  a[0] = a[0] + t1 + t2;
  a[1] = b1 + TimesMinusI(d1);
  a[4] = b1 - TimesMinusI(d1);
  a[2] = b2 + TimesMinusI(d2);
  a[3] = b2 - TimesMinusI(d2);
}

// Any odd radix p: the pairs (q, p - q) share their sums and differences.
template <typename T, typename E>
inline void ButterflyOdd(Cx<E>* a, int p, const std::complex<T>* roots) {
  Cx<E> sums[kLargestDirectRadix], differences[kLargestDirectRadix];
  const int half = p / 2;
  Cx<E> zero = a[0];
  for (int r = 1; r <= half; ++r) {
    sums[r] = a[r] + a[p - r];
    differences[r] = a[r] - a[p - r];
    zero = zero + sums[r];
  }
  const Cx<E> first = a[0];
  for (int q = 1; q <= half; ++q) {
    Cx<E> even = first;
    Cx<E> odd = {};
    for (int r = 1; r <= half; ++r) {
      const std::complex<T> w = roots[(static_cast<int64_t>(r) * q) % p];  // cos - i sin
      even.re += sums[r].re * w.real();
      even.im += sums[r].im * w.real();
      odd.re -= differences[r].re * w.imag();  // sin * differences
      odd.im -= differences[r].im * w.imag();
    }
    a[q] = even + TimesMinusI(odd);
    a[p - q] = even - TimesMinusI(odd);
  }
  a[0] = zero;
}

// One Stockham pass of radix R over n elements after passes of total
// stride s: element j + r*m (m = n/R, j = b*s + k) is twisted by
// exp(-2 pi i rk/(sR)) and the butterfly's output r goes to b*s*R + k + r*s.
template <int R, bool kTwist, typename T, typename E, typename Butterfly>
inline void Sweep(const Cx<E>* in, Cx<E>* out, int64_t n, int64_t s, const std::complex<T>* twiddles,
                  Butterfly butterfly) {
  const int64_t m = n / R;
  for (int64_t b = 0; b < m / s; ++b) {
    const Cx<E>* source = in + b * s;
    Cx<E>* destination = out + b * s * R;
    for (int64_t k = 0; k < s; ++k) {
      Cx<E> a[R];
      a[0] = source[k];
      for (int r = 1; r < R; ++r) {
        a[r] = kTwist ? Times(source[k + r * m], twiddles[k * (R - 1) + r - 1]) : source[k + r * m];
      }
      butterfly(a);
      for (int r = 0; r < R; ++r) destination[k + r * s] = a[r];
    }
  }
}

template <int R, typename T, typename E, typename Butterfly>
inline void SweepEither(const Cx<E>* in, Cx<E>* out, int64_t n, int64_t s, const std::complex<T>* twiddles,
                        Butterfly butterfly) {
  if (s == 1) {
    Sweep<R, false>(in, out, n, s, twiddles, butterfly);
  } else {
    Sweep<R, true>(in, out, n, s, twiddles, butterfly);
  }
}

}  // namespace

int64_t SmoothLength(int64_t minimum) {
  int64_t best = int64_t{1} << 62;
  for (int64_t five = 1; five < best; five *= 5) {
    for (int64_t three = five; three < best; three *= 3) {
      int64_t candidate = three;
      while (candidate < minimum) candidate *= 2;
      best = std::min(best, candidate);
    }
  }
  return best;
}

template <typename T>
Plan<T>::Plan(int64_t length) : length_(length) {
  if (length > 1 && NeedsChirp(length)) {
    chirp_ = std::make_unique<Chirp>();
    Chirp& c = *chirp_;
    c.padded = SmoothLength(2 * length - 1);
    c.convolution = std::make_unique<Plan>(c.padded);
    c.chirp.resize(static_cast<size_t>(length));
    // The kernel's DFT in double precision whatever T is, so an f32 plan's
    // kernel is exact to its last bit.
    std::vector<Cx<double>> kernel(static_cast<size_t>(c.padded), Cx<double>{0, 0});
    for (int64_t k = 0; k < length; ++k) {
      const int64_t square = (k * k) % (2 * length);
      const std::complex<double> w = Root<double>(square, 2 * length);
      c.chirp[static_cast<size_t>(k)] = std::complex<T>(static_cast<T>(w.real()), static_cast<T>(w.imag()));
      kernel[static_cast<size_t>(k)] = {w.real(), -w.imag()};
      if (k > 0) kernel[static_cast<size_t>(c.padded - k)] = {w.real(), -w.imag()};
    }
    std::vector<Cx<double>> work(static_cast<size_t>(c.padded));
    const Plan<double> convolution(c.padded);
    const Cx<double>* transformed = convolution.Transform(kernel.data(), work.data());
    c.kernel.resize(static_cast<size_t>(c.padded));
    const double scale = 1.0 / static_cast<double>(c.padded);
    for (int64_t k = 0; k < c.padded; ++k) {
      const Cx<double> value = transformed[k];
      c.kernel[static_cast<size_t>(k)] =
          std::complex<T>(static_cast<T>(value.re * scale), static_cast<T>(value.im * scale));
    }
    work_size_ = 2 * c.padded;
    return;
  }
  int64_t stride = 1;
  for (int64_t factor : Radices(length)) {
    const int radix = static_cast<int>(factor);  // at most kLargestDirectRadix here
    Pass pass{radix, stride, twiddles_.size(), 0};
    for (int64_t k = 0; k < stride; ++k) {
      for (int r = 1; r < radix; ++r) twiddles_.push_back(Root<T>(r * k, stride * radix));
    }
    if (!HasOwnButterfly(radix)) {
      pass.roots = twiddles_.size();
      for (int q = 0; q < radix; ++q) twiddles_.push_back(Root<T>(q, radix));
    }
    passes_.push_back(pass);
    stride *= radix;
  }
  work_size_ = length;
}

template <typename T>
Plan<T>::~Plan() = default;

template <typename T>
template <typename E>
void Plan<T>::RunPass(const Pass& pass, const Cx<E>* in, Cx<E>* out) const {
  const int64_t n = length_;
  const int64_t s = pass.stride;
  const std::complex<T>* twiddles = twiddles_.data() + pass.twiddles;
  switch (pass.radix) {
    case 2: SweepEither<2>(in, out, n, s, twiddles, [](Cx<E>* a) { Butterfly2(a); }); return;
    case 3: SweepEither<3>(in, out, n, s, twiddles, [](Cx<E>* a) { Butterfly3<T>(a); }); return;
    case 4: SweepEither<4>(in, out, n, s, twiddles, [](Cx<E>* a) { Butterfly4(a); }); return;
    case 5: SweepEither<5>(in, out, n, s, twiddles, [](Cx<E>* a) { Butterfly5<T>(a); }); return;
    case 8: SweepEither<8>(in, out, n, s, twiddles, [](Cx<E>* a) { Butterfly8<T>(a); }); return;
    default: break;
  }
  // A larger odd prime: the same pass with the radix known at run time.
  const int p = pass.radix;
  const std::complex<T>* roots = twiddles_.data() + pass.roots;
  const int64_t m = n / p;
  Cx<E> a[kLargestDirectRadix];
  for (int64_t b = 0; b < m / s; ++b) {
    const Cx<E>* source = in + b * s;
    Cx<E>* destination = out + b * s * p;
    for (int64_t k = 0; k < s; ++k) {
      a[0] = source[k];
      for (int r = 1; r < p; ++r) a[r] = Times(source[k + r * m], twiddles[k * (p - 1) + r - 1]);
      ButterflyOdd<T>(a, p, roots);
      for (int r = 0; r < p; ++r) destination[k + r * s] = a[r];
    }
  }
}

template <typename T>
template <typename E>
Cx<E>* Plan<T>::RunChirp(Cx<E>* data, Cx<E>* work) const {
  const Chirp& c = *chirp_;
  const int64_t n = length_;
  Cx<E>* x = work;
  Cx<E>* y = work + c.padded;
  for (int64_t k = 0; k < n; ++k) x[k] = Times(data[k], c.chirp[static_cast<size_t>(k)]);
  std::fill(x + n, x + c.padded, Cx<E>{});
  // The cyclic convolution with the conjugate chirp: DFT, product with the
  // kernel's DFT (already divided by the padded length), and the inverse
  // DFT as the conjugate of a forward one.
  Cx<E>* spectrum = c.convolution->Transform(x, y);
  for (int64_t k = 0; k < c.padded; ++k) {
    spectrum[k] = Conj(Times(spectrum[k], c.kernel[static_cast<size_t>(k)]));
  }
  const Cx<E>* convolved = c.convolution->Transform(spectrum, spectrum == x ? y : x);
  for (int64_t k = 0; k < n; ++k) data[k] = Times(Conj(convolved[k]), c.chirp[static_cast<size_t>(k)]);
  return data;
}

template <typename T>
template <typename E>
Cx<E>* Plan<T>::Transform(Cx<E>* data, Cx<E>* work) const {
  if (chirp_ != nullptr) return RunChirp(data, work);
  Cx<E>* in = data;
  Cx<E>* out = work;
  for (const Pass& pass : passes_) {
    RunPass(pass, in, out);
    std::swap(in, out);
  }
  return in;
}

template class Plan<float>;
template class Plan<double>;
template Cx<float>* Plan<float>::Transform(Cx<float>*, Cx<float>*) const;
template Cx<double>* Plan<double>::Transform(Cx<double>*, Cx<double>*) const;
template Cx<Lanes<float>::Vector>* Plan<float>::Transform(Cx<Lanes<float>::Vector>*,
                                                          Cx<Lanes<float>::Vector>*) const;
template Cx<Lanes<double>::Vector>* Plan<double>::Transform(Cx<Lanes<double>::Vector>*,
                                                            Cx<Lanes<double>::Vector>*) const;

}  // namespace kiln::cpu::fft::KILN_FFT_ISA

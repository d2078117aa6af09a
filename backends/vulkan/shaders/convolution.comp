// A convolution as an implicit GEMM (library_convolution.h): per feature
// group, out[m][n] = sum over k of A[m][k] * B[k][n] with m the output
// position (batch, then the spatial positions), n the group's output
// feature and k the window position and the group's input feature (input
// feature fastest). A, the input's im2col matrix, is never stored: each
// workgroup reads the BM x BK tile of it that it needs straight from the
// input (zeros where the window falls in the padding or between base-
// dilated elements), and the BK x BN tile of the filter, into shared
// memory, and each invocation accumulates a TM x TN block of the output in
// f32. The zeros are multiplied like any
// other element, so an infinite or NaN weight at a padded tap makes the
// output NaN (README, numerics): they come from shared memory, which no
// compiler can fold. Up to three spatial dimensions, slot 0 the outermost;
// a 2-D convolution leaves slot 0 of extent 1 and SPATIAL 2, so the driver
// drops slot 0's arithmetic, and a 1-D one leaves slot 1 of extent 1 too.
// Every dimension's stride comes from the push constants, so any dimension
// numbers work. ELEMENT_F16 selects f16 arrays.
#version 450
#extension GL_EXT_control_flow_attributes : require
#if ELEMENT_F16
#extension GL_EXT_shader_16bit_storage : require
#define ELEMENT float16_t
#else
#define ELEMENT float
#endif

layout(local_size_x_id = 0) in;  // (BM / TM) * (BN / TN) invocations
layout(constant_id = 1) const uint BM = 64;  // output positions a tile
layout(constant_id = 2) const uint BN = 64;  // output features a tile
layout(constant_id = 3) const uint BK = 8;   // contraction steps a shared tile
layout(constant_id = 4) const uint TM = 4;   // output positions an invocation
layout(constant_id = 5) const uint TN = 4;   // output features an invocation
// The window and its dilation per spatial slot: as constants the driver
// folds the taps' divisions, carries and multiplications (and the push
// constants of three slots fit the 128 bytes every device has).
layout(constant_id = 6) const uint WINDOW_0 = 1;
layout(constant_id = 7) const uint WINDOW_1 = 1;
layout(constant_id = 8) const uint WINDOW_2 = 1;
layout(constant_id = 9) const uint DILATION_0 = 1;
layout(constant_id = 10) const uint DILATION_1 = 1;
layout(constant_id = 11) const uint DILATION_2 = 1;
// 3 where slot 0 is a spatial dimension of the convolution, else 2.
layout(constant_id = 12) const uint SPATIAL = 2;
// The input's base (lhs) dilation per slot: a window position between two
// dilated input elements reads a zero, as one in the padding does.
layout(constant_id = 13) const uint BASE_DILATION_0 = 1;
layout(constant_id = 14) const uint BASE_DILATION_1 = 1;
layout(constant_id = 15) const uint BASE_DILATION_2 = 1;
// 1 where the window is reversed along the slot (JAX's transposed
// convolutions for input gradients): tap k reads the filter at WINDOW - 1 - k.
layout(constant_id = 16) const uint REVERSED_0 = 0;
layout(constant_id = 17) const uint REVERSED_1 = 0;
layout(constant_id = 18) const uint REVERSED_2 = 0;

layout(push_constant) uniform ConvolutionShape {
  uint batch;
  uint channels;      // input features per group
  uint out_features;  // output features per group
  uint groups;
  uint in_size[3];
  uint out_size[3];
  uint stride[3];
  int pad_low[3];
  uint in_stride_batch, in_stride_feature;
  uint in_stride_spatial[3];
  uint filter_stride_in, filter_stride_out;
  uint filter_stride_spatial[3];
  uint out_stride_batch, out_stride_feature;
  uint out_stride_spatial[3];
} p;

layout(std430, set = 0, binding = 0) readonly buffer Input { ELEMENT d[]; } input_array;
layout(std430, set = 0, binding = 1) readonly buffer Filter { ELEMENT d[]; } filter_array;
layout(std430, set = 0, binding = 2) writeonly buffer Output { ELEMENT d[]; } output_array;

// [k][m] and [k][n]: an invocation's rows (columns) at one depth are
// BM / TM (BN / TN) apart, so neighbouring invocations read neighbouring
// words; the padding keeps the loads' columns out of one bank.
shared float a_tile[BK * (BM + 1)];
shared float b_tile[BK * (BN + 1)];

const uint THREADS = (BM / TM) * (BN / TN);
// The tile elements each invocation loads per contraction step.
const uint A_LOADS = (BM * BK + THREADS - 1) / THREADS;
const uint B_LOADS = (BK * BN + THREADS - 1) / THREADS;

// A contraction index k as its input feature c and window position kz, ky,
// kx (k = ((kz * WINDOW_1 + ky) * WINDOW_2 + kx) * channels + c; past the
// contraction when kz reaches WINDOW_0). Each invocation loads the same
// tile rows and columns at every step, k growing by BK: the taps advance
// without dividing (a CPU device's SIMD lanes divide one at a time). A 2-D
// convolution keeps kz at 0 and lets ky run past WINDOW_1 instead, so that
// kz, never read, costs its taps nothing.
struct Tap {
  uint c, kz, ky, kx;
};

Tap FirstTap(uint k) {
  const uint window_index = k / p.channels;
  const uint row = window_index / WINDOW_2;  // kz * WINDOW_1 + ky
  Tap tap = Tap(k % p.channels, 0, row, window_index % WINDOW_2);
  if (SPATIAL == 3) {
    tap.kz = row / WINDOW_1;
    tap.ky = row % WINDOW_1;
  }
  return tap;
}

// Whether the tap is within the window, not past the contraction.
bool InWindow(Tap tap) { return SPATIAL == 3 ? tap.kz < WINDOW_0 : tap.ky < WINDOW_1; }

void Advance(inout Tap tap) {
  tap.c += BK;
  while (tap.c >= p.channels) {
    tap.c -= p.channels;
    if (++tap.kx == WINDOW_2) {
      tap.kx = 0;
      ++tap.ky;
      if (SPATIAL == 3 && tap.ky == WINDOW_1) {
        tap.ky = 0;
        ++tap.kz;
      }
    }
  }
}

// Output position m as its batch b and spatial position (oz, oy, ox).
void OutputPosition(uint m, out uint b, out uint oz, out uint oy, out uint ox) {
  ox = m % p.out_size[2];
  oy = m / p.out_size[2] % p.out_size[1];
  const uint planes = m / (p.out_size[2] * p.out_size[1]);
  oz = 0;
  b = planes;
  if (SPATIAL == 3) {
    oz = planes % p.out_size[0];
    b = planes / p.out_size[0];
  }
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint tn = t % (BN / TN);
  const uint tm = t / (BN / TN);
  const uint rows = p.batch * p.out_size[0] * p.out_size[1] * p.out_size[2];
  const uint tiles_m = (rows + BM - 1) / BM;
  const uint tiles_n = (p.out_features + BN - 1) / BN;
  const uint tiles = tiles_m * tiles_n * p.groups;
  // Every invocation of a group takes the same trips: the barriers are
  // reached uniformly.
  for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
    const uint n0 = tile % tiles_n * BN;
    const uint m0 = tile / tiles_n % tiles_m * BM;
    const uint group = tile / (tiles_n * tiles_m);
    // Neighbouring invocations load neighbouring contraction indices of A
    // (the input feature, the minor dimension of NHWC) and neighbouring
    // output features of B (the minor dimension of HWIO). Each load's
    // output position (its window's corner and batch) and filter column are
    // fixed for the tile.
    bool a_row[A_LOADS];
    uint a_base[A_LOADS];
    int a_z[A_LOADS];
    int a_y[A_LOADS];
    int a_x[A_LOADS];
    Tap a_tap[A_LOADS];
    [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {
      const uint e = t + l * THREADS;
      const uint m = m0 + e / BK;
      a_row[l] = e < BM * BK && m < rows;
      uint b, oz, oy, ox;
      OutputPosition(m, b, oz, oy, ox);
      a_base[l] = b * p.in_stride_batch + group * p.channels * p.in_stride_feature;
      a_z[l] = int(oz * p.stride[0]) - p.pad_low[0];
      a_y[l] = int(oy * p.stride[1]) - p.pad_low[1];
      a_x[l] = int(ox * p.stride[2]) - p.pad_low[2];
      a_tap[l] = FirstTap(e % BK);
    }
    bool b_column[B_LOADS];
    uint b_base[B_LOADS];
    Tap b_tap[B_LOADS];
    [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {
      const uint e = t + l * THREADS;
      const uint n = n0 + e % BN;
      b_column[l] = e < BK * BN && n < p.out_features;
      b_base[l] = (group * p.out_features + n) * p.filter_stride_out;
      b_tap[l] = FirstTap(e / BN);
    }
    float acc[TM * TN];
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
    const uint depth = p.channels * WINDOW_0 * WINDOW_1 * WINDOW_2;
    for (uint k0 = 0; k0 < depth; k0 += BK) {
      [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {
        const uint e = t + l * THREADS;
        if (e >= BM * BK) continue;
        const Tap tap = a_tap[l];
        // Window positions in the base-dilated input, then (where they
        // fall on an element) in the input.
        int y = a_y[l] + int(tap.ky * DILATION_1);
        int x = a_x[l] + int(tap.kx * DILATION_2);
        bool inside = a_row[l] && InWindow(tap) && y >= 0 && x >= 0;
        if (BASE_DILATION_1 > 1) {
          inside = inside && y % int(BASE_DILATION_1) == 0;
          y /= int(BASE_DILATION_1);
        }
        if (BASE_DILATION_2 > 1) {
          inside = inside && x % int(BASE_DILATION_2) == 0;
          x /= int(BASE_DILATION_2);
        }
        inside = inside && y < int(p.in_size[1]) && x < int(p.in_size[2]);
        int z = 0;
        if (SPATIAL == 3) {
          z = a_z[l] + int(tap.kz * DILATION_0);
          inside = inside && z >= 0;
          if (BASE_DILATION_0 > 1) {
            inside = inside && z % int(BASE_DILATION_0) == 0;
            z /= int(BASE_DILATION_0);
          }
          inside = inside && z < int(p.in_size[0]);
        }
        float value = 0.0;
        if (inside) {
          uint at = a_base[l] + tap.c * p.in_stride_feature + uint(y) * p.in_stride_spatial[1] +
                    uint(x) * p.in_stride_spatial[2];
          if (SPATIAL == 3) at += uint(z) * p.in_stride_spatial[0];
          value = float(input_array.d[at]);
        }
        a_tile[e % BK * (BM + 1) + e / BK] = value;
        Advance(a_tap[l]);
      }
      [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {
        const uint e = t + l * THREADS;
        if (e >= BK * BN) continue;
        const Tap tap = b_tap[l];
        float value = 0.0;
        if (b_column[l] && InWindow(tap)) {
          const uint fy = REVERSED_1 != 0 ? WINDOW_1 - 1 - tap.ky : tap.ky;
          const uint fx = REVERSED_2 != 0 ? WINDOW_2 - 1 - tap.kx : tap.kx;
          uint at = b_base[l] + tap.c * p.filter_stride_in + fy * p.filter_stride_spatial[1] +
                    fx * p.filter_stride_spatial[2];
          if (SPATIAL == 3) at += (REVERSED_0 != 0 ? WINDOW_0 - 1 - tap.kz : tap.kz) * p.filter_stride_spatial[0];
          value = float(filter_array.d[at]);
        }
        b_tile[e / BN * (BN + 1) + e % BN] = value;
        Advance(b_tap[l]);
      }
      barrier();
      [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
        float a[TM];
        float b[TN];
        [[unroll]] for (uint i = 0; i < TM; ++i) a[i] = a_tile[kk * (BM + 1) + tm + i * (BM / TM)];
        [[unroll]] for (uint j = 0; j < TN; ++j) b[j] = b_tile[kk * (BN + 1) + tn + j * (BN / TN)];
        [[unroll]] for (uint i = 0; i < TM; ++i) {
          [[unroll]] for (uint j = 0; j < TN; ++j) acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
        }
      }
      // The next step overwrites the tiles only after every invocation has read them.
      barrier();
    }
    [[unroll]] for (uint i = 0; i < TM; ++i) {
      const uint m = m0 + tm + i * (BM / TM);
      if (m >= rows) continue;
      uint b, oz, oy, ox;
      OutputPosition(m, b, oz, oy, ox);
      const uint base = b * p.out_stride_batch + oz * p.out_stride_spatial[0] + oy * p.out_stride_spatial[1] +
                        ox * p.out_stride_spatial[2];
      [[unroll]] for (uint j = 0; j < TN; ++j) {
        const uint n = n0 + tn + j * (BN / TN);
        if (n < p.out_features)
          output_array.d[base + (group * p.out_features + n) * p.out_stride_feature] = ELEMENT(acc[i * TN + j]);
      }
    }
  }
}

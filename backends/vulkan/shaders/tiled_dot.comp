// An f32 dot of one contracting and one free dimension a side and up to
// MAX_BATCH batch dimensions (library_dot.h): each workgroup computes a
// BM x BN tile of one batch's output, walking the contraction BK at a time
// through a BM x BK tile of the left operand and a BK x BN tile of the
// right one in shared memory, each invocation a TM x TN block in
// registers. Sums run in the contraction's order, as the interpreter's do.
#version 450
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;  // (BM / TM) * (BN / TN) invocations
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 8;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
// Whether neighbouring invocations load neighbouring contraction indices
// of the left operand (it is contiguous along the contraction) rather
// than neighbouring rows, and neighbouring columns of the right operand
// rather than contraction indices: their reads are then adjacent.
layout(constant_id = 6) const bool LHS_ALONG_K = true;
layout(constant_id = 7) const bool RHS_ALONG_N = true;

// The extents and strides again as specialization constants, so each dot
// shape gets a pipeline whose compiler sees them as constants (folded
// address arithmetic and bounds, as the shaders generated per dot had);
// the push constants below carry them too, for the batch walk.
layout(constant_id = 8) const uint M = 1;
layout(constant_id = 9) const uint N = 1;
layout(constant_id = 10) const uint K = 1;
layout(constant_id = 11) const uint LHS_M_STRIDE = 1;
layout(constant_id = 12) const uint LHS_K_STRIDE = 1;
layout(constant_id = 13) const uint RHS_N_STRIDE = 1;
layout(constant_id = 14) const uint RHS_K_STRIDE = 1;

// Batch dimensions in the output's order; unused ones have extent 1.
#define MAX_BATCH 4
layout(push_constant) uniform DotShape {
  uint m, n, k;
  uint lhs_m_stride, lhs_k_stride;
  uint rhs_n_stride, rhs_k_stride;
  uint batch;  // the product of the batch extents
  uint batch_extent[MAX_BATCH];
  uint lhs_batch_stride[MAX_BATCH];
  uint rhs_batch_stride[MAX_BATCH];
} p;

layout(std430, set = 0, binding = 0) readonly buffer Lhs { float d[]; } lhs;
layout(std430, set = 0, binding = 1) readonly buffer Rhs { float d[]; } rhs;
layout(std430, set = 0, binding = 2) writeonly buffer Out { float d[]; } result;

shared float a_tile[BK * (BM + 1)];  // [k][m]
shared float b_tile[BK * (BN + 1)];  // [k][n]

const uint THREADS = (BM / TM) * (BN / TN);
const uint A_LOADS = (BM * BK + THREADS - 1) / THREADS;
const uint B_LOADS = (BK * BN + THREADS - 1) / THREADS;

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint tn = t % (BN / TN);
  const uint tm = t / (BN / TN);
  const uint tiles_m = (M + BM - 1) / BM;
  const uint tiles_n = (N + BN - 1) / BN;
  const uint tiles = tiles_m * tiles_n * p.batch;
  // Every invocation of a group takes the same trips: the barriers are
  // reached uniformly.
  for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
    const uint n0 = tile % tiles_n * BN;
    const uint m0 = tile / tiles_n % tiles_m * BM;
    const uint batch = tile / (tiles_n * tiles_m);
    uint lhs_base = 0;
    uint rhs_base = 0;
    uint rest = batch;
    [[unroll]] for (int i = MAX_BATCH - 1; i >= 0; --i) {
      const uint index = rest % p.batch_extent[i];
      rest /= p.batch_extent[i];
      lhs_base += index * p.lhs_batch_stride[i];
      rhs_base += index * p.rhs_batch_stride[i];
    }
    float acc[TM * TN];
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
    for (uint k0 = 0; k0 < K; k0 += BK) {
      [[unroll]] for (uint l = 0; l < A_LOADS; ++l) {
        const uint e = t + l * THREADS;
        if (e >= BM * BK) continue;
        const uint kk = LHS_ALONG_K ? e % BK : e / BM;
        const uint mm = LHS_ALONG_K ? e / BK : e % BM;
        const uint m = m0 + mm, k = k0 + kk;
        a_tile[kk * (BM + 1) + mm] =
            m < M && k < K ? lhs.d[lhs_base + m * LHS_M_STRIDE + k * LHS_K_STRIDE] : 0.0;
      }
      [[unroll]] for (uint l = 0; l < B_LOADS; ++l) {
        const uint e = t + l * THREADS;
        if (e >= BK * BN) continue;
        const uint kk = RHS_ALONG_N ? e / BN : e % BK;
        const uint nn = RHS_ALONG_N ? e % BN : e / BK;
        const uint n = n0 + nn, k = k0 + kk;
        b_tile[kk * (BN + 1) + nn] =
            n < N && k < K ? rhs.d[rhs_base + n * RHS_N_STRIDE + k * RHS_K_STRIDE] : 0.0;
      }
      barrier();
      // A contraction step past k adds products of zeros: the sum is
      // unchanged (x + 0 == x for every x but -0, which a sum starting at
      // +0 never is).
      [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
        float a[TM];
        float b[TN];
        [[unroll]] for (uint i = 0; i < TM; ++i) a[i] = a_tile[kk * (BM + 1) + tm + i * (BM / TM)];
        [[unroll]] for (uint j = 0; j < TN; ++j) b[j] = b_tile[kk * (BN + 1) + tn + j * (BN / TN)];
        [[unroll]] for (uint i = 0; i < TM; ++i) {
          [[unroll]] for (uint j = 0; j < TN; ++j) acc[i * TN + j] += a[i] * b[j];
        }
      }
      // The next step overwrites the tiles only after every invocation has read them.
      barrier();
    }
    [[unroll]] for (uint i = 0; i < TM; ++i) {
      const uint m = m0 + tm + i * (BM / TM);
      [[unroll]] for (uint j = 0; j < TN; ++j) {
        const uint n = n0 + tn + j * (BN / TN);
        if (m < M && n < N) result.d[(batch * M + m) * N + n] = acc[i * TN + j];
      }
    }
  }
}

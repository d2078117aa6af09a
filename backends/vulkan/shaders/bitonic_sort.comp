// A sort by one key (library_sort.h): each row's element numbers ordered by
// the bitonic network of core/lowering/bitonic_sort.h in the scratch
// buffer, then the key array (and the one passenger array, with PASSENGER)
// gathered through that order. Dispatched once per pass of the network,
// the push constants' mode saying which (BitonicLaunchMode's numbers):
//   0  every tile of CHUNK element numbers numbered and sorted in shared
//      memory by the whole network up to the tile;
//   1  one compare-exchange per invocation at (block, stride), over the
//      scratch buffer;
//   2  merge `block` finished within each tile in shared memory;
//   3  the gather.
// Each key becomes an unsigned integer whose order is the comparator's
// (EncodeKey), so a pair is decided by comparing integers; equal keys keep
// their element numbers' order (the smaller goes first), which makes the
// sort stable, and element numbers past the row's length (the padding to a
// power of two) go after every real one. Keys are read as raw unsigned
// words of KEY_BITS (8, 16, 32 or 64: a 64-bit key as two 32-bit words, so
// the device needs no 64-bit arithmetic); the passenger is moved as 1 or 2
// raw words an element.
#version 450
#if KEY_BITS == 8
#extension GL_EXT_shader_8bit_storage : require
#define KEY_STORAGE uint8_t
#elif KEY_BITS == 16
#extension GL_EXT_shader_16bit_storage : require
#define KEY_STORAGE uint16_t
#elif KEY_BITS == 32
#define KEY_STORAGE uint
#elif KEY_BITS == 64
#define KEY_STORAGE uvec2
#else
#error KEY_BITS must be 8, 16, 32 or 64
#endif
#ifndef PASSENGER
#error PASSENGER must be 0 or 1
#endif

// The comparator's order of the key bits (constant ORDER): as
// library_sort.h's SortKeyOrder.
#define ORDER_UNSIGNED 0u
#define ORDER_SIGNED 1u
#define ORDER_TOTAL 2u            // XLA's TOTALORDER of floats
#define ORDER_CANONICAL_TOTAL 3u  // TOTALORDER after NaN -> nan bits, +-0 -> zero bits

// Constant 0: CHUNK / 2 invocations a workgroup, one compare-exchange each
// per step (the runtime gives every kernel its workgroup size as constant 0).
layout(local_size_x_id = 0) in;
// Element numbers a workgroup of the tile passes holds in shared memory:
// whole tiles, of one long row or of several short ones.
layout(constant_id = 1) const uint CHUNK = 256;
// The sort's shape and order: library_sort.h's SortKeyShape, constants 2
// on. Constants rather than push constants, so that the driver folds them
// (a CPU device runs the untaken side of a branch on a push constant under
// a mask).
layout(constant_id = 2) const uint ROWS = 1;
layout(constant_id = 3) const uint ROW_LENGTH = 1;   // elements a row
layout(constant_id = 4) const uint PADDED_LOG2 = 0;  // log2 of the row's length padded to a power of two
layout(constant_id = 5) const uint TILE = 2;         // the tile used (a power of two, at most the padded row)
layout(constant_id = 6) const uint INNER = 1;        // the sort dimension's stride: elements of the dimensions after it
layout(constant_id = 7) const uint OUTPUTS = 0;      // elements of each output
layout(constant_id = 8) const uint ORDER = 0;        // ORDER_*
layout(constant_id = 9) const uint DESCENDING = 0;   // 1: the comparator is GT
layout(constant_id = 10) const uint EXPONENT = 0;    // a float's exponent mask (its high word for 64 bits)
layout(constant_id = 11) const uint NAN_LO = 0;      // ORDER_CANONICAL_TOTAL: the NaN every NaN becomes
layout(constant_id = 12) const uint NAN_HI = 0;
layout(constant_id = 13) const uint ZERO_LO = 0;  // ... and the zero both zeros become
layout(constant_id = 14) const uint ZERO_HI = 0;
layout(constant_id = 15) const uint PASSENGER_WORDS = 1;  // PASSENGER: 32-bit words of a passenger element

// Each launch's pass: BitonicLaunchMode's number, the merge's block and
// the compare distance.
layout(push_constant) uniform SortPass {
  uint mode;
  uint block;
  uint stride;
} p;

layout(std430, set = 0, binding = 0) readonly buffer Keys { KEY_STORAGE d[]; } keys;
#if PASSENGER
layout(std430, set = 0, binding = 1) readonly buffer Passengers { uint d[]; } passengers;
layout(std430, set = 0, binding = 2) writeonly buffer SortedKeys { KEY_STORAGE d[]; } sorted_keys;
layout(std430, set = 0, binding = 3) writeonly buffer SortedPassengers { uint d[]; } sorted_passengers;
layout(std430, set = 0, binding = 4) buffer Order { uint d[]; } order;
#else
layout(std430, set = 0, binding = 1) writeonly buffer SortedKeys { KEY_STORAGE d[]; } sorted_keys;
layout(std430, set = 0, binding = 2) buffer Order { uint d[]; } order;
#endif

#if KEY_BITS == 64
// (high word, low word): compared lexicographically.
#define KEY uvec2
bool KeyLess(KEY a, KEY b) { return a.x < b.x || (a.x == b.x && a.y < b.y); }

KEY EncodeKey(uvec2 raw) {
  uint hi = raw.y;
  uint lo = raw.x;
  const uint sign = 0x80000000u;
  if (ORDER == ORDER_CANONICAL_TOTAL) {
    const uint magnitude = hi & ~sign;
    if (magnitude > EXPONENT || (magnitude == EXPONENT && lo != 0u)) {
      hi = NAN_HI;
      lo = NAN_LO;
    } else if (magnitude == 0u && lo == 0u) {
      hi = ZERO_HI;
      lo = ZERO_LO;
    }
  }
  if (ORDER >= ORDER_TOTAL) {
    if ((hi & sign) != 0u) {
      hi = ~hi;
      lo = ~lo;
    } else {
      hi |= sign;
    }
  } else if (ORDER == ORDER_SIGNED) {
    hi ^= sign;
  }
  if (DESCENDING != 0u) {
    hi = ~hi;
    lo = ~lo;
  }
  return KEY(hi, lo);
}
#else
#define KEY uint
bool KeyLess(KEY a, KEY b) { return a < b; }

KEY EncodeKey(uint bits) {
  const uint sign = 1u << (KEY_BITS - 1);
  const uint all = 0xFFFFFFFFu >> (32 - KEY_BITS);
  if (ORDER == ORDER_CANONICAL_TOTAL) {
    const uint magnitude = bits & ~sign;
    if (magnitude > EXPONENT) {
      bits = NAN_LO;
    } else if (magnitude == 0u) {
      bits = ZERO_LO;
    }
  }
  uint key = bits;
  if (ORDER >= ORDER_TOTAL) {
    key = (bits & sign) != 0u ? ~bits & all : bits | sign;
  } else if (ORDER == ORDER_SIGNED) {
    key = bits ^ sign;
  }
  return DESCENDING != 0u ? ~key & all : key;
}
#endif

shared uint chunk_order[CHUNK];
shared KEY chunk_keys[CHUNK];

// The first element of row `row` (rows run along the sort dimension at
// each position of the others).
uint RowBase(uint row) {
  if (INNER == 1u) return row * ROW_LENGTH;
  return (row / INNER) * ROW_LENGTH * INNER + row % INNER;
}

// The key of element `e` of row `row`; a padding element's is never compared.
KEY KeyOf(uint row, uint e) {
  if (e >= ROW_LENGTH) return KEY(0);
#if KEY_BITS == 64
  return EncodeKey(keys.d[RowBase(row) + e * INNER]);
#else
  return EncodeKey(uint(keys.d[RowBase(row) + e * INNER]));
#endif
}

// Whether the pair (x at place `place`, y further on) is to be swapped:
// the first of the two goes first where (place & block) == 0, last
// elsewhere. The larger element number goes first only when it is a real
// element whose key is less.
bool Swap(uint place, uint x, KEY x_key, uint y, KEY y_key, uint block) {
  const bool y_above = y > x;
  const uint high = y_above ? y : x;
  const bool high_first = high < ROW_LENGTH && (y_above ? KeyLess(y_key, x_key) : KeyLess(x_key, y_key));
  const bool x_first = high_first != y_above;
  return ((place & block) == 0u) != x_first;
}

// The place of pair `q`'s first element at compare distance `stride` (a
// power of two).
uint PairPlace(uint q, uint stride) { return ((q & ~(stride - 1u)) << 1) | (q & (stride - 1u)); }

void main() {
  const uint total = ROWS << PADDED_LOG2;
  const uint place_mask = (1u << PADDED_LOG2) - 1u;
  const uint group = gl_WorkGroupSize.x;
  if (p.mode == 0u || p.mode == 2u) {
    const bool numbering = p.mode == 0u;
    const uint t = gl_LocalInvocationID.x;
    const uint first_block = numbering ? 2u : p.block;
    const uint last_block = numbering ? TILE : p.block;
    const uint chunks = (total + CHUNK - 1u) / CHUNK;
    for (uint c = gl_WorkGroupID.x; c < chunks; c += gl_NumWorkGroups.x) {
      const uint start = c * CHUNK;
      for (uint l = t; l < CHUNK; l += group) {
        const uint f = start + l;
        if (f < total) {
          const uint e = numbering ? f & place_mask : order.d[f];
          chunk_order[l] = e;
          chunk_keys[l] = KeyOf(f >> PADDED_LOG2, e);
        }
      }
      barrier();
      for (uint block = first_block; block <= last_block; block *= 2u) {
        for (uint stride = min(block, TILE) / 2u; stride > 0u; stride /= 2u) {
          const uint at = PairPlace(t, stride);
          if (start + at < total) {
            const uint x = chunk_order[at];
            const uint y = chunk_order[at + stride];
            const KEY x_key = chunk_keys[at];
            const KEY y_key = chunk_keys[at + stride];
            if (Swap((start + at) & place_mask, x, x_key, y, y_key, block)) {
              chunk_order[at] = y;
              chunk_order[at + stride] = x;
              chunk_keys[at] = y_key;
              chunk_keys[at + stride] = x_key;
            }
          }
          barrier();
        }
      }
      for (uint l = t; l < CHUNK; l += group) {
        const uint f = start + l;
        if (f < total) order.d[f] = chunk_order[l];
      }
      barrier();
    }
    return;
  }
  const uint step = gl_NumWorkGroups.x * group;
  if (p.mode == 1u) {
    for (uint q = gl_GlobalInvocationID.x; q < total / 2u; q += step) {
      const uint f = PairPlace(q, p.stride);
      const uint row = f >> PADDED_LOG2;
      const uint x = order.d[f];
      const uint y = order.d[f + p.stride];
      if (Swap(f & place_mask, x, KeyOf(row, x), y, KeyOf(row, y), p.block)) {
        order.d[f] = y;
        order.d[f + p.stride] = x;
      }
    }
    return;
  }
  // The gather: output element o, in the outputs' own order (writes side
  // by side), from its row's sorted place.
  const uint row_elements = ROW_LENGTH * INNER;
  for (uint o = gl_GlobalInvocationID.x; o < OUTPUTS; o += step) {
    const uint outer = o / row_elements;
    const uint within = o % INNER;
    const uint e = (o / INNER) % ROW_LENGTH;
    const uint row = outer * INNER + within;
    // Rows of one element had no pass: nothing numbered them.
    const uint from = PADDED_LOG2 == 0u ? 0u : order.d[(row << PADDED_LOG2) + e];
    const uint source = outer * row_elements + within + from * INNER;
    sorted_keys.d[o] = keys.d[source];
#if PASSENGER
    sorted_passengers.d[o * PASSENGER_WORDS] = passengers.d[source * PASSENGER_WORDS];
    if (PASSENGER_WORDS == 2u) sorted_passengers.d[o * 2u + 1u] = passengers.d[source * 2u + 1u];
#endif
  }
}

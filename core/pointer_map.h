// A hash map keyed by pointers (instructions, computations), stored in one
// flat array: open addressing with linear probing, at most half full.
//
// The compile-time walks (post-order, dead-code marking, topological sort,
// the verifier's positions) each build a map or set with one entry per
// instruction. std::unordered_map allocates a node per entry and chases a
// pointer per lookup: at 200k instructions a third of compile time was the
// allocator and the lookups missed the cache. Here an insert is a store into
// the array and a lookup reads one or two adjacent slots.
//
// The null pointer marks an empty slot, so it is never a key: Find(nullptr)
// finds nothing and Insert(nullptr, ...) stores nothing. Entries are never
// erased (none of the walks needs it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln {

template <typename Value>
class PointerMap {
 public:
  PointerMap() = default;
  explicit PointerMap(size_t expected_size) { Reserve(expected_size); }

  // Room for `expected_size` entries without growing.
  void Reserve(size_t expected_size) {
    size_t capacity = kMinCapacity;
    while (capacity < 2 * expected_size) capacity *= 2;
    if (capacity > slots_.size()) Rehash(capacity);
  }

  // Adds key -> value unless the key is present. Returns the stored value
  // (the new one, or the one already there) and whether it was added; a null
  // key returns {nullptr, false}. The pointer is valid until the next insert.
  std::pair<Value*, bool> Insert(const void* key, Value value) {
    if (key == nullptr) return {nullptr, false};
    if (2 * (size_ + 1) > slots_.size()) Rehash(slots_.empty() ? kMinCapacity : 2 * slots_.size());
    Slot& slot = SlotFor(key);
    if (slot.key == key) return {&slot.value, false};
    slot.key = key;
    slot.value = std::move(value);
    ++size_;
    return {&slot.value, true};
  }

  // The value stored for `key`, or nullptr.
  const Value* Find(const void* key) const {
    if (key == nullptr || slots_.empty()) return nullptr;
    const Slot& slot = const_cast<PointerMap*>(this)->SlotFor(key);
    return slot.key == key ? &slot.value : nullptr;
  }
  Value* Find(const void* key) { return const_cast<Value*>(std::as_const(*this).Find(key)); }

  bool Contains(const void* key) const { return Find(key) != nullptr; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Slot {
    const void* key = nullptr;
    Value value{};
  };
  static constexpr size_t kMinCapacity = 16;

  // Heap pointers share their low bits (alignment) and often their high
  // bits: a multiplicative mix spreads them over the table.
  static size_t Hash(const void* key) {
    uint64_t bits = reinterpret_cast<uintptr_t>(key);
    bits ^= bits >> 33;
    bits *= 0xff51afd7ed558ccdULL;
    bits ^= bits >> 33;
    return static_cast<size_t>(bits);
  }

  // The slot holding `key`, or the empty slot where it would go.
  Slot& SlotFor(const void* key) {
    const size_t mask = slots_.size() - 1;
    for (size_t index = Hash(key) & mask;; index = (index + 1) & mask) {
      Slot& slot = slots_[index];
      if (slot.key == key || slot.key == nullptr) return slot;
    }
  }

  void Rehash(size_t capacity) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(capacity));
    for (Slot& slot : old) {
      if (slot.key != nullptr) SlotFor(slot.key) = std::move(slot);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// A set of pointers, stored the same way.
class PointerSet {
 public:
  PointerSet() = default;
  explicit PointerSet(size_t expected_size) : map_(expected_size) {}
  void Reserve(size_t expected_size) { map_.Reserve(expected_size); }
  // Whether `key` was added (false if present already or null).
  bool Insert(const void* key) { return map_.Insert(key, Present{}).second; }
  bool Contains(const void* key) const { return map_.Contains(key); }
  size_t size() const { return map_.size(); }

 private:
  struct Present {};
  PointerMap<Present> map_;
};

}  // namespace kiln

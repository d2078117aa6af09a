// Values an instruction rarely holds, kept on the heap so that they do not
// widen every instruction.
//
// An Instruction carries the attributes of every opcode, yet one holds the
// fields of its own opcode only. Inline, the dimension numbers of
// convolution, dot, gather and scatter, the window and a constant's literal
// made each instruction 1320 bytes, so a walk over 200k instructions read
// 264 MB and the compile-time passes ran at the speed of cache and TLB misses.
// Boxed, each is one pointer until something sets it.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace kiln {

// A T that reads as T{} until written. Reading through a const Boxed (or the
// conversion to const T&) never allocates; writing through a non-const one
// (`box->field = ...`, `*box`) allocates the value first. Copies are deep.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: `attrs.window = window`
  Boxed(const Boxed& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;

  const T& operator*() const { return value_ ? *value_ : Unset(); }
  const T* operator->() const { return &**this; }
  operator const T&() const { return **this; }  // NOLINT: read where a const T& is wanted
  T& operator*() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }
  T* operator->() { return &**this; }
  // Whether a value was ever written (an unset box reads as T{}).
  bool allocated() const { return value_ != nullptr; }

  friend bool operator==(const Boxed& a, const Boxed& b) { return *a == *b; }

 private:
  static const T& Unset() {
    static const T unset{};
    return unset;
  }
  std::unique_ptr<T> value_;
};

// std::optional<T>'s interface (the part Kiln uses) with the value on the
// heap: one pointer when empty. Copies are deep.
template <typename T>
class BoxedOptional {
 public:
  BoxedOptional() = default;
  BoxedOptional(std::nullopt_t) {}                                           // NOLINT: like std::optional
  BoxedOptional(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: like std::optional
  BoxedOptional(const BoxedOptional& other)
      : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  BoxedOptional(BoxedOptional&&) noexcept = default;
  BoxedOptional& operator=(const BoxedOptional& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    return *this;
  }
  BoxedOptional& operator=(BoxedOptional&&) noexcept = default;
  BoxedOptional& operator=(T value) {
    value_ = std::make_unique<T>(std::move(value));
    return *this;
  }
  BoxedOptional& operator=(std::optional<T> value) {
    value_ = value ? std::make_unique<T>(*std::move(value)) : nullptr;
    return *this;
  }
  BoxedOptional& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return value_.get(); }
  T* operator->() { return value_.get(); }
  void reset() { value_.reset(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }

  friend bool operator==(const BoxedOptional& a, const BoxedOptional& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
  }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace kiln

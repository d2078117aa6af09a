package dev.kiln;

import java.lang.foreign.MemorySegment;

/** Element types as XLA names them ({@code KILN_TYPE_*}). */
public enum ElementType {
  PRED(1),
  S8(2),
  S16(3),
  S32(4),
  S64(5),
  U8(6),
  U16(7),
  U32(8),
  U64(9),
  F16(10),
  BF16(11),
  F32(12),
  F64(13),
  C64(14),
  C128(15),
  TUPLE(16),
  TOKEN(17);

  private final int value;

  ElementType(int value) {
    this.value = value;
  }

  /** The C value ({@code KILN_TYPE_*}). */
  public int value() {
    return value;
  }

  /** The type with C value {@code value}. */
  public static ElementType of(int value) {
    for (ElementType t : values()) {
      if (t.value == value) {
        return t;
      }
    }
    throw new IllegalArgumentException("kiln: unknown element type value " + value);
  }

  /** Bytes per element (0 for tuple and token), as the library reports it. */
  public long byteWidth() {
    try {
      return (long) Native.kiln_element_type_byte_width.invokeExact(value);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The lower-case HLO name ("f32"), as the library reports it. */
  public String hloName() {
    try {
      return Native.string((MemorySegment) Native.kiln_element_type_name.invokeExact(value));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }
}

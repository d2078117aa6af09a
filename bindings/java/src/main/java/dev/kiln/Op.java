package dev.kiln;

/**
 * An op of one {@link Builder}: a cheap value handle, valid only with the builder that made
 * it. Using it with another builder throws a {@link KilnException} with {@code
 * INVALID_ARGUMENT}.
 */
public final class Op {
  private final Builder builder;
  private final long id;

  Op(Builder builder, long id) {
    this.builder = builder;
    this.id = id;
  }

  /** The builder this op belongs to. */
  public Builder builder() {
    return builder;
  }

  /** The library's op number ({@code kiln_op_t}). */
  public long id() {
    return id;
  }

  /** The op's shape (element type and dimensions). */
  public Shape shape() {
    return builder.shape(this);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Op op && op.builder == builder && op.id == id;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(id);
  }

  @Override
  public String toString() {
    return "Op[" + id + "]";
  }
}

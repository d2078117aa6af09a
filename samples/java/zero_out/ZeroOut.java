import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.kiln.Buffer;
import dev.kiln.Builder;
import dev.kiln.Client;
import dev.kiln.Computation;
import dev.kiln.ElementType;
import dev.kiln.Executable;
import dev.kiln.KilnException;
import dev.kiln.Op;
import dev.kiln.Shape;
import dev.kiln.StatusCode;
import dev.kiln.UserOps;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The seed's ZeroOut op ("Adding an op") defined from Java and run: the int32 version,
 * preserve_index with its default and bounds check, the polymorphic T: {float, int32} version
 * and the list version. Java kernels run on the cpu and interpreter backends.
 */
public final class ZeroOut {
  private ZeroOut() {}

  static void zeroOut(UserOps.KernelFrame f) {
    Object index = f.attrs().get("preserve_index");
    int keep = index == null ? 0 : ((Long) index).intValue();
    for (int r = 0; r < f.results().size(); r++) {
      UserOps.Tensor x = f.args().get(r);
      UserOps.Tensor out = f.results().get(r);
      if (x.dims().length != 1) {
        throw new KilnException(StatusCode.INVALID_ARGUMENT, "ZeroOut expects a 1-D vector.");
      }
      if (keep >= x.dims()[0]) {
        throw new KilnException(StatusCode.INVALID_ARGUMENT, "preserve_index out of range: " + keep);
      }
      out.data().fill((byte) 0);
      if (x.type() == ElementType.F32) {
        out.data().setAtIndex(JAVA_FLOAT, keep, x.data().getAtIndex(JAVA_FLOAT, keep));
      } else {
        out.data().setAtIndex(JAVA_INT, keep, x.data().getAtIndex(JAVA_INT, keep));
      }
    }
  }

  static void register() {
    UserOps.register(
        new UserOps.OpDef("ZeroOut", List.of(), List.of("to_zero: int32"), List.of("zeroed: int32"), null));
    UserOps.registerKernel("ZeroOut", "host", ElementType.S32, ZeroOut::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "ZeroOutIndex",
            List.of("preserve_index: int >= 0 = 0"),
            List.of("to_zero: int32"),
            List.of("zeroed: int32"),
            null));
    UserOps.registerKernel("ZeroOutIndex", "host", ElementType.S32, ZeroOut::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "ZeroOutPoly", List.of("T: {float, int32}"), List.of("to_zero: T"), List.of("zeroed: T"), null));
    UserOps.registerKernel("ZeroOutPoly", "host", ElementType.S32, ZeroOut::zeroOut);
    UserOps.registerKernel("ZeroOutPoly", "host", ElementType.F32, ZeroOut::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "ZeroOutList",
            List.of("N: int >= 1", "T: {float, int32}"),
            List.of("to_zero: N * T"),
            List.of("zeroed: N * T"),
            null));
    UserOps.registerKernel("ZeroOutList", "host", null, ZeroOut::zeroOut);
  }

  static void run(Client client, String op, int n, String attrs) {
    try (Builder b = Builder.create(op)) {
      List<Op> params = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        params.add(b.parameter(i, Shape.of(ElementType.S32, 5), "x"));
      }
      try (Computation c = b.build(b.callRegistered(op, params, attrs));
          Executable exe = client.compile(c);
          Buffer x = client.buffer(new int[] {5, 4, 3, 2, 1}, 5)) {
        Buffer[] args = new Buffer[n];
        Arrays.fill(args, x);
        for (Buffer result : exe.execute(args)) {
          System.out.println(op + " " + (attrs == null ? "" : attrs) + ": " + Arrays.toString(result.toIntArray()));
          result.close();
        }
      }
    }
  }

  public static void main(String[] args) {
    register();
    try (Client client = Client.create(args.length > 0 ? args[0] : "cpu")) {
      run(client, "ZeroOut", 1, null);
      run(client, "ZeroOutIndex", 1, null);
      run(client, "ZeroOutIndex", 1, "{preserve_index = 3}");
      run(client, "ZeroOutPoly", 1, null);
      run(client, "ZeroOutList", 2, null);
      try {
        run(client, "ZeroOutIndex", 1, "{preserve_index = 7}");
        throw new IllegalStateException("preserve_index = 7 was not refused");
      } catch (KilnException e) {
        System.out.println("expected error: " + e.code() + ": " + e.getMessage());
      }
    }
  }
}

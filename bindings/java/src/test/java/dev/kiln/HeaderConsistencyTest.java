package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Checks the raw declarations against capi/include/kiln/kiln.h: every exported function has a
 * downcall handle of the matching Java type, and every struct layout lists the header's fields
 * in order.
 */
class HeaderConsistencyTest {
  static String header() throws IOException {
    String text =
        Files.readString(Path.of(System.getProperty("kiln.header", "../../capi/include/kiln/kiln.h")));
    text = text.replaceAll("(?s)/\\*.*?\\*/", "");
    return text.replaceAll("(?m)^\\s*#.*$", "");
  }

  static final Set<String> INT32 =
      Set.of(
          "kiln_element_type_t",
          "kiln_status_code_t",
          "kiln_comparison_direction_t",
          "kiln_comparison_type_t",
          "kiln_padding_t",
          "kiln_precision_t",
          "kiln_rng_algorithm_t",
          "kiln_fft_type_t",
          "int",
          "int32_t",
          "uint32_t");
  static final Set<String> INT64 = Set.of("kiln_op_t", "int64_t", "uint64_t", "size_t");

  static Class<?> javaType(String cType) {
    String t = cType.replace("const ", "").trim();
    if (t.contains("*") || t.endsWith("_fn")) { // pointers and function pointers
      return MemorySegment.class;
    }
    if (INT32.contains(t)) {
      return int.class;
    }
    if (INT64.contains(t)) {
      return long.class;
    }
    return switch (t) {
      case "float" -> float.class;
      case "double" -> double.class;
      case "void" -> void.class;
      default -> throw new AssertionError("unmapped C type " + t);
    };
  }

  @Test
  void everyFunctionHasAMatchingDowncall() throws Exception {
    Matcher m =
        Pattern.compile("KILN_API\\s+([^;]*?)\\b(kiln_\\w+)\\s*\\(([^)]*)\\)\\s*;")
            .matcher(header());
    int functions = 0;
    while (m.find()) {
      functions++;
      String name = m.group(2);
      List<Class<?>> params = new ArrayList<>();
      String args = m.group(3).replaceAll("\\s+", " ").trim();
      if (!args.equals("void")) {
        for (String p : args.split(",")) {
          params.add(javaType(p.trim().replaceAll("\\w+$", "")));
        }
      }
      MethodType want = MethodType.methodType(javaType(m.group(1)), params);
      MethodHandle handle = (MethodHandle) Native.class.getDeclaredField(name).get(null);
      assertEquals(want, handle.type(), name);
    }
    assertTrue(functions > 150, "parsed only " + functions + " functions");
  }

  @Test
  void structLayoutsListTheHeaderFields() throws Exception {
    Map<String, StructLayout> layouts =
        Map.of(
            "kiln_client_options_t", Struct.CLIENT_OPTIONS,
            "kiln_compile_options_t", Struct.COMPILE_OPTIONS,
            "kiln_execute_options_t", Struct.EXECUTE_OPTIONS,
            "kiln_gather_dimension_numbers_t", Struct.GATHER_DIMENSION_NUMBERS,
            "kiln_scatter_dimension_numbers_t", Struct.SCATTER_DIMENSION_NUMBERS,
            "kiln_dot_dimension_numbers_t", Struct.DOT_DIMENSION_NUMBERS,
            "kiln_conv_dimension_numbers_t", Struct.CONV_DIMENSION_NUMBERS);
    String text = header();
    for (var entry : layouts.entrySet()) {
      Matcher m =
          Pattern.compile("typedef struct " + entry.getKey() + " \\{([^}]*)\\}").matcher(text);
      assertTrue(m.find(), entry.getKey());
      List<String> fields = new ArrayList<>();
      for (String decl : m.group(1).split(";")) {
        if (!decl.isBlank()) {
          fields.add(decl.trim().replaceAll(".*?(\\w+)$", "$1"));
        }
      }
      List<String> ours =
          entry.getValue().memberLayouts().stream()
              .filter(layout -> !(layout instanceof PaddingLayout)) // C's implicit padding
              .map(MemoryLayout::name)
              .map(n -> n.orElse("?"))
              .toList();
      assertEquals(fields, ours, entry.getKey());
      assertEquals(0, entry.getValue().byteSize() % 8, entry.getKey() + ": C pads to 8 bytes");
    }
  }
}

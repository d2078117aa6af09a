// HLO text of modules whose entry is one instruction of its parameters,
// for the CUDA tests that plan or run single dots and convolutions.
#ifndef KILN_TESTS_CUDA_SINGLE_INSTRUCTION_MODULES_H_
#define KILN_TESTS_CUDA_SINGLE_INSTRUCTION_MODULES_H_

#include <string>

namespace kiln::testing {

// A module whose entry is one dot of its two parameters.
inline std::string DotModule(const std::string& lhs, const std::string& rhs, const std::string& result,
                             const std::string& dimensions) {
  return "HloModule dot\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
         " parameter(1)\n  ROOT d = " + result + " dot(a, b), " + dimensions + "\n}\n";
}

// A module whose entry is one convolution of its two parameters.
inline std::string ConvolutionModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                                     const std::string& attributes) {
  return "HloModule conv\nENTRY main {\n  x = " + lhs + " parameter(0)\n  w = " + rhs +
         " parameter(1)\n  ROOT c = " + out + " convolution(x, w), " + attributes + "\n}\n";
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_CUDA_SINGLE_INSTRUCTION_MODULES_H_

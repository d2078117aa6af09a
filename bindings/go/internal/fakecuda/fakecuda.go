// Package fakecuda reads what Kiln's fake CUDA driver (tests/cuda/fake_driver,
// loaded through KILN_CUDA_DRIVER) recorded, for the binding's tests: the
// fake's device memory is host memory and its launches run nothing, so a test
// checks that a kernel was given an address by the launch's parameters.
// (cgo is not allowed in _test.go files.)
package fakecuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef int (*last_launch_fn)(char* entry, size_t entry_size, unsigned* grid, unsigned* block,
                              uint64_t* parameters, size_t capacity);

// The parameters of the fake driver's last launch into parameters (at most
// capacity of them); their count, or -1 when path is not the fake driver.
static int fake_last_launch(const char* path, uint64_t* parameters, size_t capacity) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return -1;
  last_launch_fn last_launch = NULL;
  *(void**)&last_launch = dlsym(library, "kiln_fake_cuda_last_launch");
  int count = -1;
  if (last_launch != NULL) {
    char entry[128];
    unsigned grid[3], block[3];
    count = last_launch(entry, sizeof entry, grid, block, parameters, capacity);
  }
  dlclose(library); // the library Kiln loaded stays: dlopen counted one more use
  return count;
}
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

const maxParameters = 64

// LastLaunchParameters returns the parameters of the last kernel launch the
// fake driver named by KILN_CUDA_DRIVER recorded (device pointers among them).
func LastLaunchParameters() ([]uint64, error) {
	path := os.Getenv("KILN_CUDA_DRIVER")
	if path == "" {
		return nil, fmt.Errorf("KILN_CUDA_DRIVER is not set: it must name the fake CUDA driver")
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var parameters [maxParameters]C.uint64_t
	n := int(C.fake_last_launch(cpath, &parameters[0], maxParameters))
	if n < 0 {
		return nil, fmt.Errorf("KILN_CUDA_DRIVER=%s is not the fake CUDA driver (no kiln_fake_cuda_last_launch)", path)
	}
	out := make([]uint64, min(n, maxParameters))
	for i := range out {
		out[i] = uint64(parameters[i])
	}
	return out, nil
}

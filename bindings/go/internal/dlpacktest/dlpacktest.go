// Package dlpacktest makes foreign DLPack tensors for the binding's tests: a
// DLManagedTensorVersioned and a legacy DLManagedTensor over f32 data in C
// memory, as a framework would hand them out, each with a C deleter that
// counts its calls; and tensors over another device's memory that the test
// owns (At). (cgo is not allowed in _test.go files.)
package dlpacktest

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// DLPack 1.x layout (see ../../dlpack.go).
typedef struct { int32_t device_type; int32_t device_id; } dl_device;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } dl_dtype;
typedef struct {
  void* data;
  dl_device device;
  int32_t ndim;
  dl_dtype dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} dl_tensor;
typedef struct dl_legacy {
  dl_tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct dl_legacy* self);
} dl_legacy;
typedef struct { uint32_t major; uint32_t minor; } dl_version;
typedef struct dl_versioned {
  dl_version version;
  void* manager_ctx;
  void (*deleter)(struct dl_versioned* self);
  uint64_t flags;
  dl_tensor dl_tensor;
} dl_versioned;

typedef struct {
  int64_t shape[8];
  int64_t strides[8];
  int deletions; // atomic: the library may delete on another thread
  dl_versioned versioned;
  dl_legacy legacy;
  unsigned char* storage; // 64-byte aligned; the data starts at storage + offset
} foreign;

static void delete_versioned(dl_versioned* self) { __atomic_add_fetch(&((foreign*)self->manager_ctx)->deletions, 1, __ATOMIC_SEQ_CST); }
static void delete_legacy(dl_legacy* self) { __atomic_add_fetch(&((foreign*)self->manager_ctx)->deletions, 1, __ATOMIC_SEQ_CST); }

static int foreign_deletions(foreign* f) { return __atomic_load_n(&f->deletions, __ATOMIC_SEQ_CST); }

// An f32 tensor of the given dims (rank <= 8) at `address` on (device_type,
// device_id), with row-major strides; the memory is the caller's.
static foreign* foreign_at(uint64_t address, int32_t device_type, int32_t device_id, const int64_t* dims, int rank) {
  foreign* f = calloc(1, sizeof *f);
  if (f == NULL) return NULL;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    f->shape[i] = dims[i];
    f->strides[i] = stride;
    stride *= dims[i];
  }
  dl_tensor t;
  memset(&t, 0, sizeof t);
  t.data = (void*)(uintptr_t)address;
  t.device.device_type = device_type;
  t.device.device_id = device_id;
  t.ndim = rank;
  t.dtype.code = 2; // kDLFloat
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = f->shape;
  t.strides = f->strides;
  f->versioned.version.major = 1;
  f->versioned.version.minor = 1;
  f->versioned.manager_ctx = f;
  f->versioned.deleter = delete_versioned;
  f->versioned.dl_tensor = t;
  f->legacy.manager_ctx = f;
  f->legacy.deleter = delete_legacy;
  f->legacy.dl_tensor = t;
  return f;
}

// A host (kDLCPU) f32 tensor of the given dims over a copy of `values`
// placed `offset` bytes past a 64-byte boundary, which it owns.
static foreign* foreign_new(const float* values, size_t count, const int64_t* dims, int rank, size_t offset) {
  unsigned char* storage = aligned_alloc(64, (count * sizeof(float) + offset + 64) / 64 * 64);
  if (storage == NULL) return NULL;
  memcpy(storage + offset, values, count * sizeof(float));
  const int32_t cpu = 1; // kDLCPU
  foreign* f = foreign_at((uint64_t)(uintptr_t)(storage + offset), cpu, 0, dims, rank);
  if (f == NULL) { free(storage); return NULL; }
  f->storage = storage;
  return f;
}

static void foreign_free(foreign* f) {
  free(f->storage);
  free(f);
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Foreign is a foreign f32 tensor in C memory, offered both as a
// DLManagedTensorVersioned and as a legacy DLManagedTensor; both deleters
// add to one counter. Free it once no buffer reads it any longer.
type Foreign struct {
	f *C.foreign
}

// New makes a Foreign over a copy of values with the given dims (rank <= 8),
// offset bytes past a 64-byte boundary (0, or 4 for an f32 that is aligned
// to its element only, or 1 for misaligned data), with row-major strides.
func New(values []float32, offset int, dims ...int64) *Foreign {
	if len(dims) > 8 || len(values) == 0 {
		panic("dlpacktest.New: rank above 8 or no values")
	}
	f := C.foreign_new((*C.float)(unsafe.Pointer(&values[0])), C.size_t(len(values)),
		(*C.int64_t)(unsafe.Pointer(&dims[0])), C.int(len(dims)), C.size_t(offset))
	runtime.KeepAlive(values)
	runtime.KeepAlive(dims)
	if f == nil {
		panic("dlpacktest.New: out of memory")
	}
	return &Foreign{f: f}
}

// At makes a Foreign f32 tensor with the given dims (rank <= 8, row-major
// strides) over memory the caller owns at address on another device (e.g.
// DLPack's kDLCUDA, 2, and a GPU ordinal), as a GPU framework hands one out.
func At(address uint64, deviceType, deviceID int32, dims ...int64) *Foreign {
	if len(dims) == 0 || len(dims) > 8 {
		panic("dlpacktest.At: rank 0 or above 8")
	}
	f := C.foreign_at(C.uint64_t(address), C.int32_t(deviceType), C.int32_t(deviceID),
		(*C.int64_t)(unsafe.Pointer(&dims[0])), C.int(len(dims)))
	runtime.KeepAlive(dims)
	if f == nil {
		panic("dlpacktest.At: out of memory")
	}
	return &Foreign{f: f}
}

// Versioned is the DLManagedTensorVersioned.
func (x *Foreign) Versioned() unsafe.Pointer { return unsafe.Pointer(&x.f.versioned) }

// Legacy is the legacy DLManagedTensor.
func (x *Foreign) Legacy() unsafe.Pointer { return unsafe.Pointer(&x.f.legacy) }

// Data is the address of the first element.
func (x *Foreign) Data() unsafe.Pointer { return x.f.versioned.dl_tensor.data }

// Deletions is how many times either deleter has run.
func (x *Foreign) Deletions() int { return int(C.foreign_deletions(x.f)) }

// SetNoStrides gives both tensors NULL strides (row-major).
func (x *Foreign) SetNoStrides() {
	x.f.versioned.dl_tensor.strides = nil
	x.f.legacy.dl_tensor.strides = nil
}

// SetStrides sets both tensors' strides (in elements).
func (x *Foreign) SetStrides(strides ...int64) {
	for i, s := range strides {
		x.f.strides[i] = C.int64_t(s)
	}
}

// SetDeviceType sets both tensors' device type (DLDeviceType).
func (x *Foreign) SetDeviceType(t int32) {
	x.f.versioned.dl_tensor.device.device_type = C.int32_t(t)
	x.f.legacy.dl_tensor.device.device_type = C.int32_t(t)
}

// SetVersion sets the versioned tensor's DLPack version.
func (x *Foreign) SetVersion(major, minor uint32) {
	x.f.versioned.version.major = C.uint32_t(major)
	x.f.versioned.version.minor = C.uint32_t(minor)
}

// SetLanes sets both tensors' dtype lanes.
func (x *Foreign) SetLanes(lanes uint16) {
	x.f.versioned.dl_tensor.dtype.lanes = C.uint16_t(lanes)
	x.f.legacy.dl_tensor.dtype.lanes = C.uint16_t(lanes)
}

// SetDeviceID sets both tensors' device id (the GPU's ordinal for kDLCUDA).
func (x *Foreign) SetDeviceID(id int32) {
	x.f.versioned.dl_tensor.device.device_id = C.int32_t(id)
	x.f.legacy.dl_tensor.device.device_id = C.int32_t(id)
}

// SetByteOffset moves both tensors' data pointer offset bytes back and sets
// their byte_offset to offset: the first element stays where it was.
func (x *Foreign) SetByteOffset(offset uint64) {
	for _, t := range []*C.dl_tensor{&x.f.versioned.dl_tensor, &x.f.legacy.dl_tensor} {
		t.data = unsafe.Add(t.data, -int(offset))
		t.byte_offset = C.uint64_t(offset)
	}
}

// Free frees the C memory.
func (x *Foreign) Free() {
	if x.f != nil {
		C.foreign_free(x.f)
		x.f = nil
	}
}

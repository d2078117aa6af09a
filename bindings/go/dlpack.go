package kiln

/*
#include <stdint.h>
#include <kiln/kiln.h>

// DLPack's structs as DLPack 1.x lays them out (kiln.h only names the two
// managed tensors; declaring them here spares users a dlpack.h, and Debian's
// is 0.6, without the versioned struct).
typedef struct {
  int32_t device_type;
  int32_t device_id;
} kiln_go_dl_device;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} kiln_go_dl_dtype;
typedef struct {
  void* data;
  kiln_go_dl_device device;
  int32_t ndim;
  kiln_go_dl_dtype dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} kiln_go_dl_tensor;
struct DLManagedTensor {
  kiln_go_dl_tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
};
typedef struct {
  uint32_t major;
  uint32_t minor;
} kiln_go_dl_version;
struct DLManagedTensorVersioned {
  kiln_go_dl_version version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  kiln_go_dl_tensor dl_tensor;
};

// Go cannot call C function pointers.
static void kiln_go_dl_delete_versioned(struct DLManagedTensorVersioned* t) {
  if (t != NULL && t->deleter != NULL) t->deleter(t);
}
static void kiln_go_dl_delete(struct DLManagedTensor* t) {
  if (t != NULL && t->deleter != NULL) t->deleter(t);
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// DLPack flag bits of DLManagedTensorVersioned.flags (DLPack 1.x).
const (
	DLPackFlagReadOnly   uint64 = 1 << 0 // DLPACK_FLAG_BITMASK_READ_ONLY: never write through the tensor
	DLPackFlagIsCopied   uint64 = 1 << 1 // DLPACK_FLAG_BITMASK_IS_COPIED: the data is a copy
	DLPackDeviceCPU      int32  = 1      // kDLCPU
	DLPackDeviceCUDA     int32  = 2      // kDLCUDA
	DLPackDeviceCUDAHost int32  = 3      // kDLCUDAHost
)

// DLPack dtype codes (DLDataTypeCode).
const (
	DLPackInt     uint8 = 0
	DLPackUInt    uint8 = 1
	DLPackFloat   uint8 = 2
	DLPackBfloat  uint8 = 4
	DLPackComplex uint8 = 5
	DLPackBool    uint8 = 6
)

// DLPackTensor is a Go copy of the description of a DLPack tensor (its
// DLTensor and, for a versioned one, version and flags), read by
// ReadDLPackVersioned or ReadDLPack. Data points into the tensor's memory,
// which lives until the tensor's deleter is called.
type DLPackTensor struct {
	Data       unsafe.Pointer // DLTensor.data; the array starts ByteOffset bytes later (see Address)
	ByteOffset uint64
	DeviceType int32 // DLPackDeviceCPU, ...
	DeviceID   int32
	Code       uint8 // DLPackFloat, ...
	Bits       uint8
	Lanes      uint16
	Shape      []int64
	Strides    []int64 // in elements; nil when the tensor has none (row-major)

	// Versioned tensors only (zero for legacy ones).
	VersionMajor, VersionMinor uint32
	Flags                      uint64
}

// Address is the address of the tensor's first element: Data + ByteOffset.
func (t DLPackTensor) Address() unsafe.Pointer {
	if t.Data == nil {
		return nil
	}
	return unsafe.Add(t.Data, t.ByteOffset)
}

func readDLTensor(t *C.kiln_go_dl_tensor) DLPackTensor {
	out := DLPackTensor{
		Data:       t.data,
		ByteOffset: uint64(t.byte_offset),
		DeviceType: int32(t.device.device_type),
		DeviceID:   int32(t.device.device_id),
		Code:       uint8(t.dtype.code),
		Bits:       uint8(t.dtype.bits),
		Lanes:      uint16(t.dtype.lanes),
	}
	if n := int(t.ndim); n > 0 {
		if t.shape != nil {
			out.Shape = make([]int64, n)
			copy(out.Shape, unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), n))
		}
		if t.strides != nil {
			out.Strides = make([]int64, n)
			copy(out.Strides, unsafe.Slice((*int64)(unsafe.Pointer(t.strides)), n))
		}
	} else {
		out.Shape = []int64{}
	}
	return out
}

// ReadDLPackVersioned describes the DLManagedTensorVersioned at p (zero for nil).
func ReadDLPackVersioned(p unsafe.Pointer) DLPackTensor {
	if p == nil {
		return DLPackTensor{}
	}
	m := (*C.struct_DLManagedTensorVersioned)(p)
	out := readDLTensor(&m.dl_tensor)
	out.VersionMajor, out.VersionMinor = uint32(m.version.major), uint32(m.version.minor)
	out.Flags = uint64(m.flags)
	return out
}

// ReadDLPack describes the legacy (pre-1.0) DLManagedTensor at p (zero for nil).
func ReadDLPack(p unsafe.Pointer) DLPackTensor {
	if p == nil {
		return DLPackTensor{}
	}
	return readDLTensor(&(*C.struct_DLManagedTensor)(p).dl_tensor)
}

// DeleteDLPackVersioned calls the deleter of the DLManagedTensorVersioned at p
// (nothing when p or its deleter is nil). Call it exactly once per tensor the
// consumer owns; p must not be used afterwards.
func DeleteDLPackVersioned(p unsafe.Pointer) {
	C.kiln_go_dl_delete_versioned((*C.struct_DLManagedTensorVersioned)(p))
}

// DeleteDLPack calls the deleter of the legacy DLManagedTensor at p, as
// DeleteDLPackVersioned.
func DeleteDLPack(p unsafe.Pointer) { C.kiln_go_dl_delete((*C.struct_DLManagedTensor)(p)) }

// ToDLPackVersioned exports the buffer (once it is ready) as a DLPack 1.x
// tensor and returns a pointer to its DLManagedTensorVersioned, in C memory.
// On the host backends ("cpu", "interpreter") it points at the buffer's own
// memory (DLPackDeviceCPU 0); on "cuda" at the buffer's own GPU memory, no
// copy (DLPackDeviceCUDA, DeviceID the GPU's CUDA ordinal, the data complete
// on the GPU: see Buffer.CUDAMemory); elsewhere at a host copy
// (DLPackFlagIsCopied). DLPackFlagReadOnly is
// always set: never write through it. The tensor stays valid after the buffer
// and its client are closed, until its deleter is called: the caller calls it
// exactly once (DeleteDLPackVersioned), or hands the tensor to a consumer
// that does.
func (b *Buffer) ToDLPackVersioned() (unsafe.Pointer, error) {
	var t *C.struct_DLManagedTensorVersioned
	err := statusError(C.kiln_buffer_to_dlpack_versioned(b.handle(), &t))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return unsafe.Pointer(t), nil
}

// ToDLPack is ToDLPackVersioned for consumers of the legacy (pre-1.0)
// DLManagedTensor, which has no flags; delete it with DeleteDLPack.
func (b *Buffer) ToDLPack() (unsafe.Pointer, error) {
	var t *C.struct_DLManagedTensor
	err := statusError(C.kiln_buffer_to_dlpack(b.handle(), &t))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return unsafe.Pointer(t), nil
}

// BufferFromDLPackVersioned imports the DLManagedTensorVersioned at p (C
// memory, DLPack 1.x) as a buffer on d, taking the tensor over: the library
// calls its deleter exactly once, on success and on failure alike (when the
// buffer and every run reading it are gone, or before returning when the
// data was copied or refused). Host tensors (kDLCPU, kDLCUDAHost) that are
// row-major are read in place on the "cpu" backend where AliasHost would
// read them in place (data aligned to its element type, not PRED), else
// copied. GPU memory (kDLCUDA) is read in place, as AliasCUDAMemory reads
// it, on d of a "cuda" client whose CUDA ordinal is the tensor's DeviceID;
// its producer must have finished writing it, or queued the writes on the
// legacy default stream, which this call synchronises. The tensor must not
// change while the buffer lives. Refusals (another major version or device
// type, a kDLCUDA tensor given to another backend's device or another GPU's,
// a dtype Kiln lacks, lanes != 1, strides that are not row-major, data not
// aligned to its element type on a GPU, nil p) are InvalidArgument naming the
// call.
func (d *Device) BufferFromDLPackVersioned(p unsafe.Pointer) (*Buffer, error) {
	var h *C.kiln_buffer_t
	err := statusError(C.kiln_device_buffer_from_dlpack_versioned(d.handle(),
		(*C.struct_DLManagedTensorVersioned)(p), &h))
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return newBuffer(h, d.client), nil
}

// BufferFromDLPack is BufferFromDLPackVersioned for a legacy (pre-1.0)
// DLManagedTensor.
func (d *Device) BufferFromDLPack(p unsafe.Pointer) (*Buffer, error) {
	var h *C.kiln_buffer_t
	err := statusError(C.kiln_device_buffer_from_dlpack(d.handle(), (*C.struct_DLManagedTensor)(p), &h))
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return newBuffer(h, d.client), nil
}

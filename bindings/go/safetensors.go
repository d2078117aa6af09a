package kiln

/*
#include <stdlib.h>
#include <kiln/kiln.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"unsafe"
)

// SafetensorsFile is a safetensors file (Hugging Face's format for weights)
// opened for reading: the library reads and checks its header once, then
// reads tensors by name. Its methods may be called from several goroutines
// (a mutex serialises them, as the library requires); Close must not run
// concurrently with them.
type SafetensorsFile struct {
	mu      sync.Mutex
	h       *C.kiln_safetensors_t
	cleanup runtime.Cleanup
}

// OpenSafetensors opens path and checks its header. NotFound when it cannot
// be opened; InvalidArgument for a malformed header (not a JSON object, an
// unknown dtype, data_offsets that do not match the shape, overlap, leave
// holes or miss the end of the file, a name given twice); DataLoss for a
// truncated file. The caller closes the file.
func OpenSafetensors(path string) (*SafetensorsFile, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var h *C.kiln_safetensors_t
	if err := statusError(C.kiln_safetensors_open(cpath, &h)); err != nil {
		return nil, err
	}
	f := &SafetensorsFile{h: h}
	f.cleanup = runtime.AddCleanup(f, func(h *C.kiln_safetensors_t) { C.kiln_safetensors_destroy(h) }, h)
	return f, nil
}

// Close frees the file. It is idempotent and returns nil.
func (f *SafetensorsFile) Close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.h == nil {
		return nil
	}
	f.cleanup.Stop()
	C.kiln_safetensors_destroy(f.h)
	f.h = nil
	return nil
}

// lock locks the file and returns its handle (nil once closed: the library
// then reports InvalidArgument).
func (f *SafetensorsFile) lock() *C.kiln_safetensors_t {
	f.mu.Lock()
	return f.h
}

// Names returns the names of the file's tensors in the order of their data.
func (f *SafetensorsFile) Names() ([]string, error) {
	h := f.lock()
	defer f.mu.Unlock()
	var n C.size_t
	if err := statusError(C.kiln_safetensors_tensor_count(h, &n)); err != nil {
		return nil, err
	}
	names := make([]string, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var name *C.char
		if err := statusError(C.kiln_safetensors_tensor_name(h, i, &name)); err != nil {
			return nil, err
		}
		names = append(names, C.GoString(name))
	}
	return names, nil
}

// Metadata returns the value of the "__metadata__" entry key; NotFound when
// the file has none by that name.
func (f *SafetensorsFile) Metadata(key string) (string, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	h := f.lock()
	defer f.mu.Unlock()
	var value *C.char
	if err := statusError(C.kiln_safetensors_metadata(h, ckey, &value)); err != nil {
		return "", err
	}
	return C.GoString(value), nil
}

// Read reads tensor name into a new buffer on device d. NotFound (listing
// the file's tensors) for an unknown name; ResourceExhausted for a tensor
// over the library's file-array limit; DataLoss when the file changed under
// it. The caller closes the buffer.
func (f *SafetensorsFile) Read(name string, d *Device) (*Buffer, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	h := f.lock()
	defer f.mu.Unlock()
	var b *C.kiln_buffer_t
	err := statusError(C.kiln_safetensors_read(h, d.handle(), cname, &b))
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return newBuffer(b, d.client), nil
}

// SaveSafetensors writes buffers (waiting until they are ready) to path as a
// safetensors file: buffers[i] under names[i] (unique, not "__metadata__"),
// in that order, with metadata as its "__metadata__" (nil for none).
// InvalidArgument when the lengths differ, for a buffer whose element type
// the format lacks (C128) or a name given twice; NotFound when the file
// cannot be created.
func SaveSafetensors(path string, names []string, buffers []*Buffer, metadata map[string]string) error {
	if len(names) != len(buffers) {
		return &Error{Code: InvalidArgument, Message: fmt.Sprintf(
			"SaveSafetensors: %d names for %d buffers", len(names), len(buffers))}
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	// Arrays of C pointers in Go memory (+1: never pass a nil array); the
	// strings themselves are C copies.
	cnames := make([]*C.char, len(names)+1)
	cbuffers := make([]*C.kiln_buffer_t, len(buffers)+1)
	for i, name := range names {
		cnames[i] = C.CString(name)
		defer C.free(unsafe.Pointer(cnames[i]))
		cbuffers[i] = buffers[i].handle()
	}
	// Sorted keys: the same map always gives the same call.
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ckeys := make([]*C.char, len(keys)+1)
	cvalues := make([]*C.char, len(keys)+1)
	for i, k := range keys {
		ckeys[i] = C.CString(k)
		defer C.free(unsafe.Pointer(ckeys[i]))
		cvalues[i] = C.CString(metadata[k])
		defer C.free(unsafe.Pointer(cvalues[i]))
	}
	err := statusError(C.kiln_safetensors_write_file(cpath, &cnames[0], &cbuffers[0], size(len(buffers)),
		&ckeys[0], &cvalues[0], size(len(keys))))
	runtime.KeepAlive(buffers)
	return err
}

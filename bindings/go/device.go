package kiln

/*
#include <kiln/kiln.h>
*/
import "C"

import (
	"fmt"
	"runtime"
)

// Device is a device of a client: where buffers live and executables run. The
// library owns device handles; a *Device keeps its client's native object
// alive while it is reachable (released by a cleanup: there is no Close), so a
// Device stays usable after Client.Close. Devices are safe for concurrent use.
type Device struct {
	h      *C.kiln_device_t
	client *clientRef
}

func newDevice(h *C.kiln_device_t, client *clientRef) *Device {
	client.acquire()
	d := &Device{h: h, client: client}
	runtime.AddCleanup(d, (*clientRef).release, client)
	return d
}

func (d *Device) handle() *C.kiln_device_t {
	if d == nil {
		return nil
	}
	return d.h
}

// Device returns device index (< DeviceCount, else OutOfRange) of the client.
func (c *Client) Device(index int) (*Device, error) {
	if index < 0 {
		return nil, &Error{Code: OutOfRange, Message: fmt.Sprintf("device index %d is negative", index)}
	}
	var h *C.kiln_device_t
	err := statusError(C.kiln_client_device(c.handle(), size(index), &h))
	runtime.KeepAlive(c)
	if err != nil {
		return nil, err
	}
	return newDevice(h, c.ref), nil
}

// Devices returns the client's devices in order (Devices()[i].Index() == i).
func (c *Client) Devices() ([]*Device, error) {
	n, err := c.DeviceCount()
	if err != nil {
		return nil, err
	}
	devices := make([]*Device, n)
	for i := range devices {
		if devices[i], err = c.Device(i); err != nil {
			return nil, err
		}
	}
	return devices, nil
}

// Index returns the device's position in its client's list.
func (d *Device) Index() (int, error) {
	var i C.size_t
	err := statusError(C.kiln_device_index(d.handle(), &i))
	runtime.KeepAlive(d)
	return int(i), err
}

// Description returns the device's description, as Client.DeviceDescription
// gives it.
func (d *Device) Description() (string, error) {
	var s *C.char
	err := statusError(C.kiln_device_description(d.handle(), &s))
	desc := C.GoString(s)
	runtime.KeepAlive(d)
	return desc, err
}

// Equal reports whether d and other are the same device (of the same client).
func (d *Device) Equal(other *Device) bool { return d.handle() == other.handle() }

// String returns the description, or the error getting it.
func (d *Device) String() string {
	s, err := d.Description()
	if err != nil {
		return err.Error()
	}
	return s
}

// BufferFromBytes is Client.BufferFromBytes on device d.
func (d *Device) BufferFromBytes(shape Shape, data []byte, minorToMajor []int64) (*Buffer, error) {
	if minorToMajor != nil && len(minorToMajor) != len(shape.Dims) {
		return nil, &Error{Code: InvalidArgument, Message: fmt.Sprintf(
			"buffer from host: minor_to_major has %d entries for rank %d", len(minorToMajor), len(shape.Dims))}
	}
	var h *C.kiln_buffer_t
	err := statusError(C.kiln_device_buffer_from_host(d.handle(), C.kiln_element_type_t(shape.Type),
		i64(shape.Dims), size(len(shape.Dims)), i64(minorToMajor), bytesPtr(data), size(len(data)), &h))
	runtime.KeepAlive(data)
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return newBuffer(h, d.client), nil
}

// NewBufferOn copies data (row-major) into a new buffer of element type
// TypeOf[T] and dimensions dims on device d.
func NewBufferOn[T Element](d *Device, data []T, dims ...int64) (*Buffer, error) {
	b, err := d.BufferFromBytes(NewShape(TypeOf[T](), dims...), sliceBytes(data), nil)
	runtime.KeepAlive(data)
	return b, err
}

// Device returns the device the buffer lives on.
func (b *Buffer) Device() (*Device, error) {
	var h *C.kiln_device_t
	err := statusError(C.kiln_buffer_device(b.handle(), &h))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return newDevice(h, b.client), nil
}

// CopyToDevice copies the buffer (once it is ready) to a new buffer on d, a
// device of the same client (else InvalidArgument). (CopyTo copies to host
// memory.)
func (b *Buffer) CopyToDevice(d *Device) (*Buffer, error) {
	var h *C.kiln_buffer_t
	err := statusError(C.kiln_buffer_copy_to_device(b.handle(), d.handle(), &h))
	runtime.KeepAlive(b)
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return newBuffer(h, b.client), nil
}

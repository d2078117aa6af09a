package kiln

// The Go functions the library calls back. A file with //export may only
// declare in its preamble; the C trampolines that pass them to the library are
// in event.go, hostmem.go and cuda_memory.go.

/*
#include <stdint.h>
#include <kiln/kiln.h>
*/
import "C"

import "runtime/cgo"

// kilnGoEventReady is the kiln_event_callback_fn of Event.Done: status is
// borrowed (NULL on success), h a cgo.Handle of the *eventState to complete.
//
//export kilnGoEventReady
func kilnGoEventReady(status *C.kiln_status_t, h C.uintptr_t) {
	handle := cgo.Handle(h)
	state := handle.Value().(*eventState)
	handle.Delete()
	state.complete(borrowedStatusError(status))
}

// kilnGoHostRelease is the kiln_host_release_fn of Device.AliasHost: h is a
// cgo.Handle of the *HostMemory the library no longer reads.
//
//export kilnGoHostRelease
func kilnGoHostRelease(h C.uintptr_t) {
	handle := cgo.Handle(h)
	m := handle.Value().(*HostMemory)
	handle.Delete()
	m.release()
}

// kilnGoCUDARelease is the kiln_host_release_fn of Device.AliasCUDAMemory: h
// is a cgo.Handle of the caller's release func, run once.
//
//export kilnGoCUDARelease
func kilnGoCUDARelease(h C.uintptr_t) {
	handle := cgo.Handle(h)
	release := handle.Value().(func())
	handle.Delete()
	release()
}

// kilnGoOpKernel is the kiln_op_kernel_fn of RegisterKernel: the frame's
// user data is a cgo.Handle of the KernelFunc.
//
//export kilnGoOpKernel
func kilnGoOpKernel(frame *C.kiln_op_call_frame_t) *C.kiln_status_t {
	fn := cgo.Handle(uintptr(frame.user_data)).Value().(KernelFunc)
	return kernelStatus(fn(&KernelFrame{frame: frame}))
}

// kilnGoOpRelease frees the handle of a KernelFunc whose registration failed.
//
//export kilnGoOpRelease
func kilnGoOpRelease(h C.uintptr_t) { cgo.Handle(h).Delete() }

// kilnGoOpGrad is the kiln_op_grad_fn of an OpDef with Grad: h is the op's
// user data, a cgo.Handle of its opCallbacks.
//
//export kilnGoOpGrad
func kilnGoOpGrad(builder *C.kiln_builder_t, operands *C.kiln_op_t, numOperands C.size_t, outputs *C.kiln_op_t,
	outputGrads *C.kiln_op_t, numOutputs C.size_t, attrs *C.kiln_op_attr_t, numAttrs C.size_t,
	operandGrads *C.kiln_op_t, h C.uintptr_t) *C.kiln_status_t {
	fn := cgo.Handle(h).Value().(*opCallbacks).grad
	return runGrad(fn, builder, operands, int(numOperands), outputs, outputGrads, int(numOutputs), attrs,
		int(numAttrs), operandGrads)
}

// kilnGoOpShape is the kiln_op_shape_fn of an OpDef with Shape: the frame's
// user data is the op's, a cgo.Handle of its opCallbacks.
//
//export kilnGoOpShape
func kilnGoOpShape(frame *C.kiln_op_call_frame_t) *C.kiln_status_t {
	return runShape(cgo.Handle(uintptr(frame.user_data)).Value().(*opCallbacks).shape, frame)
}

package kiln_test

import (
	"slices"
	"testing"
	"unsafe"

	"kiln.dev/kiln"
	"kiln.dev/kiln/internal/dlpacktest"
)

var sixValues = []float32{0, 10, 20, 30, 40, 50}

func cpuDevice(t *testing.T) (*kiln.Client, *kiln.Device) {
	t.Helper()
	c := must(kiln.NewClient(kiln.WithBackend("cpu")))
	t.Cleanup(func() { c.Close() })
	return c, must(c.Device(0))
}

// tensorF32 reads n f32 values at the tensor's address.
func tensorF32(tensor kiln.DLPackTensor, n int) []float32 {
	return slices.Clone(unsafe.Slice((*float32)(tensor.Address()), n))
}

func checkDeletions(t *testing.T, f *dlpacktest.Foreign, want int, what string) {
	t.Helper()
	if got := f.Deletions(); got != want {
		t.Fatalf("%s: deleter ran %d times, want %d", what, got, want)
	}
}

// Export on cpu hands out the buffer's own memory (the aliased host memory
// itself), read-only and not copied, and outlives the buffer and the client.
func TestDLPackExportIsTheBuffersMemory(t *testing.T) {
	c := must(kiln.NewClient(kiln.WithBackend("cpu")))
	d := must(c.Device(0))
	m := must(kiln.NewHostMemory(24))
	copy(kiln.HostSlice[float32](m), sixValues)
	host := unsafe.Pointer(&m.Bytes()[0])
	b := must(d.AliasHost(kiln.NewShape(kiln.F32, 2, 3), m))
	if !must(b.IsHostAlias()) {
		t.Fatal("AliasHost copied on cpu")
	}
	vp := must(b.ToDLPackVersioned())
	lp := must(b.ToDLPack())
	closeAll(t, m, b, c) // the tensors keep the memory

	v := kiln.ReadDLPackVersioned(vp)
	if v.Address() != host {
		t.Fatalf("versioned export at %p, the buffer's memory is at %p", v.Address(), host)
	}
	if v.Flags&kiln.DLPackFlagReadOnly == 0 || v.Flags&kiln.DLPackFlagIsCopied != 0 {
		t.Fatalf("flags %#x: want READ_ONLY, not IS_COPIED", v.Flags)
	}
	if v.VersionMajor != 1 {
		t.Fatalf("DLPack version %d.%d", v.VersionMajor, v.VersionMinor)
	}
	if v.DeviceType != kiln.DLPackDeviceCPU || v.DeviceID != 0 || v.Code != kiln.DLPackFloat || v.Bits != 32 ||
		v.Lanes != 1 || !slices.Equal(v.Shape, []int64{2, 3}) || !slices.Equal(v.Strides, []int64{3, 1}) ||
		v.ByteOffset != 0 {
		t.Fatalf("versioned tensor %+v", v)
	}
	l := kiln.ReadDLPack(lp)
	if l.Address() != host || !slices.Equal(l.Shape, []int64{2, 3}) || l.Flags != 0 {
		t.Fatalf("legacy tensor %+v, the buffer's memory is at %p", l, host)
	}
	if got := tensorF32(v, 6); !slices.Equal(got, sixValues) {
		t.Fatalf("tensor holds %v after the buffer and client closed", got)
	}
	kiln.DeleteDLPackVersioned(vp)
	if got := tensorF32(l, 6); !slices.Equal(got, sixValues) {
		t.Fatalf("legacy tensor holds %v after the versioned one was deleted", got)
	}
	kiln.DeleteDLPack(lp)
}

// Every backend exports: the host backends their own memory, cuda its GPU
// memory, the others a flagged copy.
func TestDLPackExportEveryBackend(t *testing.T) {
	for _, backend := range must(kiln.Backends()) {
		t.Run(backend, func(t *testing.T) {
			c, err := kiln.NewClient(kiln.WithBackend(backend))
			if err != nil {
				t.Skipf("backend %s cannot run here: %v", backend, err)
			}
			b := must(kiln.NewBuffer(c, sixValues, 3, 2))
			vp := must(b.ToDLPackVersioned())
			lp := must(b.ToDLPack())
			closeAll(t, b, c)
			v, l := kiln.ReadDLPackVersioned(vp), kiln.ReadDLPack(lp)
			host := backend == "cpu" || backend == "interpreter"
			// cpu and interpreter export their own memory, cuda its own GPU
			// memory (kDLCUDA: not readable here; see cuda_memory_test.go),
			// the others a host copy.
			inPlace := host || backend == "cuda"
			if copied := v.Flags&kiln.DLPackFlagIsCopied != 0; copied == inPlace || v.Flags&kiln.DLPackFlagReadOnly == 0 {
				t.Fatalf("flags %#x on %s", v.Flags, backend)
			}
			if backend == "cuda" {
				if v.DeviceType != kiln.DLPackDeviceCUDA || l.DeviceType != kiln.DLPackDeviceCUDA {
					t.Fatalf("cuda exported to DLPack devices %d and %d", v.DeviceType, l.DeviceType)
				}
				kiln.DeleteDLPackVersioned(vp)
				kiln.DeleteDLPack(lp)
				return
			}
			if host && v.Address() != l.Address() {
				t.Fatalf("two exports of one host buffer at %p and %p", v.Address(), l.Address())
			}
			if !slices.Equal(tensorF32(v, 6), sixValues) || !slices.Equal(tensorF32(l, 6), sixValues) ||
				!slices.Equal(v.Shape, []int64{3, 2}) {
				t.Fatalf("exported %v / %v, shape %v", tensorF32(v, 6), tensorF32(l, 6), v.Shape)
			}
			kiln.DeleteDLPackVersioned(vp)
			kiln.DeleteDLPack(lp)
		})
	}
}

// A foreign tensor is read in place on cpu (a round trip gives its own
// pointer) and deleted exactly once, after the last user of its memory.
func TestDLPackImportZeroCopy(t *testing.T) {
	c, d := cpuDevice(t)
	exe := compileAddOne(t, c)
	f := dlpacktest.New(sixValues[:4], 0, 4)
	defer f.Free()
	b := must(d.BufferFromDLPackVersioned(f.Versioned()))
	if !must(b.IsHostAlias()) {
		t.Fatal("the imported tensor was copied")
	}
	checkDeletions(t, f, 0, "after import")
	checkF32(t, b, sixValues[:4], "imported buffer")
	back := must(b.ToDLPackVersioned())
	if got := kiln.ReadDLPackVersioned(back).Address(); got != f.Data() {
		t.Fatalf("round trip at %p, the foreign data is at %p", got, f.Data())
	}
	out := must(exe.Execute([]*kiln.Buffer{b}))
	checkF32(t, out[0], []float32{1, 11, 21, 31}, "x + 1 over the foreign tensor")
	closeAll(t, out[0], b)
	checkDeletions(t, f, 0, "buffer closed, its export alive")
	kiln.DeleteDLPackVersioned(back)
	checkDeletions(t, f, 1, "buffer closed and export deleted")

	// Without an export in between: deleted when the buffer closes.
	g := dlpacktest.New(sixValues, 0, 2, 3)
	defer g.Free()
	g.SetNoStrides() // none: row-major
	b = must(d.BufferFromDLPackVersioned(g.Versioned()))
	checkF32(t, b, sixValues, "imported without strides")
	checkDeletions(t, g, 0, "before close")
	closeAll(t, b, b)
	checkDeletions(t, g, 1, "after close")
}

// The cpu backend reads host memory aligned to its element type in place (not
// only at 64 bytes); data off that alignment is copied and deleted at once.
func TestDLPackImportAlignment(t *testing.T) {
	_, d := cpuDevice(t)
	aligned := dlpacktest.New(sixValues, 4, 6) // f32-aligned, not 64-byte aligned
	defer aligned.Free()
	b := must(d.BufferFromDLPackVersioned(aligned.Versioned()))
	if !must(b.IsHostAlias()) {
		t.Fatal("f32 data at a 4-byte offset was copied")
	}
	back := must(b.ToDLPackVersioned())
	if got := kiln.ReadDLPackVersioned(back).Address(); got != aligned.Data() {
		t.Fatalf("round trip at %p, the foreign data is at %p", got, aligned.Data())
	}
	kiln.DeleteDLPackVersioned(back)
	checkDeletions(t, aligned, 0, "element-aligned, buffer open")
	closeAll(t, b)
	checkDeletions(t, aligned, 1, "element-aligned, buffer closed")

	misaligned := dlpacktest.New(sixValues, 1, 6)
	defer misaligned.Free()
	b = must(d.BufferFromDLPackVersioned(misaligned.Versioned()))
	defer b.Close()
	checkDeletions(t, misaligned, 1, "misaligned data, copied")
	if must(b.IsHostAlias()) {
		t.Fatal("f32 data at a 1-byte offset is read in place")
	}
	checkF32(t, b, sixValues, "copied misaligned data")
	back = must(b.ToDLPackVersioned())
	if got := kiln.ReadDLPackVersioned(back).Address(); got == misaligned.Data() {
		t.Fatal("a copy exports the foreign pointer")
	}
	kiln.DeleteDLPackVersioned(back)
}

// The legacy struct imports and exports as the versioned one.
func TestDLPackLegacy(t *testing.T) {
	_, d := cpuDevice(t)
	f := dlpacktest.New(sixValues, 0, 2, 3)
	defer f.Free()
	b := must(d.BufferFromDLPack(f.Legacy()))
	checkF32(t, b, sixValues, "legacy import")
	if !must(b.IsHostAlias()) {
		t.Fatal("legacy import copied")
	}
	back := must(b.ToDLPack())
	if got := kiln.ReadDLPack(back); got.Address() != f.Data() || !slices.Equal(got.Shape, []int64{2, 3}) {
		t.Fatalf("legacy round trip %+v, the foreign data is at %p", got, f.Data())
	}
	kiln.DeleteDLPack(back)
	checkDeletions(t, f, 0, "legacy, buffer open")
	closeAll(t, b)
	checkDeletions(t, f, 1, "legacy, buffer closed")

	g := dlpacktest.New(sixValues, 0, 2, 3)
	defer g.Free()
	g.SetStrides(1, 2)
	_, err := d.BufferFromDLPack(g.Legacy())
	checkCode(t, err, kiln.InvalidArgument, "legacy transposed strides")
	checkDeletions(t, g, 1, "legacy refusal")
}

// Refusals are InvalidArgument and still delete the tensor exactly once.
func TestDLPackImportRefusals(t *testing.T) {
	c, d := cpuDevice(t)
	cases := []struct {
		name  string
		edit  func(*dlpacktest.Foreign)
		nilOn bool // import on a nil device
	}{
		{"transposed strides", func(f *dlpacktest.Foreign) { f.SetStrides(1, 2) }, false},
		{"DLPack 2", func(f *dlpacktest.Foreign) { f.SetVersion(2, 0) }, false},
		{"CUDA device", func(f *dlpacktest.Foreign) { f.SetDeviceType(kiln.DLPackDeviceCUDA) }, false},
		{"4 lanes", func(f *dlpacktest.Foreign) { f.SetLanes(4) }, false},
		{"nil device", func(*dlpacktest.Foreign) {}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := dlpacktest.New(sixValues, 0, 2, 3)
			defer f.Free()
			tc.edit(f)
			on := d
			if tc.nilOn {
				on = nil
			}
			b, err := on.BufferFromDLPackVersioned(f.Versioned())
			checkCode(t, err, kiln.InvalidArgument, tc.name)
			if b != nil {
				t.Fatal("a refused import returned a buffer")
			}
			checkDeletions(t, f, 1, tc.name)
		})
	}
	_, err := d.BufferFromDLPackVersioned(nil)
	checkCode(t, err, kiln.InvalidArgument, "nil tensor")
	_, err = d.BufferFromDLPack(nil)
	checkCode(t, err, kiln.InvalidArgument, "nil legacy tensor")
	b := must(kiln.NewBuffer(c, sixValues, 6))
	closeAll(t, b)
	_, err = b.ToDLPackVersioned()
	checkCode(t, err, kiln.InvalidArgument, "export of a closed buffer")
	_, err = b.ToDLPack()
	checkCode(t, err, kiln.InvalidArgument, "legacy export of a closed buffer")
	kiln.DeleteDLPackVersioned(nil) // no-ops
	kiln.DeleteDLPack(nil)
}

// The interpreter reads no host memory in place: it copies and deletes at once.
func TestDLPackInterpreterImportCopies(t *testing.T) {
	c, err := kiln.NewClient(kiln.WithBackend("interpreter"))
	if err != nil {
		t.Skipf("no interpreter backend: %v", err)
	}
	defer c.Close()
	f := dlpacktest.New(sixValues, 0, 2, 3)
	defer f.Free()
	b := must(must(c.Device(0)).BufferFromDLPackVersioned(f.Versioned()))
	defer b.Close()
	checkDeletions(t, f, 1, "interpreter import")
	if must(b.IsHostAlias()) {
		t.Fatal("the interpreter aliases host memory")
	}
	checkF32(t, b, sixValues, "interpreter import")
}

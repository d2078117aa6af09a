package kiln_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"kiln.dev/kiln"
	"kiln.dev/kiln/internal/dlpacktest"
	"kiln.dev/kiln/internal/fakecuda"
)

// The CUDA backend's driver loads once per process, so the tests of raw CUDA
// memory and kDLCUDA run in a child process of this test binary with the
// fake driver (KILN_FAKE_CUDA_DRIVER, which ci.sh sets to the one in the build
// tree) as its driver and two fake GPUs. The fake's device memory is host
// memory, and its launches run nothing: a kernel's use of an aliased buffer
// is checked by the launch's parameters, its values by reading it back.
const fakeCUDAChild = "KILN_GO_FAKE_CUDA_CHILD"

func TestCUDAMemoryOnTheFakeDriver(t *testing.T) {
	if os.Getenv(fakeCUDAChild) != "" {
		fakeCUDATests(t)
		return
	}
	driver := os.Getenv("KILN_FAKE_CUDA_DRIVER")
	if driver == "" {
		t.Fatal("KILN_FAKE_CUDA_DRIVER is not set: it must name Kiln's fake CUDA driver, " +
			"BUILD_DIR/tests/cuda/libkiln_fake_cuda_driver.so (bindings/go/ci.sh sets it)")
	}
	if _, err := os.Stat(driver); err != nil {
		t.Fatalf("the fake CUDA driver is not built (cmake --build BUILD_DIR --target kiln_fake_cuda_driver): %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCUDAMemoryOnTheFakeDriver$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), fakeCUDAChild+"=1", "KILN_CUDA_DRIVER="+driver, "KILN_FAKE_CUDA_DEVICES=2")
	out, err := cmd.CombinedOutput()
	t.Logf("fake-driver run:\n%s", out)
	if err != nil {
		t.Fatalf("the fake-driver run failed: %v", err)
	}
	// Every subtest ran and passed (none skipped).
	for _, name := range fakeCUDASubtests {
		if !strings.Contains(string(out), "--- PASS: TestCUDAMemoryOnTheFakeDriver/"+name+" ") {
			t.Errorf("subtest %s did not pass in the fake-driver run", name)
		}
	}
}

var fakeCUDASubtests = []string{"AddressRoundTrip", "AliasedBufferInAKernel", "HostBuffersHaveNoCUDAMemory",
	"AliasRefusals", "DLPackExport", "DLPackImport", "DLPackImportRefusals"}

func fakeCUDATests(t *testing.T) {
	c, err := kiln.NewClient(kiln.WithBackend("cuda"))
	if err != nil {
		t.Fatalf("no cuda client on the fake driver: %v", err)
	}
	defer c.Close()
	if n := must(c.DeviceCount()); n != 2 {
		t.Fatalf("the fake driver shows %d GPUs, want 2 (KILN_FAKE_CUDA_DEVICES=2)", n)
	}
	tests := map[string]func(*testing.T, *kiln.Client){
		"AddressRoundTrip":            testCUDAAddressRoundTrip,
		"AliasedBufferInAKernel":      testCUDAAliasInAKernel,
		"HostBuffersHaveNoCUDAMemory": testHostBufferHasNoCUDAMemory,
		"AliasRefusals":               testCUDAAliasRefusals,
		"DLPackExport":                testCUDADLPackExport,
		"DLPackImport":                testCUDADLPackImport,
		"DLPackImportRefusals":        testCUDADLPackImportRefusals,
	}
	for _, name := range fakeCUDASubtests {
		t.Run(name, func(t *testing.T) { tests[name](t, c) })
	}
}

var shape23 = kiln.NewShape(kiln.F32, 2, 3)

// cudaOwner is GPU memory "another library" owns: a Kiln buffer on GPU gpu
// holding sixValues, open until the test ends, and its address.
func cudaOwner(t *testing.T, c *kiln.Client, gpu int) (*kiln.Device, uint64) {
	t.Helper()
	d := must(c.Device(gpu))
	owner := must(kiln.NewBufferOn(d, sixValues, 2, 3))
	t.Cleanup(func() { owner.Close() })
	m := must(owner.CUDAMemory())
	if m == nil || m.Ordinal != gpu || m.Address == 0 {
		t.Fatalf("a buffer on cuda:%d is at %+v", gpu, m)
	}
	return d, m.Address
}

func checkReleases(t *testing.T, n *atomic.Int32, want int32, what string) {
	t.Helper()
	if got := n.Load(); got != want {
		t.Fatalf("%s: release ran %d times, want %d", what, got, want)
	}
}

// An alias lies at the address it was given, on its GPU, reads back the
// values there, and releases once, when it closes.
func testCUDAAddressRoundTrip(t *testing.T, c *kiln.Client) {
	for gpu := range 2 {
		d, address := cudaOwner(t, c, gpu)
		var released atomic.Int32
		b := must(d.AliasCUDAMemory(shape23, address, func() { released.Add(1) }))
		if m := must(b.CUDAMemory()); m == nil || *m != (kiln.CUDAMemory{Ordinal: gpu, Address: address}) {
			t.Fatalf("alias of %#x on cuda:%d is at %+v", address, gpu, m)
		}
		checkF32(t, b, sixValues, "the aliased GPU memory")
		checkReleases(t, &released, 0, "alias open")
		closeAll(t, b, b)
		checkReleases(t, &released, 1, "alias closed")
	}
	// Without a release func.
	d, address := cudaOwner(t, c, 0)
	b := must(d.AliasCUDAMemory(shape23, address, nil))
	checkF32(t, b, sixValues, "an alias without release")
	closeAll(t, b)
}

// A kernel run on an aliased buffer is given its address, and the release
// waits for the buffer, not the run.
func testCUDAAliasInAKernel(t *testing.T, c *kiln.Client) {
	d, address := cudaOwner(t, c, 0)
	bld := must(kiln.NewBuilder("add_one"))
	defer bld.Close()
	comp := must(bld.BuildRoot(bld.Add(bld.Parameter(0, shape23, "x"), bld.ConstantF32(1))))
	defer comp.Close()
	exe := must(c.Compile(comp))
	defer exe.Close()
	var released atomic.Int32
	b := must(d.AliasCUDAMemory(shape23, address, func() { released.Add(1) }))
	out := must(exe.Execute([]*kiln.Buffer{b}))
	parameters := must(fakecuda.LastLaunchParameters())
	if !slices.Contains(parameters, address) {
		t.Fatalf("the kernel's parameters %#x do not hold the aliased address %#x", parameters, address)
	}
	for _, o := range out {
		closeAll(t, o)
	}
	checkReleases(t, &released, 0, "after the run, alias open")
	closeAll(t, b)
	checkReleases(t, &released, 1, "alias closed")
}

func testHostBufferHasNoCUDAMemory(t *testing.T, _ *kiln.Client) {
	cpu := must(kiln.NewClient(kiln.WithBackend("cpu")))
	defer cpu.Close()
	b := must(kiln.NewBuffer(cpu, sixValues, 2, 3))
	if m, err := b.CUDAMemory(); m != nil || err != nil {
		t.Fatalf("a cpu buffer has CUDA memory %+v (%v)", m, err)
	}
	closeAll(t, b)
	_, err := b.CUDAMemory()
	checkCode(t, err, kiln.InvalidArgument, "CUDAMemory of a closed buffer")
}

// checkRefusal wants no buffer and an InvalidArgument whose message names
// call and holds needle.
func checkRefusal(t *testing.T, b *kiln.Buffer, err error, call, needle string) {
	t.Helper()
	checkCode(t, err, kiln.InvalidArgument, needle)
	if b != nil || !strings.Contains(err.Error(), call) || !strings.Contains(err.Error(), needle) {
		t.Fatalf("%v: want a message naming %s with %q, and no buffer", err, call, needle)
	}
}

// refusalFixture gives GPU 0's device, memory on it that the test owns, and a
// device of a cpu client (closed when the test ends).
func refusalFixture(t *testing.T, c *kiln.Client) (*kiln.Device, uint64, *kiln.Device) {
	t.Helper()
	d, address := cudaOwner(t, c, 0)
	cpu := must(kiln.NewClient(kiln.WithBackend("cpu")))
	t.Cleanup(func() { cpu.Close() })
	return d, address, must(cpu.Device(0))
}

// Refusals are InvalidArgument naming the call, and release once.
func testCUDAAliasRefusals(t *testing.T, c *kiln.Client) {
	d, address, cpu := refusalFixture(t, c)
	cases := []struct {
		name    string
		device  *kiln.Device
		address uint64
		needle  string
	}{
		{"cpu device", cpu, address, "the cpu backend cannot read CUDA device memory"},
		{"misaligned", d, address + 2, "kiln_device_buffer_alias_cuda_memory: cuda: device address 0x"},
		{"null address", d, 0, "which holds elements"},
		{"nil device", nil, address, "kiln_device_buffer_alias_cuda_memory"},
	}
	for _, tc := range cases {
		var released atomic.Int32
		b, err := tc.device.AliasCUDAMemory(shape23, tc.address, func() { released.Add(1) })
		checkRefusal(t, b, err, "kiln_device_buffer_alias_cuda_memory", tc.needle)
		checkReleases(t, &released, 1, tc.name)
	}
}

// A cuda buffer exports its own GPU memory as kDLCUDA on its GPU, not
// copied, and the tensor keeps it after the buffer is closed.
func testCUDADLPackExport(t *testing.T, c *kiln.Client) {
	for gpu := range 2 {
		b := must(kiln.NewBufferOn(must(c.Device(gpu)), sixValues, 2, 3))
		address := must(b.CUDAMemory()).Address
		vp := must(b.ToDLPackVersioned())
		lp := must(b.ToDLPack())
		closeAll(t, b)
		v, l := kiln.ReadDLPackVersioned(vp), kiln.ReadDLPack(lp)
		for _, x := range []kiln.DLPackTensor{v, l} {
			if x.DeviceType != kiln.DLPackDeviceCUDA || x.DeviceID != int32(gpu) ||
				uint64(uintptr(x.Address())) != address || !slices.Equal(x.Shape, []int64{2, 3}) {
				t.Fatalf("cuda:%d at %#x exported as %+v", gpu, address, x)
			}
		}
		if v.Flags != kiln.DLPackFlagReadOnly {
			t.Fatalf("flags %#x, want READ_ONLY only (not copied)", v.Flags)
		}
		// The fake's GPU memory is host memory.
		if got := tensorF32(v, 6); !slices.Equal(got, sixValues) {
			t.Fatalf("the exported GPU memory holds %v after the buffer closed", got)
		}
		kiln.DeleteDLPackVersioned(vp)
		kiln.DeleteDLPack(lp)
	}
}

// A kDLCUDA tensor imports onto its GPU without a copy, and its deleter runs
// once, when the buffer goes.
func testCUDADLPackImport(t *testing.T, c *kiln.Client) {
	for gpu := range 2 {
		d, address := cudaOwner(t, c, gpu)
		f := dlpacktest.At(address, kiln.DLPackDeviceCUDA, int32(gpu), 2, 3)
		defer f.Free()
		b := must(d.BufferFromDLPackVersioned(f.Versioned()))
		if m := must(b.CUDAMemory()); m == nil || *m != (kiln.CUDAMemory{Ordinal: gpu, Address: address}) {
			t.Fatalf("kDLCUDA tensor at %#x on GPU %d imported at %+v", address, gpu, m)
		}
		checkF32(t, b, sixValues, "imported kDLCUDA tensor")
		back := must(b.ToDLPackVersioned())
		if got := uint64(uintptr(kiln.ReadDLPackVersioned(back).Address())); got != address {
			t.Fatalf("round trip at %#x, the tensor is at %#x", got, address)
		}
		kiln.DeleteDLPackVersioned(back)
		checkDeletions(t, f, 0, "buffer open")
		closeAll(t, b)
		checkDeletions(t, f, 1, "buffer closed")
	}
	// The legacy struct, with a byte offset.
	d, address := cudaOwner(t, c, 1)
	f := dlpacktest.At(address, kiln.DLPackDeviceCUDA, 1, 2, 3)
	defer f.Free()
	f.SetByteOffset(256)
	b := must(d.BufferFromDLPack(f.Legacy()))
	if m := must(b.CUDAMemory()); m.Address != address {
		t.Fatalf("legacy import at %#x, the first element is at %#x", m.Address, address)
	}
	checkF32(t, b, sixValues, "legacy kDLCUDA import")
	closeAll(t, b)
	checkDeletions(t, f, 1, "legacy, buffer closed")
}

// Refusals are InvalidArgument naming the call, and delete once.
func testCUDADLPackImportRefusals(t *testing.T, c *kiln.Client) {
	d, address, cpu := refusalFixture(t, c)
	cases := []struct {
		name    string
		device  *kiln.Device
		address uint64
		gpu     int32
		needle  string
	}{
		{"GPU 5", d, address, 5, "the tensor lives on CUDA GPU 5 (kDLCUDA), which this cuda client does not have"},
		{"another GPU's device", d, address, 1, "the tensor lives on CUDA GPU 1 (kDLCUDA), the device given is cuda:0"},
		{"cpu device", cpu, address, 0, "the device is cpu's, which cannot read GPU memory"},
		{"misaligned", d, address + 2, 0, "is not aligned to its element type (4 bytes)"},
	}
	for _, tc := range cases {
		f := dlpacktest.At(tc.address, kiln.DLPackDeviceCUDA, tc.gpu, 2, 3)
		b, err := tc.device.BufferFromDLPackVersioned(f.Versioned())
		checkRefusal(t, b, err, "kiln_device_buffer_from_dlpack_versioned", tc.needle)
		checkDeletions(t, f, 1, tc.name)
		f.Free()
	}
}

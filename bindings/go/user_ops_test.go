package kiln_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"kiln.dev/kiln"
)

// zeroOut is the seed's ZeroOut kernel for every version: each result is its
// argument with all elements but one (preserve_index, default 0) set to 0.
func zeroOut(f *kiln.KernelFrame) error {
	keep := 0
	if v, ok := f.Attr("preserve_index"); ok {
		keep = int(v.(int64))
	}
	for r := 0; r < f.NumResults(); r++ {
		shape := f.ArgShape(r)
		if len(shape.Dims) != 1 {
			return &kiln.Error{Code: kiln.InvalidArgument, Message: "ZeroOut expects a 1-D vector."}
		}
		if keep >= int(shape.Dims[0]) {
			return &kiln.Error{Code: kiln.InvalidArgument, Message: fmt.Sprintf("preserve_index out of range: %d", keep)}
		}
		if shape.Type == kiln.F32 {
			x, out := f.ArgFloat32s(r), f.ResultFloat32s(r)
			for i := range out {
				out[i] = 0
			}
			out[keep] = x[keep]
			continue
		}
		x, out := f.ArgInt32s(r), f.ResultInt32s(r)
		for i := range out {
			out[i] = 0
		}
		out[keep] = x[keep]
	}
	return nil
}

var registerOnce sync.Once

func registerZeroOut(t *testing.T) {
	registerOnce.Do(func() {
		defs := []kiln.OpDef{
			{Name: "GoZeroOut", Inputs: []string{"to_zero: int32"}, Outputs: []string{"zeroed: int32"}, Doc: "ZeroOut"},
			{Name: "GoZeroOutIndex", Attrs: []string{"preserve_index: int >= 0 = 0"},
				Inputs: []string{"to_zero: int32"}, Outputs: []string{"zeroed: int32"}},
			{Name: "GoZeroOutPoly", Attrs: []string{"T: {float, int32}"},
				Inputs: []string{"to_zero: T"}, Outputs: []string{"zeroed: T"}},
			{Name: "GoZeroOutList", Attrs: []string{"N: int >= 1", "T: {float, int32}"},
				Inputs: []string{"to_zero: N * T"}, Outputs: []string{"zeroed: N * T"}},
		}
		for _, def := range defs {
			if err := kiln.RegisterOp(def); err != nil {
				t.Fatal(err)
			}
		}
		for _, op := range []string{"GoZeroOut", "GoZeroOutIndex", "GoZeroOutPoly"} {
			if err := kiln.RegisterKernel(op, "host", kiln.S32, zeroOut); err != nil {
				t.Fatal(err)
			}
		}
		if err := kiln.RegisterKernel("GoZeroOutPoly", "host", kiln.F32, zeroOut); err != nil {
			t.Fatal(err)
		}
		if err := kiln.RegisterKernel("GoZeroOutList", "host", kiln.InvalidType, zeroOut); err != nil {
			t.Fatal(err)
		}
	})
}

func runZeroOut(t *testing.T, backend, op string, nArgs int, attrs string) ([][]int32, error) {
	registerZeroOut(t)
	b, err := kiln.NewBuilder(op)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	params := make([]kiln.Op, nArgs)
	for i := range params {
		params[i] = b.Parameter(int64(i), kiln.NewShape(kiln.S32, 5), "x")
	}
	comp, err := b.BuildRoot(b.CallRegistered(op, params, attrs))
	if err != nil {
		return nil, err
	}
	defer comp.Close()
	c, err := kiln.NewClient(kiln.WithBackend(backend))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	exe, err := c.Compile(comp)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	data := make([]byte, 20)
	for i, v := range []int32{5, 4, 3, 2, 1} {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
	}
	x, err := c.BufferFromBytes(kiln.NewShape(kiln.S32, 5), data, nil)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	args := make([]*kiln.Buffer, nArgs)
	for i := range args {
		args[i] = x
	}
	results, err := exe.Execute(args)
	if err != nil {
		return nil, err
	}
	var out [][]int32
	for _, r := range results {
		raw, err := r.Bytes()
		r.Close()
		if err != nil {
			return nil, err
		}
		values := make([]int32, len(raw)/4)
		for i := range values {
			values[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		out = append(out, values)
	}
	return out, nil
}

func TestUserOpZeroOutVersions(t *testing.T) {
	for _, backend := range []string{"cpu", "interpreter"} {
		for _, tc := range []struct {
			op    string
			n     int
			attrs string
			want  string
		}{
			{"GoZeroOut", 1, "", "[[5 0 0 0 0]]"},
			{"GoZeroOutIndex", 1, "", "[[5 0 0 0 0]]"},
			{"GoZeroOutIndex", 1, "{preserve_index = 3}", "[[0 0 0 2 0]]"},
			{"GoZeroOutPoly", 1, "", "[[5 0 0 0 0]]"},
			{"GoZeroOutList", 2, "", "[[5 0 0 0 0] [5 0 0 0 0]]"},
		} {
			got, err := runZeroOut(t, backend, tc.op, tc.n, tc.attrs)
			if err != nil || fmt.Sprint(got) != tc.want {
				t.Errorf("%s %s %s: %v, %v; want %s", backend, tc.op, tc.attrs, got, err, tc.want)
			}
		}
	}
}

func TestUserOpErrors(t *testing.T) {
	for _, tc := range []struct {
		op, attrs string
		n         int
		needle    string
	}{
		{"GoZeroOutIndex", "{preserve_index = -1}", 1, "less than its minimum 0"},
		{"GoZeroOutIndex", "{preserve_index = \"x\"}", 1, "must be int, got string"},
		{"GoZeroOutList", "", 0, "fewer than its minimum 1"},
		{"GoZeroOut", "", 2, "takes 1 operand(s)"},
		{"GoZeroOutIndex", "{preserve_index = 9}", 1, "kernel failed on host: preserve_index out of range: 9"},
	} {
		_, err := runZeroOut(t, "interpreter", tc.op, tc.n, tc.attrs)
		var kerr *kiln.Error
		if !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument || !strings.Contains(kerr.Message, tc.needle) {
			t.Errorf("%s %s: %v, want InvalidArgument mentioning %q", tc.op, tc.attrs, err, tc.needle)
		}
	}
	err := kiln.RegisterOp(kiln.OpDef{Name: "GoZeroOut", Inputs: []string{"x: int32"}, Outputs: []string{"y: int32"}})
	var kerr *kiln.Error
	if !errors.As(err, &kerr) || kerr.Code != kiln.AlreadyExists {
		t.Errorf("duplicate registration: %v, want AlreadyExists", err)
	}
	text, err := kiln.RegisteredOps()
	if err != nil || !strings.Contains(text, "GoZeroOutIndex(to_zero: int32) -> (zeroed: int32)") {
		t.Errorf("RegisteredOps: %q, %v", text, err)
	}
}

// zeroOutGrad is the seed's _zero_out_grad: the output cotangent at the
// preserved index only.
func zeroOutGrad(f *kiln.GradFrame) ([]kiln.Op, error) {
	b := f.Builder
	keep := int64(0)
	if v, ok := f.Attr("preserve_index"); ok {
		keep = v.(int64)
	}
	grads := make([]kiln.Op, len(f.Operands))
	for i, x := range f.Operands {
		shape, err := b.Shape(x)
		if err != nil {
			return nil, err
		}
		atKeep := b.Eq(b.Iota(kiln.NewShape(kiln.S64, shape.Dims...), 0), b.ConstantS64(keep))
		zeros := b.Broadcast(b.Convert(b.ConstantS32(0), shape.Type), shape.Dims...)
		grads[i] = b.Select(atKeep, f.OutputGrads[i], zeros)
	}
	return grads, nil
}

var registerGradOnce sync.Once

func registerZeroOutGrad(t *testing.T) {
	registerGradOnce.Do(func() {
		failing := func(*kiln.GradFrame) ([]kiln.Op, error) {
			return nil, &kiln.Error{Code: kiln.FailedPrecondition, Message: "no gradient on Thursdays"}
		}
		for name, grad := range map[string]kiln.GradFunc{
			"GoZeroOutGrad": zeroOutGrad, "GoZeroOutNoGrad": nil, "GoZeroOutBadGrad": failing} {
			def := kiln.OpDef{Name: name, Attrs: []string{"preserve_index: int >= 0 = 0"},
				Inputs: []string{"to_zero: float"}, Outputs: []string{"zeroed: float"}, Grad: grad}
			if err := kiln.RegisterOp(def); err != nil {
				t.Fatal(err)
			}
			if err := kiln.RegisterKernel(name, "host", kiln.F32, zeroOut); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// gradOf is d/dx of dot(op(x), w) at x = [1.5, ..., 5.5], w = [1, ..., 5]:
// the loss and the gradient.
func gradOf(t *testing.T, backend, op, attrs string) (float32, []float32, error) {
	registerZeroOutGrad(t)
	b := must(kiln.NewBuilder("loss"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 5), "x")
	w := b.Add(b.Iota(kiln.NewShape(kiln.F32, 5), 0), b.ConstantF32(1))
	loss := must(b.BuildRoot(b.Dot(b.CallRegistered(op, []kiln.Op{x}, attrs), w)))
	defer loss.Close()
	gradient, err := loss.ValueAndGrad(0)
	if err != nil {
		return 0, nil, err
	}
	defer gradient.Close()
	c := must(kiln.NewClient(kiln.WithBackend(backend)))
	defer c.Close()
	exe := must(c.Compile(gradient))
	defer exe.Close()
	xb := must(kiln.NewBuffer(c, []float32{1.5, 2.5, 3.5, 4.5, 5.5}, 5))
	defer closeAll(t, xb)
	out := must(exe.Execute([]*kiln.Buffer{xb}))
	defer func() {
		for _, o := range out {
			o.Close()
		}
	}()
	return must(kiln.ToSlice[float32](out[0]))[0], must(kiln.ToSlice[float32](out[1])), nil
}

func TestUserOpGradient(t *testing.T) {
	for _, backend := range []string{"cpu", "interpreter"} {
		for _, c := range []struct {
			attrs string
			loss  float32
			grad  []float32
		}{{"", 1.5, []float32{1, 0, 0, 0, 0}}, {"{preserve_index = 3}", 18, []float32{0, 0, 0, 4, 0}}} {
			loss, grad, err := gradOf(t, backend, "GoZeroOutGrad", c.attrs)
			if err != nil {
				t.Fatal(err)
			}
			if loss != c.loss || fmt.Sprint(grad) != fmt.Sprint(c.grad) {
				t.Fatalf("%s %q: loss %v, gradient %v; want %v, %v", backend, c.attrs, loss, grad, c.loss, c.grad)
			}
		}
	}
	_, _, err := gradOf(t, "cpu", "GoZeroOutNoGrad", "")
	var kerr *kiln.Error
	if !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument ||
		!strings.Contains(kerr.Message, "op 'GoZeroOutNoGrad'") || !strings.Contains(kerr.Message, "has no gradient registered") {
		t.Fatalf("an op without a gradient: %v", err)
	}
	_, _, err = gradOf(t, "interpreter", "GoZeroOutBadGrad", "")
	if !errors.As(err, &kerr) || kerr.Code != kiln.FailedPrecondition ||
		!strings.Contains(kerr.Message, "op 'GoZeroOutBadGrad'") || !strings.Contains(kerr.Message, "no gradient on Thursdays") {
		t.Fatalf("a failing gradient: %v", err)
	}
}

// GoTile(x: float, times) repeats a vector `times` times: its shape function
// makes the result times x as long, or refuses a rank other than 1.
func TestUserOpShapeFunction(t *testing.T) {
	tileShape := func(f *kiln.ShapeFrame) error {
		arg := f.ArgShape(0)
		if len(arg.Dims) != 1 {
			return &kiln.Error{Code: kiln.InvalidArgument, Message: fmt.Sprintf("GoTile takes a vector, got rank %d", len(arg.Dims))}
		}
		times, _ := f.Attr("times")
		if f.ResultShape(0).Type != kiln.F32 {
			return &kiln.Error{Code: kiln.Internal, Message: "the result is not f32"}
		}
		return f.SetResultDims(0, []int64{arg.Dims[0] * times.(int64)})
	}
	tile := func(f *kiln.KernelFrame) error {
		x, out := f.ArgFloat32s(0), f.ResultFloat32s(0)
		for i := range out {
			out[i] = x[i%len(x)]
		}
		return nil
	}
	if err := kiln.RegisterOp(kiln.OpDef{Name: "GoTile", Attrs: []string{"times: int >= 1"}, Inputs: []string{"x: float"},
		Outputs: []string{"y: float"}, Shape: tileShape}); err != nil {
		t.Fatal(err)
	}
	if err := kiln.RegisterKernel("GoTile", "host", kiln.F32, tile); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"cpu", "interpreter"} {
		b, err := kiln.NewBuilder("tile")
		if err != nil {
			t.Fatal(err)
		}
		x := b.Parameter(0, kiln.NewShape(kiln.F32, 2), "x")
		y := b.CallRegistered("GoTile", []kiln.Op{x}, "{times = 3}")
		shape, err := b.Shape(y)
		if err != nil || fmt.Sprint(shape.Dims) != "[6]" {
			t.Fatalf("GoTile's shape: %v, %v; want dims [6]", shape, err)
		}
		got, err := runF32(backend, b, y, []float32{1.5, -2})
		b.Close()
		if err != nil || fmt.Sprint(got) != "[1.5 -2 1.5 -2 1.5 -2]" {
			t.Errorf("%s: GoTile = %v, %v", backend, got, err)
		}
	}
	b, err := kiln.NewBuilder("tile_matrix")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.CallRegistered("GoTile", []kiln.Op{b.Parameter(0, kiln.NewShape(kiln.F32, 2, 2), "x")}, "{times = 2}")
	var kerr *kiln.Error
	if err := b.Err(); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument ||
		!strings.Contains(kerr.Message, "GoTile") || !strings.Contains(kerr.Message, "GoTile takes a vector, got rank 2") {
		t.Errorf("a matrix: %v, want InvalidArgument naming GoTile and the shape function's message", err)
	}
}

// runF32 builds root, compiles it for backend and runs it on the f32 vector x.
func runF32(backend string, b *kiln.Builder, root kiln.Op, x []float32) ([]float32, error) {
	comp, err := b.BuildRoot(root)
	if err != nil {
		return nil, err
	}
	defer comp.Close()
	c, err := kiln.NewClient(kiln.WithBackend(backend))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	exe, err := c.Compile(comp)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	data := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	arg, err := c.BufferFromBytes(kiln.NewShape(kiln.F32, int64(len(x))), data, nil)
	if err != nil {
		return nil, err
	}
	defer arg.Close()
	results, err := exe.Execute([]*kiln.Buffer{arg})
	if err != nil {
		return nil, err
	}
	defer results[0].Close()
	raw, err := results[0].Bytes()
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// Device kernels (SPIR-V on vulkan, PTX on cuda) registered from Go: the code
// and entry point are checked at registration.
func TestUserOpDeviceKernels(t *testing.T) {
	const ptx = ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n\tret;\n}\n"
	if err := kiln.RegisterOp(kiln.OpDef{Name: "GoDeviceZeroOut", Inputs: []string{"to_zero: int32"},
		Outputs: []string{"zeroed: int32"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		backend, code, entry string
		want                 kiln.Code
		needle               string
	}{
		{"vulkan", "\x01\x02\x03\x04", "main", kiln.InvalidArgument, "the vulkan kernel is not a SPIR-V module"},
		{"cuda", ptx, "main", kiln.NotFound, "has no .entry kernel named 'main' (it has 'k')"},
		{"cuda", ptx, "k", kiln.OK, ""},
		{"cuda", ptx, "k", kiln.AlreadyExists, "already has a cuda kernel for s32"},
	} {
		err := kiln.RegisterDeviceKernel("GoDeviceZeroOut", c.backend, kiln.S32, []byte(c.code), c.entry, 32, 0)
		if c.want == kiln.OK {
			if err != nil {
				t.Fatalf("%s %s: %v", c.backend, c.entry, err)
			}
			continue
		}
		var kerr *kiln.Error
		if !errors.As(err, &kerr) || kerr.Code != c.want || !strings.Contains(kerr.Message, c.needle) {
			t.Errorf("%s %s: %v, want %v mentioning %q", c.backend, c.entry, err, c.want, c.needle)
		}
	}
	if text, err := kiln.RegisteredOps(); err != nil || !strings.Contains(text, "cuda:s32 (k)") {
		t.Errorf("RegisteredOps: %q, %v", text, err)
	}
}

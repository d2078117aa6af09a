// The seed's ZeroOut op ("Adding an op") defined from Go and run on Kiln:
// the int32 version, preserve_index with its default and bounds check, the
// polymorphic T: {float, int32} version and the list version, and the
// gradient of a loss through ZeroOutPoly (the op's gradient function).
//
//	go run . [cpu|interpreter]
package main

import (
	"encoding/binary"
	"fmt"
	"log"
	"os"

	"kiln.dev/kiln"
)

// zeroOut keeps one element (preserve_index, default 0) of each argument.
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
			clear(out)
			out[keep] = x[keep]
		} else {
			x, out := f.ArgInt32s(r), f.ResultInt32s(r)
			clear(out)
			out[keep] = x[keep]
		}
	}
	return nil
}

// zeroOutGrad is the seed's _zero_out_grad: each output's cotangent at the
// preserved index, zero elsewhere.
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

// gradient is d/dx dot(ZeroOutPoly(x), w): w at the preserved index 0, zero elsewhere.
func gradient(c *kiln.Client, x, w []float32) ([]float32, error) {
	b, err := kiln.NewBuilder("loss")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	n := int64(len(x))
	p := b.Parameter(0, kiln.NewShape(kiln.F32, n), "x")
	wb, err := kiln.NewBuffer(c, w, n)
	if err != nil {
		return nil, err
	}
	defer wb.Close()
	wp := b.Parameter(1, kiln.NewShape(kiln.F32, n), "w")
	loss, err := b.BuildRoot(b.Dot(b.CallRegistered("ZeroOutPoly", []kiln.Op{p}, ""), wp))
	if err != nil {
		return nil, err
	}
	defer loss.Close()
	grad, err := loss.ValueAndGrad(0)
	if err != nil {
		return nil, err
	}
	defer grad.Close()
	exe, err := c.Compile(grad)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	xb, err := kiln.NewBuffer(c, x, n)
	if err != nil {
		return nil, err
	}
	defer xb.Close()
	out, err := exe.Execute([]*kiln.Buffer{xb, wb})
	if err != nil {
		return nil, err
	}
	for _, o := range out {
		defer o.Close()
	}
	return kiln.ToSlice[float32](out[1])
}

func register() error {
	defs := []kiln.OpDef{
		{Name: "ZeroOut", Inputs: []string{"to_zero: int32"}, Outputs: []string{"zeroed: int32"}},
		{Name: "ZeroOutIndex", Attrs: []string{"preserve_index: int >= 0 = 0"},
			Inputs: []string{"to_zero: int32"}, Outputs: []string{"zeroed: int32"}},
		{Name: "ZeroOutPoly", Attrs: []string{"T: {float, int32}"}, Inputs: []string{"to_zero: T"}, Outputs: []string{"zeroed: T"},
			Grad: zeroOutGrad},
		{Name: "ZeroOutList", Attrs: []string{"N: int >= 1", "T: {float, int32}"},
			Inputs: []string{"to_zero: N * T"}, Outputs: []string{"zeroed: N * T"}},
	}
	for _, def := range defs {
		if err := kiln.RegisterOp(def); err != nil {
			return err
		}
	}
	for _, k := range []struct {
		op string
		t  kiln.ElementType
	}{{"ZeroOut", kiln.S32}, {"ZeroOutIndex", kiln.S32}, {"ZeroOutPoly", kiln.S32}, {"ZeroOutPoly", kiln.F32},
		{"ZeroOutList", kiln.InvalidType}} {
		if err := kiln.RegisterKernel(k.op, "host", k.t, zeroOut); err != nil {
			return err
		}
	}
	return nil
}

func run(c *kiln.Client, op string, n int, attrs string) ([][]int32, error) {
	b, err := kiln.NewBuilder(op)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	params := make([]kiln.Op, n)
	for i := range params {
		params[i] = b.Parameter(int64(i), kiln.NewShape(kiln.S32, 5), "x")
	}
	comp, err := b.BuildRoot(b.CallRegistered(op, params, attrs))
	if err != nil {
		return nil, err
	}
	defer comp.Close()
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
	args := make([]*kiln.Buffer, n)
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

func main() {
	if err := register(); err != nil {
		log.Fatal(err)
	}
	backend := "cpu"
	if len(os.Args) > 1 {
		backend = os.Args[1]
	}
	c, err := kiln.NewClient(kiln.WithBackend(backend))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, call := range []struct {
		op    string
		n     int
		attrs string
	}{{"ZeroOut", 1, ""}, {"ZeroOutIndex", 1, ""}, {"ZeroOutIndex", 1, "{preserve_index = 3}"},
		{"ZeroOutPoly", 1, ""}, {"ZeroOutList", 2, ""}} {
		out, err := run(c, call.op, call.n, call.attrs)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(call.op, call.attrs, out)
	}
	dx, err := gradient(c, []float32{1.5, 2.5, 3.5, 4.5, 5.5}, []float32{2, 3, 4, 5, 6})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("d/dx dot(ZeroOutPoly(x), w):", dx)
	if fmt.Sprint(dx) != "[2 0 0 0 0]" {
		log.Fatalf("ZeroOutPoly's gradient is %v, not w at index 0 and zero elsewhere", dx)
	}
	if _, err := run(c, "ZeroOutIndex", 1, "{preserve_index = 7}"); err != nil {
		fmt.Println("expected error:", err)
	} else {
		log.Fatal("preserve_index = 7 was not refused")
	}
}

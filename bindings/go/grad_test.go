package kiln_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"kiln.dev/kiln"
)

// addF32 is (a, b) -> a + b over f32 scalars, the reducer of a sum.
func addF32(t testing.TB) *kiln.Computation {
	b := must(kiln.NewBuilder("add"))
	defer b.Close()
	b.Add(b.Parameter(0, kiln.NewShape(kiln.F32), "a"), b.Parameter(1, kiln.NewShape(kiln.F32), "b"))
	return must(b.Build())
}

// gradLoss is loss(w: f32[3], x: f32[3], n: s32[]) = sum(w * w * x).
func gradLoss(t testing.TB) *kiln.Computation {
	add := addF32(t)
	defer add.Close()
	b := must(kiln.NewBuilder("loss"))
	defer b.Close()
	w := b.Parameter(0, kiln.NewShape(kiln.F32, 3), "w")
	x := b.Parameter(1, kiln.NewShape(kiln.F32, 3), "x")
	b.Parameter(2, kiln.NewShape(kiln.S32), "n")
	b.Reduce(b.Mul(b.Mul(w, w), x), b.ConstantF32(0), add, 0)
	return must(b.Build())
}

func TestValueAndGradOfALoss(t *testing.T) {
	w := []float32{1, -2, 0.5}
	x := []float32{3, 0.25, -4}
	loss := gradLoss(t)
	defer loss.Close()
	gradient := must(loss.ValueAndGrad(1, 0))
	defer gradient.Close()
	if n := must(gradient.ParameterCount()); n != 3 {
		t.Fatalf("parameter count %d, want 3", n)
	}
	c := must(kiln.NewClient())
	defer c.Close()
	exe := must(c.Compile(gradient))
	defer exe.Close()
	wb, xb := must(kiln.NewBuffer(c, w, 3)), must(kiln.NewBuffer(c, x, 3))
	nb := must(kiln.NewBuffer(c, []int32{7}))
	defer closeAll(t, wb, xb, nb)
	out := must(exe.Execute([]*kiln.Buffer{wb, xb, nb}))
	if len(out) != 3 {
		t.Fatalf("%d results, want 3", len(out))
	}
	defer closeAll(t, out[0], out[1], out[2])
	value := must(kiln.ToSlice[float32](out[0]))
	dx := must(kiln.ToSlice[float32](out[1]))
	dw := must(kiln.ToSlice[float32](out[2]))
	if !near(float64(value[0]), 3, 1e-5) {
		t.Fatalf("loss %v, want 3", value)
	}
	for i := range w {
		if !near(float64(dx[i]), float64(w[i]*w[i]), 1e-5) || !near(float64(dw[i]), float64(2*w[i]*x[i]), 1e-5) {
			t.Fatalf("dx %v dw %v for w %v x %v", dx, dw, w, x)
		}
	}
}

func TestGradOfAVectorFunctionTakesACotangent(t *testing.T) {
	b := must(kiln.NewBuilder("sin"))
	defer b.Close()
	b.Sin(b.Parameter(0, kiln.NewShape(kiln.F32, 3), "x"))
	f := must(b.Build())
	defer f.Close()
	vjp := must(f.Grad(0))
	defer vjp.Close()
	if n := must(vjp.ParameterCount()); n != 2 {
		t.Fatalf("parameter count %d, want 2", n)
	}
	c := must(kiln.NewClient())
	defer c.Close()
	exe := must(c.Compile(vjp))
	defer exe.Close()
	x, cotangent := []float32{0, 1, -0.5}, []float32{1, 2, -3}
	xb, cb := must(kiln.NewBuffer(c, x, 3)), must(kiln.NewBuffer(c, cotangent, 3))
	defer closeAll(t, xb, cb)
	out := must(exe.Execute([]*kiln.Buffer{xb, cb}))
	defer closeAll(t, out[0], out[1])
	y, dx := must(kiln.ToSlice[float32](out[0])), must(kiln.ToSlice[float32](out[1]))
	for i := range x {
		v := float64(x[i])
		if !near(float64(y[i]), math.Sin(v), 1e-5) || !near(float64(dx[i]), float64(cotangent[i])*math.Cos(v), 1e-5) {
			t.Fatalf("y %v dx %v for x %v", y, dx, x)
		}
	}
}

func TestGradRefusalsNameWhatIsWrong(t *testing.T) {
	loss := gradLoss(t)
	defer loss.Close()
	for _, tc := range []struct {
		wrt    []int64
		needle string
	}{{[]int64{3}, "parameter 3"}, {[]int64{0, 1, 0}, "repeats parameter 0"}, {[]int64{2}, "s32"}, {nil, "wrt is empty"}} {
		_, err := loss.ValueAndGrad(tc.wrt...)
		var kerr *kiln.Error
		if !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument || !strings.Contains(kerr.Message, tc.needle) ||
			!strings.Contains(kerr.Message, "kiln_computation_value_and_grad") {
			t.Fatalf("wrt %v: %v, want InvalidArgument mentioning %q", tc.wrt, err, tc.needle)
		}
	}
	// A custom call with no gradient registered has no derivative.
	b := must(kiln.NewBuilder("opaque"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32), "x")
	b.CustomCall("kiln_test_no_gradient", []kiln.Op{x}, kiln.NewShape(kiln.F32), "", false)
	opaque := must(b.Build())
	defer opaque.Close()
	_, err := opaque.Grad(0)
	var kerr *kiln.Error
	if !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument ||
		!strings.Contains(kerr.Message, "'custom-call' is not differentiable") {
		t.Fatalf("%v, want InvalidArgument saying 'custom-call' is not differentiable", err)
	}
}

// map is differentiated through its body: sum(map(add, x, x)) has gradient 2.
func TestGradOfAMap(t *testing.T) {
	add := addF32(t)
	defer add.Close()
	b := must(kiln.NewBuilder("mapped"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 4), "x")
	b.Reduce(b.Map([]kiln.Op{x, x}, add, 0), b.ConstantF32(0), add, 0)
	mapped := must(b.Build())
	defer mapped.Close()
	gradient := must(mapped.ValueAndGrad(0))
	defer gradient.Close()
	c := must(kiln.NewClient())
	defer c.Close()
	exe := must(c.Compile(gradient))
	defer exe.Close()
	xb := must(kiln.NewBuffer(c, []float32{0.5, -1, 2, 3}, 4))
	defer closeAll(t, xb)
	out := must(exe.Execute([]*kiln.Buffer{xb}))
	if len(out) != 2 {
		t.Fatalf("%d results, want 2", len(out))
	}
	defer closeAll(t, out[0], out[1])
	value := must(kiln.ToSlice[float32](out[0]))
	dx := must(kiln.ToSlice[float32](out[1]))
	if !near(float64(value[0]), 9, 1e-5) {
		t.Fatalf("value %v, want 9", value)
	}
	for _, d := range dx {
		if !near(float64(d), 2, 1e-6) {
			t.Fatalf("dx %v, want 2s", dx)
		}
	}
}

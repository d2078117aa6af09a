package kiln_test

// WithAllowUnsafeNanMath reaches the library: devices that keep NaN (the
// interpreter, lavapipe) compile with it and without it and give NaN-exact
// results. The refusal on a device without float controls is tested in C++
// (tests/vulkan/nan_refusal_test.cc fakes such a device).

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"kiln.dev/kiln"
)

// checkNanOptIn compiles x != x (true exactly for NaN) with and without the
// option and runs it on NaN, infinity and zero.
func checkNanOptIn(t *testing.T, c *kiln.Client) {
	b := must(kiln.NewBuilder("nan_test"))
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 4), "x")
	comp := must(b.BuildRoot(b.Ne(x, x)))
	closeAll(t, b)
	defer comp.Close()
	input := must(kiln.NewBuffer(c, []float32{1, float32(math.NaN()), float32(math.Inf(1)), 0}, 4))
	defer input.Close()
	for _, opts := range [][]kiln.CompileOption{nil, {kiln.WithAllowUnsafeNanMath()}} {
		exe := must(c.Compile(comp, opts...))
		out := must(exe.Execute([]*kiln.Buffer{input}))
		got := must(kiln.ToSlice[bool](out[0]))
		closeAll(t, out[0], exe)
		if want := []bool{false, true, false, false}; !slices.Equal(got, want) {
			t.Fatalf("with %d options: x != x = %v, want %v", len(opts), got, want)
		}
	}
}

func TestAllowUnsafeNanMathOnTheInterpreter(t *testing.T) {
	c := must(kiln.NewClient(kiln.WithBackend("interpreter")))
	defer c.Close()
	checkNanOptIn(t, c)
}

func TestAllowUnsafeNanMathOnVulkan(t *testing.T) {
	if !slices.Contains(must(kiln.Backends()), "vulkan") {
		t.Skip("this libkiln has no vulkan backend")
	}
	c, err := kiln.NewClient(kiln.WithBackend("vulkan"))
	if err != nil {
		t.Skip(fmt.Sprint("no vulkan device here: ", err))
	}
	defer c.Close()
	checkNanOptIn(t, c)
}

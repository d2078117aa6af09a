// Command mlp builds a two-layer perceptron with the Kiln Go binding and runs
// it on the default backend:  y = relu(x . W1 + b1) . W2 + b2  for a batch of
// two inputs.
//
// From the repository root:
//
//	go -C samples/go/mlp run .
//
// (with PKG_CONFIG_PATH pointing at a kiln.pc; bindings/go/ci.sh writes one
// for a build tree.)
package main

import (
	"fmt"
	"log"

	"kiln.dev/kiln"
)

const (
	batch   = 2
	inputs  = 4
	hidden  = 3
	outputs = 2
)

var (
	w1 = []float32{0.5, -0.25, 0.1, 0.3, 0.8, -0.5, -0.2, 0.4, 0.6, 0.1, -0.3, 0.2}
	b1 = []float32{0.1, 0.0, -0.1}
	w2 = []float32{1.0, -1.0, 0.5, 0.5, -0.75, 0.25}
	b2 = []float32{0.0, 1.0}
	x  = []float32{1.0, 2.0, 3.0, 4.0, -1.0, 0.5, 0.0, 2.0}
)

// buildMLP records the network; builder errors are sticky, so Build reports
// the first failing op.
func buildMLP() (*kiln.Computation, error) {
	b, err := kiln.NewBuilder("mlp")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	in := b.Parameter(0, kiln.NewShape(kiln.F32, batch, inputs), "x")
	h := b.Add(b.Dot(in, kiln.Constant(b, w1, inputs, hidden)), kiln.Constant(b, b1, hidden), 1)
	h = b.Max(h, b.ConstantF32(0)) // relu
	y := b.Add(b.Dot(h, kiln.Constant(b, w2, hidden, outputs)), kiln.Constant(b, b2, outputs), 1)
	return b.BuildRoot(y)
}

func run() error {
	client, err := kiln.NewClient()
	if err != nil {
		return err
	}
	defer client.Close()
	backend, err := client.BackendName()
	if err != nil {
		return err
	}
	mlp, err := buildMLP()
	if err != nil {
		return err
	}
	defer mlp.Close()
	exe, err := client.Compile(mlp)
	if err != nil {
		return err
	}
	defer exe.Close()
	input, err := kiln.NewBuffer(client, x, batch, inputs)
	if err != nil {
		return err
	}
	defer input.Close()
	results, err := exe.Execute([]*kiln.Buffer{input})
	if err != nil {
		return err
	}
	defer results[0].Close()
	y, err := kiln.ToSlice[float32](results[0])
	if err != nil {
		return err
	}
	fmt.Printf("kiln %s, backend %s\n", kiln.Version(), backend)
	for r := 0; r < batch; r++ {
		fmt.Printf("y[%d] = %v\n", r, y[r*outputs:(r+1)*outputs])
	}
	return nil
}

func main() {
	log.SetFlags(0)
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// Command train_digits trains a classifier of handwritten digits with the Kiln
// Go binding: the same job as samples/c/train_digits.c.
//
// The model's loss (a 64-64-10 perceptron with a ReLU and softmax cross-entropy
// over 8x8 images) is built with kiln.Builder, (*Computation).ValueAndGrad
// derives its gradient, and the optimiser (Adam, or -optimizer sgd for SGD with
// momentum) is a Kiln computation that calls the gradient and updates the
// weights, so each minibatch is one execution. One line per epoch; a loss-curve
// PNG at the end. The data is scikit-learn's 8x8 digits, converted once by
// samples/data/make_digits.py. Deterministic; exits 1 when the held-out
// accuracy misses 95%.
//
// From the repository root:
//
//	go -C samples/go/train_digits run .
//
// (with PKG_CONFIG_PATH pointing at a kiln.pc; bindings/go/ci.sh writes one
// for a build tree.)
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"time"

	"kiln.dev/kiln"
)

const (
	pixels  = 64
	hidden  = 64
	classes = 10
	batch   = 32
	target  = 0.95
)

var (
	weightDims  = [][]int64{{pixels, hidden}, {hidden}, {hidden, classes}, {classes}}
	weightNames = []string{"w1", "b1", "w2", "b2"}
)

func f32(dims ...int64) kiln.Shape { return kiln.NewShape(kiln.F32, dims...) }

// reducer is (a, b) -> a + b, or max(a, b), over f32 scalars.
func reducer(maximum bool) (*kiln.Computation, error) {
	b, err := kiln.NewBuilder("reducer")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	x, y := b.Parameter(0, f32(), "a"), b.Parameter(1, f32(), "b")
	if maximum {
		b.Max(x, y)
	} else {
		b.Add(x, y)
	}
	return b.Build()
}

func weightParameters(b *kiln.Builder, first int64, prefix string) []kiln.Op {
	ops := make([]kiln.Op, len(weightDims))
	for i, dims := range weightDims {
		ops[i] = b.Parameter(first+int64(i), f32(dims...), prefix+weightNames[i])
	}
	return ops
}

// buildLoss is (w1, b1, w2, b2, images u8[count,64], labels u8[count]) -> the
// mean softmax cross-entropy, or (loss, correct) when withAccuracy.
func buildLoss(count int64, withAccuracy bool) (*kiln.Computation, error) {
	add, err := reducer(false)
	if err != nil {
		return nil, err
	}
	defer add.Close()
	maximum, err := reducer(true)
	if err != nil {
		return nil, err
	}
	defer maximum.Close()
	b, err := kiln.NewBuilder("loss")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	w := weightParameters(b, 0, "")
	images := b.Parameter(4, kiln.NewShape(kiln.U8, count, pixels), "images")
	labels := b.Parameter(5, kiln.NewShape(kiln.U8, count), "labels")
	zero := func() kiln.Op { return b.ConstantF32(0) }

	x := b.Mul(b.Convert(images, kiln.F32), b.ConstantF32(1.0/16)) // grey levels 0..16 to [0, 1]
	h := b.Max(b.Add(b.Dot(x, w[0]), w[1], 1), zero())             // ReLU
	logits := b.Add(b.Dot(h, w[2]), w[3], 1)
	shifted := b.Sub(logits, b.Reduce(logits, b.ConstantF32(float32(math.Inf(-1))), maximum, 1), 0)
	logSumExp := b.Log(b.Reduce(b.Exp(shifted), zero(), add, 1))
	oneHot := b.Convert(b.Eq(b.Iota(kiln.NewShape(kiln.S32, count, classes), 1), b.Convert(labels, kiln.S32), 0),
		kiln.F32)
	picked := b.Reduce(b.Mul(shifted, oneHot), zero(), add, 1)
	loss := b.Div(b.Reduce(b.Sub(logSumExp, picked), zero(), add, 0), b.ConstantF32(float32(count)))
	if !withAccuracy {
		return b.BuildRoot(loss)
	}
	// Right when the label's logit is its row's maximum (its shifted logit 0).
	correct := b.Reduce(b.Convert(b.Ge(picked, zero()), kiln.F32), zero(), add, 0)
	return b.BuildRoot(b.Tuple(loss, correct))
}

// buildStep is one training step: (weights..., state..., images, labels) ->
// (weights'..., state'..., loss).
//
//	Adam: m' = 0.9 m + 0.1 g, v' = 0.999 v + 0.001 g^2, t' = t + 1,
//	      w' = w - 0.003 (m' / (1 - 0.9^t')) / (sqrt(v' / (1 - 0.999^t')) + 1e-8)
//	SGD:  u' = 0.9 u + g, w' = w - 0.05 u'
func buildStep(adam bool, valueAndGrad *kiln.Computation) (*kiln.Computation, error) {
	b, err := kiln.NewBuilder("step")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	c := b.ConstantF32
	w := weightParameters(b, 0, "")
	first := weightParameters(b, 4, "m_")
	var second []kiln.Op
	var t kiln.Op
	n := int64(8)
	if adam {
		second = weightParameters(b, 8, "v_")
		t = b.Parameter(12, f32(), "t")
		n = 13
	}
	images := b.Parameter(n, kiln.NewShape(kiln.U8, batch, pixels), "images")
	labels := b.Parameter(n+1, kiln.NewShape(kiln.U8, batch), "labels")
	result := b.Call(valueAndGrad, append(append([]kiln.Op{}, w...), images, labels)...)
	var weights, state []kiln.Op
	if adam {
		t1 := b.Add(t, c(1))
		c1 := b.Sub(c(1), b.Pow(c(0.9), t1))
		c2 := b.Sub(c(1), b.Pow(c(0.999), t1))
		var ms, vs []kiln.Op
		for i := range w {
			g := b.GetTupleElement(result, int64(1+i))
			m := b.Add(b.Mul(c(0.9), first[i]), b.Mul(c(0.1), g))
			v := b.Add(b.Mul(c(0.999), second[i]), b.Mul(c(0.001), b.Mul(g, g)))
			update := b.Div(b.Div(m, c1), b.Add(b.Sqrt(b.Div(v, c2)), c(1e-8)))
			weights = append(weights, b.Sub(w[i], b.Mul(c(0.003), update)))
			ms, vs = append(ms, m), append(vs, v)
		}
		state = append(append(append(state, ms...), vs...), t1)
	} else {
		for i := range w {
			u := b.Add(b.Mul(c(0.9), first[i]), b.GetTupleElement(result, int64(1+i)))
			weights = append(weights, b.Sub(w[i], b.Mul(c(0.05), u)))
			state = append(state, u)
		}
	}
	outputs := append(append(weights, state...), b.GetTupleElement(result, 0))
	return b.BuildRoot(b.Tuple(outputs...))
}

// readU8 reads a uint8 .npy file through Kiln; it returns the bytes and the
// first dimension.
func readU8(c *kiln.Client, path string) ([]uint8, int, error) {
	buffer, err := c.ReadNPYAs(path, kiln.U8)
	if err != nil {
		return nil, 0, err
	}
	defer buffer.Close()
	dims, err := buffer.Dims()
	if err != nil {
		return nil, 0, err
	}
	data, err := kiln.ToSlice[uint8](buffer)
	return data, int(dims[0]), err
}

// writeCurve draws the batch losses (light blue) and each epoch's training
// (blue) and held-out (orange) losses from 0 up to the largest batch loss.
func writeCurve(path string, batchLosses, trainLosses, testLosses []float64, stepsPerEpoch int) error {
	const width, height, margin = 640, 360, 24
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	top := 0.5
	for _, l := range batchLosses {
		top = math.Max(top, l)
	}
	steps := float64(len(batchLosses))
	xy := func(step, value float64) (float64, float64) {
		return margin + (width-2*margin)*step/steps, height - margin - (height-2*margin)*math.Min(value, top)/top
	}
	line := func(s0, v0, s1, v1 float64, colour color.RGBA, thick int) {
		x0, y0 := xy(s0, v0)
		x1, y1 := xy(s1, v1)
		n := int(math.Abs(x1-x0)+math.Abs(y1-y0)) + 1
		for i := 0; i <= n; i++ {
			f := float64(i) / float64(n)
			for d := 0; d < thick; d++ {
				img.SetRGBA(int(math.Round(x0+f*(x1-x0))), int(math.Round(y0+f*(y1-y0)))+d, colour)
			}
		}
	}
	for level := 0.5; level < top; level += 0.5 {
		line(0, level, steps, level, color.RGBA{225, 225, 225, 255}, 1)
	}
	for i := 1; i < len(batchLosses); i++ {
		line(float64(i-1), batchLosses[i-1], float64(i), batchLosses[i], color.RGBA{170, 200, 235, 255}, 1)
	}
	for i := 1; i < len(trainLosses); i++ {
		s0, s1 := float64(i*stepsPerEpoch), float64((i+1)*stepsPerEpoch)
		line(s0, trainLosses[i-1], s1, trainLosses[i], color.RGBA{31, 100, 180, 255}, 2)
		line(s0, testLosses[i-1], s1, testLosses[i], color.RGBA{235, 120, 20, 255}, 2)
	}
	line(0, 0, steps, 0, color.RGBA{60, 60, 60, 255}, 1)
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(file, img); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// closeAll frees buffers.
func closeAll(buffers []*kiln.Buffer) {
	for _, b := range buffers {
		b.Close()
	}
}

func run() (bool, error) {
	optimizer := flag.String("optimizer", "adam", "adam or sgd (with momentum)")
	epochs := flag.Int("epochs", 20, "epochs to train (1 to 200)")
	backend := flag.String("backend", "", "a Kiln backend (default: the library's default, cpu)")
	dataDir := flag.String("data-dir", filepath.Join("..", "..", "data"), "where digits_*.npy are")
	output := flag.String("output", "train_digits_loss.png", "the loss-curve picture")
	flag.Parse()
	if (*optimizer != "adam" && *optimizer != "sgd") || *epochs < 1 || *epochs > 200 {
		flag.Usage()
		os.Exit(2)
	}
	adam := *optimizer == "adam"

	start := time.Now()
	var opts []kiln.ClientOption
	if *backend != "" {
		opts = append(opts, kiln.WithBackend(*backend))
	}
	client, err := kiln.NewClient(opts...)
	if err != nil {
		return false, err
	}
	defer client.Close()
	backendName, err := client.BackendName()
	if err != nil {
		return false, err
	}
	var images, labels [2][]uint8
	var counts [2]int
	for s, split := range []string{"train", "test"} {
		if images[s], counts[s], err = readU8(client, filepath.Join(*dataDir, "digits_"+split+"_images.npy")); err != nil {
			return false, err
		}
		if labels[s], _, err = readU8(client, filepath.Join(*dataDir, "digits_"+split+"_labels.npy")); err != nil {
			return false, err
		}
	}

	// The computations: the loss, its gradient (Kiln's reverse mode), the
	// training step around it, and the evaluation of each split.
	loss, err := buildLoss(batch, false)
	if err != nil {
		return false, err
	}
	defer loss.Close()
	gradient, err := loss.ValueAndGrad(0, 1, 2, 3)
	if err != nil {
		return false, err
	}
	defer gradient.Close()
	stepComputation, err := buildStep(adam, gradient)
	if err != nil {
		return false, err
	}
	defer stepComputation.Close()
	step, err := client.Compile(stepComputation)
	if err != nil {
		return false, err
	}
	defer step.Close()
	var evaluate [2]*kiln.Executable
	var splits [2][]*kiln.Buffer
	for s := range evaluate {
		computation, err := buildLoss(int64(counts[s]), true)
		if err != nil {
			return false, err
		}
		evaluate[s], err = client.Compile(computation)
		computation.Close()
		if err != nil {
			return false, err
		}
		defer evaluate[s].Close()
		x, err := kiln.NewBuffer(client, images[s], int64(counts[s]), pixels)
		if err != nil {
			return false, err
		}
		y, err := kiln.NewBuffer(client, labels[s], int64(counts[s]))
		if err != nil {
			return false, err
		}
		splits[s] = []*kiln.Buffer{x, y}
		defer closeAll(splits[s])
	}

	// Glorot-uniform weights, zero biases and optimiser state.
	random := rand.New(rand.NewSource(0))
	var state []*kiln.Buffer
	defer func() { closeAll(state) }()
	slots := 4
	if adam {
		slots = 9
	}
	for i := 0; i < 4+slots; i++ {
		dims := weightDims[i%4]
		if adam && i == 4+slots-1 {
			dims = nil // Adam's step count t
		}
		size := int64(1)
		for _, d := range dims {
			size *= d
		}
		values := make([]float32, size)
		if i < 4 && len(dims) == 2 {
			limit := math.Sqrt(6 / float64(dims[0]+dims[1]))
			for j := range values {
				values[j] = float32((2*random.Float64() - 1) * limit)
			}
		}
		buffer, err := kiln.NewBuffer(client, values, dims...)
		if err != nil {
			return false, err
		}
		state = append(state, buffer)
	}
	about := "SGD with momentum 0.9 (learning rate 0.05)"
	if adam {
		about = "Adam (learning rate 0.003)"
	}
	fmt.Printf("Training a 64-64-10 classifier of 8x8 handwritten digits on %s with Kiln's own gradients:\n"+
		"%d training images, %d held out; %s, batches of %d; the data, the computations and their\n"+
		"compilation took %.2f s.\n", backendName, counts[0], counts[1], about, batch, time.Since(start).Seconds())

	stepsPerEpoch := counts[0] / batch
	order := make([]int, counts[0])
	for i := range order {
		order[i] = i
	}
	var batchLosses, trainLosses, testLosses []float64
	accuracy := 0.0
	start = time.Now()
	batchImages, batchLabels := make([]uint8, batch*pixels), make([]uint8, batch)
	for epoch := 0; epoch < *epochs; epoch++ {
		epochStart := time.Now()
		random.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		sum := 0.0
		for b := 0; b < stepsPerEpoch; b++ {
			for k := 0; k < batch; k++ {
				row := order[b*batch+k]
				copy(batchImages[k*pixels:(k+1)*pixels], images[0][row*pixels:(row+1)*pixels])
				batchLabels[k] = labels[0][row]
			}
			x, err := kiln.NewBuffer(client, batchImages, batch, pixels)
			if err != nil {
				return false, err
			}
			y, err := kiln.NewBuffer(client, batchLabels, batch)
			if err != nil {
				return false, err
			}
			results, err := step.Execute(append(append([]*kiln.Buffer{}, state...), x, y))
			x.Close()
			y.Close()
			if err != nil {
				return false, err
			}
			// The step's results are the next step's weights and state.
			closeAll(state)
			state = results[:len(results)-1]
			value, err := kiln.ToSlice[float32](results[len(results)-1])
			results[len(results)-1].Close()
			if err != nil {
				return false, err
			}
			batchLosses = append(batchLosses, float64(value[0]))
			sum += float64(value[0])
		}
		var splitLoss, splitAccuracy [2]float64
		for s := range evaluate {
			results, err := evaluate[s].Execute(append(append([]*kiln.Buffer{}, state[:4]...), splits[s]...))
			if err != nil {
				return false, err
			}
			value, err := kiln.ToSlice[float32](results[0])
			if err != nil {
				return false, err
			}
			correct, err := kiln.ToSlice[float32](results[1])
			closeAll(results)
			if err != nil {
				return false, err
			}
			splitLoss[s], splitAccuracy[s] = float64(value[0]), float64(correct[0])/float64(counts[s])
		}
		accuracy = splitAccuracy[1]
		trainLosses = append(trainLosses, sum/float64(stepsPerEpoch))
		testLosses = append(testLosses, splitLoss[1])
		fmt.Printf("epoch %2d/%d  loss %.4f  held-out loss %.4f  accuracy: train %5.1f%%  held-out %5.1f%%  (%d ms)\n",
			epoch+1, *epochs, trainLosses[epoch], splitLoss[1], 100*splitAccuracy[0], 100*accuracy,
			time.Since(epochStart).Milliseconds())
	}
	verdict := "MISSED"
	if accuracy >= target {
		verdict = "reached"
	}
	fmt.Printf("held-out accuracy %.1f%% after %d epochs (%d steps) in %.2f s: %s the %.0f%% target\n",
		100*accuracy, *epochs, len(batchLosses), time.Since(start).Seconds(), verdict, 100*target)
	if err := writeCurve(*output, batchLosses, trainLosses, testLosses, stepsPerEpoch); err != nil {
		return false, err
	}
	fmt.Printf("wrote %s: the loss per batch (light blue), and per epoch on the training (blue) and\n"+
		"held-out (orange) images\n", *output)
	return accuracy >= target, nil
}

func main() {
	reached, err := run()
	if err != nil {
		log.Fatal(err)
	}
	if !reached {
		os.Exit(1)
	}
}

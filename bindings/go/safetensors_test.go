package kiln_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"kiln.dev/kiln"
)

// writeSafetensorsByHand writes a file to the format's description: an
// 8-byte little-endian header size (plus delta, to lie about it), the JSON
// header, then data.
func writeSafetensorsByHand(t *testing.T, name, header string, data []byte, delta int64) string {
	t.Helper()
	var out bytes.Buffer
	if err := binary.Write(&out, binary.LittleEndian, uint64(int64(len(header))+delta)); err != nil {
		t.Fatal(err)
	}
	out.WriteString(header)
	out.Write(data)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkError fails unless err is a *kiln.Error with code whose message
// contains every needle.
func checkError(t *testing.T, err error, code kiln.Code, what string, needles ...string) {
	t.Helper()
	var kerr *kiln.Error
	if !errors.As(err, &kerr) || kerr.Code != code {
		t.Fatalf("%s: got %v, want a *kiln.Error with code %v", what, err, code)
	}
	for _, needle := range needles {
		if !strings.Contains(kerr.Message, needle) {
			t.Fatalf("%s: message %q does not mention %q", what, kerr.Message, needle)
		}
	}
}

type savedTensor struct {
	name  string
	shape kiln.Shape
	data  []byte
}

func TestSafetensorsRoundTrip(t *testing.T) {
	c, dev := cpuDevice(t)
	defer c.Close()
	le := func(v any) []byte {
		var out bytes.Buffer
		if err := binary.Write(&out, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	tensors := []savedTensor{
		{"layer.weight", kiln.NewShape(kiln.F32, 2, 3), le([]float32{1, -2, 3.5, 4, 5, 6})},
		{"step", kiln.NewShape(kiln.S64), le(int64(-7))},
		{"mask", kiln.NewShape(kiln.Pred, 3), []byte{1, 0, 1}},
		{"scale", kiln.NewShape(kiln.BF16, 2), le([]uint16{0x3f80, 0xc000})},
		{"half", kiln.NewShape(kiln.F16, 1), le([]uint16{0x3c00})},
		{"ids", kiln.NewShape(kiln.S32, 2, 0), nil},
		{"bytes", kiln.NewShape(kiln.U8, 5), []byte{0, 1, 2, 254, 255}},
		{"wide", kiln.NewShape(kiln.F64, 2), le([]float64{1e300, -0.5})},
		{"z", kiln.NewShape(kiln.C64, 1), le([]float32{1, -1})},
	}
	names := make([]string, len(tensors))
	buffers := make([]*kiln.Buffer, len(tensors))
	for i, tensor := range tensors {
		names[i] = tensor.name
		buffers[i] = must(dev.BufferFromBytes(tensor.shape, tensor.data, nil))
		defer buffers[i].Close()
	}
	metadata := map[string]string{"format": "pt", "written_by": "kiln-go", "note": "ünïcode, \"quotes\""}
	path := filepath.Join(t.TempDir(), "round_trip.safetensors")
	if err := kiln.SaveSafetensors(path, names, buffers, metadata); err != nil {
		t.Fatal(err)
	}

	f := must(kiln.OpenSafetensors(path))
	defer f.Close()
	if got := must(f.Names()); !slices.Equal(got, names) {
		t.Fatalf("Names() = %q, want %q", got, names)
	}
	for k, v := range metadata {
		if got := must(f.Metadata(k)); got != v {
			t.Fatalf("Metadata(%q) = %q, want %q", k, got, v)
		}
	}
	_, err := f.Metadata("missing")
	checkError(t, err, kiln.NotFound, "Metadata(missing)", "missing")
	for _, tensor := range tensors {
		b := must(f.Read(tensor.name, dev))
		shape := must(b.Shape())
		if shape.Type != tensor.shape.Type || !slices.Equal(shape.Dims, tensor.shape.Dims) {
			t.Fatalf("%s: shape %v, want %v", tensor.name, shape, tensor.shape)
		}
		if got := must(b.Bytes()); !bytes.Equal(got, tensor.data) {
			t.Fatalf("%s: bytes %v, want %v", tensor.name, got, tensor.data)
		}
		if !must(b.Device()).Equal(dev) {
			t.Fatalf("%s: not on the device asked for", tensor.name)
		}
		b.Close()
	}
	step := must(f.Read("step", dev))
	defer step.Close()
	if v := must(kiln.ToSlice[int64](step)); len(v) != 1 || v[0] != -7 {
		t.Fatalf("step = %v", v)
	}
	mask := must(f.Read("mask", dev))
	defer mask.Close()
	if v := must(kiln.ToSlice[bool](mask)); !slices.Equal(v, []bool{true, false, true}) {
		t.Fatalf("mask = %v", v)
	}

	// The file itself follows the format: a JSON header with each tensor's
	// dtype, shape and offsets, the data in the order given.
	raw := must(os.ReadFile(path))
	n := binary.LittleEndian.Uint64(raw[:8])
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		t.Fatalf("header %q: %v", raw[8:8+n], err)
	}
	var meta map[string]string
	if err := json.Unmarshal(header["__metadata__"], &meta); err != nil || len(meta) != len(metadata) || meta["format"] != "pt" {
		t.Fatalf("__metadata__ = %s (%v)", header["__metadata__"], err)
	}
	dtypes := map[string]string{"layer.weight": "F32", "step": "I64", "mask": "BOOL", "scale": "BF16",
		"half": "F16", "ids": "I32", "bytes": "U8", "wide": "F64", "z": "C64"}
	var offset uint64
	data := raw[8+n:]
	for _, tensor := range tensors {
		var entry struct {
			Dtype       string   `json:"dtype"`
			Shape       []int64  `json:"shape"`
			DataOffsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(header[tensor.name], &entry); err != nil {
			t.Fatalf("%s: %s: %v", tensor.name, header[tensor.name], err)
		}
		end := offset + uint64(len(tensor.data))
		if entry.Dtype != dtypes[tensor.name] || !slices.Equal(entry.Shape, tensor.shape.Dims) ||
			!slices.Equal(entry.DataOffsets, []uint64{offset, end}) || !bytes.Equal(data[offset:end], tensor.data) {
			t.Fatalf("%s: header entry %+v, want %s %v [%d %d]", tensor.name, entry, dtypes[tensor.name],
				tensor.shape.Dims, offset, end)
		}
		offset = end
	}
	if offset != uint64(len(data)) {
		t.Fatalf("data holds %d bytes, tensors %d", len(data), offset)
	}

	// No tensors and no metadata is a valid (empty) file.
	empty := filepath.Join(t.TempDir(), "empty.safetensors")
	if err := kiln.SaveSafetensors(empty, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	e := must(kiln.OpenSafetensors(empty))
	if got := must(e.Names()); len(got) != 0 {
		t.Fatalf("empty file names %q", got)
	}
	closeAll(t, e)
}

func TestSafetensorsSavesRowMajorWhateverTheLayout(t *testing.T) {
	c, dev := cpuDevice(t)
	defer c.Close()
	values := []float32{1, 2, 3, 4, 5, 6}
	var raw bytes.Buffer
	must(0, binary.Write(&raw, binary.LittleEndian, values))
	// Column-major on the device; the file holds row-major data.
	b := must(dev.BufferFromBytes(kiln.NewShape(kiln.F32, 2, 3), raw.Bytes(), []int64{0, 1}))
	defer b.Close()
	path := filepath.Join(t.TempDir(), "layout.safetensors")
	if err := kiln.SaveSafetensors(path, []string{"m"}, []*kiln.Buffer{b}, nil); err != nil {
		t.Fatal(err)
	}
	f := must(kiln.OpenSafetensors(path))
	defer f.Close()
	back := must(f.Read("m", dev))
	defer back.Close()
	if got := must(kiln.ToSlice[float32](back)); !slices.Equal(got, values) {
		t.Fatalf("read back %v, want %v", got, values)
	}
	file := must(os.ReadFile(path))
	if got := file[len(file)-24:]; !bytes.Equal(got, raw.Bytes()) {
		t.Fatalf("file data %v, want row-major %v", got, raw.Bytes())
	}
}

func TestSafetensorsReadsAFileWrittenByHand(t *testing.T) {
	c, dev := cpuDevice(t)
	defer c.Close()
	var data bytes.Buffer
	must(0, binary.Write(&data, binary.LittleEndian, []float32{1.5, -2, 3.25, 0})) // weight [0, 16)
	data.Write([]byte{1, 0, 7})                                                    // flags [16, 19): 7 reads as true
	must(0, binary.Write(&data, binary.LittleEndian, int64(-1234567890123)))       // count [19, 27)
	// Keys in no particular order, whitespace, and padding after the object,
	// as the format allows.
	header := `{"count": {"dtype": "I64", "shape": [], "data_offsets": [19, 27]},` +
		` "__metadata__": {"format": "pt", "source": "by hand"},` +
		` "weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},` +
		` "flags": {"dtype": "BOOL", "shape": [3], "data_offsets": [16, 19]}}   `
	path := writeSafetensorsByHand(t, "by_hand.safetensors", header, data.Bytes(), 0)

	f := must(kiln.OpenSafetensors(path))
	defer f.Close()
	if got := must(f.Names()); !slices.Equal(got, []string{"weight", "flags", "count"}) {
		t.Fatalf("Names() = %q, want the order of the data", got)
	}
	if got := must(f.Metadata("source")); got != "by hand" {
		t.Fatalf("Metadata(source) = %q", got)
	}
	weight := must(f.Read("weight", dev))
	defer weight.Close()
	if s := must(weight.Shape()); s.Type != kiln.F32 || !slices.Equal(s.Dims, []int64{2, 2}) {
		t.Fatalf("weight shape %v", s)
	}
	if got := must(kiln.ToSlice[float32](weight)); !slices.Equal(got, []float32{1.5, -2, 3.25, 0}) {
		t.Fatalf("weight = %v", got)
	}
	flags := must(f.Read("flags", dev))
	defer flags.Close()
	if got := must(kiln.ToSlice[bool](flags)); !slices.Equal(got, []bool{true, false, true}) {
		t.Fatalf("flags = %v", got)
	}
	count := must(f.Read("count", dev))
	defer count.Close()
	if s := must(count.Shape()); s.Type != kiln.S64 || len(s.Dims) != 0 {
		t.Fatalf("count shape %v", s)
	}
	if got := must(kiln.ToSlice[int64](count)); !slices.Equal(got, []int64{-1234567890123}) {
		t.Fatalf("count = %v", got)
	}
	// A tensor may be read again, and on another device.
	c2, devs := splitClient(t, "cpu", 2)
	defer c2.Close()
	again := must(f.Read("weight", devs[1]))
	defer again.Close()
	if deviceIndex(t, again) != 1 || !slices.Equal(must(kiln.ToSlice[float32](again)), []float32{1.5, -2, 3.25, 0}) {
		t.Fatalf("weight on device 1 differs")
	}
}

func TestSafetensorsMalformedFiles(t *testing.T) {
	zeros := make([]byte, 64)
	cases := []struct {
		name, header string
		data         int
		delta        int64
		code         kiln.Code
		needle       string
	}{
		{"bad_json", `{"a": nope}`, 0, 0, kiln.InvalidArgument, "not valid JSON"},
		{"not_object", `[1, 2]`, 0, 0, kiln.InvalidArgument, "start with '{'"},
		{"overlap", `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},` +
			`"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 12, 0, kiln.InvalidArgument,
			"neither overlap nor leave holes"},
		{"hole", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},` +
			`"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 12, 0, kiln.InvalidArgument, "'b' starts at byte 8"},
		{"wrong_size", `{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8, 0, kiln.InvalidArgument,
			"its shape needs 12"},
		{"truncated_data", `{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, 8, 0, kiln.InvalidArgument,
			"the file holds 8"},
		{"truncated_header", `{"a":{}}`, 0, 100, kiln.DataLoss, "header declares"},
		{"unknown_dtype", `{"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}`, 1, 0, kiln.InvalidArgument,
			"F8_E4M3"},
		{"twice", `{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},` +
			`"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, 2, 0, kiln.InvalidArgument, "'a' twice"},
		{"huge_header", `{}`, 0, 1 << 40, kiln.InvalidArgument, "at most 104857600"},
	}
	for _, tc := range cases {
		path := writeSafetensorsByHand(t, tc.name+".safetensors", tc.header, zeros[:tc.data], tc.delta)
		f, err := kiln.OpenSafetensors(path)
		if f != nil {
			t.Errorf("%s: opened", tc.name)
		}
		// The library's message, naming the file.
		checkError(t, err, tc.code, tc.name, tc.needle, path)
		if !strings.HasPrefix(err.Error(), "kiln: "+tc.code.String()+": ") {
			t.Fatalf("%s: Error() = %q", tc.name, err)
		}
	}
	tiny := filepath.Join(t.TempDir(), "tiny.safetensors")
	if err := os.WriteFile(tiny, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := kiln.OpenSafetensors(tiny)
	checkError(t, err, kiln.DataLoss, "a 3-byte file", "8 bytes of header size")
	missing := filepath.Join(t.TempDir(), "missing.safetensors")
	_, err = kiln.OpenSafetensors(missing)
	checkError(t, err, kiln.NotFound, "a missing file", missing)
}

func TestSafetensorsUnknownNameListsTheTensors(t *testing.T) {
	c, dev := cpuDevice(t)
	defer c.Close()
	a := must(kiln.NewBufferOn(dev, []float32{1}, 1))
	b := must(kiln.NewBufferOn(dev, []int32{2, 3}, 2))
	defer closeAll(t, a, b)
	path := filepath.Join(t.TempDir(), "two.safetensors")
	if err := kiln.SaveSafetensors(path, []string{"encoder.bias", "decoder.bias"}, []*kiln.Buffer{a, b}, nil); err != nil {
		t.Fatal(err)
	}
	f := must(kiln.OpenSafetensors(path))
	defer f.Close()
	got, err := f.Read("bias", dev)
	if got != nil {
		t.Fatal("Read of an unknown name returned a buffer")
	}
	checkError(t, err, kiln.NotFound, "Read(bias)", "'bias'", "encoder.bias, decoder.bias")
	_, err = f.Read("bias", nil)
	checkError(t, err, kiln.InvalidArgument, "Read on a nil device", "device")
	_, err = f.Metadata("format")
	checkError(t, err, kiln.NotFound, "Metadata of a file without metadata", "format")
}

func TestSafetensorsSaveErrors(t *testing.T) {
	c, dev := cpuDevice(t)
	defer c.Close()
	dir := t.TempDir()
	x := must(kiln.NewBufferOn(dev, []float32{1, 2}, 2))
	z := must(kiln.NewBufferOn(dev, []complex128{1i}, 1))
	defer closeAll(t, x, z)
	err := kiln.SaveSafetensors(filepath.Join(dir, "a"), []string{"x", "y"}, []*kiln.Buffer{x}, nil)
	checkError(t, err, kiln.InvalidArgument, "2 names for 1 buffer", "2 names for 1 buffers")
	err = kiln.SaveSafetensors(filepath.Join(dir, "b"), []string{"z"}, []*kiln.Buffer{z}, nil)
	checkError(t, err, kiln.InvalidArgument, "c128", "no dtype for c128")
	err = kiln.SaveSafetensors(filepath.Join(dir, "c"), []string{"x", "x"}, []*kiln.Buffer{x, x}, nil)
	checkError(t, err, kiln.InvalidArgument, "a name twice", "given twice")
	err = kiln.SaveSafetensors(filepath.Join(dir, "d"), []string{"__metadata__"}, []*kiln.Buffer{x}, nil)
	checkError(t, err, kiln.InvalidArgument, "a tensor named __metadata__", "__metadata__")
	err = kiln.SaveSafetensors(filepath.Join(dir, "no-such-dir", "e"), []string{"x"}, []*kiln.Buffer{x}, nil)
	checkError(t, err, kiln.NotFound, "an uncreatable file", "cannot create")
	err = kiln.SaveSafetensors(filepath.Join(dir, "f"), []string{"x"}, []*kiln.Buffer{nil}, nil)
	checkError(t, err, kiln.InvalidArgument, "a nil buffer", "buffers[0]")
	closed := must(kiln.NewBufferOn(dev, []float32{1}))
	closed.Close()
	err = kiln.SaveSafetensors(filepath.Join(dir, "g"), []string{"x"}, []*kiln.Buffer{closed}, nil)
	checkError(t, err, kiln.InvalidArgument, "a closed buffer", "buffers[0]")
}

func TestSafetensorsClose(t *testing.T) {
	c, dev := cpuDevice(t)
	defer c.Close()
	x := must(kiln.NewBufferOn(dev, []float32{1, 2}, 2))
	defer x.Close()
	path := filepath.Join(t.TempDir(), "x.safetensors")
	if err := kiln.SaveSafetensors(path, []string{"x"}, []*kiln.Buffer{x}, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	f := must(kiln.OpenSafetensors(path))
	kept := must(f.Read("x", dev))
	closeAll(t, f, f) // idempotent
	// A buffer read from the file outlives it.
	if got := must(kiln.ToSlice[float32](kept)); !slices.Equal(got, []float32{1, 2}) {
		t.Fatalf("kept = %v", got)
	}
	kept.Close()
	_, err := f.Names()
	checkError(t, err, kiln.InvalidArgument, "Names after Close", "file")
	_, err = f.Read("x", dev)
	checkError(t, err, kiln.InvalidArgument, "Read after Close", "file")
	_, err = f.Metadata("k")
	checkError(t, err, kiln.InvalidArgument, "Metadata after Close", "file")
	var nilFile *kiln.SafetensorsFile
	if err := nilFile.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSafetensorsConcurrentReads(t *testing.T) {
	c, dev := cpuDevice(t)
	defer c.Close()
	names := []string{"a", "b", "c", "d"}
	buffers := make([]*kiln.Buffer, len(names))
	for i := range names {
		buffers[i] = must(kiln.NewBufferOn(dev, []int32{int32(i), int32(i * 10)}, 2))
		defer buffers[i].Close()
	}
	path := filepath.Join(t.TempDir(), "many.safetensors")
	if err := kiln.SaveSafetensors(path, names, buffers, nil); err != nil {
		t.Fatal(err)
	}
	f := must(kiln.OpenSafetensors(path))
	defer f.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(names))
	for g := 0; g < 8; g++ {
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := f.Read(name, dev)
				if err != nil {
					errs <- err
					return
				}
				defer b.Close()
				if got, err := kiln.ToSlice[int32](b); err != nil || !slices.Equal(got, []int32{int32(i), int32(i * 10)}) {
					errs <- errors.Join(err, errors.New(name+": wrong values"))
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

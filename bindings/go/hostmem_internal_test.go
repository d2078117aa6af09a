package kiln

import (
	"testing"
)

// The library releases aliased memory exactly once: when the buffer goes for
// an alias, before AliasHost returns for a copy or a failure.
func TestHostMemoryReleases(t *testing.T) {
	c, err := NewClient(WithBackend("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewHostMemory(16)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	refs := func(want int64, what string) {
		t.Helper()
		if got := m.refs.Load(); got != want {
			t.Fatalf("%s: %d references, want %d", what, got, want)
		}
	}
	a, err := d.AliasHost(NewShape(F32, 4), m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.AliasHost(NewShape(S32, 2, 2), m)
	if err != nil {
		t.Fatal(err)
	}
	refs(3, "two aliases")
	a.Close()
	refs(2, "one alias closed")
	b.Close()
	refs(1, "both closed")
	copied, err := d.AliasHost(NewShape(Pred, 16), m)
	if err != nil {
		t.Fatal(err)
	}
	refs(1, "a copied PRED buffer")
	copied.Close()
	if _, err := d.AliasHost(NewShape(F32, 5), m); err == nil {
		t.Fatal("wrong size accepted")
	}
	refs(1, "a refused size")
	var none *Device
	if _, err := none.AliasHost(NewShape(F32, 4), m); err == nil {
		t.Fatal("nil device accepted")
	}
	refs(1, "a nil device")
}

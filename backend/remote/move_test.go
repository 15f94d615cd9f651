package remote

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emberml/ember/ir"
)

// TestCopyToOnServer moves a 256 KiB tensor from a session on device 0 to
// sessions on device 1 and on device 0 of the same server: the values
// arrive intact, and neither client sends more than a few hundred bytes
// for it (the data stays on the server). A token works once.
func TestCopyToOnServer(t *testing.T) {
	ts := startServer(t, 2, ServerOptions{})
	a := ts.connect(t, 0, ClientOptions{})
	b := ts.connect(t, 1, ClientOptions{})
	a2 := ts.connect(t, 0, ClientOptions{})
	r := rand.New(rand.NewPCG(21, 22))
	d, ref := randData(r, 256, 256)
	x := a.FromData(d)
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []*Client{b, a2} {
		sa, sd := a.Stats().BytesSent, dst.Stats().BytesSent
		y, ok, err := a.CopyTo(x, dst)
		if err != nil || !ok {
			t.Fatalf("CopyTo device %d: %v, %v", dst.id.Index, ok, err)
		}
		if err := dst.Sync(); err != nil {
			t.Fatal(err)
		}
		if ua, ud := a.Stats().BytesSent-sa, dst.Stats().BytesSent-sd; ua > 512 || ud > 512 {
			t.Errorf("moving 256 KiB to device %d: the source sent %d bytes, the target %d", dst.id.Index, ua, ud)
		}
		near(t, "the moved tensor", values(t, dst, y), ref, 0)
	}
	// The token of an export is good for one import.
	req, cl := a.newCall(0)
	res := a.request(&task{Export: &idRequest{Req: req, ID: x.(*Tensor).id}}, req, cl)
	if res.err != nil {
		t.Fatal(res.err)
	}
	for i, id := range []ir.TensorID{5000, 5001} {
		raw, _ := b.encode(&task{Import: &importTask{ID: id, Token: res.r.Token}})
		b.enqueue(raw, false)
		err := b.Sync()
		if i == 0 && err != nil {
			t.Fatalf("the first import: %v", err)
		}
		if i == 1 && (err == nil || !strings.Contains(err.Error(), "already imported")) {
			t.Fatalf("the second import of one token: %v", err)
		}
	}
	if ts.srv.Stats().Transfers != 0 {
		t.Errorf("%d exports left in the transfer table", ts.srv.Stats().Transfers)
	}
	// Another server's client, or another backend, is not reachable.
	other := startServer(t, 1, ServerOptions{}).connect(t, 0, ClientOptions{})
	if _, ok, err := a.CopyTo(x, other); ok || err != nil {
		t.Errorf("CopyTo another server: %v, %v; want not reachable", ok, err)
	}
	if _, ok, err := a.CopyTo(x, ts.srv.devices[0].b); ok || err != nil {
		t.Errorf("CopyTo a local backend: %v, %v; want not reachable", ok, err)
	}
}

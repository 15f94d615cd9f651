package remote

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/ir"
)

// TestRoundTrip uploads two random tensors, adds and multiplies them on
// the server and checks the results against float64 loops.
func TestRoundTrip(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{})
	c := ts.connect(t, 0, ClientOptions{})
	r := rand.New(rand.NewPCG(1, 2))
	da, ra := randData(r, 3, 4)
	db, rb := randData(r, 3, 4)
	a, b := c.FromData(da), c.FromData(db)
	sum := c.Exec(binOp(t, ir.OpAdd, a, b))[0]
	prod := c.Exec(binOp(t, ir.OpMul, sum, b))[0]
	want := make([]float64, len(ra))
	for i := range ra {
		want[i] = float64(float32(float32(ra[i])+float32(rb[i])) * float32(rb[i]))
	}
	near(t, "(a+b)*b", values(t, c, prod), want, 1e-6)
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
}

package remote

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/ir"
)

// divisorBackend is a server backend over cpu that counts its host reads
// (ToData) and says whether it checks integer divisors itself
// (backend.DivisorChecker), as a GPU backend does.
type divisorBackend struct {
	backend.Backend
	checks bool
	reads  atomic.Int64
}

func (b *divisorBackend) ChecksDivisorsOnDevice() bool { return b.checks }

func (b *divisorBackend) ToData(t backend.Tensor) (*backend.TensorData, error) {
	b.reads.Add(1)
	return b.Backend.ToData(t)
}

// TestServerChecksDivisors checks the client's DivisorChecker promise: on
// a device that does not check divisors itself the session reads each
// integer divisor before the op runs and fails the op on a zero, which the
// next Sync reports naming the op and the dtype; on a device that checks
// them itself the session reads nothing. Values are the hand-computed
// quotients and remainders of every integer division on signed and
// unsigned dtypes, with a broadcast divisor.
func TestServerChecksDivisors(t *testing.T) {
	host := &divisorBackend{Backend: cpu.New(backend.DeviceID{Type: "cpu"})}
	dev := &divisorBackend{Backend: cpu.New(backend.DeviceID{Type: "cpu", Index: 1}), checks: true}
	ts := startServer(t, 2, ServerOptions{Backends: []backend.Backend{host, dev}})
	ch, cd := ts.connect(t, 0, ClientOptions{}), ts.connect(t, 1, ClientOptions{})
	if !ch.ChecksDivisorsOnDevice() {
		t.Fatal("the client does not report checking divisors")
	}
	type divCase struct {
		op  ir.BinaryOp
		ref func(a, b int64) int64
	}
	floorDiv := func(a, b int64) int64 {
		q := a / b
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		return q
	}
	mod := func(a, b int64) int64 {
		r := a % b
		if r != 0 && (r < 0) != (b < 0) {
			r += b
		}
		return r
	}
	cases := []divCase{
		{ir.OpDiv, func(a, b int64) int64 { return a / b }},
		{ir.OpFloorDiv, floorDiv},
		{ir.OpRem, func(a, b int64) int64 { return a % b }},
		{ir.OpMod, mod},
	}
	as := []int64{7, -7, 13, -13, 0, 5}
	bs := []int64{2, -3}
	for _, dt := range []ir.DType{ir.I8, ir.I32, ir.I64, ir.U8, ir.U64} {
		a, b := as, bs
		if !dt.IsSigned() {
			a, b = []int64{7, 9, 13, 200, 0, 5}, []int64{2, 3}
		}
		x := ir.FromSlice(a, []int{3, 2}).Convert(dt)
		y := ir.FromSlice(b, []int{2}).Convert(dt)
		z := ir.FromSlice([]int64{3, 0}, []int{2}).Convert(dt)
		for _, c := range cases {
			what := c.op.String() + " " + dt.String()
			for _, s := range []struct {
				c      *Client
				b      *divisorBackend
				checks bool
			}{{ch, host, false}, {cd, dev, true}} {
				xt, yt, zt := s.c.FromData(x), s.c.FromData(y), s.c.FromData(z)
				r0 := s.b.reads.Load()
				out := s.c.Exec(binOp(t, c.op, xt, yt))[0]
				if err := s.c.Sync(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				want := int64(1) // the session's read of the divisor
				if s.checks {
					want = 0
				}
				if n := s.b.reads.Load() - r0; n != want {
					t.Errorf("%s (device checks: %v): the server read %d tensors, want %d", what, s.checks, n, want)
				}
				d, err := s.c.ToData(out)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				got := d.Int64s()
				for i := range a {
					if w := c.ref(a[i], b[i%2]); got[i] != w {
						t.Errorf("%s: element %d = %d, want %d", what, i, got[i], w)
					}
				}
				if s.checks {
					continue // a kernel that checks reports a zero itself
				}
				bad := s.c.Exec(binOp(t, c.op, xt, zt))[0]
				err = s.c.Sync()
				if !errors.Is(err, errExecution) || !strings.Contains(err.Error(), c.op.String()+": integer division by zero") ||
					!strings.Contains(err.Error(), dt.String()) {
					t.Errorf("%s by zero: Sync returned %v", what, err)
				}
				if _, err := s.c.ToData(bad); err == nil || !strings.Contains(err.Error(), "division by zero") {
					t.Errorf("%s by zero: reading the result: %v", what, err)
				}
			}
		}
	}
}

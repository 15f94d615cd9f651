package ember

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestNoGradIsPerGoroutine trains on one goroutine (y = Σ w·x², so
// dy/dx = 2·w·x, checked against that closed form every step) while
// another goroutine evaluates the same tracked tensors under NoGrad: every
// training step must stay tracked and exact, every evaluation untracked.
// NoGrad nests, and a panic inside it restores recording.
func TestNoGradIsPerGoroutine(t *testing.T) {
	for _, dev := range []Device{Flex().Autodiff(), CPU().Autodiff()} {
		r := rand.New(rand.NewPCG(4, 4))
		xv, wv := make([]float64, 8), make([]float64, 8)
		for i := range xv {
			xv[i], wv[i] = r.Float64()*2-1, 0.5+r.Float64()
		}
		x := FromFloats(xv, []int{8}, dev).Cast(F64).RequireGrad()
		w := FromFloats(wv, []int{8}, dev).Cast(F64)
		xv, wv = x.Float64s(), w.Float64s() // the values as stored
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var evalTracked, evals int
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				NoGrad(func() {
					NoGrad(func() {}) // nesting does not end the outer scope
					if x.Mul(x).Mul(w).Sum().IsTracked() {
						evalTracked++
					}
					evals++
				})
			}
		}()
		bad := 0
		for step := 0; step < 300; step++ {
			y := x.Mul(x).Mul(w).Sum()
			if !y.IsTracked() {
				bad++
				continue
			}
			g := y.Backward().Of(x).Float64s()
			for i := range g {
				if want := 2 * wv[i] * xv[i]; math.Abs(g[i]-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("%v step %d: dy/dx[%d] = %v, want %v", dev, step, i, g[i], want)
				}
			}
		}
		close(stop)
		wg.Wait()
		if bad != 0 || evalTracked != 0 {
			t.Errorf("%v: %d of 300 training steps untracked, %d of %d NoGrad evaluations tracked", dev, bad, evalTracked, evals)
		}
		func() {
			defer func() { _ = recover() }()
			NoGrad(func() { panic("inside") })
		}()
		if !x.Mul(x).IsTracked() {
			t.Errorf("%v: recording not restored after a panic inside NoGrad", dev)
		}
	}
}

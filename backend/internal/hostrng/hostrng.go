// Package hostrng is the random generator shared by the host backends
// (flex, whose generator cpu uses, and ndarray), so that one seed gives
// the same samples on each of them and their states are interchangeable.
package hostrng

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// pcgStream is the PCG's second seed word: every host backend seeds its
// generator as rand.NewPCG(seed, pcgStream).
const pcgStream = 0x9e3779b97f4a7c15

// Generator is a PCG (math/rand/v2) behind a mutex: safe for concurrent
// use, the samples of one Sample call drawn in one run.
type Generator struct {
	mu  sync.Mutex
	pcg *rand.PCG // rng's source, whose state State reads
	rng *rand.Rand
}

// New returns a generator seeded with seed.
func New(seed uint64) *Generator {
	g := &Generator{}
	g.Seed(seed)
	return g
}

// Seed re-seeds the generator: after Seed(s) the same sequence of Sample
// calls yields the same values.
func (g *Generator) Seed(seed uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pcg = rand.NewPCG(seed, pcgStream)
	g.rng = rand.New(g.pcg)
}

// State returns the generator's state, "pcg:" and the PCG's 128-bit state
// (math/rand/v2's PCG.MarshalBinary). rand.Rand keeps no state beside its
// source, so the source's state is the whole generator's.
func (g *Generator) State() ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pcg.MarshalBinary()
}

// SetState restores a state State returned. It returns an error naming
// the state's length, changing nothing, for anything else.
func (g *Generator) SetState(state []byte) error {
	pcg := new(rand.PCG)
	if err := pcg.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("not a PCG generator state (%d bytes): %w", len(state), err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pcg, g.rng = pcg, rand.New(pcg)
	return nil
}

// Sample fills v with draws from d for elements of dtype dt, in order:
//   - DistDefault, DistUniform: uniform on [A, B) ([0, 1) for Default),
//     drawn again (up to 64 times) when rounding to dt would reach B;
//     integer dtypes get the floor of the sample (integers in [A, B));
//     Bool gets Bernoulli(0.5);
//   - DistNormal: mean A, standard deviation B;
//   - DistBernoulli: 1 with probability A, else 0.
//
// The values are float64; callers convert them to dt as Cast does.
func (g *Generator) Sample(v []float64, d ir.Distribution, dt backend.DType) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range v {
		v[i] = g.sample(d, dt)
	}
}

// sample draws one value; g.mu must be held.
func (g *Generator) sample(d ir.Distribution, dt backend.DType) float64 {
	switch d.Kind {
	case ir.DistNormal:
		return d.A + d.B*g.rng.NormFloat64()
	case ir.DistBernoulli:
		return b2f(g.rng.Float64() < d.A)
	}
	if dt == backend.Bool {
		return b2f(g.rng.Float64() < 0.5)
	}
	lo, hi := 0.0, 1.0
	if d.Kind == ir.DistUniform {
		lo, hi = d.A, d.B
	}
	var u float64
	for range 64 {
		u = lo + g.rng.Float64()*(hi-lo)
		if dt.IsInt() {
			u = math.Floor(u)
		}
		if !(hi > lo) || roundTo(dt, u) < hi {
			break
		}
	}
	return u
}

// roundTo rounds x to the nearest value of float dtype dt, once (other
// dtypes: x unchanged).
func roundTo(dt backend.DType, x float64) float64 {
	switch dt {
	case backend.F32, backend.Flex32:
		return float64(float32(x))
	case backend.F16:
		return float64(ir.F16ToFloat32(ir.F16FromFloat64(x)))
	case backend.BF16:
		return float64(ir.BF16ToFloat32(ir.BF16FromFloat64(x)))
	}
	return x
}

func b2f(x bool) float64 {
	if x {
		return 1
	}
	return 0
}

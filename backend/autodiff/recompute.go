package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Recomputation under the Balanced strategy. A checkpointed memory-bound
// node keeps no output; Backward recomputes it (its op run again on the
// inner backend, the inputs refilled from the kept values and the parents'
// values) the first time it is read and caches the result only while
// reads of it are still to come. Before the backward pass, plan counts for
// every such node the reads that may follow (its consumers):
//
//   - the backward function of a child c that may read it as input i (bit i
//     of c.needIn), and its own backward function when it may read an
//     output (needOut): released when the loop has processed that node,
//     whether or not the function ran or read the value;
//   - the recomputation of a checkpointed child c: released when c is
//     recomputed, or when the loop has processed c if c never was (after
//     that step nothing reads c: every reader of c is c itself or a
//     descendant of c, and those come earlier in the reverse order).
//
// When a node's count reaches zero its cached outputs are dropped, so the
// cache holds at any time only the values that a later step still reads,
// not every recomputed value until Backward returns. Every read is counted,
// so no node is recomputed twice; a read that was not counted would find
// the count at zero, recompute the value and not cache it, which is slower
// but gives the same bits (the inner ops are deterministic).

// state gives a backward function access to its node's inputs and
// outputs, recomputing checkpointed values on demand.
type state struct {
	b     *Backend    // the backend that recorded n
	e     ir.Executor // b's inner backend, which n's gradient rule computes on
	n     *node
	owner map[*node]*Backend   // the backend that recorded each node of the graph
	cache map[*node]ir.Outputs // recomputed outputs with reads to come
	uses  map[*node]int        // reads still to come, per checkpointed node
	// pending holds the checkpointed nodes not yet recomputed whose
	// recomputation's reads of their parents are still counted.
	pending map[*node]bool
	stats   *cacheStats // nil unless a test observes the cache
}

// backwardReads calls f once for every read of a recomputed value that
// c's backward function may make: input i when bit i of c.needIn is set
// and the input comes from a recomputed parent, and c's outputs when
// c.needOut is not zero and c is recomputed.
func backwardReads(c *node, f func(*node)) {
	for i := range c.numIn() {
		if p := c.parent(i); p.n != nil && i < 64 && c.needIn&(1<<uint(i)) != 0 && c.input(i) == nil && p.n.recompute {
			f(p.n)
		}
	}
	if c.needOut != 0 && c.recompute {
		f(c)
	}
}

// recomputeReads calls f once for every recomputed parent that the
// recomputation of c reads (c itself recomputed).
func recomputeReads(c *node, f func(*node)) {
	for i := range c.numIn() {
		if p := c.parent(i); p.n != nil && c.input(i) == nil && p.n.recompute {
			f(p.n)
		}
	}
}

// plan counts the reads of every recomputed node of order (see the comment
// at the top of this file).
func (s *state) plan(order []*node) {
	s.cache = map[*node]ir.Outputs{}
	s.uses = map[*node]int{}
	s.pending = map[*node]bool{}
	inc := func(p *node) { s.uses[p]++ }
	for _, c := range order {
		backwardReads(c, inc)
		if c.recompute {
			s.pending[c] = true
			recomputeReads(c, inc)
		}
	}
}

// done releases the reads that the loop's step for c accounts for: those of
// c's backward function, and those of c's recomputation if it never ran.
func (s *state) done(c *node) {
	if s.uses == nil {
		return
	}
	backwardReads(c, s.release)
	if s.pending[c] {
		delete(s.pending, c)
		recomputeReads(c, s.release)
	}
}

// release records that one counted read of p has happened (or can no
// longer happen) and drops p's cached outputs after the last one.
func (s *state) release(p *node) {
	s.uses[p]--
	if s.uses[p] > 0 {
		return
	}
	delete(s.uses, p)
	if _, ok := s.cache[p]; ok {
		delete(s.cache, p)
		s.stats.observe(len(s.cache))
	}
}

// value returns output r.i of r.n: kept by the node, cached, or
// recomputed from the node's inputs.
func (s *state) value(r ref) backend.Tensor {
	n := r.n
	if t := n.output(int(r.i)); t != nil {
		return t
	}
	if v, ok := s.cache[n]; ok {
		return v[r.i]
	}
	if !n.recompute {
		panic("autodiff: internal error: output of " + n.name() + " was not kept")
	}
	op := n.op
	if op.UsesXs() {
		xs := make([]backend.Tensor, n.numIn())
		for i := range xs {
			if t := n.input(i); t != nil {
				xs[i] = t
			} else {
				xs[i] = s.value(n.parent(i))
			}
		}
		op.Xs = xs
	} else {
		for i := range n.numIn() {
			if p := n.parent(i); op.In[i] == nil && p.n != nil {
				op.In[i] = s.value(p)
			}
		}
	}
	v := ir.Run(s.owner[n].inner, op)
	s.stats.recompute(n)
	if s.pending[n] {
		delete(s.pending, n)
		recomputeReads(n, s.release)
	}
	if s.uses[n] > 0 {
		s.cache[n] = v
		s.stats.observe(len(s.cache))
	}
	return v[r.i]
}

// cacheStats observes the recomputation cache of the Backward calls of one
// Backend; it is set only by tests (Backend.stats) and is not safe for
// concurrent Backward calls.
type cacheStats struct {
	live, maxLive int            // cached values now, and at most since the last reset
	recomputes    int            // ops re-run
	repeats       int            // re-runs of a node already recomputed since the reset
	seen          map[*node]bool // nodes recomputed since the reset
}

// reset clears the counters; Backward calls it when it starts.
func (c *cacheStats) reset() {
	if c != nil {
		*c = cacheStats{seen: map[*node]bool{}}
	}
}

func (c *cacheStats) observe(live int) {
	if c != nil {
		c.live = live
		c.maxLive = max(c.maxLive, live)
	}
}

func (c *cacheStats) recompute(n *node) {
	if c != nil {
		c.recomputes++
		if c.seen[n] {
			c.repeats++
		}
		c.seen[n] = true
	}
}

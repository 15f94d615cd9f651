package fusion

import (
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// A plan is one flight's work, copied out of the Tensors under mu so that
// it runs without the lock: the nodes to evaluate in topological order
// (the drained roots and the recipes they read), which of them to write,
// and their grouping by shape, in dependency order.
type plan struct {
	nodes  []pnode
	groups [][]int32
}

// planGen stamps plans: a Tensor whose gen is the current plan's has been
// visited. It is process-wide, so a tensor never carries a stamp that
// another decorator's plan could take for its own.
var planGen atomic.Uint64

// pnode is one node of a plan.
type pnode struct {
	n     *Tensor
	node  ir.FusedNode
	shape []int
	args  [3]pref
	write bool
	// out is the computed value (written nodes only).
	out backend.Tensor
}

// pref is an operand in a plan: node idx of the plan, or the wrapped
// backend's tensor t (idx < 0).
type pref struct {
	idx int32
	t   backend.Tensor
}

// plan builds the plan of roots (drained nodes, which it marks in flight
// f) or of the recipe t. mu must be held.
func (b *Backend) plan(roots []*Tensor, recipe *Tensor, f *flight) *plan {
	gen := planGen.Add(1)
	p := &plan{nodes: make([]pnode, 0, len(roots)+1)}
	var visit func(n *Tensor) int32
	visit = func(n *Tensor) int32 {
		if n.gen == gen {
			return n.idx
		}
		pn := pnode{n: n, node: n.node, shape: n.shape}
		for a := range n.node.NumArgs() {
			o := n.args[a]
			switch {
			case o.lz == nil:
				pn.args[a] = pref{idx: -1, t: o.t}
			case o.lz.t != nil:
				pn.args[a] = pref{idx: -1, t: o.lz.t}
			default:
				pn.args[a] = pref{idx: visit(o.lz)}
			}
		}
		n.gen, n.idx = gen, int32(len(p.nodes))
		p.nodes = append(p.nodes, pn)
		return n.idx
	}
	for _, n := range roots {
		n.st, n.fl = nil, f
		visit(n)
		// A sink (no pending node read it), a tensor asked for, or one
		// too long to recompute (a later use would compute it alone) is
		// written; the others become recipes.
		if n.users == 0 || n.want || n.size > maxRecipe {
			p.nodes[n.idx].write = true
		}
		n.users, n.want = 0, false
	}
	if recipe != nil {
		p.nodes[visit(recipe)].write = true
	}

	// A node read by a node of another shape is written (constants are
	// inlined wherever they are read instead).
	for j := range p.nodes {
		pn := &p.nodes[j]
		for a := range pn.node.NumArgs() {
			if i := pn.args[a].idx; i >= 0 {
				src := &p.nodes[i]
				if src.node.Kind != ir.KindFull && !slices.Equal(src.shape, pn.shape) {
					src.write = true
				}
			}
		}
	}

	// Group by shape: every node except the constants that are not
	// written (they are inlined).
	var shapes [][]int
	for j := range p.nodes {
		pn := &p.nodes[j]
		if pn.node.Kind == ir.KindFull && !pn.write {
			continue
		}
		g := slices.IndexFunc(shapes, func(s []int) bool { return slices.Equal(s, pn.shape) })
		if g < 0 {
			g = len(shapes)
			shapes = append(shapes, pn.shape)
			p.groups = append(p.groups, nil)
		}
		p.groups[g] = append(p.groups[g], int32(j))
	}
	if len(p.groups) > 1 {
		p.groups = orderGroups(p)
	}
	p.groups = splitGroups(p, b.maxProgram)
	return p
}

// splitGroups cuts every group of more than max ops (constants that are
// not written do not count: they are inlined where they are read) into
// consecutive programs of at most max ops, in order; a node that a later
// program of its group reads is written, as a node another shape reads
// is. Programs stay small enough to compile quickly, and a long run of
// similar ops (a loop) gives programs of one signature, which a backend
// compiles once, instead of one long program per length.
func splitGroups(p *plan, max int) [][]int32 {
	split := false
	for _, g := range p.groups {
		if countOps(p, g) > max {
			split = true
			break
		}
	}
	if !split {
		return p.groups
	}
	chunkOf := make(map[int32]int, len(p.nodes))
	var out [][]int32
	for _, g := range p.groups {
		first := len(out)
		cur, ops := []int32(nil), 0
		for _, j := range g {
			isOp := p.nodes[j].node.Kind != ir.KindFull
			if isOp && ops == max {
				out = append(out, cur)
				cur, ops = nil, 0
			}
			cur = append(cur, j)
			if isOp {
				ops++
			}
		}
		out = append(out, cur)
		for c := first; c < len(out); c++ {
			for _, j := range out[c] {
				chunkOf[j] = c
			}
		}
		for c := first + 1; c < len(out); c++ {
			for _, j := range out[c] {
				pn := &p.nodes[j]
				for a := range pn.node.NumArgs() {
					i := pn.args[a].idx
					if i < 0 {
						continue
					}
					if h, ok := chunkOf[i]; ok && h >= first && h < c {
						p.nodes[i].write = true
					}
				}
			}
		}
	}
	return out
}

// countOps returns the number of nodes of g that are not constants.
func countOps(p *plan, g []int32) int {
	n := 0
	for _, j := range g {
		if p.nodes[j].node.Kind != ir.KindFull {
			n++
		}
	}
	return n
}

// orderGroups returns p's groups in dependency order: a group after every
// group whose written nodes it reads (elementwise ops broadcast up, so the
// group graph has no cycle; empty shapes make element counts no guide).
func orderGroups(p *plan) [][]int32 {
	groupOf := make([]int, len(p.nodes))
	for i := range groupOf {
		groupOf[i] = -1
	}
	for g, nodes := range p.groups {
		for _, j := range nodes {
			groupOf[j] = g
		}
	}
	deps := make([][]int, len(p.groups))
	for g, nodes := range p.groups {
		for _, j := range nodes {
			pn := &p.nodes[j]
			for a := range pn.node.NumArgs() {
				if i := pn.args[a].idx; i >= 0 {
					if h := groupOf[i]; h >= 0 && h != g && !slices.Contains(deps[g], h) {
						deps[g] = append(deps[g], h)
					}
				}
			}
		}
	}
	done := make([]bool, len(p.groups))
	out := make([][]int32, 0, len(p.groups))
	var visit func(g int)
	visit = func(g int) {
		if done[g] {
			return
		}
		done[g] = true
		for _, h := range deps[g] {
			visit(h)
		}
		out = append(out, p.groups[g])
	}
	for g := range p.groups {
		visit(g)
	}
	return out
}

// run computes p's groups in order on the wrapped backend.
func (b *Backend) run(p *plan) {
	for _, g := range p.groups {
		b.runGroup(p, g)
	}
}

// runGroup computes one group: a lone op as itself, anything longer as one
// fused program (op by op where the base backend declines it).
func (b *Backend) runGroup(p *plan, g []int32) {
	if countOps(p, g) <= 1 {
		// Nothing to fuse: run the ops as they came (a constant, or one op
		// with its constant operands).
		for _, j := range g {
			pn := &p.nodes[j]
			if pn.write {
				pn.out = b.execNode(p, pn)
			}
		}
		b.stats.Single.Add(1)
		return
	}

	prog := &ir.FusedProgram{Shape: p.nodes[g[0]].shape}
	var inputs []backend.Tensor
	local := make(map[int32]ir.FusedRef, len(g))
	input := func(t backend.Tensor) ir.FusedRef {
		// One input per tensor (x·x reads x once), where the backend's
		// tensor type can be compared.
		if reflect.TypeOf(t).Comparable() {
			for i, u := range inputs {
				if reflect.TypeOf(u) == reflect.TypeOf(t) && u == t {
					return ir.InputRef(i)
				}
			}
		}
		inputs = append(inputs, t)
		prog.Inputs = append(prog.Inputs, ir.FusedInput{DType: t.DType(), Shape: t.Shape()})
		return ir.InputRef(len(inputs) - 1)
	}
	var ref func(r pref) ir.FusedRef
	ref = func(r pref) ir.FusedRef {
		if r.idx < 0 {
			return input(r.t)
		}
		if l, ok := local[r.idx]; ok {
			return l
		}
		src := &p.nodes[r.idx]
		if src.node.Kind == ir.KindFull && !src.write {
			node := src.node
			prog.Nodes = append(prog.Nodes, node)
			l := ir.NodeRef(len(prog.Nodes) - 1)
			local[r.idx] = l
			return l
		}
		// A node of an earlier group, written there.
		return input(src.out)
	}
	var outs []int32
	for _, j := range g {
		pn := &p.nodes[j]
		node := pn.node
		for a := range node.NumArgs() {
			node.Args[a] = ref(pn.args[a])
		}
		prog.Nodes = append(prog.Nodes, node)
		local[j] = ir.NodeRef(len(prog.Nodes) - 1)
		if pn.write {
			prog.Outputs = append(prog.Outputs, len(prog.Nodes)-1)
			outs = append(outs, j)
		}
	}
	if len(outs) == 0 {
		return
	}
	res, ok := b.fuser.ExecFused(prog, inputs)
	if !ok {
		b.stats.Declined.Add(1)
		res = prog.Run(b.inner, inputs)
	} else {
		b.stats.Programs.Add(1)
	}
	for k, j := range outs {
		p.nodes[j].out = res[k]
	}
}

// execNode runs pn's op alone on the wrapped backend, its constant
// operands made as the op's builder made them.
func (b *Backend) execNode(p *plan, pn *pnode) backend.Tensor {
	op := ir.Op{Kind: pn.node.Kind, Sub: pn.node.Sub, DType: pn.node.DType, Shape: pn.shape}
	if op.Kind == ir.KindFull {
		op.Scalars[0] = pn.node.Value
		return b.inner.Exec(op)[0]
	}
	for a := range pn.node.NumArgs() {
		r := pn.args[a]
		if r.idx < 0 {
			op.In[a] = r.t
			continue
		}
		src := &p.nodes[r.idx]
		if src.out == nil {
			// An inlined constant: make it with its own shape.
			src.out = b.execNode(p, src)
		}
		op.In[a] = src.out
	}
	return b.inner.Exec(op)[0]
}

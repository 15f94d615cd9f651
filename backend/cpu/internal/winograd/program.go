package winograd

// The portable transforms: the programs of programs.go interpreted one
// lane at a time.

// opcode is an instruction of a program.
type opcode uint8

const (
	opAdd opcode = iota // d = a + b
	opSub               // d = a − b
	opMul               // d = a·c
	opFMA               // d = d + a·c, rounded once
	opOut               // output b = a
)

// op is one instruction on registers r0…r15 (inputs in r0…r(in−1)).
type op struct {
	code    opcode
	d, a, b uint8
	c       float32
}

// program is a one-dimensional transform of in values to out values.
type program struct {
	in, out int
	ops     []op
}

// run applies p to in, writing the outputs to out.
func (p *program) run(in, out []float32) {
	var r [16]float32
	copy(r[:], in[:p.in])
	for _, o := range p.ops {
		switch o.code {
		case opAdd:
			r[o.d] = r[o.a] + r[o.b]
		case opSub:
			r[o.d] = r[o.a] - r[o.b]
		case opMul:
			r[o.d] = r[o.a] * o.c
		case opFMA:
			r[o.d] = fma32(r[o.a], o.c, r[o.d])
		case opOut:
			out[o.b] = r[o.a]
		}
	}
}

// transform2D applies p to every column of the n×n tile in (n = p.in;
// vectors of lanes, element (i, j) in in[n·i+j]) and to every row of the
// result, writing (or, with add, adding) position (ξ, η) to the vector
// dst(ξ, η).
func transform2D(p *program, lanes int, in [][]float32, dst func(xi, eta int) []float32, add bool, tmp *Tmp) {
	n := p.in
	mid := tmp[:p.out*n]
	var a, b [16]float32
	for l := range lanes {
		for j := range n {
			for i := range n {
				a[i] = in[n*i+j][l]
			}
			p.run(a[:], b[:])
			for xi := range p.out {
				mid[xi*n+j] = b[xi]
			}
		}
		for xi := range p.out {
			p.run(mid[xi*n:], b[:])
			for eta := range p.out {
				if add {
					dst(xi, eta)[l] += b[eta]
				} else {
					dst(xi, eta)[l] = b[eta]
				}
			}
		}
	}
}

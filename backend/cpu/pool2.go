package cpu

import "github.com/emberml/ember/backend/cpu/internal/workers"

// The 2×2, stride-2 max pooling of contiguous float32 planes whose width
// is a multiple of 8 (the MNIST CNN's poolings) runs vector kernels
// (pool2_amd64.s, AVX2) with the semantics of maxPoolFwd and
// maxPoolBwdTiled bit for bit: taps in kernel order, the first NaN wins,
// ties keep the earlier tap; the gradient goes whole (plus +0) to the
// selected tap, +0 elsewhere.

// pool2Geom reports whether g and the layouts of the views (x with shape
// g, and the pooled ys, possibly none) fit the kernels.
func pool2Geom(g *poolGeom, x view4[float32], ys ...view4[float32]) bool {
	if !hasPool2 || g.kh != 2 || g.kw != 2 || g.sH != 2 || g.sW != 2 || g.pH != 0 || g.pW != 0 ||
		g.dH != 1 || g.dW != 1 || g.w%8 != 0 || g.ho != g.h/2 || g.wo != g.w/2 {
		return false
	}
	if x.st != [4]int{g.c * g.h * g.w, g.h * g.w, g.w, 1} {
		return false
	}
	for _, y := range ys {
		if y.st != [4]int{g.c * g.ho * g.wo, g.ho * g.wo, g.wo, 1} {
			return false
		}
	}
	return true
}

// maxPool2Fwd runs the forward kernel over every plane, or reports false
// when pool2Geom does not hold.
func maxPool2Fwd(out []float32, x view4[float32], g *poolGeom) bool {
	if !pool2Geom(g, x) {
		return false
	}
	hw, ohw := g.h*g.w, g.ho*g.wo
	workers.ParallelGrain(g.n*g.c, poolGrain(hw), func(lo, hi int) {
		if g.h%2 == 0 { // the planes' row pairs are contiguous
			maxPool2Rows(out[lo*ohw:hi*ohw], x.data[x.off+lo*hw:x.off+hi*hw], (hi-lo)*g.ho, g.w)
			return
		}
		for p := lo; p < hi; p++ {
			maxPool2Rows(out[p*ohw:(p+1)*ohw], x.data[x.off+p*hw:x.off+(p+1)*hw], g.ho, g.w)
		}
	})
	return true
}

// maxPool2Bwd runs the gradient kernel over every plane (rows no window
// reaches, the last of an odd height, are +0), or reports false when
// pool2Geom does not hold.
func maxPool2Bwd(out []float32, x, y, gr view4[float32], g *poolGeom) bool {
	if !pool2Geom(g, x, y, gr) {
		return false
	}
	hw, ohw := g.h*g.w, g.ho*g.wo
	workers.ParallelGrain(g.n*g.c, poolGrain(hw), func(lo, hi int) {
		if g.h%2 == 0 {
			maxPool2GradRows(out[lo*hw:hi*hw], x.data[x.off+lo*hw:x.off+hi*hw], y.data[y.off+lo*ohw:y.off+hi*ohw],
				gr.data[gr.off+lo*ohw:gr.off+hi*ohw], (hi-lo)*g.ho, g.w)
			return
		}
		for p := lo; p < hi; p++ {
			maxPool2GradRows(out[p*hw:(p+1)*hw], x.data[x.off+p*hw:x.off+(p+1)*hw], y.data[y.off+p*ohw:y.off+(p+1)*ohw],
				gr.data[gr.off+p*ohw:gr.off+(p+1)*ohw], g.ho, g.w)
			clear(out[p*hw+2*g.ho*g.w : (p+1)*hw])
		}
	})
	return true
}

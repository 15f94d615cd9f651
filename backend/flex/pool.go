package flex

import "sync"

// Roles of scratch buffers; each role has its own pool so that buffers of
// very different sizes do not displace each other.
const (
	bufPackA = iota // packed block of op(A)
	bufPackB        // packed block of op(B)
	bufCol          // im2col/col2im column matrices, vectors
	bufRoles
)

// Scratch buffers of the kernels, reused through one sync.Pool per role
// and element type.
var (
	scratchF32 [bufRoles]sync.Pool
	scratchF64 [bufRoles]sync.Pool
)

func scratchPool[T kernelFloat](role int) *sync.Pool {
	var z T
	if _, ok := any(z).(float32); ok {
		return &scratchF32[role]
	}
	return &scratchF64[role]
}

// getBuf returns a scratch slice of length n (contents unspecified) for the
// given role; give it back with putBuf and the same role.
func getBuf[T kernelFloat](role, n int) *[]T {
	if v := scratchPool[T](role).Get(); v != nil {
		if b := v.(*[]T); cap(*b) >= n {
			*b = (*b)[:n]
			return b
		}
	}
	s := make([]T, n)
	return &s
}

// putBuf returns a slice obtained from getBuf to the pool of its role.
func putBuf[T kernelFloat](role int, b *[]T) { scratchPool[T](role).Put(b) }

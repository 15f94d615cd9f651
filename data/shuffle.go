package data

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Permutation returns a pseudo-random permutation of 0..n-1 determined by
// seed and epoch alone: the same arguments give the same permutation on
// every run, platform and Go release. Different epochs of one seed give
// independent-looking permutations.
//
// The generator is PCG-DXSM (math/rand/v2.PCG, whose output sequence is
// fixed by its specification) seeded with (seed, splitmix64(epoch)),
// driving a Fisher–Yates shuffle with Lemire's unbiased bounded-integer
// method, so every permutation is equally likely. It panics if n < 0 or
// epoch < 0.
func Permutation(n int, seed uint64, epoch int) []int {
	if n < 0 || epoch < 0 {
		panic(fmt.Sprintf("data: Permutation(%d, seed, %d): n and epoch must be >= 0", n, epoch))
	}
	src := rand.NewPCG(seed, splitmix64(uint64(epoch)))
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := boundedUint64(src, uint64(i)+1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// boundedUint64 returns a uniform integer in [0, n) from src (n > 0),
// by Lemire's multiply-and-reject method ("Fast Random Integer Generation
// in an Interval", 2019).
func boundedUint64(src rand.Source, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// splitmix64 is the SplitMix64 finalizer (Steele, Lea, Flood 2014), used
// to spread consecutive epoch numbers over the PCG stream selector.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

//go:build !race

package cpu

// fusedRace is set when the race detector is on: the random tests then
// run fewer programs.
const fusedRace = false

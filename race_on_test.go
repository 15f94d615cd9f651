//go:build race

package ember

// raceEnabled reports whether the race detector instruments this build.
const raceEnabled = true

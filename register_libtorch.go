//go:build libtorch && cgo

package ember

// The libtorch backend ("libtorch", ATen through cgo, priority 5) exists
// only in builds with the libtorch build tag; it replaces the placeholder
// of drivers.go.
import _ "github.com/emberml/ember/backend/libtorch"

// Package dl holds what the CUDA bindings share for loading a shared
// library at run time with purego: opening the first library of a list of
// names, resolving a table of symbols, and reading C strings.
package dl

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// OpenFirst dlopens the first of names that loads (RTLD_NOW|RTLD_GLOBAL)
// and returns its handle and name. The error lists every name tried and the
// last loader message.
func OpenFirst(what string, names []string) (h uintptr, name string, err error) {
	var last error
	for _, n := range names {
		if h, err = purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			return h, n, nil
		}
		last = err
	}
	return 0, "", fmt.Errorf("%s not found (tried %s): %v", what, strings.Join(names, ", "), last)
}

// Sym is one entry point to resolve: its symbol name and where to store
// its address.
type Sym struct {
	P    *uintptr
	Name string
}

// Resolve looks up every symbol of syms in the library h (named lib in
// errors) and stores the addresses; it fails on the first missing symbol.
func Resolve(h uintptr, lib string, syms []Sym) error {
	for _, s := range syms {
		p, err := purego.Dlsym(h, s.Name)
		if err != nil {
			return fmt.Errorf("%s: symbol %s missing: %w", lib, s.Name, err)
		}
		*s.P = p
	}
	return nil
}

// CString copies the NUL-terminated C string at p ("" for NULL). p must
// point to C memory, which Go's collector never moves.
func CString(p uintptr) string {
	if p == 0 {
		return ""
	}
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}

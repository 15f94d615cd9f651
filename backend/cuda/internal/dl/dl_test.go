package dl

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestOpenFirstAndResolve(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses the Linux C library")
	}
	_, _, err := OpenFirst("libnothing", []string{"libnothing-a.so", "libnothing-b.so"})
	if err == nil || !strings.Contains(err.Error(), "libnothing-a.so, libnothing-b.so") {
		t.Fatalf("missing libraries: %v", err)
	}
	h, name, err := OpenFirst("libc", []string{"libnothing.so", "libc.so.6"})
	if err != nil || name != "libc.so.6" {
		t.Skipf("no libc.so.6 here: %v", err)
	}
	var strlen uintptr
	if err := Resolve(h, name, []Sym{{&strlen, "strlen"}}); err != nil || strlen == 0 {
		t.Fatalf("strlen: %v", err)
	}
	var missing uintptr
	if err := Resolve(h, name, []Sym{{&missing, "no_such_symbol_xyz"}}); err == nil || !strings.Contains(err.Error(), "no_such_symbol_xyz") {
		t.Fatalf("missing symbol: %v", err)
	}
}

func TestCString(t *testing.T) {
	if CString(0) != "" {
		t.Fatal("NULL is not empty")
	}
	b := []byte("ember\x00tail")
	if got := CString(uintptr(unsafe.Pointer(&b[0]))); got != "ember" {
		t.Fatalf("got %q", got)
	}
	runtime.KeepAlive(b)
}

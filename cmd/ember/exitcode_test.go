package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestExitCode checks the process status main gives: 0 on success, 128 +
// the signal's number for a command stopped by its cancelled context
// (Ctrl-C: 130, SIGTERM: 143; 130 when the cause is unknown), wrapped or
// joined with itself, and 1 for other errors, including a cancellation
// joined with another failure and a cancellation error returned while
// the context itself is still live.
func TestExitCode(t *testing.T) {
	live := context.Background()
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	term, cancelTerm := context.WithCancelCause(context.Background())
	cancelTerm(signalError{syscall.SIGTERM})
	intr, cancelIntr := context.WithCancelCause(context.Background())
	cancelIntr(signalError{os.Interrupt})
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
		{"interrupted, checkpoint not written", stopped, errors.Join(context.Canceled, errors.New("train: saving checkpoint: no such file or directory")), 1},
		{"interrupted twice over", stopped, errors.Join(context.Canceled, fmt.Errorf("step 3: %w", context.Canceled)), 130},
		{"SIGTERM", term, context.Canceled, 143},
		{"SIGINT", intr, fmt.Errorf("epoch 1: %w", context.Canceled), 130},
		{"SIGTERM, the cause returned", term, fmt.Errorf("step 7: %w", context.Cause(term)), 143},
		{"SIGINT, the cause joined with a failure", intr, errors.Join(context.Cause(intr), errors.New("disk full")), 1},
	} {
		if got := exitCode(c.ctx, c.err); got != c.want {
			t.Errorf("%s: exitCode = %d, want %d", c.name, got, c.want)
		}
	}
}

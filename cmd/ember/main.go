// Command ember trains and runs Ember models and inspects devices.
//
//	ember train     train a network on MNIST and report accuracy
//	ember devices   list the compute devices this machine offers
//	ember bench     measure device throughput
//	ember serve     host local devices for remote clients
//	ember graph     show a captured graph (one line per op, or Graphviz)
//	ember version   print version and build information
//
// Run `ember help <command>` for each command's flags. The device is
// chosen by --device where a command has it, else by the EMBER_DEVICE
// environment variable, else the best available device.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	// Ctrl-C (or SIGTERM) cancels the command's context, so long work
	// (training, serving) can stop cleanly and still save what it has; a
	// second signal ends the process at once.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		signal.Stop(sigs)
		cancel(signalError{s})
	}()
	err := newRootCmd().ExecuteContext(ctx)
	signal.Stop(sigs)
	code := exitCode(ctx, err)
	if code == 1 {
		// Errors of the ember package already start with "ember: ".
		fmt.Fprintln(os.Stderr, "ember:", strings.TrimPrefix(err.Error(), "ember: "))
	}
	os.Exit(code)
}

// signalError is the cause of the command context's cancellation: the
// signal received.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "received " + e.sig.String() }

// exitCode is the process status for a command's error: 0 without one;
// when the command stopped only because a signal cancelled ctx (it has
// said what it saved, and "context canceled" adds nothing), the shell's
// status for a process that signal ended, 128 + its number (130 for
// Ctrl-C, 143 for SIGTERM); 1 for any other error, a cancellation joined
// with another failure (a checkpoint that could not be written) included.
func exitCode(ctx context.Context, err error) int {
	switch {
	case err == nil:
		return 0
	case !onlyCancelled(ctx, err):
		return 1
	}
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		if n, ok := se.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return 130
}

// onlyCancelled reports whether err is ctx's cancellation and nothing
// else: ctx is done, and every error err joins (errors.Join) is, or
// wraps, ctx.Err() or its cause (context.Cause: the signal received).
func onlyCancelled(ctx context.Context, err error) bool {
	if ctx.Err() == nil || err == nil {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs := j.Unwrap()
		for _, e := range errs {
			if !onlyCancelled(ctx, e) {
				return false
			}
		}
		return len(errs) > 0
	}
	if err == ctx.Err() || err == context.Cause(ctx) {
		return true
	}
	return onlyCancelled(ctx, errors.Unwrap(err))
}

// deviceEnvError is an error about the device EMBER_DEVICE named: it says
// so, and reads "EMBER_DEVICE=cuda:0: cuda:0: init: ..." without a second
// "ember: " inside.
type deviceEnvError struct {
	name string
	err  error
}

// envDeviceError wraps err, about the device name that came from
// EMBER_DEVICE.
func envDeviceError(name string, err error) error { return &deviceEnvError{name, err} }

func (e *deviceEnvError) Error() string {
	return "EMBER_DEVICE=" + e.name + ": " + strings.TrimPrefix(e.err.Error(), "ember: ")
}

func (e *deviceEnvError) Unwrap() error { return e.err }

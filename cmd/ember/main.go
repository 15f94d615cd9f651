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
	// Ctrl-C cancels the command's context, so long work (training,
	// serving) can stop cleanly and still save what it has.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	code := exitCode(ctx, err)
	if code == 1 {
		// Errors of the ember package already start with "ember: ".
		fmt.Fprintln(os.Stderr, "ember:", strings.TrimPrefix(err.Error(), "ember: "))
	}
	os.Exit(code)
}

// exitCode is the process status for a command's error: 0 without one,
// 130 (the shell's status for a process stopped by SIGINT) when the
// command stopped because ctx was cancelled by Ctrl-C or SIGTERM (the
// command has said what it saved; "context canceled" adds nothing), 1
// for any other error.
func exitCode(ctx context.Context, err error) int {
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return 130
	}
	return 1
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

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// ServeConfig is the configuration of `ember serve`.
type ServeConfig struct {
	// Listen is the address to listen on, host:port.
	Listen string
	// Context is cancelled on Ctrl-C; the server then shuts down.
	Context context.Context
	// Out is the command's standard output.
	Out io.Writer
}

// runServe carries out `ember serve`.
var runServe = func(cfg ServeConfig) error {
	return fmt.Errorf("serve: %w", errNotImplemented)
}

func newServeCmd() *cobra.Command {
	var cfg ServeConfig
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "Host this machine's devices for remote clients (not in this build yet)",
		Hidden: true,
		Long: `Serve the local devices over the network so that other programs can use
them as remote devices, e.g. ember.RemoteWebSocket("host:3000", 0) or
EMBER_DEVICE=remote+ws://host:3000/0. Runs until interrupted.`,
		Example: `  ember serve
  ember serve --listen 0.0.0.0:3000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Context = cmd.Context()
			cfg.Out = cmd.OutOrStdout()
			return runServe(cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Listen, "listen", "localhost:3000", "address to listen on, `host:port`")
	return cmd
}

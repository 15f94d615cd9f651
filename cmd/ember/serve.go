package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/emberml/ember/backend/remote"
	"github.com/spf13/cobra"
)

// ServeConfig is the configuration of `ember serve`.
type ServeConfig struct {
	// Listen is the address to listen on, host:port (port 0: any free
	// port, printed on start).
	Listen string
	// Device is the backend whose local devices are hosted ("cpu",
	// "cuda", "flex", ...).
	Device string
	// QUIC serves over QUIC with key identities instead of WebSocket.
	QUIC bool
	// KeyPath is the file of the server's QUIC key (created when
	// missing; empty: a fresh key per run).
	KeyPath string
	// AuthorizedKeys is a file of client PeerIDs that may connect (QUIC
	// only); empty admits any key.
	AuthorizedKeys string
	// Credentials is a file of credentials one of which a client must
	// present; empty requires none.
	Credentials string
	// MaxFrame is the largest frame the server reads, in bytes.
	MaxFrame int
	// MaxTensorBytes and MaxTensors are the per-session limits.
	MaxTensorBytes int64
	MaxTensors     int
	// Context is cancelled on Ctrl-C or SIGTERM; the server then stops
	// accepting, finishes the batches in hand and closes every session.
	Context context.Context
	// Out is the command's standard output (the listening address);
	// ErrOut receives the structured logs.
	Out, ErrOut io.Writer
}

// runServe carries out `ember serve`.
var runServe = serve

// serve hosts the devices of cfg.Device until cfg.Context is done.
func serve(cfg ServeConfig) error {
	ctx := cfg.Context
	if ctx == nil {
		ctx = context.Background()
	}
	errOut := cfg.ErrOut
	if errOut == nil {
		errOut = os.Stderr
	}
	if cfg.AuthorizedKeys != "" && !cfg.QUIC {
		return errors.New("serve: --authorized-keys names QUIC client keys and needs --quic (WebSocket clients have no key; use --credentials)")
	}
	if cfg.KeyPath != "" && !cfg.QUIC {
		return errors.New("serve: --key is the QUIC identity and needs --quic")
	}
	var auths []remote.PeerAuthorizer
	if cfg.AuthorizedKeys != "" {
		a, err := remote.ReadAuthorizedKeys(cfg.AuthorizedKeys)
		if err != nil {
			return fmt.Errorf("serve: --authorized-keys: %w", err)
		}
		auths = append(auths, a)
	}
	if cfg.Credentials != "" {
		a, err := remote.ReadCredentials(cfg.Credentials)
		if err != nil {
			return fmt.Errorf("serve: --credentials: %w", err)
		}
		auths = append(auths, a)
	}
	opts := remote.ServerOptions{
		Backend: cfg.Device, MaxFrame: cfg.MaxFrame, MaxTensorBytes: cfg.MaxTensorBytes, MaxTensors: cfg.MaxTensors,
		Logger: slog.New(slog.NewTextHandler(errOut, nil)),
	}
	switch len(auths) {
	case 1:
		opts.Authorizer = auths[0]
	case 2:
		opts.Authorizer = remote.AllOf(auths...)
	}
	maxFrame := cfg.MaxFrame
	if maxFrame <= 0 {
		maxFrame = remote.DefaultMaxFrame
	}
	var ep *remote.Endpoint
	if cfg.QUIC {
		var err error
		if cfg.KeyPath != "" {
			ep, err = remote.LoadOrCreateEndpoint(cfg.KeyPath)
		} else {
			ep, err = remote.GenerateEndpoint()
		}
		if err != nil {
			return fmt.Errorf("serve: QUIC identity: %w", err)
		}
		opts.Peer = ep.ID()
	}
	srv, err := remote.NewServer(opts)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	var l remote.Listener
	if cfg.QUIC {
		l, err = remote.ListenQUIC(ep, cfg.Listen, maxFrame)
	} else {
		l, err = remote.ListenWebSocket(cfg.Listen, maxFrame)
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	devs := srv.Devices()
	if cfg.QUIC {
		fmt.Fprintf(cfg.Out, "ember serve: %d %s device(s) on quic://%s, peer id %s\n", len(devs), cfg.Device, l.Addr(), ep.ID())
	} else {
		fmt.Fprintf(cfg.Out, "ember serve: %d %s device(s) on ws://%s\n", len(devs), cfg.Device, l.Addr())
	}
	for _, d := range devs {
		name := fmt.Sprintf("remote+ws://%s/%d", l.Addr(), d.Index)
		if cfg.QUIC {
			name = fmt.Sprintf("remote+quic://%s@%s/%d", ep.ID(), l.Addr(), d.Index)
		}
		fmt.Fprintf(cfg.Out, "  %s  (%s: %s, %.1f GiB)\n", name, d.Name, d.Info.Name, float64(d.Info.MemoryBytes)/(1<<30))
	}
	if err := srv.Serve(ctx, l); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(cfg.Out, "ember serve: shut down")
	return nil
}

func newServeCmd() *cobra.Command {
	cfg := ServeConfig{Device: "cpu"}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host this machine's devices for remote clients",
		Long: `Serve the local devices of one backend over the network, so that other
programs run their tensor programs on them as remote devices:
ember.RemoteWebSocket("ws://host:3000", 0), or --device / EMBER_DEVICE
remote+ws://host:3000/0. Each connection is a session with its own
tensors, freed when it ends. Runs until interrupted (Ctrl-C or SIGTERM),
then finishes the work in hand and closes every session.

With --quic the server speaks QUIC with an ed25519 key identity: it prints
its peer id, which clients pin (remote+quic://PEERID@host:port/0), and
--authorized-keys restricts the client keys it admits. --credentials
requires a credential from a file (one per line) over either transport.
Logs (sessions, refusals, errors) go to standard error.`,
		Example: `  ember serve
  ember serve --listen 0.0.0.0:3000 --device cuda
  ember serve --quic --key server.key --authorized-keys clients.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Context = cmd.Context()
			cfg.Out = cmd.OutOrStdout()
			cfg.ErrOut = cmd.ErrOrStderr()
			return runServe(cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "localhost:"+remote.DefaultPort, "address to listen on, `host:port`")
	f.StringVar(&cfg.Device, "device", "cpu", "backend whose local devices are hosted: `cpu`, cuda, flex, ...")
	f.BoolVar(&cfg.QUIC, "quic", false, "serve over QUIC with key identities instead of WebSocket")
	f.StringVar(&cfg.KeyPath, "key", "", "QUIC: the server's key `file` (created when missing; default a fresh key)")
	f.StringVar(&cfg.AuthorizedKeys, "authorized-keys", "", "QUIC: `file` of client peer ids allowed to connect")
	f.StringVar(&cfg.Credentials, "credentials", "", "`file` of credentials, one of which clients must present")
	f.IntVar(&cfg.MaxFrame, "max-frame", remote.DefaultMaxFrame, "largest frame read from a client, in `bytes`")
	f.Int64Var(&cfg.MaxTensorBytes, "max-tensor-bytes", remote.DefaultMaxTensorBytes, "largest tensor a session may hold, in `bytes`")
	f.IntVar(&cfg.MaxTensors, "max-tensors", remote.DefaultMaxTensors, "most tensors one session may hold")
	return cmd
}

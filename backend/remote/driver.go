package remote

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/emberml/ember/backend"
)

// The drivers of the remote device types. A device's DeviceID names the
// server in Addr and the server's device in Index:
//
//	remote+ws    Addr "host:port" (port DefaultPort when absent): ws://host:port/
//	remote+wss   Addr "host[:port]": wss://host[:port]/ (TLS, for a server behind a TLS proxy)
//	remote+quic  Addr "PEERID@host:port": QUIC to the peer whose key is PEERID
//
// Open connects and runs the handshake with the options SetDeviceOptions
// recorded for the device (or for its whole server), else the defaults
// with the credential of the EMBER_REMOTE_CREDENTIAL environment variable.

func init() {
	backend.Register("remote+ws", driver{typ: "remote+ws"})
	backend.Register("remote+wss", driver{typ: "remote+wss"})
	backend.Register("remote+quic", driver{typ: "remote+quic"})
}

// driver opens remote devices of one type.
type driver struct{ typ string }

// Open connects to the device's server and opens a session on its device.
func (d driver) Open(id backend.DeviceID) (backend.Backend, error) {
	opts := optionsFor(id)
	ctx, cancel := context.WithTimeout(context.Background(), opts.withDefaults().Timeout)
	defer cancel()
	conn, err := dial(ctx, id, opts)
	if err != nil {
		return nil, err
	}
	c, err := Connect(context.Background(), conn, id, id.Index, opts)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Devices lists none: remote devices are found by Enumerate with a remote
// type (ListServer), which connects.
func (driver) Devices() []backend.DeviceID { return nil }

// Priority is below every local backend's: DefaultDevice never picks a
// remote device unless EMBER_DEVICE names it.
func (driver) Priority() int { return 1 }

// dial opens the transport of a remote DeviceID.
func dial(ctx context.Context, id backend.DeviceID, opts ClientOptions) (Conn, error) {
	maxFrame := opts.withDefaults().MaxFrame
	switch id.Type {
	case "remote+ws":
		return DialWebSocket(ctx, webSocketURL("ws", id.Addr), maxFrame)
	case "remote+wss":
		return DialWebSocket(ctx, webSocketURL("wss", id.Addr), maxFrame)
	case "remote+quic":
		addr, err := ParseQUICAddr(id.Addr)
		if err != nil {
			return nil, fmt.Errorf("remote: %s: %w", id, err)
		}
		ep := opts.Endpoint
		if ep == nil {
			if ep, err = DefaultEndpoint(); err != nil {
				return nil, fmt.Errorf("remote: %s: %w", id, err)
			}
		}
		conn, err := DialQUIC(ctx, ep, addr, maxFrame)
		if err != nil {
			return nil, fmt.Errorf("remote: %s: %w", id, err)
		}
		return conn, nil
	}
	return nil, fmt.Errorf("remote: %s: not a remote device type: %w", id, backend.ErrInvalidDevice)
}

// ParseQUICAddr parses the address of a remote+quic device,
// "PEERID@host:port" (PEERID in PeerID's text form): the inverse of
// EndpointAddr.String.
func ParseQUICAddr(s string) (EndpointAddr, error) {
	peer, hostPort, ok := strings.Cut(s, "@")
	if !ok || peer == "" || hostPort == "" {
		return EndpointAddr{}, fmt.Errorf("QUIC address %q is not PEERID@HOST:PORT", s)
	}
	id, err := ParsePeerID(peer)
	if err != nil {
		return EndpointAddr{}, fmt.Errorf("QUIC address %q: %w", s, err)
	}
	return EndpointAddr{ID: id, Addr: hostPort}, nil
}

// ListServer connects to the server of a remote DeviceID (its Index is
// ignored) and lists every device it hosts, with the options recorded for
// that server (SetDeviceOptions with index -1) or the defaults.
func ListServer(ctx context.Context, id backend.DeviceID) ([]DeviceDesc, error) {
	id.Index = -1
	opts := optionsFor(id)
	ctx, cancel := context.WithTimeout(ctx, opts.withDefaults().Timeout)
	defer cancel()
	conn, err := dial(ctx, id, opts)
	if err != nil {
		return nil, err
	}
	id.Index = 0
	return ListDevices(ctx, conn, id, opts)
}

var deviceOptions sync.Map // backend.DeviceID -> ClientOptions

// SetDeviceOptions records the options the driver connects to device id
// with (Timeout, Credential, Endpoint, batching). With id.Index -1 they
// apply to every device of that server that has none of its own. They
// take effect when the device is opened (Device.Init or its first op);
// a device already open keeps its connection. A zero Timeout in opts
// keeps the one recorded for the whole server (id.Index -1), if any.
func SetDeviceOptions(id backend.DeviceID, opts ClientOptions) {
	if opts.Timeout == 0 && id.Index != -1 {
		all := id
		all.Index = -1
		if o, ok := deviceOptions.Load(all); ok {
			opts.Timeout = o.(ClientOptions).Timeout
		}
	}
	deviceOptions.Store(id, opts)
}

// optionsFor returns the options recorded for id, else those of its
// server, else the defaults with EMBER_REMOTE_CREDENTIAL.
func optionsFor(id backend.DeviceID) ClientOptions {
	if o, ok := deviceOptions.Load(id); ok {
		return o.(ClientOptions)
	}
	all := id
	all.Index = -1
	if o, ok := deviceOptions.Load(all); ok {
		return o.(ClientOptions)
	}
	var o ClientOptions
	if c := os.Getenv("EMBER_REMOTE_CREDENTIAL"); c != "" {
		o.Credential = []byte(c)
	}
	return o
}

var (
	defaultEPOnce sync.Once
	defaultEP     *Endpoint
	defaultEPErr  error
)

// DefaultEndpoint is the QUIC identity of clients that give none: the
// key in the file named by the EMBER_REMOTE_KEY environment variable
// (created when missing, see LoadOrCreateEndpoint), else a fresh key made
// once per process.
func DefaultEndpoint() (*Endpoint, error) {
	defaultEPOnce.Do(func() {
		if path := os.Getenv("EMBER_REMOTE_KEY"); path != "" {
			defaultEP, defaultEPErr = LoadOrCreateEndpoint(path)
			return
		}
		defaultEP, defaultEPErr = GenerateEndpoint()
	})
	return defaultEP, defaultEPErr
}

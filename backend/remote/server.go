package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emberml/ember/backend"
)

// ServerOptions configure a Server. The zero value hosts the cpu
// backend's device, admits every client and applies the default limits.
type ServerOptions struct {
	// Backend is the registered driver whose local devices the server
	// hosts, in the order its Devices lists them ("cpu" when empty and
	// Backends is nil).
	Backend string
	// Backends, when not nil, are the hosted devices (index i is
	// Backends[i]) instead of Backend's.
	Backends []backend.Backend
	// Authorizer decides which clients may open a session (AllowAll
	// when nil).
	Authorizer PeerAuthorizer
	// Peer is the server's own PeerID, reported to clients in the
	// handshake (the QUIC endpoint's; zero for WebSocket only).
	Peer PeerID
	// MaxFrame is the largest frame the server reads (DefaultMaxFrame);
	// the listener must be made with the same limit. A larger frame
	// closes its session.
	MaxFrame int
	// MaxTensorBytes is the largest tensor a session may upload or
	// compute (DefaultMaxTensorBytes); a larger one fails its task with
	// an error wrapping ErrLimit.
	MaxTensorBytes int64
	// MaxTensors is the most tensors one session may hold
	// (DefaultMaxTensors); past it tasks fail with an error wrapping
	// ErrLimit.
	MaxTensors int
	// Timeout bounds a client's handshake (DefaultTimeout).
	Timeout time.Duration
	// ClientTimeout is the time after which a client that answers no
	// ping is dropped, its session freed (DefaultClientTimeout).
	ClientTimeout time.Duration
	// Logger receives the server's structured logs (slog.Default when
	// nil): sessions opened and closed, refusals, failed frames.
	Logger *slog.Logger
}

// Server hosts the local devices of one backend for remote clients: one
// session per connection, each with its own tensor table (tensor ids are
// numbers the client chose for its session, unknown to every other
// session), freed when the session ends, however it ends. Tasks of a
// session run in order on the device's backend; an op runs with ir.Run,
// so kinds the backend lacks are lowered on the server. A failed task
// (an op that does not infer, a bad index, a panic in a kernel) is
// reported to its requester and does not end the session; a malformed or
// oversize frame ends that session only.
//
// The server is Burn's burn-remote server, with authorization before any
// session state (PeerAuthorizer) and refusals the client can show.
type Server struct {
	opts    ServerOptions
	log     *slog.Logger
	devices []hosted
	id      [sessionIDLen]byte

	transfers transfers

	mu       sync.Mutex
	sessions map[*session]struct{}

	opened, refused, tensors, bytes atomic.Int64
}

// hosted is one device of the server.
type hosted struct {
	b    backend.Backend
	desc wireDevice
	// checks says the backend checks indices itself
	// (backend.IndexChecker), checksDivisors that it checks integer
	// divisors (backend.DivisorChecker); otherwise the session does.
	checks, checksDivisors bool
}

// ServerStats are a server's counters.
type ServerStats struct {
	// Sessions is the number of open sessions.
	Sessions int
	// Opened counts the sessions opened since the server started.
	Opened int64
	// Refused counts the clients refused in the handshake (another
	// version, a bad device index, the PeerAuthorizer's refusal).
	Refused int64
	// Tensors and Bytes are what the open sessions hold: the number of
	// tensors (and failed results) in their tables and the bytes of
	// those tensors (shape × dtype size).
	Tensors, Bytes int64
	// Transfers is the number of exported tensors not imported yet.
	Transfers int
}

// NewServer opens the devices to host. It fails when the backend is not
// registered, has no device, or a device does not open.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	opts.MaxFrame = max(opts.MaxFrame, minFrame)
	if opts.MaxTensorBytes <= 0 {
		opts.MaxTensorBytes = DefaultMaxTensorBytes
	}
	if opts.MaxTensors <= 0 {
		opts.MaxTensors = DefaultMaxTensors
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ClientTimeout <= 0 {
		opts.ClientTimeout = DefaultClientTimeout
	}
	if opts.Authorizer == nil {
		opts.Authorizer = AllowAll
	}
	s := &Server{opts: opts, log: opts.Logger, sessions: map[*session]struct{}{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	rand.Read(s.id[:])
	bs := opts.Backends
	if bs == nil {
		name := opts.Backend
		if name == "" {
			name = "cpu"
		}
		drv, ok := backend.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("remote: serve: no backend %q is registered (registered: %v)", name, backend.Drivers())
		}
		for _, id := range drv.Devices() {
			b, err := drv.Open(id)
			if err != nil {
				return nil, fmt.Errorf("remote: serve: open %v: %w", id, err)
			}
			bs = append(bs, b)
		}
		if len(bs) == 0 {
			return nil, fmt.Errorf("remote: serve: the %s backend has no device on this machine: %w", name, backend.ErrBackendUnavailable)
		}
	}
	if len(bs) == 0 {
		return nil, fmt.Errorf("remote: serve: no device to host")
	}
	for _, b := range bs {
		h := hosted{b: b, desc: wireDevice{Name: b.ID().String(), Model: b.ID().Type}}
		if dd, ok := backend.As[backend.DeviceDescriber](b); ok {
			info := dd.DeviceInfo()
			h.desc.Model, h.desc.Memory = info.Name, info.MemoryBytes
		}
		if sr, ok := backend.As[backend.SettingsReporter](b); ok {
			st := sr.DeviceSettings()
			h.desc.Settings = wireSettings{Float: backend.DType(st.FloatDType), Int: backend.DType(st.IntDType), Bool: uint8(st.BoolDType)}
		}
		if ic, ok := backend.As[backend.IndexChecker](b); ok {
			h.checks = ic.ChecksIndicesOnDevice()
		}
		if dc, ok := backend.As[backend.DivisorChecker](b); ok {
			h.checksDivisors = dc.ChecksDivisorsOnDevice()
		}
		s.devices = append(s.devices, h)
	}
	return s, nil
}

// Devices lists the hosted devices.
func (s *Server) Devices() []DeviceDesc {
	out := make([]DeviceDesc, len(s.devices))
	for i := range s.devices {
		out[i] = s.devices[i].desc.desc(i)
	}
	return out
}

// Stats returns the server's counters.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	n := len(s.sessions)
	s.mu.Unlock()
	return ServerStats{Sessions: n, Opened: s.opened.Load(), Refused: s.refused.Load(),
		Tensors: s.tensors.Load(), Bytes: s.bytes.Load(), Transfers: s.transfers.len()}
}

// Serve accepts clients from l until ctx is done or l fails, running one
// session per connection. When ctx is done it stops accepting, lets each
// session finish the batches it has received, tells its client that the
// server is shutting down, closes it, and returns nil once every session
// has ended. It returns l's error when accepting fails otherwise (after
// the sessions ended the same way). Serve may run on several listeners
// at once (WebSocket and QUIC).
func (s *Server) Serve(ctx context.Context, l Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	var wg sync.WaitGroup
	var err error
	for {
		conn, aerr := l.Accept(ctx)
		if aerr != nil {
			if ctx.Err() == nil && !errors.Is(aerr, net.ErrClosed) {
				err = aerr
				s.log.Error("accept failed", "addr", l.Addr(), "err", aerr)
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(ctx, conn)
		}()
	}
	cancel()
	wg.Wait()
	return err
}

// remoteAddr is the peer address of conn where the transport knows it.
func remoteAddr(conn Conn) string {
	if a, ok := conn.(interface{ RemoteAddr() string }); ok {
		return a.RemoteAddr()
	}
	return ""
}

// handle runs the handshake and, when the client is admitted, its
// session.
func (s *Server) handle(ctx context.Context, conn Conn) {
	log := s.log.With("remote", remoteAddr(conn))
	if p := conn.Peer(); !p.IsZero() {
		log = log.With("peer", p.String())
	}
	hctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	b, err := conn.ReadFrame(hctx)
	cancel()
	if err != nil {
		log.Warn("handshake failed", "err", err)
		conn.Close(err)
		return
	}
	ver, h, err := decodeHello(b)
	switch {
	case err != nil:
		log.Warn("malformed handshake", "err", err)
		s.refuse(conn, &welcome{Version: ProtocolVersion, Refusal: errorf(codeMalformed, "handshake", "%v", err)}, err)
		return
	case ver != ProtocolVersion:
		msg := fmt.Sprintf("the client speaks protocol version %d, this server speaks version %d", ver, ProtocolVersion)
		log.Warn("protocol version mismatch", "client_version", ver, "server_version", ProtocolVersion)
		s.refuse(conn, &welcome{Version: ProtocolVersion, Refusal: errorf(codeVersion, "handshake", "%s", msg)}, fmt.Errorf("%w: %s", ErrVersion, msg))
		return
	}
	sid := hex.EncodeToString(h.Session)
	log = log.With("session", sid)
	index := h.Device
	if h.List {
		index = -1
	} else if index >= len(s.devices) {
		msg := fmt.Sprintf("the server hosts %d devices, there is no device %d", len(s.devices), index)
		log.Warn("refused", "reason", msg)
		s.refuse(conn, &welcome{Version: ProtocolVersion, Refusal: errorf(codeBadDevice, "handshake", "%s", msg)}, fmt.Errorf("%w: %s", ErrUnauthorized, msg))
		return
	}
	if err := s.authorize(conn.Peer(), index, h.Credential); err != nil {
		log.Warn("refused", "device", index, "reason", err)
		s.refuse(conn, &welcome{Version: ProtocolVersion, Refusal: errorf(codeUnauthorized, "handshake", "refused: %v", err)}, fmt.Errorf("%w: %v", ErrUnauthorized, err))
		return
	}
	w := s.welcome()
	if h.List {
		if out, err := marshal(w); err == nil {
			wctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
			conn.WriteFrame(wctx, out)
			cancel()
		}
		log.Info("listed devices")
		conn.Close(nil)
		return
	}
	ss := s.newSession(conn, index, int(min(h.MaxFrame, uint64(maxInt))), log.With("device", s.devices[index].desc.Name))
	out, err := marshal(w)
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
		err = conn.WriteFrame(wctx, out)
		cancel()
	}
	if err != nil {
		ss.log.Warn("handshake failed", "err", err)
		ss.end(err)
		return
	}
	ss.log.Info("session opened")
	ss.run(ctx.Done())
}

// authorize runs the PeerAuthorizer, turning a panic into a refusal.
func (s *Server) authorize(peer PeerID, index int, cred []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the authorizer failed: %v", r)
		}
	}()
	return s.opts.Authorizer.Authorize(peer, index, cred)
}

// refuse sends a refusal and closes conn with reason.
func (s *Server) refuse(conn Conn, w *welcome, reason error) {
	s.refused.Add(1)
	if out, err := marshal(w); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
		conn.WriteFrame(ctx, out)
		cancel()
	}
	conn.Close(reason)
}

// welcome is the server's answer to an admitted client.
func (s *Server) welcome() *welcome {
	w := &welcome{Version: ProtocolVersion, Server: s.id[:], MaxFrame: uint64(s.opts.MaxFrame),
		MaxTensorBytes: uint64(s.opts.MaxTensorBytes), MaxTensors: uint64(s.opts.MaxTensors)}
	if !s.opts.Peer.IsZero() {
		w.Peer = s.opts.Peer[:]
	}
	for _, d := range s.devices {
		w.Devices = append(w.Devices, d.desc)
	}
	return w
}

package remote

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
)

// The QUIC transport (RFC 9000, through github.com/quic-go/quic-go) with
// key identities, after iroh's (the transport of Burn's remote backend):
//
//   - Handshake: TLS 1.3 only (RFC 9001), ALPN QUICNextProto. Each side
//     presents one self-signed X.509 certificate of its ed25519 key
//     (RFC 8410); certificates are checked by key, never by chain, name or
//     validity dates, so clocks do not matter. The client pins the server's
//     key (EndpointAddr.ID) and the server requires a client certificate, so
//     a peer without the private key of a well-formed ed25519 certificate
//     (TLS's CertificateVerify proves possession) cannot finish the
//     handshake. Session tickets and 0-RTT are off: every connection is a
//     full handshake.
//   - Stream: one bidirectional stream per connection, opened by the
//     client. The client sends an empty frame and the server answers with
//     one before DialQUIC and Accept return, so a dial succeeds only once
//     the server has admitted the client's key.
//   - Records: each record is a header, a QUIC variable-length integer
//     (RFC 9000 §16: 1, 2, 4 or 8 bytes, the top two bits of the first byte
//     giving the length) holding length<<1 | kind, followed by length bytes.
//     Kind 0 is a frame; kind 1 is the close record that Conn.Close sends
//     last: a QUIC varint close code followed by the reason in UTF-8
//     (at most quicMaxCloseRecord bytes in all).
//   - Close: Conn.Close(reason) sends the close record and the stream's
//     FIN after every frame already written and waits (at most
//     quicCloseLinger) for the peer to read them, which it acknowledges by
//     closing the QUIC connection; it then closes the connection with
//     CONNECTION_CLOSE carrying the same code and reason, so the peer gets
//     the reason even when it was not reading.

// Close codes: QUIC application error codes, also carried in close records.
const (
	quicCodeNormal       quic.ApplicationErrorCode = 0 // Close(nil)
	quicCodeError        quic.ApplicationErrorCode = 1 // Close(err)
	quicCodeProtocol     quic.ApplicationErrorCode = 2 // a record broke the framing or a limit
	quicCodeUnauthorized quic.ApplicationErrorCode = 3 // Close(err) with err wrapping ErrUnauthorized
)

// QUICNextProto is the ALPN protocol name (RFC 7301) of Ember's remote
// protocol over QUIC; the number is the framing's version.
const QUICNextProto = "ember-remote/1"

// DefaultQUICIdleTimeout is the idle timeout of QUIC connections when
// QUICConfig.IdleTimeout is zero. With keep-alive packets every quarter of
// it, a peer that vanished (crashed, unplugged) without closing is found
// gone at most 1.25 idle timeouts after its last packet (RFC 9000 §10.1
// restarts the timer at the first packet sent after the last one
// received): 3.75 s, under the 5 s that remote devices promise.
const DefaultQUICIdleTimeout = 3 * time.Second

// DefaultQUICHandshakeTimeout bounds the QUIC/TLS handshake and the
// stream-open exchange when QUICConfig.HandshakeTimeout is zero.
const DefaultQUICHandshakeTimeout = 10 * time.Second

const (
	// quicCloseLinger bounds how long Close waits for the peer to read the
	// frames written before it.
	quicCloseLinger = 2 * time.Second
	// quicMaxCloseRecord bounds a close record (code and reason), and
	// quicMaxCloseReason the reason text Close sends.
	quicMaxCloseRecord = 1100
	quicMaxCloseReason = 1024
	// quicMaxPending bounds the connections a listener holds between the
	// TLS handshake and Accept (stream-open exchange or waiting for
	// Accept); beyond it new handshakes wait in quic-go's queue, which
	// refuses clients when full.
	quicMaxPending = 64
)

// errQUICFraming is wrapped by errors for records that break the framing.
var errQUICFraming = errors.New("remote: QUIC framing violated")

// QUICConfig configures QUIC listeners and dials beyond what ListenQUIC and
// DialQUIC take; the zero value of each field means its default. Use it as
// net.ListenConfig and net.Dialer are used:
//
//	ln, err := remote.QUICConfig{MaxFrame: 64 << 20, IdleTimeout: time.Second}.Listen(ep, ":4433")
type QUICConfig struct {
	// MaxFrame is the largest frame, in bytes, that a Conn reads (a larger
	// one is an error wrapping ErrFrameTooLarge, raised before anything is
	// allocated for it); it must be positive. A reader allocates at most
	// MaxFrame bytes per frame, and a peer can make it do so by claiming
	// that length, so choose it for the memory a connection may hold.
	MaxFrame int
	// IdleTimeout closes a connection after this long without a packet
	// from the peer (the effective value is the smaller of the two sides';
	// quic-go raises it to three probe timeouts on slow paths), counted
	// from the first packet sent after the last one received, so a
	// vanished peer is found within 1.25 IdleTimeout. Keep-alive packets
	// go every IdleTimeout/4, so an idle but healthy connection stays
	// open. Zero means DefaultQUICIdleTimeout.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the QUIC/TLS handshake plus the stream-open
	// exchange, on both sides (a dial also stops at its context's
	// deadline). Zero means DefaultQUICHandshakeTimeout.
	HandshakeTimeout time.Duration
}

// resolve checks c and fills its defaults; op names the caller in errors.
func (c QUICConfig) resolve(op string) (QUICConfig, error) {
	if c.MaxFrame <= 0 {
		return c, fmt.Errorf("remote: %s: frame limit %d bytes: must be positive", op, c.MaxFrame)
	}
	if c.IdleTimeout < 0 || c.HandshakeTimeout < 0 {
		return c, fmt.Errorf("remote: %s: negative timeout (idle %v, handshake %v)", op, c.IdleTimeout, c.HandshakeTimeout)
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultQUICIdleTimeout
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultQUICHandshakeTimeout
	}
	return c, nil
}

// quicConfig is the quic-go configuration of one side. A server accepts
// one bidirectional stream per connection; a client accepts none; neither
// accepts unidirectional streams (nor datagrams, off by default).
func (c QUICConfig) quicConfig(server bool) *quic.Config {
	q := &quic.Config{
		HandshakeIdleTimeout:  c.HandshakeTimeout / 2, // quic-go aborts a handshake after twice this
		MaxIdleTimeout:        c.IdleTimeout,
		KeepAlivePeriod:       c.IdleTimeout / 4,
		MaxIncomingStreams:    -1,
		MaxIncomingUniStreams: -1,
	}
	if server {
		q.MaxIncomingStreams = 1
	}
	return q
}

// EndpointAddr is how to reach a QUIC peer: its PeerID (pinned: the
// connection fails unless the peer proves it holds that key) and its UDP
// address "host:port".
type EndpointAddr struct {
	ID   PeerID
	Addr string
}

// String formats addr as PEERID@host:port, the authority of a
// remote+quic:// device name.
func (addr EndpointAddr) String() string { return addr.ID.String() + "@" + addr.Addr }

// DialQUIC connects from ep to the peer at addr over QUIC, pinning addr.ID,
// with the default timeouts; maxFrame (bytes, positive) bounds the frames
// it reads. It is QUICConfig{MaxFrame: maxFrame}.Dial(ctx, ep, addr): see
// there.
func DialQUIC(ctx context.Context, ep *Endpoint, addr EndpointAddr, maxFrame int) (Conn, error) {
	return QUICConfig{MaxFrame: maxFrame}.Dial(ctx, ep, addr)
}

// ListenQUIC listens for QUIC clients on the UDP address addr ("host:port";
// port 0 picks one, see Listener.Addr) with ep's identity, with the default
// timeouts; maxFrame (bytes, positive) bounds the frames each Conn reads.
// It is QUICConfig{MaxFrame: maxFrame}.Listen(ep, addr): see there.
func ListenQUIC(ep *Endpoint, addr string, maxFrame int) (Listener, error) {
	return QUICConfig{MaxFrame: maxFrame}.Listen(ep, addr)
}

// Dial connects from ep to the peer at addr over QUIC (on a UDP socket of
// its own, closed with the connection). It returns once the TLS 1.3
// handshake has proven that the server holds addr.ID's key and the server
// has admitted ep's key (the stream-open exchange), or fails: a server
// presenting another key (or no well-formed ed25519 certificate) is an
// error wrapping ErrUnauthorized that names the expected and the presented
// key; the handshake stops at ctx's end or after c.HandshakeTimeout (ctx
// bounds the dial only, not the Conn). The Conn's Peer is addr.ID. Whether
// the server's application then admits the client (PeerAuthorizer) is up
// to the protocol above.
func (c QUICConfig) Dial(ctx context.Context, ep *Endpoint, addr EndpointAddr) (Conn, error) {
	cfg, err := c.resolve("DialQUIC")
	if err != nil {
		return nil, err
	}
	cert, err := ep.certificate()
	if err != nil {
		return nil, fmt.Errorf("remote: DialQUIC %s: %w", addr.Addr, err)
	}
	if addr.ID.IsZero() {
		return nil, fmt.Errorf("remote: DialQUIC %s: no server key to pin (EndpointAddr.ID is zero)", addr.Addr)
	}
	if err := addr.ID.checkKey(); err != nil {
		return nil, fmt.Errorf("remote: DialQUIC %s: server key %s: %w", addr, addr.ID, err)
	}
	var (
		pinMu  sync.Mutex
		pinErr error
	)
	tlsConf := &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{QUICNextProto},
		// The server is verified by key, in VerifyConnection, instead of
		// by a chain to a certificate authority.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			id, err := quicPeerFromCertificates(cs.PeerCertificates)
			switch {
			case err != nil:
				err = fmt.Errorf("remote: DialQUIC %s: expected server key %s, but %v: %w", addr.Addr, addr.ID, err, ErrUnauthorized)
			case id != addr.ID:
				err = fmt.Errorf("remote: DialQUIC %s: expected server key %s, the server presented %s: %w", addr.Addr, addr.ID, id, ErrUnauthorized)
			default:
				return nil
			}
			pinMu.Lock()
			pinErr = err
			pinMu.Unlock()
			return err
		},
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	qc, err := quic.DialAddr(ctx, addr.Addr, tlsConf, cfg.quicConfig(false))
	if err != nil {
		pinMu.Lock()
		defer pinMu.Unlock()
		if pinErr != nil {
			return nil, pinErr
		}
		return nil, fmt.Errorf("remote: DialQUIC %s: %w", addr, err)
	}
	st, err := qc.OpenStreamSync(ctx)
	if err != nil {
		qc.CloseWithError(quicCodeError, "stream not opened")
		return nil, fmt.Errorf("remote: DialQUIC %s: opening the stream: %w", addr, err)
	}
	conn := newQUICConn(qc, st, addr.ID, cfg)
	if err := conn.WriteFrame(ctx, nil); err != nil {
		conn.abort(quicCodeError, "stream-open exchange failed")
		return nil, fmt.Errorf("remote: DialQUIC %s: stream-open exchange: %w", addr, err)
	}
	frame, err := conn.ReadFrame(ctx)
	if err == nil && len(frame) != 0 {
		err = fmt.Errorf("the server answered with a %d-byte frame, want an empty one: %w", len(frame), errQUICFraming)
	}
	if err != nil {
		conn.abort(quicCodeProtocol, "stream-open exchange failed")
		return nil, fmt.Errorf("remote: DialQUIC %s: stream-open exchange: %w", addr, err)
	}
	return conn, nil
}

// Listen listens for QUIC clients on the UDP address addr ("host:port";
// port 0 picks one, see Listener.Addr) with ep's identity. Every client
// must complete a TLS 1.3 handshake with a well-formed self-signed ed25519
// certificate whose key it holds (a client without one never reaches
// Accept); Conn.Peer is that key, to be admitted or refused by a
// PeerAuthorizer. c.MaxFrame bounds the frames each Conn reads.
//
// Accept returns connections whose stream-open exchange is done. Closing
// the Listener refuses handshakes in progress and connections not yet
// accepted, and leaves accepted Conns open; the UDP socket is closed once
// the Listener and all its Conns are.
func (c QUICConfig) Listen(ep *Endpoint, addr string) (Listener, error) {
	cfg, err := c.resolve("ListenQUIC")
	if err != nil {
		return nil, err
	}
	cert, err := ep.certificate()
	if err != nil {
		return nil, fmt.Errorf("remote: ListenQUIC %s: %w", addr, err)
	}
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("remote: ListenQUIC %s: %w", addr, err)
	}
	udp, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		return nil, fmt.Errorf("remote: ListenQUIC %s: %w", addr, err)
	}
	tlsConf := &tls.Config{
		MinVersion:             tls.VersionTLS13,
		Certificates:           []tls.Certificate{cert},
		NextProtos:             []string{QUICNextProto},
		ClientAuth:             tls.RequireAnyClientCert,
		SessionTicketsDisabled: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := quicPeerFromCertificates(cs.PeerCertificates)
			return err
		},
	}
	tr := &quic.Transport{Conn: udp}
	ln, err := tr.Listen(tlsConf, cfg.quicConfig(true))
	if err != nil {
		tr.Close()
		udp.Close()
		return nil, fmt.Errorf("remote: ListenQUIC %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &quicListener{
		cfg:      cfg,
		addr:     udp.LocalAddr().String(),
		udp:      udp,
		tr:       tr,
		ln:       ln,
		ctx:      ctx,
		cancel:   cancel,
		ready:    make(chan *quicConn),
		closed:   make(chan struct{}),
		loopDone: make(chan struct{}),
		slots:    make(chan struct{}, quicMaxPending),
		refs:     1,
	}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

// quicListener is the Listener of Listen. Its transport (UDP socket) is
// reference-counted: one reference for the listener and one for each QUIC
// connection it accepted, dropped when that connection ends.
type quicListener struct {
	cfg    QUICConfig
	addr   string
	udp    *net.UDPConn
	tr     *quic.Transport
	ln     *quic.Listener
	ctx    context.Context // ends at Close: stops pending connections
	cancel context.CancelFunc

	ready    chan *quicConn // opened connections, handed to Accept
	closed   chan struct{}  // closed by Close
	loopDone chan struct{}  // closed when acceptLoop ends; loopErr is then set
	loopErr  error
	slots    chan struct{} // one per pending connection
	wg       sync.WaitGroup

	mu   sync.Mutex
	refs int

	closeOnce sync.Once
}

// acceptLoop takes handshaken connections from quic-go and starts their
// stream-open exchange, until the listener closes.
func (l *quicListener) acceptLoop() {
	defer l.wg.Done()
	for {
		qc, err := l.ln.Accept(context.Background())
		if err != nil {
			l.loopErr = err
			close(l.loopDone)
			return
		}
		l.hold(qc)
		select {
		case l.slots <- struct{}{}:
		case <-l.ctx.Done():
			qc.CloseWithError(quicCodeError, "server closed")
			continue
		}
		l.wg.Add(1)
		go l.open(qc)
	}
}

// hold counts qc as a user of the transport until qc ends.
func (l *quicListener) hold(qc *quic.Conn) {
	l.mu.Lock()
	l.refs++
	l.mu.Unlock()
	context.AfterFunc(qc.Context(), l.release)
}

// release drops one reference to the transport, closing it (and the UDP
// socket) with the last.
func (l *quicListener) release() {
	l.mu.Lock()
	l.refs--
	last := l.refs == 0
	l.mu.Unlock()
	if last {
		l.tr.Close()
		l.udp.Close()
	}
}

// open runs the server's side of the stream-open exchange on qc and hands
// the Conn to Accept.
func (l *quicListener) open(qc *quic.Conn) {
	defer l.wg.Done()
	defer func() { <-l.slots }()
	ctx, cancel := context.WithTimeout(l.ctx, l.cfg.HandshakeTimeout)
	defer cancel()
	peer, err := quicPeerFromCertificates(qc.ConnectionState().TLS.PeerCertificates)
	if err != nil { // verified in the handshake; kept as a guard
		qc.CloseWithError(quicCodeUnauthorized, err.Error())
		return
	}
	st, err := qc.AcceptStream(ctx)
	if err != nil {
		qc.CloseWithError(quicCodeProtocol, "no stream opened")
		return
	}
	c := newQUICConn(qc, st, peer, l.cfg)
	frame, err := c.ReadFrame(ctx)
	if err == nil && len(frame) != 0 {
		err = errQUICFraming
	}
	if err == nil {
		err = c.WriteFrame(ctx, nil)
	}
	if err != nil {
		c.abort(quicCodeProtocol, "stream-open exchange failed")
		return
	}
	select {
	case l.ready <- c:
	case <-l.ctx.Done():
		c.abort(quicCodeError, "server closed")
	}
}

// Accept waits for the next client that completed its handshake and
// stream-open exchange. After Close it returns an error wrapping
// net.ErrClosed; when ctx ends, an error wrapping ctx.Err().
func (l *quicListener) Accept(ctx context.Context) (Conn, error) {
	select {
	case <-l.closed:
		return nil, fmt.Errorf("remote: accept on QUIC listener %s: %w", l.addr, net.ErrClosed)
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("remote: accept on QUIC listener %s: %w", l.addr, err)
	}
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.closed:
		return nil, fmt.Errorf("remote: accept on QUIC listener %s: %w", l.addr, net.ErrClosed)
	case <-l.loopDone:
		return nil, fmt.Errorf("remote: accept on QUIC listener %s: %w", l.addr, l.loopErr)
	case <-ctx.Done():
		return nil, fmt.Errorf("remote: accept on QUIC listener %s: %w", l.addr, ctx.Err())
	}
}

// Addr is the UDP address the listener is bound to ("127.0.0.1:4433",
// "[::]:4433").
func (l *quicListener) Addr() string { return l.addr }

// Close stops listening: handshakes in progress are refused and
// connections not yet accepted are closed; accepted Conns stay open. It
// waits for the listener's goroutines and returns nil; later calls do
// nothing.
func (l *quicListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.cancel()
		l.ln.Close()
		l.wg.Wait()
		l.release()
	})
	return nil
}

// quicConn is a Conn over one QUIC connection's stream.
type quicConn struct {
	qc       *quic.Conn
	st       *quic.Stream
	br       *bufio.Reader // reads st
	peer     PeerID
	maxFrame int
	idle     time.Duration
	name     string // "QUIC peer PEERID at ADDR", for errors

	rmu     sync.Mutex // serializes ReadFrame
	readErr error      // the first read error, returned from then on

	// dlMu guards the arming of the stream deadlines that a context's end
	// sets, so that a call whose context ended before it moved any byte
	// can disarm them and leave the Conn usable.
	dlMu       sync.Mutex
	readArmed  bool
	writeArmed bool

	wlock    chan struct{} // capacity 1: the write lock (Close takes it with a timeout)
	writeErr error         // under wlock: the first write error, returned from then on
	hdr      [8]byte       // under wlock: header buffer

	closed    atomic.Bool // Close was called
	closeOnce sync.Once
}

func newQUICConn(qc *quic.Conn, st *quic.Stream, peer PeerID, cfg QUICConfig) *quicConn {
	return &quicConn{
		qc:       qc,
		st:       st,
		br:       bufio.NewReader(st),
		peer:     peer,
		maxFrame: cfg.MaxFrame,
		idle:     cfg.IdleTimeout,
		name:     fmt.Sprintf("QUIC peer %s at %s", peer, qc.RemoteAddr()),
		wlock:    make(chan struct{}, 1),
	}
}

// watch arms the stream deadline set (SetReadDeadline or
// SetWriteDeadline) to fire when ctx ends, and returns the function that
// disarms it: it reports whether ctx ended meanwhile (the deadline may
// then have fired; it is cleared). Later calls report the same.
func (c *quicConn) watch(ctx context.Context, armed *bool, set func(time.Time) error) (ended func() bool) {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	c.dlMu.Lock()
	*armed = true
	c.dlMu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		c.dlMu.Lock()
		defer c.dlMu.Unlock()
		if *armed {
			set(time.Unix(1, 0))
		}
	})
	var disarmed, fired bool
	return func() bool {
		if disarmed {
			return fired
		}
		disarmed = true
		fired = !stop() // the deadline func has started: ctx ended
		c.dlMu.Lock()
		defer c.dlMu.Unlock()
		*armed = false
		if fired {
			set(time.Time{})
		}
		return fired
	}
}

// Peer is the other side's key: the server's (the pinned EndpointAddr.ID)
// on a dialed Conn, the client's on an accepted one.
func (c *quicConn) Peer() PeerID { return c.peer }

// ReadFrame returns the next frame, in a new slice of exactly its length.
// A frame over the Conn's limit is an error wrapping ErrFrameTooLarge,
// raised from the length header alone (and the connection is closed with
// a protocol-error code). When the peer closed the connection the error
// wraps net.ErrClosed and carries the peer's reason; a close without
// reason (Close(nil)) also wraps io.EOF, and one whose reason wrapped
// ErrUnauthorized also wraps ErrUnauthorized. A peer silent for the idle
// timeout gives an error that is a net.Error with Timeout() true. A ctx
// that ends before the frame's first byte arrives gives its error and
// leaves the Conn usable; one that ends inside a frame closes the
// connection, since the stream can no longer be framed. Every error except
// a ctx's that left the Conn usable is returned again by later calls.
func (c *quicConn) ReadFrame(ctx context.Context) ([]byte, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.readErr != nil {
		return nil, c.readErr
	}
	if c.closed.Load() {
		return nil, fmt.Errorf("remote: read frame from %s: %w", c.name, net.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("remote: read frame from %s: %w", c.name, err)
	}
	stop := c.watch(ctx, &c.readArmed, c.st.SetReadDeadline)
	// Wait for the record's first byte before consuming anything, so that a
	// context ending first leaves the stream framed.
	_, err := c.br.Peek(1)
	if err != nil && stop() {
		return nil, fmt.Errorf("remote: read frame from %s: %w", c.name, ctx.Err())
	}
	var (
		frame   []byte
		isClose bool
	)
	if err == nil {
		frame, isClose, err = quicReadRecord(c.br, c.maxFrame)
	}
	fired := stop()
	if err == nil && !isClose {
		return frame, nil // whole, even if ctx ended just now
	} else if fired && err != nil {
		c.abort(quicCodeError, "read abandoned: "+ctx.Err().Error())
		err = fmt.Errorf("remote: read frame from %s: %w (the connection is closed: the frame was cut short)", c.name, ctx.Err())
	} else if err == nil {
		code, reason, perr := quicParseClose(frame)
		if perr != nil {
			c.abort(quicCodeProtocol, perr.Error())
			err = fmt.Errorf("remote: read frame from %s: %w", c.name, perr)
		} else {
			// The peer's last record: acknowledge it by closing.
			c.qc.CloseWithError(quicCodeNormal, "")
			err = fmt.Errorf("remote: read frame from %s: %w", c.name, &quicPeerClosedError{code: code, reason: reason})
		}
	} else {
		if errors.Is(err, ErrFrameTooLarge) || errors.Is(err, errQUICFraming) {
			c.abort(quicCodeProtocol, err.Error())
		}
		err = c.wrapErr("read frame from", err)
	}
	c.readErr = err
	return nil, err
}

// WriteFrame sends one frame: its header and bytes, together with respect
// to other WriteFrame calls (they may run concurrently; each frame arrives
// whole). It returns when quic-go has taken the bytes (frame may be reused
// then), blocking while flow control holds them back. A ctx that ends
// before any of the frame was written gives its error and leaves the Conn
// usable; one that ends with the frame partly written closes the
// connection, since the stream can no longer be framed. Errors are as
// ReadFrame's; every one except a ctx's that left the Conn usable is
// returned again by later calls.
func (c *quicConn) WriteFrame(ctx context.Context, frame []byte) error {
	if c.closed.Load() {
		return fmt.Errorf("remote: write frame to %s: %w", c.name, net.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remote: write frame to %s: %w", c.name, err)
	}
	if uint64(len(frame)) > quicvarint.Max>>1 {
		return fmt.Errorf("remote: write frame to %s: frame of %d bytes: over the framing's limit of 2^61-1 bytes", c.name, len(frame))
	}
	select {
	case c.wlock <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("remote: write frame to %s: %w", c.name, ctx.Err())
	case <-c.qc.Context().Done():
		select {
		case c.wlock <- struct{}{}: // prefer the first error, if any
			err := c.writeErr
			<-c.wlock
			if err != nil {
				return err
			}
		default:
		}
		return c.wrapErr("write frame to", context.Cause(c.qc.Context()))
	}
	defer func() { <-c.wlock }()
	if c.writeErr != nil {
		return c.writeErr
	}
	stop := c.watch(ctx, &c.writeArmed, c.st.SetWriteDeadline)
	n, err := c.st.Write(quicvarint.Append(c.hdr[:0], uint64(len(frame))<<1))
	if err != nil && n == 0 && stop() {
		return fmt.Errorf("remote: write frame to %s: %w", c.name, ctx.Err())
	}
	if err == nil && len(frame) > 0 {
		_, err = c.st.Write(frame)
	}
	fired := stop()
	if err == nil {
		return nil // whole, even if ctx ended just now
	} else if fired {
		c.abort(quicCodeError, "write abandoned: "+ctx.Err().Error())
		err = fmt.Errorf("remote: write frame to %s: %w (the connection is closed: the frame was cut short)", c.name, ctx.Err())
	} else {
		err = c.wrapErr("write frame to", err)
	}
	c.writeErr = err
	return err
}

// Close closes the connection, reporting reason (nil for a normal close)
// to the peer: after the frames already written, the peer's ReadFrame gets
// an error carrying reason's text (see ReadFrame). Close waits, at most
// 2 s in all, for a WriteFrame in progress and for the peer to read those
// frames, so that closing right after a last WriteFrame does not lose it;
// frames the peer sends meanwhile are dropped, and a WriteFrame still
// blocked after the wait is cut off. It returns nil; later calls do
// nothing.
func (c *quicConn) Close(reason error) error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		code, msg := quicCloseCode(reason)
		c.closeGracefully(code, msg)
		c.qc.CloseWithError(code, msg)
	})
	return nil
}

// closeGracefully sends the close record and FIN after the frames already
// written and waits for the peer to close the connection (or to send its
// own close record), all within quicCloseLinger.
func (c *quicConn) closeGracefully(code quic.ApplicationErrorCode, msg string) {
	deadline := time.Now().Add(quicCloseLinger)
	timer := time.NewTimer(quicCloseLinger)
	defer timer.Stop()
	done := c.qc.Context().Done()
	select {
	case c.wlock <- struct{}{}:
	case <-timer.C:
		return
	case <-done:
		return
	}
	ok := c.writeErr == nil
	if ok {
		c.st.SetWriteDeadline(deadline)
		rec := quicvarint.Append(nil, uint64(quicvarint.Len(uint64(code))+len(msg))<<1|1)
		rec = quicvarint.Append(rec, uint64(code))
		rec = append(rec, msg...)
		_, err := c.st.Write(rec)
		ok = err == nil && c.st.Close() == nil
		c.writeErr = fmt.Errorf("remote: write frame to %s: %w", c.name, net.ErrClosed)
	}
	<-c.wlock
	if !ok {
		return
	}
	if c.rmu.TryLock() {
		// No ReadFrame in progress: read (and drop) what the peer still
		// sends, so that its own close record, if it is closing too, ends
		// the wait.
		defer c.rmu.Unlock()
		if c.readErr == nil {
			c.readErr = fmt.Errorf("remote: read frame from %s: %w", c.name, net.ErrClosed)
			c.st.SetReadDeadline(deadline)
			if quicDrain(c.br) {
				return
			}
		}
	}
	select {
	case <-done:
	case <-timer.C:
	}
}

// quicDrain reads and drops records from r (frames of any length, without
// buffering them) until a close record, for which it reports true, or an
// error.
func quicDrain(r *bufio.Reader) bool {
	for {
		h, err := quicvarint.Read(r)
		if err != nil {
			return false
		}
		n := h >> 1
		if h&1 == 1 {
			return n <= quicMaxCloseRecord
		}
		for n > 0 {
			step := int(min(n, 1<<20))
			m, err := r.Discard(step)
			if err != nil {
				return false
			}
			n -= uint64(m)
		}
	}
}

// abort closes the connection at once (no close record), for a stream
// that can no longer be framed.
func (c *quicConn) abort(code quic.ApplicationErrorCode, msg string) {
	c.qc.CloseWithError(code, quicTruncateReason(msg))
}

// wrapErr turns an error of the stream into the Conn's error for op
// ("read frame from", "write frame to").
func (c *quicConn) wrapErr(op string, err error) error {
	var appErr *quic.ApplicationError
	var idleErr *quic.IdleTimeoutError
	switch {
	case errors.As(err, &appErr) && appErr.Remote:
		err = &quicPeerClosedError{code: appErr.ErrorCode, reason: appErr.ErrorMessage}
	case c.closed.Load():
		err = net.ErrClosed
	case errors.As(err, &appErr):
		return fmt.Errorf("remote: %s %s: the connection was closed (%s): %w", op, c.name, appErr.ErrorMessage, net.ErrClosed)
	case errors.As(err, &idleErr):
		return fmt.Errorf("remote: %s %s: no packet from the peer within the idle timeout (%v): %w", op, c.name, c.idle, err)
	case err == io.EOF:
		err = fmt.Errorf("the peer ended the stream without a close record: %w", io.EOF)
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("the stream ended inside a record: %w", err)
	}
	return fmt.Errorf("remote: %s %s: %w", op, c.name, err)
}

// quicPeerClosedError is the error after the peer closed the connection
// with Close or CloseWithError.
type quicPeerClosedError struct {
	code   quic.ApplicationErrorCode
	reason string
}

func (e *quicPeerClosedError) Error() string {
	switch {
	case e.reason != "":
		return "the peer closed the connection: " + e.reason
	case e.code == quicCodeNormal:
		return "the peer closed the connection"
	default:
		return fmt.Sprintf("the peer closed the connection (code %d)", e.code)
	}
}

// Unwrap makes the error match net.ErrClosed, and io.EOF for a normal
// close, ErrUnauthorized for a refusal.
func (e *quicPeerClosedError) Unwrap() []error {
	switch {
	case e.code == quicCodeNormal && e.reason == "":
		return []error{net.ErrClosed, io.EOF}
	case e.code == quicCodeUnauthorized:
		return []error{net.ErrClosed, ErrUnauthorized}
	}
	return []error{net.ErrClosed}
}

// quicCloseCode is the close code and reason text for Close(reason).
func quicCloseCode(reason error) (quic.ApplicationErrorCode, string) {
	switch {
	case reason == nil:
		return quicCodeNormal, ""
	case errors.Is(reason, ErrUnauthorized):
		return quicCodeUnauthorized, quicTruncateReason(reason.Error())
	default:
		return quicCodeError, quicTruncateReason(reason.Error())
	}
}

// quicTruncateReason cuts s to quicMaxCloseReason bytes at a rune boundary.
func quicTruncateReason(s string) string {
	if len(s) <= quicMaxCloseReason {
		return s
	}
	n := quicMaxCloseReason - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// quicReadRecord reads one record (see the framing above) from r: a frame
// of at most maxFrame bytes (isClose false) or a close record's payload of
// at most quicMaxCloseRecord bytes (isClose true). The length is checked
// before anything is allocated; the payload is then read into a slice of
// exactly its length. io.EOF means r ended at a record boundary;
// io.ErrUnexpectedEOF, inside a record.
func quicReadRecord(r *bufio.Reader, maxFrame int) (payload []byte, isClose bool, err error) {
	if _, err := r.ReadByte(); err != nil {
		return nil, false, err
	}
	r.UnreadByte()
	h, err := quicvarint.Read(r)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, false, err
	}
	n, isClose := h>>1, h&1 == 1
	switch {
	case isClose && n > quicMaxCloseRecord:
		return nil, true, fmt.Errorf("close record of %d bytes: over the limit of %d: %w", n, quicMaxCloseRecord, errQUICFraming)
	case !isClose && (maxFrame < 0 || n > uint64(maxFrame)):
		return nil, false, fmt.Errorf("frame of %d bytes: over the limit of %d bytes: %w", n, maxFrame, ErrFrameTooLarge)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, isClose, err
	}
	return payload, isClose, nil
}

// quicParseClose splits a close record's payload into code and reason.
func quicParseClose(p []byte) (quic.ApplicationErrorCode, string, error) {
	code, n, err := quicvarint.Parse(p)
	if err != nil {
		return 0, "", fmt.Errorf("close record without a code: %w", errQUICFraming)
	}
	return quic.ApplicationErrorCode(code), string(p[n:]), nil
}

// quicPeerFromCertificates checks that certs is one well-formed,
// self-signed X.509 certificate of an ed25519 key that is a valid PeerID
// and returns that key. (That the peer holds the private key is proven by
// TLS's CertificateVerify.) Validity dates, names and extensions are not
// looked at.
func quicPeerFromCertificates(certs []*x509.Certificate) (PeerID, error) {
	if len(certs) != 1 {
		return PeerID{}, fmt.Errorf("it presented %d certificates: want one self-signed ed25519 certificate", len(certs))
	}
	cert := certs[0]
	pub, ok := cert.PublicKey.(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return PeerID{}, fmt.Errorf("it presented a certificate of a %v key: want a self-signed ed25519 certificate", cert.PublicKeyAlgorithm)
	}
	var id PeerID
	copy(id[:], pub)
	if cert.SignatureAlgorithm != x509.PureEd25519 {
		return PeerID{}, fmt.Errorf("it presented a certificate of key %s signed with %v: want one self-signed with that key", id, cert.SignatureAlgorithm)
	}
	if err := cert.CheckSignature(x509.PureEd25519, cert.RawTBSCertificate, cert.Signature); err != nil {
		return PeerID{}, fmt.Errorf("it presented a certificate of key %s that is not self-signed: %v", id, err)
	}
	if err := id.checkKey(); err != nil {
		return PeerID{}, fmt.Errorf("it presented key %s: %v", id, err)
	}
	return id, nil
}

// selfSignedCertificate makes the TLS certificate of key: X.509 v3, signed
// by key itself, subject the PeerID's text, serial number from the public
// key, valid from 1970 to 9999-12-31 (RFC 5280 §4.1.2.5's "no well-defined
// expiration"), since peers check keys and not dates. ed25519 signatures
// are deterministic, so a key always yields the same certificate.
func selfSignedCertificate(key ed25519.PrivateKey) (tls.Certificate, error) {
	pub := key.Public().(ed25519.PublicKey)
	var id PeerID
	copy(id[:], pub)
	serial := new(big.Int).SetBytes(pub[:16])
	serial.SetBit(serial, 127, 1) // positive and 16 bytes long
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: id.String()},
		NotBefore:             time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("making the certificate of %s: %w", id, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("making the certificate of %s: %w", id, err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

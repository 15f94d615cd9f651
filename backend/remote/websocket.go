package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The WebSocket transport (RFC 6455, through github.com/coder/websocket):
// one frame per binary message, the frame limit enforced by the library's
// read limit (a longer message is refused after limit+1 bytes, before it
// is buffered), pings for liveness. There is no key identity: Peer is the
// zero PeerID, and authorization rests on the credential alone.

// Pinger is implemented by Conns that can check that the peer is alive:
// Ping returns once the peer answered, or an error when ctx ends first or
// the connection fails. The client and server ping idle connections with
// it; over a transport without it (QUIC) liveness is the transport's own
// (keep-alives and an idle timeout).
type Pinger interface {
	Ping(ctx context.Context) error
}

// wsConn is a Conn over one WebSocket connection.
type wsConn struct {
	c      *websocket.Conn
	remote string
	done   chan struct{}
	once   sync.Once
	// flush sends what the connection's writes kept back (a client's
	// coalescingConn), nil where nothing is kept.
	flush func() error
	// buf is the read buffer, reused from frame to frame.
	buf []byte
}

// DialWebSocket connects to the Ember server at url ("ws://host:3000" or
// "wss://host" behind a TLS proxy); maxFrame bounds the frames it reads
// (ErrFrameTooLarge past it). The handshake of the remote protocol is not
// part of it: Connect runs that over the returned Conn.
func DialWebSocket(ctx context.Context, url string, maxFrame int) (Conn, error) {
	opts, flush := dialOptions()
	c, resp, err := websocket.Dial(ctx, url, opts)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("remote: dial %s: %w", url, err)
	}
	c.SetReadLimit(int64(maxFrame))
	return &wsConn{c: c, remote: url, done: make(chan struct{}), flush: flush}, nil
}

// ReadFrame returns the next binary message. The frame lives in a buffer
// the next ReadFrame reuses (up to keepBuffer bytes; a larger one is let
// go), which grows with the bytes as they arrive.
func (w *wsConn) ReadFrame(ctx context.Context) ([]byte, error) {
	typ, r, err := w.c.Reader(ctx)
	if err != nil {
		return nil, w.readError(err)
	}
	if typ != websocket.MessageBinary {
		w.Close(fmt.Errorf("%w: text message", ErrProtocol))
		return nil, fmt.Errorf("%w: %s sent a text message, the protocol uses binary ones", ErrProtocol, w.remote)
	}
	b := w.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			w.buf = nil
			return nil, w.readError(err)
		}
	}
	if cap(b) <= keepBuffer {
		w.buf = b
	} else {
		w.buf = nil
	}
	return b, nil
}

// keepBuffer is the largest read buffer a connection keeps between
// frames.
const keepBuffer = 4 << 20

// readError translates the library's errors: an oversize message wraps
// ErrFrameTooLarge, a close by the peer says why.
func (w *wsConn) readError(err error) error {
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return fmt.Errorf("%w: %v", ErrFrameTooLarge, err)
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case websocket.StatusMessageTooBig:
			return fmt.Errorf("%w: the peer closed the connection: %s", ErrFrameTooLarge, ce.Reason)
		case websocket.StatusPolicyViolation:
			return fmt.Errorf("%w: the peer closed the connection: %s", ErrUnauthorized, ce.Reason)
		case websocket.StatusNormalClosure, websocket.StatusGoingAway:
			if ce.Reason != "" {
				return fmt.Errorf("%w: closed by the peer: %s", ErrClosed, ce.Reason)
			}
			return fmt.Errorf("%w: closed by the peer", ErrClosed)
		}
		return fmt.Errorf("%w: closed by the peer (status %d): %s", ErrClosed, int(ce.Code), ce.Reason)
	}
	return fmt.Errorf("%w: %v", ErrClosed, err)
}

// WriteFrame sends frame as one binary message.
func (w *wsConn) WriteFrame(ctx context.Context, frame []byte) error {
	if err := w.c.Write(ctx, websocket.MessageBinary, frame); err != nil {
		return fmt.Errorf("%w: write: %v", ErrClosed, err)
	}
	if w.flush != nil {
		if err := w.flush(); err != nil {
			return fmt.Errorf("%w: write: %v", ErrClosed, err)
		}
	}
	return nil
}

// Ping sends a WebSocket ping and waits for its pong.
func (w *wsConn) Ping(ctx context.Context) error { return w.c.Ping(ctx) }

// Peer is the zero PeerID: WebSocket has no key identity.
func (w *wsConn) Peer() PeerID { return PeerID{} }

// RemoteAddr is the peer's address, for logs.
func (w *wsConn) RemoteAddr() string { return w.remote }

// Close sends a close message whose status and text come from reason and
// closes the connection.
func (w *wsConn) Close(reason error) error {
	var err error
	w.once.Do(func() {
		code, text := websocket.StatusNormalClosure, ""
		switch {
		case reason == nil:
		case errors.Is(reason, ErrFrameTooLarge):
			code, text = websocket.StatusMessageTooBig, reason.Error()
		case errors.Is(reason, ErrUnauthorized):
			code, text = websocket.StatusPolicyViolation, reason.Error()
		case errors.Is(reason, ErrShutdown):
			code, text = websocket.StatusGoingAway, reason.Error()
		case errors.Is(reason, ErrProtocol):
			code, text = websocket.StatusProtocolError, reason.Error()
		default:
			code, text = websocket.StatusInternalError, reason.Error()
		}
		if len(text) > 120 { // a close reason holds at most 123 bytes
			text = text[:120]
		}
		// Close waits for the peer's close for at most 5 s; after a
		// write error CloseNow is all that is left.
		err = w.c.Close(code, text)
		if err != nil {
			err = w.c.CloseNow()
		}
		close(w.done)
	})
	return err
}

// wsListener accepts WebSocket connections through an http.Server.
type wsListener struct {
	ln       net.Listener
	srv      *http.Server
	maxFrame int
	conns    chan *wsConn
	closed   chan struct{}
	once     sync.Once
}

// ListenWebSocket listens for WebSocket clients on the TCP address addr
// ("127.0.0.1:3000"; port 0 picks a free one, see Addr). Clients connect
// to ws://addr/ (any path). maxFrame bounds the frames each Conn reads.
func ListenWebSocket(addr string, maxFrame int) (Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("remote: listen on %s: %w", addr, err)
	}
	l := &wsListener{ln: ln, maxFrame: maxFrame, conns: make(chan *wsConn), closed: make(chan struct{})}
	l.srv = &http.Server{Handler: http.HandlerFunc(l.handle), ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln)
	return l, nil
}

// handle upgrades a request and hands the connection to Accept, then
// waits until it is closed (or the listener is, before anyone accepted
// it).
func (l *wsListener) handle(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept wrote the HTTP error
	}
	c.SetReadLimit(int64(l.maxFrame))
	wc := &wsConn{c: c, remote: r.RemoteAddr, done: make(chan struct{})}
	select {
	case l.conns <- wc:
		<-wc.done
	case <-l.closed:
		wc.Close(fmt.Errorf("%w", ErrShutdown))
	}
}

// Accept waits for the next connection.
func (l *wsListener) Accept(ctx context.Context) (Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, fmt.Errorf("remote: accept on %s: %w", l.Addr(), net.ErrClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Addr is the bound TCP address.
func (l *wsListener) Addr() string { return l.ln.Addr().String() }

// Close stops listening; accepted connections stay open.
func (l *wsListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.closed)
		err = l.srv.Close() // hijacked (accepted) connections are not closed
	})
	return err
}

// webSocketURL returns the URL of a remote+ws or remote+wss device
// address: "host:port" as given, or with the default port (3000 for ws,
// the scheme's 443 for wss) when it has none.
func webSocketURL(scheme, addr string) string {
	if !hasPort(addr) && scheme == "ws" {
		addr += ":" + DefaultPort
	}
	return scheme + "://" + addr + "/"
}

// hasPort reports whether addr ends in ":PORT" (outside IPv6 brackets).
func hasPort(addr string) bool {
	i := strings.LastIndexByte(addr, ':')
	return i >= 0 && !strings.Contains(addr[i:], "]")
}

// DefaultPort is the port of `ember serve` and of a remote+ws address
// without one.
const DefaultPort = "3000"

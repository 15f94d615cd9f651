//go:build !js

package remote

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// dialOptions are the options of one WebSocket dial: no compression
// (tensor bytes do not compress, and it would cost a copy), and an HTTP
// client whose connection coalesces the library's small writes
// (coalescingConn); flush sends what that connection kept back.
func dialOptions() (opts *websocket.DialOptions, flush func() error) {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	var mu sync.Mutex
	var conn *coalescingConn
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			cc := &coalescingConn{Conn: c, bw: bufio.NewWriterSize(c, coalesceBytes)}
			mu.Lock()
			conn = cc
			mu.Unlock()
			return cc, nil
		},
		TLSHandshakeTimeout: 10 * time.Second,
	}
	flush = func() error {
		mu.Lock()
		cc := conn
		mu.Unlock()
		if cc == nil {
			return nil
		}
		return cc.Flush()
	}
	return &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled, HTTPClient: &http.Client{Transport: tr}}, flush
}

// coalesceBytes is the write buffer of a client connection, and
// libraryChunk the size of the writes coder/websocket makes while it masks
// a client frame (its bufio.Writer's default size).
const (
	coalesceBytes = 256 << 10
	libraryChunk  = 4096
)

// coalescingConn is a client's TCP connection that gathers the 4 KiB
// writes coder/websocket makes for a masked frame (RFC 6455 §5.3: every
// client frame is masked, chunk by chunk in the library's buffer) into
// writes of up to 256 KiB: a 200 KiB tensor then takes one system call
// instead of fifty. A write of exactly the library's chunk size is kept;
// any other write (the last piece of a frame, a control frame: ping, pong,
// close) sends what is kept and itself at once, in order, so nothing waits
// for a later frame; wsConn.WriteFrame flushes after every message (a
// frame that ends on a chunk boundary).
type coalescingConn struct {
	net.Conn
	mu sync.Mutex
	bw *bufio.Writer
}

// Write keeps a full library chunk, and sends everything otherwise.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.bw.Write(p)
	if err == nil && len(p) != libraryChunk {
		err = c.bw.Flush()
	}
	return n, err
}

// Flush sends what is kept.
func (c *coalescingConn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bw.Flush()
}

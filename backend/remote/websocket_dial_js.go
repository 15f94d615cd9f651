//go:build js

package remote

import "github.com/coder/websocket"

// dialOptions are the WebSocket client's options: in a browser the
// browser's WebSocket decides compression and buffering (flush is nil).
func dialOptions() (*websocket.DialOptions, func() error) { return &websocket.DialOptions{}, nil }

// Package remote runs Ember devices over the network: a client backend
// (Client) that ships ops and data to a server, and the server (Server,
// behind `ember serve`) that runs them on its local backend.
//
// The client is an ordinary backend.Backend: the root package, autodiff
// and every other layer use it as they use a local device, and a program
// written for cpu runs unchanged on ember.RemoteWebSocket("ws://gpu:3000",
// 0). Ops travel as values: each Exec becomes one ir.Record (the op with
// its tensors replaced by numbers the session assigns), appended to a
// batch that is sent without waiting; uploads are ir.TensorData (raw
// little-endian bytes with shape and dtype). Reads, syncs and queries carry
// request ids and wait for their replies. The server keeps one tensor
// table per session (per connection), runs each record with ir.Run on its
// device, and frees the table when the session ends; a tensor the program
// drops is dropped on the server too (runtime.AddCleanup on the handle).
// The wire format (protocol.go) is CBOR with small integer keys, versioned
// by a handshake, and decoded by a hardened decoder that checks every
// value before the server acts on it.
//
// Transports implement Conn and Listener (transport.go): WebSocket
// (DialWebSocket, ListenWebSocket; github.com/coder/websocket) and QUIC
// with ed25519 key identities (DialQUIC, ListenQUIC; quic-go), where both
// sides pin each other's keys in TLS 1.3 and a server's PeerAuthorizer
// sees the client's key. A refused client gets a structured refusal:
// errors.Is(err, ErrUnauthorized).
//
// The package registers the drivers "remote+ws", "remote+wss" and
// "remote+quic" (driver.go), which the root package's RemoteWebSocket,
// RemoteQUIC and ParseDevice("remote+ws://host:3000/0") open. The design
// is Burn's burn-remote (ops as values over a session, a server per
// machine), with server-side device-to-device moves (Client.CopyTo),
// structured errors and limits on frames, tensors and tables.
package remote

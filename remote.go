package ember

import (
	"context"
	"strings"
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/remote"
)

// Remote devices: a device of an Ember server (ember serve), reached over
// WebSocket or QUIC, that runs the same tensor program as a local device
// (package backend/remote ships each op and upload to the server, which
// runs it on its own backend). Constructors start connecting at once, in
// the background, and never fail: Init waits for the connection and
// reports why it failed. A connection that was lost (the server went
// away) stays failed, with every operation of its tensors; calling the
// constructor again then returns a new device, which connects anew (a
// reconnect is a new device: the old one's tensors are gone with its
// session).

// RemoteWebSocket is device i of the Ember server at addr:
// "ws://host:3000", "host:3000", "ws://host" (port 3000, ember serve's),
// or "wss://host[:port]" for a server behind a TLS proxy (port 443 when
// absent). It prints as "remote+ws://host:3000/0" ("remote+wss://..."
// for wss). It panics if i is negative and not DefaultIndex. The
// credential of the EMBER_REMOTE_CREDENTIAL environment variable, when
// set, is sent to the server's PeerAuthorizer.
func RemoteWebSocket(addr string, i DeviceIndex) Device {
	return remoteDevice(webSocketID(addr, i.resolve()), nil)
}

// webSocketID is the DeviceID of device i at a RemoteWebSocket address.
func webSocketID(addr string, i int) backend.DeviceID {
	typ := "remote+ws"
	if rest, ok := strings.CutPrefix(addr, "wss://"); ok {
		typ, addr = "remote+wss", rest
	} else {
		addr = strings.TrimPrefix(addr, "ws://")
	}
	return backend.DeviceID{Type: typ, Addr: strings.TrimSuffix(addr, "/"), Index: i}
}

// RemoteQUIC is device i of the Ember server at peer, over QUIC with key
// identities (Burn's remote_iroh): the connection fails unless the server
// proves it holds the key of peer.ID, and the server sees ep's PeerID,
// which its PeerAuthorizer may check. ep nil means remote.DefaultEndpoint.
// It prints as "remote+quic://PEERID@host:port/i". The first constructor
// call that opens the device decides the endpoint it connects with. It
// panics if i is negative and not DefaultIndex.
func RemoteQUIC(ep *remote.Endpoint, peer remote.EndpointAddr, i DeviceIndex) Device {
	return RemoteQUICAuthorized(ep, peer, i, nil)
}

// RemoteQUICAuthorized is RemoteQUIC presenting credential to the
// server's PeerAuthorizer (Burn's remote_iroh_authorized); a refusal
// makes Init return an error matching remote.ErrUnauthorized.
func RemoteQUICAuthorized(ep *remote.Endpoint, peer remote.EndpointAddr, i DeviceIndex, credential []byte) Device {
	id := backend.DeviceID{Type: "remote+quic", Addr: peer.String(), Index: i.resolve()}
	return remoteDevice(id, &remote.ClientOptions{Endpoint: ep, Credential: credential})
}

// remoteStarted holds the remote device states whose connection a
// constructor started.
var remoteStarted sync.Map // *deviceState -> struct{}

// remoteDevice returns the device of id, starting its connection in the
// background; a state whose connection failed or was lost is replaced by
// a new one (a call while an earlier call's connection attempt is under
// way waits for that attempt, at most its timeout). opts, when not nil,
// are recorded for the driver first.
func remoteDevice(id backend.DeviceID, opts *remote.ClientOptions) Device {
	if opts != nil {
		remote.SetDeviceOptions(id, *opts)
	}
	for {
		s := stateFor(id)
		if _, started := remoteStarted.LoadOrStore(s, struct{}{}); !started {
			go s.open()
			return Device{st: s}
		}
		if !remoteDead(s) {
			return Device{st: s}
		}
		// Failed or lost: the next device of this id is a new one.
		if states.CompareAndDelete(id, s) {
			remoteStarted.Delete(s)
		}
	}
}

// remoteDead reports whether an opened remote device failed to connect or
// lost its connection.
func remoteDead(s *deviceState) bool {
	b, err := s.open()
	if err != nil {
		return true
	}
	c, ok := b.(*remote.Client)
	return ok && c.Err() != nil
}

// RemoteQUICType names the devices hosted by the Ember server at peer,
// reached over QUIC from ep (nil: remote.DefaultEndpoint), for Enumerate.
func RemoteQUICType(ep *remote.Endpoint, peer remote.EndpointAddr) DeviceType {
	addr := peer.String()
	if ep != nil {
		remote.SetDeviceOptions(backend.DeviceID{Type: "remote+quic", Addr: addr, Index: -1}, remote.ClientOptions{Endpoint: ep})
	}
	return DeviceType{name: "remote+quic", addr: addr}
}

// remoteDevices connects to the server a remote DeviceType names and
// returns its devices, in index order (none when it cannot be reached).
func remoteDevices(t DeviceType) Devices {
	descs, err := remote.ListServer(context.Background(), backend.DeviceID{Type: t.name, Addr: t.addr})
	if err != nil {
		return nil
	}
	out := make(Devices, len(descs))
	for i, d := range descs {
		out[i] = deviceFor(backend.DeviceID{Type: t.name, Addr: t.addr, Index: d.Index})
	}
	return out
}

// isRemoteType reports whether typ is one of the remote device types.
func isRemoteType(typ string) bool {
	return typ == "remote+ws" || typ == "remote+wss" || typ == "remote+quic"
}

package ember

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/remote"
)

// Device names. ParseDevice accepts exactly the names Device.String prints
// for the devices the constructors make, and nothing else, so that one
// device has one name and a name denotes one device: "cpu:0" or "cpu:1"
// would otherwise become devices of their own whose tensors cannot mix with
// those of "cpu".

// The forms of the device types, by name. A registered type that is not
// listed here has the single form when its driver is a
// backend.SingleDeviceDriver and the indexed form otherwise.
var (
	// kindTypes are the graphics-API backends, whose devices are
	// adapters chosen by a DeviceKind: "vulkan:discrete:0".
	kindTypes = map[string]bool{"wgpu": true, "vulkan": true, "metal": true, "webgpu": true}
	// indexedKinds are the adapter kinds that take an index;
	// unindexedKinds have one adapter each, printed with index 0.
	indexedKinds   = map[string]bool{"discrete": true, "integrated": true, "virtual": true, "existing": true}
	unindexedKinds = map[string]bool{"cpu": true, "default": true}
)

const kindList = "discrete:N, integrated:N, virtual:N, existing:N, cpu:0 or default:0"

// ParseDevice parses a device name as Device.String prints it and returns
// that device. It accepts exactly these forms, each optionally followed by
// "+autodiff" or "+autodiff+checkpointing", then optionally by
// "+autocast:bf16" or "+autocast:f16" (Device.Autocast):
//
//	cpu, flex, ndarray         single-device backends: the bare type, never an index
//	cuda:N, rocm:N, capture:N  indexed backends (and registered drivers that are not single-device)
//	vulkan:KIND:N              wgpu, vulkan, metal, webgpu: KIND is discrete, integrated,
//	                           virtual or existing with any N, or cpu or default with N = 0
//	libtorch, libtorch:cuda:N, libtorch:mps:0, libtorch:vulkan:0
//	remote+ws://HOST[:PORT]/N  HOST a DNS name, an IPv4 address or a bracketed IPv6 address,
//	remote+wss://HOST[:PORT]/N PORT 1 to 65535
//	remote+quic://PEERID@HOST:PORT/N
//	                           PEERID the server's key in remote.PeerID's text form
//
// N is a decimal index without sign or leading zeros that fits in an int.
// Nothing else is accepted: no spaces, no aliases such as "cpu:0" or a bare
// "cuda", no unknown type or adapter kind, no index on a single-device
// backend, no extra ':' segment, so a name denotes exactly one device and
// ParseDevice(d.String()) is d for every device the constructors make
// (except RemoteWebSocket of an address that is not HOST[:PORT], and
// DeviceFromID of an id no constructor makes, whose names are rejected).
// The type must be a registered driver (backends this build lacks are
// registered as placeholders whose Init says so). The error names the
// input and says what is wrong with it.
func ParseDevice(s string) (Device, error) {
	bad := func(format string, args ...any) (Device, error) {
		return Device{}, fmt.Errorf("ember: parse device %q: %s", s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return bad("empty name")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return bad("byte %d (%q) is not allowed: device names are printable ASCII without spaces", i, s[i:i+1])
		}
	}
	rest, autocast, err := cutAutocastSuffix(s)
	if err != nil {
		return bad("%v", err)
	}
	base, autodiff, checkpointing, err := cutModeSuffixes(rest)
	if err != nil {
		return bad("%v", err)
	}
	id, err := parseDeviceID(base)
	if err != nil {
		return bad("%v", err)
	}
	d := Device{autodiff: autodiff, checkpointing: checkpointing, autocast: autocast}
	if got := id.String() + s[len(base):]; got != s {
		// Unreachable for the forms above; kept so that a future form
		// (or a driver registered over a placeholder that prints
		// differently) cannot break the one-name-per-device rule silently.
		return bad("not the device's canonical name %q", got)
	}
	d.st = stateFor(id)
	return d, nil
}

// cutAutocastSuffix splits a final "+autocast:DTYPE" off s and returns
// DTYPE (0 when s has no such suffix). DTYPE must be bf16 or f16, and the
// suffix must come last and once.
func cutAutocastSuffix(s string) (string, DType, error) {
	i := strings.LastIndex(s, "+autocast")
	if i < 0 {
		return s, 0, nil
	}
	rest, suffix := s[:i], s[i+len("+autocast"):]
	name, ok := strings.CutPrefix(suffix, ":")
	if !ok {
		return "", 0, fmt.Errorf("+autocast needs a dtype and must come last: +autocast:bf16 or +autocast:f16")
	}
	var dt DType
	switch name {
	case "bf16":
		dt = BF16
	case "f16":
		dt = F16
	default:
		return "", 0, fmt.Errorf("+autocast:%s: the autocast dtype is bf16 or f16, and the suffix comes last", name)
	}
	if strings.Contains(rest, "+autocast") {
		return "", 0, fmt.Errorf("+autocast appears more than once")
	}
	return rest, dt, nil
}

// cutModeSuffixes splits "+autodiff" and "+checkpointing" off the end of s.
// They must appear as "+autodiff" or "+autodiff+checkpointing".
func cutModeSuffixes(s string) (base string, autodiff, checkpointing bool, err error) {
	var found []string // in reverse order of appearance
	for {
		if rest, ok := strings.CutSuffix(s, "+checkpointing"); ok {
			s, found = rest, append(found, "checkpointing")
		} else if rest, ok := strings.CutSuffix(s, "+autodiff"); ok {
			s, found = rest, append(found, "autodiff")
		} else {
			break
		}
	}
	switch strings.Join(found, " ") {
	case "":
	case "autodiff":
		autodiff = true
	case "checkpointing autodiff":
		autodiff, checkpointing = true, true
	case "checkpointing":
		return "", false, false, fmt.Errorf("+checkpointing needs +autodiff before it")
	default:
		return "", false, false, fmt.Errorf("the suffixes are +autodiff or +autodiff+checkpointing, each at most once and in that order")
	}
	return s, autodiff, checkpointing, nil
}

// parseDeviceID parses a device name without its mode suffixes.
func parseDeviceID(s string) (backend.DeviceID, error) {
	for _, typ := range []string{"remote+ws", "remote+wss", "remote+quic"} {
		if s == typ {
			return backend.DeviceID{}, fmt.Errorf("want %s", remoteForm(typ))
		}
		if rest, ok := strings.CutPrefix(s, typ+":"); ok {
			return parseRemoteID(typ, rest)
		}
	}
	parts := strings.Split(s, ":")
	typ := parts[0]
	if typ == "" {
		return backend.DeviceID{}, fmt.Errorf("empty device type")
	}
	drv, ok := backend.Lookup(typ)
	if !ok {
		hint := ""
		if strings.Contains(typ, "+") {
			hint = "; the only suffixes are +autodiff, +checkpointing and +autocast:DTYPE"
		}
		return backend.DeviceID{}, fmt.Errorf("unknown device type %q (registered: %s)%s", typ, strings.Join(backend.Drivers(), ", "), hint)
	}
	id := backend.DeviceID{Type: typ}
	args := parts[1:]
	switch {
	case typ == "libtorch":
		return parseLibTorchID(id, args)
	case kindTypes[typ]:
		if len(args) != 2 {
			return id, fmt.Errorf("%s needs an adapter kind and an index, as in %q (kinds: %s)", typ, typ+":discrete:0", kindList)
		}
		kind, err := parseKindParts(args[0], args[1], true, true)
		if err != nil {
			return id, fmt.Errorf("%s: %w", typ, err)
		}
		id.Kind, id.Index = kind.name, kind.index
		return id, nil
	case isSingleDevice(drv):
		if len(args) != 0 {
			return id, fmt.Errorf("%s has a single device, named %q, and takes no index or kind", typ, typ)
		}
		return id, nil
	default:
		if len(args) != 1 {
			if len(args) == 0 {
				return id, fmt.Errorf("%s needs a device index, as in %q", typ, typ+":0")
			}
			return id, fmt.Errorf("%s takes only a device index, as in %q (too many ':' segments)", typ, typ+":0")
		}
		i, err := parseIndex(args[0])
		if err != nil {
			return id, err
		}
		id.Index = i
		return id, nil
	}
}

func isSingleDevice(drv backend.Driver) bool {
	s, ok := drv.(backend.SingleDeviceDriver)
	return ok && s.SingleDevice()
}

// parseLibTorchID parses what follows "libtorch": nothing (its CPU
// device), "cuda:N", "mps:0" or "vulkan:0".
func parseLibTorchID(id backend.DeviceID, args []string) (backend.DeviceID, error) {
	const forms = `"libtorch", "libtorch:cuda:N", "libtorch:mps:0" or "libtorch:vulkan:0"`
	switch {
	case len(args) == 0:
		return id, nil
	case len(args) != 2 || (args[0] != "cuda" && args[0] != "mps" && args[0] != "vulkan"):
		return id, fmt.Errorf("libtorch devices are %s", forms)
	}
	i, err := parseIndex(args[1])
	if err != nil {
		return id, err
	}
	if args[0] != "cuda" && i != 0 {
		return id, fmt.Errorf("libtorch has one %s device, index 0", args[0])
	}
	id.Kind, id.Index = args[0], i
	return id, nil
}

// remoteForm is the form of a remote device name of type typ.
func remoteForm(typ string) string {
	if typ == "remote+quic" {
		return "remote+quic://PEERID@HOST:PORT/N"
	}
	return typ + "://HOST[:PORT]/N"
}

// parseRemoteID parses what follows "remote+ws:", "remote+wss:" or
// "remote+quic:": "//HOST[:PORT]/N", or "//PEERID@HOST:PORT/N" for QUIC,
// whose PEERID is a PeerID in its text form (remote.ParsePeerID, written
// as it prints) and whose PORT is required.
func parseRemoteID(typ, rest string) (backend.DeviceID, error) {
	form := "want " + remoteForm(typ)
	addrIdx, ok := strings.CutPrefix(rest, "//")
	slash := strings.LastIndexByte(addrIdx, '/')
	if !ok || slash < 0 {
		return backend.DeviceID{}, fmt.Errorf("%s", form)
	}
	addr := addrIdx[:slash]
	hostPort := addr
	if typ == "remote+quic" {
		peer, hp, ok := strings.Cut(addr, "@")
		if !ok {
			return backend.DeviceID{}, fmt.Errorf("a QUIC address names the server's key: %s", form)
		}
		id, err := remote.ParsePeerID(peer)
		if err != nil {
			return backend.DeviceID{}, fmt.Errorf("peer id %q: %v (%s)", peer, err, form)
		}
		if id.String() != peer {
			return backend.DeviceID{}, fmt.Errorf("peer id %q: write it as %q (%s)", peer, id.String(), form)
		}
		if _, _, err := net.SplitHostPort(hp); err != nil {
			return backend.DeviceID{}, fmt.Errorf("server address %q needs a port (%s)", hp, form)
		}
		hostPort = hp
	}
	if err := checkRemoteAddr(hostPort); err != nil {
		return backend.DeviceID{}, fmt.Errorf("%w (%s)", err, form)
	}
	i, err := parseIndex(addrIdx[slash+1:])
	if err != nil {
		return backend.DeviceID{}, err
	}
	return backend.DeviceID{Type: typ, Addr: addr, Index: i}, nil
}

// checkRemoteAddr accepts HOST or HOST:PORT. HOST is a DNS name or IPv4
// address (dot-separated labels of letters, digits, '-' and '_', no label
// empty or starting or ending with '-'), or an IPv6 address in brackets,
// written as net.IP prints it ("[::1]", not "[0::1]"), so that one address
// has one name; PORT is 1 to 65535 without leading zeros.
func checkRemoteAddr(addr string) error {
	if addr == "" {
		return fmt.Errorf("empty server address")
	}
	host := addr
	if strings.Contains(addr, ":") && !(strings.HasPrefix(addr, "[") && strings.HasSuffix(addr, "]")) {
		h, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("server address %q is not HOST:PORT", addr)
		}
		if h == "" {
			return fmt.Errorf("server address %q has no host", addr)
		}
		if n, err := parseIndex(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("server address %q: port %q is not 1 to 65535", addr, port)
		}
		host = h
		if strings.HasPrefix(addr, "[") {
			host = "[" + h + "]"
		}
	}
	if inner, ok := strings.CutPrefix(host, "["); ok {
		inner, closed := strings.CutSuffix(inner, "]")
		ip := net.ParseIP(inner)
		if !closed || ip == nil || ip.To4() != nil {
			return fmt.Errorf("server address %q: %q is not a bracketed IPv6 address", addr, host)
		}
		if ip.String() != inner {
			return fmt.Errorf("server address %q: write the IPv6 address as [%s]", addr, ip)
		}
		return nil
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("server address %q: host %q has an empty label or one that starts or ends with '-'", addr, host)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("server address %q: host %q has %q, which is not a letter, digit, '-', '_' or '.'", addr, host, label[i:i+1])
			}
		}
	}
	return nil
}

// parseIndex parses a device index: decimal digits, no sign, no leading
// zero, at most the largest int.
func parseIndex(s string) (int, error) {
	switch {
	case s == "":
		return 0, fmt.Errorf("empty device index")
	case strings.Trim(s, "0123456789") != "":
		return 0, fmt.Errorf("device index %q is not a non-negative decimal integer (digits only, no sign)", s)
	case len(s) > 1 && s[0] == '0':
		want := strings.TrimLeft(s, "0")
		if want == "" {
			want = "0"
		}
		return 0, fmt.Errorf("device index %q has a leading zero (write %q)", s, want)
	}
	i, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("device index %q is out of range (at most %d)", s, maxInt)
	}
	return i, nil
}

const maxInt = int(^uint(0) >> 1)

// parseKindParts parses an adapter kind and its index as a device name
// spells them ("discrete", "0"; "cpu", "0"). hasIndex is false when the
// spelling has no index, as EMBER_WGPU_DEFAULT_DEVICE spells cpu and
// default; in a device name every kind has one, 0 for cpu and default.
func parseKindParts(name, index string, hasIndex, inName bool) (DeviceKind, error) {
	switch {
	case indexedKinds[name]:
		if !hasIndex {
			return DeviceKind{}, fmt.Errorf("adapter kind %q needs an index, as in %q", name, name+":0")
		}
		i, err := parseIndex(index)
		if err != nil {
			return DeviceKind{}, err
		}
		return DeviceKind{name, i}, nil
	case unindexedKinds[name]:
		if inName {
			if i, err := parseIndex(index); err != nil || i != 0 {
				return DeviceKind{}, fmt.Errorf("adapter kind %q has one adapter, index 0 (got %q)", name, index)
			}
		} else if hasIndex {
			return DeviceKind{}, fmt.Errorf("adapter kind %q takes no index (got %q)", name, index)
		}
		return DeviceKind{name: name}, nil
	}
	return DeviceKind{}, fmt.Errorf("unknown adapter kind %q (kinds: %s)", name, kindList)
}

// MustParseDevice is ParseDevice that panics on error (for tests and constants).
func MustParseDevice(s string) Device {
	d, err := ParseDevice(s)
	if err != nil {
		panic(err)
	}
	return d
}

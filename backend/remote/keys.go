package remote

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base32"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Endpoint is one side's QUIC identity: an ed25519 key pair (RFC 8032).
// Its PeerID is the public key; in the TLS 1.3 handshake it presents a
// self-signed certificate of that key and proves it holds the private key.
// An Endpoint is immutable and safe for concurrent use; one may serve any
// number of listeners and dials. Make one with NewEndpoint,
// GenerateEndpoint or LoadOrCreateEndpoint (the zero Endpoint has no key,
// and ListenQUIC and DialQUIC refuse it).
type Endpoint struct {
	key ed25519.PrivateKey

	certOnce sync.Once // makes cert, certErr
	cert     tls.Certificate
	certErr  error
}

// NewEndpoint returns the endpoint with the given ed25519 private key:
// either a 32-byte seed (RFC 8032 §5.1.5, ed25519.SeedSize) or a 64-byte
// private key in crypto/ed25519's form (seed followed by public key,
// ed25519.PrivateKeySize), whose public half must match its seed. Any other
// length, or a mismatched public half, is an error. The key is copied.
func NewEndpoint(key []byte) (*Endpoint, error) {
	switch len(key) {
	case ed25519.SeedSize:
		return &Endpoint{key: ed25519.NewKeyFromSeed(key)}, nil
	case ed25519.PrivateKeySize:
		priv := ed25519.NewKeyFromSeed(key[:ed25519.SeedSize])
		if !bytes.Equal(priv[ed25519.SeedSize:], key[ed25519.SeedSize:]) {
			return nil, errors.New("remote: NewEndpoint: the 64-byte ed25519 private key's public half does not match its seed")
		}
		return &Endpoint{key: priv}, nil
	default:
		return nil, fmt.Errorf("remote: NewEndpoint: key of %d bytes: want an ed25519 seed (%d bytes) or private key (%d bytes)",
			len(key), ed25519.SeedSize, ed25519.PrivateKeySize)
	}
}

// GenerateEndpoint returns an endpoint with a fresh random ed25519 key
// (from crypto/rand). The error is crypto/rand's, which does not fail on
// supported platforms.
func GenerateEndpoint() (*Endpoint, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("remote: GenerateEndpoint: %w", err)
	}
	return &Endpoint{key: priv}, nil
}

// keyFileMaxSize bounds what LoadOrCreateEndpoint reads: a PKCS#8 ed25519
// key in PEM is about 120 bytes.
const keyFileMaxSize = 64 << 10

// LoadOrCreateEndpoint reads the endpoint key in path, or creates path with
// a fresh key when it does not exist (its directory too, mode 0700).
//
// The key file is PEM (RFC 7468) with one "PRIVATE KEY" block holding an
// unencrypted PKCS#8 ed25519 key (RFC 8410), as x509.MarshalPKCS8PrivateKey
// writes and `openssl genpkey -algorithm ed25519` makes. A created file has
// mode 0600 and is never overwritten (two processes creating it at once
// agree on one key). On Unix-like systems an existing file that group or
// others may read is refused (as OpenSSH refuses such private keys), as is
// a file that is not such a PEM key; errors name the file.
func LoadOrCreateEndpoint(path string) (*Endpoint, error) {
	ep, err := readKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return ep, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("remote: key file %s: %w", path, err)
	}
	ep, err = GenerateEndpoint()
	if err != nil {
		return nil, err
	}
	err = ep.WriteKeyFile(path)
	if errors.Is(err, fs.ErrExist) {
		// Created by someone else since the read: use theirs.
		return readKeyFile(path)
	}
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// WriteKeyFile writes ep's private key to path in the format
// LoadOrCreateEndpoint reads (PEM "PRIVATE KEY", PKCS#8), creating the file
// with mode 0600. It never overwrites: an existing path is an error
// wrapping fs.ErrExist.
func (ep *Endpoint) WriteKeyFile(path string) error {
	if ep == nil || len(ep.key) != ed25519.PrivateKeySize {
		return fmt.Errorf("remote: key file %s: the endpoint has no key", path)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ep.key)
	if err != nil {
		return fmt.Errorf("remote: key file %s: %w", path, err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("remote: key file %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("remote: key file %s: %w", path, err)
	}
	return nil
}

// secretFilesHaveModes reports whether file permission bits are real on
// this system (they are synthesized on Windows and absent on Plan 9 and the
// WebAssembly hosts).
func secretFilesHaveModes() bool {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		return false
	}
	return true
}

// readConfigFile reads path, which must be a regular file of at most limit
// bytes; a secret one must not be readable by group or others. what names
// the file's role in errors.
func readConfigFile(what, path string, secret bool, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("remote: %s %s: %w", what, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("remote: %s %s: %w", what, path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("remote: %s %s: not a regular file (%v)", what, path, fi.Mode())
	}
	if perm := fi.Mode().Perm(); secret && secretFilesHaveModes() && perm&0o077 != 0 {
		return nil, fmt.Errorf("remote: %s %s has mode %04o: it is a secret readable by group or others; make it 0600 (chmod 600 %s)",
			what, path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("remote: %s %s: %w", what, path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("remote: %s %s: larger than %d bytes", what, path, limit)
	}
	return data, nil
}

func readKeyFile(path string) (*Endpoint, error) {
	data, err := readConfigFile("key file", path, true, keyFileMaxSize)
	if err != nil {
		return nil, err
	}
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("remote: key file %s: no PEM block (want a PEM \"PRIVATE KEY\" with a PKCS#8 ed25519 key)", path)
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("remote: key file %s: PEM block %q: want \"PRIVATE KEY\" (PKCS#8 ed25519)", path, block.Type)
	}
	if len(block.Headers) != 0 {
		return nil, fmt.Errorf("remote: key file %s: PEM headers (an encrypted key?) are not supported", path)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("remote: key file %s: data after the PEM block", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("remote: key file %s: not a PKCS#8 private key: %w", path, err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("remote: key file %s: a %T key: want ed25519", path, key)
	}
	return NewEndpoint(priv)
}

// ID is the endpoint's PeerID (its ed25519 public key); the zero PeerID
// for a nil endpoint or one without a key.
func (ep *Endpoint) ID() PeerID {
	var id PeerID
	if ep != nil && len(ep.key) == ed25519.PrivateKeySize {
		copy(id[:], ep.key[ed25519.SeedSize:])
	}
	return id
}

// String is the endpoint's PeerID in text form; it never shows the private
// key (nor does %#v, see GoString).
func (ep *Endpoint) String() string { return ep.ID().String() }

// GoString keeps %#v from printing the private key.
func (ep *Endpoint) GoString() string { return "remote.Endpoint(" + ep.ID().String() + ")" }

// certificate returns ep's TLS certificate (made once): a self-signed X.509
// certificate of its ed25519 key.
func (ep *Endpoint) certificate() (tls.Certificate, error) {
	if ep == nil || len(ep.key) != ed25519.PrivateKeySize {
		return tls.Certificate{}, errors.New("the endpoint has no key (make it with NewEndpoint, GenerateEndpoint or LoadOrCreateEndpoint)")
	}
	ep.certOnce.Do(func() { ep.cert, ep.certErr = selfSignedCertificate(ep.key) })
	return ep.cert, ep.certErr
}

// peerIDEncoding is RFC 4648 §6 base32 with the lowercase alphabet and no
// padding.
var peerIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// peerIDTextLen is the length of a PeerID's text form (256 bits in 5-bit
// characters).
const peerIDTextLen = (8*len(PeerID{}) + 4) / 5

// String prints the PeerID in its text form: the 32 key bytes in RFC 4648
// base32 (§6) with the lowercase alphabet a–z, 2–7 and no padding: 52
// characters, one DNS label, safe in URLs, host names and file names (a
// device name reads remote+quic://PEERID@host:port/0).
// The zero PeerID prints as "(no key)", which ParsePeerID rejects.
func (id PeerID) String() string {
	if id.IsZero() {
		return "(no key)"
	}
	return peerIDEncoding.EncodeToString(id[:])
}

// ParsePeerID parses the text form of a PeerID (see PeerID.String), the
// strict inverse of String: exactly 52 characters of a–z and 2–7 whose
// unused trailing bits are zero (so every key has one text form), and the
// bytes must be a canonical encoding of a point of the ed25519 curve
// (RFC 8032 §5.1.3) that is not of small order (such as the all-zero id),
// since no one holds the private key of a small-order point and signatures
// under it can be forged. Errors quote the input.
func ParsePeerID(s string) (PeerID, error) {
	var id PeerID
	if len(s) != peerIDTextLen {
		return id, fmt.Errorf("remote: peer id %.80q: %d characters, want %d (lowercase base32 of an ed25519 public key)", s, len(s), peerIDTextLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return id, fmt.Errorf("remote: peer id %q: character %q at %d: want a–z or 2–7 (lowercase base32)", s, c, i)
		}
	}
	n, err := peerIDEncoding.Decode(id[:], []byte(s))
	if err != nil || n != len(id) || peerIDEncoding.EncodeToString(id[:]) != s {
		return PeerID{}, fmt.Errorf("remote: peer id %q: not the canonical base32 of 32 bytes (the last character's unused bits must be zero)", s)
	}
	if err := id.checkKey(); err != nil {
		return PeerID{}, fmt.Errorf("remote: peer id %q: %w", s, err)
	}
	return id, nil
}

// MarshalText implements encoding.TextMarshaler with PeerID.String's form;
// the zero PeerID marshals as the empty text.
func (id PeerID) MarshalText() ([]byte, error) {
	if id.IsZero() {
		return []byte{}, nil
	}
	return []byte(id.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParsePeerID; the
// empty text is the zero PeerID.
func (id *PeerID) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*id = PeerID{}
		return nil
	}
	v, err := ParsePeerID(string(text))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// Field constants of edwards25519 (RFC 8032 §5.1): p = 2^255 - 19,
// d = -121665/121666 mod p, and the y coordinates of the points of small
// order (1, 2, 4 and 8): 1, p-1, 0 and ±y8.
var (
	edP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	edD = func() *big.Int {
		d := new(big.Int).ModInverse(big.NewInt(121666), edP)
		d.Mul(d, big.NewInt(-121665))
		return d.Mod(d, edP)
	}()
	edY8, _         = new(big.Int).SetString("05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826", 16)
	edSmallOrderYs  = []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Sub(edP, big.NewInt(1)), edY8, new(big.Int).Sub(edP, edY8)}
	errSmallOrderID = errors.New("a small-order point of the ed25519 curve, whose private key no one holds")
)

// checkKey reports whether id decodes as RFC 8032 §5.1.3 describes (y
// below p, x² = (y²-1)/(dy²+1) a square mod p, x = 0 only with a zero
// sign bit) to a point that is not of small order.
func (id PeerID) checkKey() error {
	var le [32]byte
	for i := range le {
		le[i] = id[31-i]
	}
	sign := le[0] >> 7
	le[0] &= 0x7f
	y := new(big.Int).SetBytes(le[:])
	if y.Cmp(edP) >= 0 {
		return errors.New("not a canonical ed25519 point encoding (y ≥ 2^255-19)")
	}
	for _, s := range edSmallOrderYs {
		if y.Cmp(s) == 0 {
			return errSmallOrderID
		}
	}
	y2 := new(big.Int).Mul(y, y)
	y2.Mod(y2, edP)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	v := new(big.Int).Mul(edD, y2)
	v.Add(v, big.NewInt(1))
	v.ModInverse(v.Mod(v, edP), edP)
	x2 := u.Mul(u, v)
	x2.Mod(x2, edP)
	if x2.Sign() == 0 {
		if sign == 1 {
			return errors.New("not an ed25519 point (x = 0 with the sign bit set)")
		}
		return nil
	}
	if big.Jacobi(x2, edP) != 1 {
		return errors.New("not a point of the ed25519 curve")
	}
	return nil
}

// keyFileMaxLine bounds the length of one line, and listFileMaxSize the
// size, of an authorized-keys or credentials file.
const (
	keyFileMaxLine  = 4096
	listFileMaxSize = 64 << 20
)

// scanLines calls f with the entry (first whitespace-separated token) of
// each non-blank, non-comment line of data, read from the file at path,
// stopping at f's first error, which it prefixes with the file name and
// line number. Text after the entry must be a # comment; for a secret
// file, errors never quote the line.
func scanLines(what, path string, secret bool, data []byte, f func(token string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 512), keyFileMaxLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		token, rest := text, ""
		if i := strings.IndexAny(text, " \t"); i >= 0 {
			token, rest = text[:i], strings.TrimSpace(text[i:])
		}
		if rest != "" && rest[0] != '#' {
			if secret {
				return fmt.Errorf("remote: %s %s:%d: text after the first entry (one entry per line; comments start with #)", what, path, line)
			}
			return fmt.Errorf("remote: %s %s:%d: unexpected %.40q after the first entry (one entry per line; comments start with #)", what, path, line, rest)
		}
		if err := f(token); err != nil {
			return fmt.Errorf("remote: %s %s:%d: %w", what, path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("remote: %s %s:%d: line longer than %d bytes", what, path, line+1, keyFileMaxLine)
		}
		return fmt.Errorf("remote: %s %s: %w", what, path, err)
	}
	return nil
}

// authorizedKeys admits the peers in its set.
type authorizedKeys struct {
	ids    map[PeerID]struct{}
	source string // "in FILE" or "among the N authorized keys"
}

func (a *authorizedKeys) Authorize(peer PeerID, _ int, _ []byte) error {
	if peer.IsZero() {
		return errors.New("remote: the client has no key identity; authorized keys need a QUIC connection")
	}
	if _, ok := a.ids[peer]; !ok {
		return fmt.Errorf("remote: peer %s is not an authorized key (%s)", peer, a.source)
	}
	return nil
}

// AuthorizedKeys returns the PeerAuthorizer that admits exactly the clients
// whose key is among ids, and refuses any other (and any client without a
// key identity, such as a WebSocket client) with an error naming the peer.
// Zero PeerIDs among ids are ignored. With no ids it refuses everyone.
func AuthorizedKeys(ids ...PeerID) PeerAuthorizer {
	a := &authorizedKeys{ids: make(map[PeerID]struct{}, len(ids))}
	for _, id := range ids {
		if !id.IsZero() {
			a.ids[id] = struct{}{}
		}
	}
	a.source = fmt.Sprintf("among the %d authorized keys", len(a.ids))
	return a
}

// ReadAuthorizedKeys reads a file of PeerIDs and returns the PeerAuthorizer
// that admits exactly those peers (see AuthorizedKeys). Each line holds one
// PeerID in its text form (ParsePeerID), optionally followed by whitespace
// and a comment starting with #; blank lines and lines starting with # are
// ignored, as are leading and trailing spaces:
//
//	# laptop and build server
//	aoqqpp7tzyil4hlq3umoos6atft6jvrqtosq2xy53sdgiesvgg4a  # laptop
//	bo6di2sxmz6dqajaxwoh7v7fduwf7x7kg7gs6w7uawzmnp3pfv4a
//
// A malformed line is an error naming the file and line; so is a file that
// lists no key (which would refuse every client), or one over 64 MiB.
func ReadAuthorizedKeys(path string) (PeerAuthorizer, error) {
	data, err := readConfigFile("authorized keys", path, false, listFileMaxSize)
	if err != nil {
		return nil, err
	}
	a := &authorizedKeys{ids: map[PeerID]struct{}{}, source: "listed in " + path}
	err = scanLines("authorized keys", path, false, data, func(token string) error {
		id, err := ParsePeerID(token)
		if err != nil {
			return err
		}
		a.ids[id] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(a.ids) == 0 {
		return nil, fmt.Errorf("remote: authorized keys %s: lists no key (it would refuse every client)", path)
	}
	return a, nil
}

// credentials admits a client presenting one of its credentials. It keeps
// only their SHA-256 digests, so comparing takes the same time whatever the
// lengths.
type credentials struct {
	digests [][sha256.Size]byte
}

func (c *credentials) Authorize(_ PeerID, _ int, credential []byte) error {
	if len(credential) == 0 {
		return errors.New("remote: the server requires a credential and the client presented none")
	}
	d := sha256.Sum256(credential)
	match := 0
	for i := range c.digests {
		match |= subtle.ConstantTimeCompare(d[:], c.digests[i][:])
	}
	if match != 1 {
		return errors.New("remote: the client's credential is not accepted")
	}
	return nil
}

// Credentials returns the PeerAuthorizer that admits a client whose
// credential (RemoteQUICAuthorized's) equals one of creds, compared in
// constant time (crypto/subtle over SHA-256 digests, so neither the
// position of a mismatch nor a credential's length shows in the timing),
// and refuses any other with an error that does not echo the credential.
// Empty creds are ignored (no credential admits a client that sent none);
// with none it refuses everyone. creds are not retained.
func Credentials(creds ...[]byte) PeerAuthorizer {
	c := &credentials{}
	for _, cred := range creds {
		if len(cred) > 0 {
			c.digests = append(c.digests, sha256.Sum256(cred))
		}
	}
	return c
}

// ReadCredentials reads a file of credentials and returns the
// PeerAuthorizer that admits a client presenting one of them (see
// Credentials). Each line holds one credential: a token of printable ASCII
// without spaces (bytes 0x21–0x7E, e.g. a hex or base64 secret), at most
// 4096 bytes, optionally followed by whitespace and a # comment; blank
// lines and lines starting with # are ignored. The token is the credential's
// bytes as written. The file is a secret: on Unix-like systems one that
// group or others may read is refused, as are a malformed line (the error
// names the file and line, never the token) and a file with no credential.
func ReadCredentials(path string) (PeerAuthorizer, error) {
	data, err := readConfigFile("credentials", path, true, listFileMaxSize)
	if err != nil {
		return nil, err
	}
	c := &credentials{}
	err = scanLines("credentials", path, true, data, func(token string) error {
		for i := 0; i < len(token); i++ {
			if b := token[i]; b < 0x21 || b > 0x7e {
				return fmt.Errorf("byte %#02x at column %d: a credential is printable ASCII without spaces", b, i+1)
			}
		}
		c.digests = append(c.digests, sha256.Sum256([]byte(token)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(c.digests) == 0 {
		return nil, fmt.Errorf("remote: credentials %s: lists no credential (it would refuse every client)", path)
	}
	return c, nil
}

// allOf admits a client when every one of its authorizers does.
type allOf []PeerAuthorizer

func (as allOf) Authorize(peer PeerID, deviceIndex int, credential []byte) error {
	for _, a := range as {
		if err := a.Authorize(peer, deviceIndex, credential); err != nil {
			return err
		}
	}
	return nil
}

// AllOf returns the PeerAuthorizer that admits a client only when every
// one of as admits it, asking them in order and returning the first
// refusal. Nil entries admit everyone (they stand for AllowAll); with no
// entries AllOf admits everyone.
func AllOf(as ...PeerAuthorizer) PeerAuthorizer {
	var list allOf
	for _, a := range as {
		if a != nil && a != AllowAll {
			list = append(list, a)
		}
	}
	if len(list) == 0 {
		return AllowAll
	}
	return list
}

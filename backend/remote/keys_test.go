package remote_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/emberml/ember/backend/remote"
)

// keyModesChecked mirrors where file permission bits exist.
var keyModesChecked = runtime.GOOS != "windows" && runtime.GOOS != "plan9"

func keyTestEndpoint(t testing.TB) *remote.Endpoint {
	t.Helper()
	ep, err := remote.GenerateEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// TestKeyNewEndpoint checks both key forms against crypto/ed25519, the
// length and consistency errors, and that printing an endpoint never shows
// its private key.
func TestKeyNewEndpoint(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i*7 + 1)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	want := priv.Public().(ed25519.PublicKey)
	for _, key := range [][]byte{seed, priv} {
		ep, err := remote.NewEndpoint(key)
		if err != nil {
			t.Fatalf("NewEndpoint(%d bytes): %v", len(key), err)
		}
		id := ep.ID()
		if !bytes.Equal(id[:], want) {
			t.Errorf("NewEndpoint(%d bytes).ID() = %x, want %x", len(key), id, want)
		}
		for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
			out := fmt.Sprintf(format, ep)
			if strings.Contains(out, hex.EncodeToString(seed)) || strings.Contains(out, fmt.Sprint(seed)) || strings.Contains(out, fmt.Sprint(priv)) {
				t.Errorf("Sprintf(%q, endpoint) = %q shows the private key", format, out)
			}
			if !strings.Contains(out, id.String()) {
				t.Errorf("Sprintf(%q, endpoint) = %q does not show its id", format, out)
			}
		}
	}
	bad := bytes.Clone(priv)
	bad[63] ^= 1
	if _, err := remote.NewEndpoint(bad); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("NewEndpoint(mismatched public half): %v", err)
	}
	for _, n := range []int{0, 31, 33, 63, 65} {
		if _, err := remote.NewEndpoint(make([]byte, n)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes", n)) {
			t.Errorf("NewEndpoint(%d bytes): %v, want an error naming the length", n, err)
		}
	}
	a, b := keyTestEndpoint(t), keyTestEndpoint(t)
	if a.ID() == b.ID() || a.ID().IsZero() {
		t.Errorf("two generated endpoints: %s, %s", a.ID(), b.ID())
	}
	var none *remote.Endpoint
	if !none.ID().IsZero() {
		t.Error("nil endpoint has a non-zero id")
	}
}

// TestKeyFileRoundTrip creates a key file, checks its mode and its content
// with encoding/pem and crypto/x509, and loads it back.
func TestKeyFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "server.key")
	ep, err := remote.LoadOrCreateEndpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if keyModesChecked && fi.Mode().Perm() != 0o600 {
		t.Errorf("created key file mode %04o, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("key file is not a PEM PRIVATE KEY:\n%s", data)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	id := ep.ID()
	if pub := key.(ed25519.PrivateKey).Public().(ed25519.PublicKey); !bytes.Equal(pub, id[:]) {
		t.Errorf("key file's public key %x, endpoint id %x", pub, id)
	}
	again, err := remote.LoadOrCreateEndpoint(path)
	if err != nil || again.ID() != ep.ID() {
		t.Fatalf("reloaded: %v, %v; want %s", again, err, ep)
	}
	if err := ep.WriteKeyFile(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteKeyFile over an existing file: %v, want fs.ErrExist", err)
	}
	seeded, _ := remote.NewEndpoint(bytes.Repeat([]byte{9}, 32))
	p2 := filepath.Join(t.TempDir(), "seeded.key")
	if err := seeded.WriteKeyFile(p2); err != nil {
		t.Fatal(err)
	}
	if got, err := remote.LoadOrCreateEndpoint(p2); err != nil || got.ID() != seeded.ID() {
		t.Errorf("WriteKeyFile then load: %v, %v; want %s", got, err, seeded)
	}
}

// TestKeyFileRFC8410 loads the private key of RFC 8410 §10.3 and checks
// its id against the public key of §10.1.
func TestKeyFileRFC8410(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rfc8410.key")
	const privPEM = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n"
	const pubPEM = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"
	if err := os.WriteFile(path, []byte(privPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	ep, err := remote.LoadOrCreateEndpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(pubPEM))
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	id := ep.ID()
	if !bytes.Equal(pub.(ed25519.PublicKey), id[:]) {
		t.Errorf("id %x, RFC 8410 public key %x", id, pub)
	}
}

// TestKeyFileErrors checks that malformed, foreign and loosely permitted
// key files are refused with errors naming the file.
func TestKeyFileErrors(t *testing.T) {
	dir := t.TempDir()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	edDER, _ := x509.MarshalPKCS8PrivateKey(edKey)
	good := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: edDER})
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "no PEM block", nil},
		{"garbage", "no PEM block", []byte("not a key\n")},
		{"wrong type", `"EC PRIVATE KEY"`, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: edDER})},
		{"ecdsa", "want ed25519", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER})},
		{"headers", "headers", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: edDER})},
		{"trailing", "after the PEM block", append(bytes.Clone(good), "junk"...)},
		{"bad der", "PKCS#8", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{0x30, 0x03, 1, 2, 3}})},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".key")
		if err := os.WriteFile(path, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := remote.LoadOrCreateEndpoint(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", tc.name, err, path, tc.want)
		}
	}
	if _, err := remote.LoadOrCreateEndpoint(dir); err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Errorf("directory as key file: %v", err)
	}
	if keyModesChecked {
		path := filepath.Join(dir, "loose.key")
		if err := os.WriteFile(path, good, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := remote.LoadOrCreateEndpoint(path); err == nil || !strings.Contains(err.Error(), "0644") || !strings.Contains(err.Error(), path) {
			t.Errorf("group/world-readable key file: %v, want a refusal naming the mode", err)
		}
	}
}

// TestPeerIDText checks the text form against encoding/base32's standard
// encoding (uppercase, padded) made lowercase and unpadded, and the round
// trips through ParsePeerID, MarshalText and JSON.
func TestPeerIDText(t *testing.T) {
	for range 200 {
		id := keyTestEndpoint(t).ID()
		s := id.String()
		want := strings.ToLower(strings.TrimRight(base32.StdEncoding.EncodeToString(id[:]), "="))
		if s != want || len(s) != 52 {
			t.Fatalf("String() = %q, want %q (52 characters)", s, want)
		}
		got, err := remote.ParsePeerID(s)
		if err != nil || got != id {
			t.Fatalf("ParsePeerID(%q) = %s, %v", s, got, err)
		}
		text, err := id.MarshalText()
		if err != nil || string(text) != s {
			t.Fatalf("MarshalText = %q, %v", text, err)
		}
		var back remote.PeerID
		if err := back.UnmarshalText(text); err != nil || back != id {
			t.Fatalf("UnmarshalText: %s, %v", back, err)
		}
	}
	type doc struct{ Peer, None remote.PeerID }
	in := doc{Peer: keyTestEndpoint(t).ID()}
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Peer":"` + in.Peer.String() + `","None":""}`; string(js) != want {
		t.Errorf("JSON %s, want %s", js, want)
	}
	var out doc
	if err := json.Unmarshal(js, &out); err != nil || out != in {
		t.Errorf("JSON round trip: %+v, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"Peer":"nope"}`), &out); err == nil {
		t.Error("JSON with a malformed peer id accepted")
	}
	if (remote.PeerID{}).String() != "(no key)" {
		t.Errorf("zero PeerID prints %q", remote.PeerID{}.String())
	}
}

// smallOrderEncodings are the encodings of ed25519's small-order points
// as libsodium's ge25519_has_small_order lists them (canonical and not),
// with their sign-bit variants.
var smallOrderEncodings = []string{
	"0000000000000000000000000000000000000000000000000000000000000000",
	"0100000000000000000000000000000000000000000000000000000000000000",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"0000000000000000000000000000000000000000000000000000000000000080",
	"0100000000000000000000000000000000000000000000000000000000000080",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
}

// TestParsePeerIDRejects checks malformed text and keys that are no valid
// identity: small-order points, non-canonical and off-curve encodings.
func TestParsePeerIDRejects(t *testing.T) {
	valid := keyTestEndpoint(t).ID().String()
	texts := []string{
		"", "a", valid[:51], valid + "a", strings.ToUpper(valid),
		valid[:10] + "0" + valid[11:], valid[:10] + "1" + valid[11:], valid[:10] + "8" + valid[11:],
		valid[:10] + "=" + valid[11:], valid[:10] + "\n" + valid[11:], valid[:10] + " " + valid[11:],
		valid[:10] + "é"[:1] + valid[11:], " " + valid[1:],
	}
	// The last character carries one bit; its four unused bits must be 0.
	for _, c := range "bcdefghijklmnoprstuvwxyz234567" {
		if last := valid[:51] + string(c); last != valid {
			texts = append(texts, last)
		}
	}
	for _, s := range texts {
		if id, err := remote.ParsePeerID(s); err == nil {
			t.Errorf("ParsePeerID(%q) = %s, want an error", s, id)
		}
	}
	for _, h := range smallOrderEncodings {
		var id remote.PeerID
		hex.Decode(id[:], []byte(h))
		if got, err := remote.ParsePeerID(id.String()); err == nil {
			t.Errorf("small-order or non-canonical key %s accepted as %s", h, got)
		}
	}
	if _, err := remote.ParsePeerID(strings.Repeat("a", 52)); err == nil || !strings.Contains(err.Error(), "small-order") {
		t.Errorf("all-zero id: %v, want a small-order refusal", err)
	}
}

// TestPeerIDCurveCheck compares ParsePeerID's verdict on random 32-byte
// strings with a reference computed on the birationally equivalent
// Montgomery curve v² = u³ + 486662u² + u (RFC 7748 §4.1, u = (1+y)/(1-y)):
// y encodes a point exactly when y < p and that right-hand side is a
// square. Keys made by crypto/ed25519 are all accepted.
func TestPeerIDCurveCheck(t *testing.T) {
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	one := big.NewInt(1)
	rng := mrand.New(mrand.NewPCG(1, 2))
	accepted := 0
	for i := range 2000 {
		var id remote.PeerID
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		if i%7 == 0 { // some y ≥ p
			for j := 1; j < 31; j++ {
				id[j] = 0xff
			}
			id[31] |= 0x7f
		}
		le := make([]byte, 32)
		for j := range le {
			le[j] = id[31-j]
		}
		le[0] &= 0x7f
		y := new(big.Int).SetBytes(le)
		want := false
		if y.Cmp(p) < 0 && y.Cmp(one) != 0 && y.Cmp(new(big.Int).Sub(p, one)) != 0 {
			num := new(big.Int).Add(one, y)
			den := new(big.Int).Sub(one, y)
			den.Mod(den, p).ModInverse(den, p)
			u := num.Mul(num, den)
			u.Mod(u, p)
			u2 := new(big.Int).Mul(u, u)
			rhs := new(big.Int).Mul(u2, u)
			rhs.Add(rhs, u2.Mul(u2, big.NewInt(486662)))
			rhs.Add(rhs, u)
			rhs.Mod(rhs, p)
			want = big.Jacobi(rhs, p) == 1
		}
		_, err := remote.ParsePeerID(id.String())
		if (err == nil) != want {
			t.Fatalf("key %x: ParsePeerID error %v, Montgomery reference says valid=%v", id, err, want)
		}
		if want {
			accepted++
		}
	}
	if accepted < 500 || accepted > 1250 {
		t.Errorf("%d of 2000 random strings are points; expected about half of the y < p ones", accepted)
	}
	for range 200 {
		id := keyTestEndpoint(t).ID()
		if _, err := remote.ParsePeerID(id.String()); err != nil {
			t.Fatalf("generated key refused: %v", err)
		}
	}
}

func writeFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadAuthorizedKeys reads a file with comments, blank lines, CRLF
// endings and trailing comments, admits exactly the listed peers and
// refuses others with errors naming them; bad lines are errors naming the
// file and line.
func TestReadAuthorizedKeys(t *testing.T) {
	a, b, c := keyTestEndpoint(t).ID(), keyTestEndpoint(t).ID(), keyTestEndpoint(t).ID()
	content := "# ember authorized keys\n\n" + a.String() + "  # laptop\r\n   " + b.String() + "\t#build server\n# " + c.String() + " (revoked)\n"
	path := writeFile(t, "authorized_keys", content, 0o644)
	auth, err := remote.ReadAuthorizedKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []remote.PeerID{a, b} {
		if err := auth.Authorize(id, 0, nil); err != nil {
			t.Errorf("listed peer %s refused: %v", id, err)
		}
	}
	err = auth.Authorize(c, 2, []byte("cred"))
	if err == nil || !strings.Contains(err.Error(), c.String()) || !strings.Contains(err.Error(), path) {
		t.Errorf("unlisted peer: %v, want a refusal naming the peer and the file", err)
	}
	if err := auth.Authorize(remote.PeerID{}, 0, nil); err == nil {
		t.Error("client without a key admitted")
	}
	bad := []struct{ content, where string }{
		{a.String() + "\nnot-a-key\n", ":2:"},
		{"\n\n" + a.String() + " " + b.String() + "\n", ":3:"},
		{a.String() + " laptop\n", ":1:"},
		{strings.ToUpper(a.String()) + "\n", ":1:"},
		{strings.Repeat("a", 52) + "\n", ":1:"},
		{strings.Repeat("x", 5000) + "\n", ":1:"},
		{"# nothing\n\n", "lists no key"},
	}
	for _, tc := range bad {
		p := writeFile(t, "bad_keys", tc.content, 0o600)
		if _, err := remote.ReadAuthorizedKeys(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.where) {
			t.Errorf("file %.60q: %v, want an error naming %s and %q", tc.content, err, p, tc.where)
		}
	}
	if _, err := remote.ReadAuthorizedKeys(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestAuthorizedKeysConstructor checks AuthorizedKeys without a file.
func TestAuthorizedKeysConstructor(t *testing.T) {
	a, b := keyTestEndpoint(t).ID(), keyTestEndpoint(t).ID()
	auth := remote.AuthorizedKeys(a, remote.PeerID{})
	if err := auth.Authorize(a, 0, nil); err != nil {
		t.Errorf("listed peer refused: %v", err)
	}
	if err := auth.Authorize(b, 0, nil); err == nil || !strings.Contains(err.Error(), b.String()) {
		t.Errorf("unlisted peer: %v", err)
	}
	if err := auth.Authorize(remote.PeerID{}, 0, nil); err == nil {
		t.Error("a zero id in the list admitted a client without a key")
	}
	if err := remote.AuthorizedKeys().Authorize(a, 0, nil); err == nil {
		t.Error("empty AuthorizedKeys admitted a peer")
	}
}

// TestReadCredentials reads a credentials file and checks admission and
// refusal (wrong, empty, prefix, extension), that errors never echo a
// credential, and the file's checks.
func TestReadCredentials(t *testing.T) {
	const s1, s2 = "c2VjcmV0LXRva2VuLTE=", "hex:0123456789abcdef#not-a-comment"
	path := writeFile(t, "credentials", "# tokens\n\n"+s1+"   # ci\r\n  "+s2+"\n", 0o600)
	auth, err := remote.ReadCredentials(path)
	if err != nil {
		t.Fatal(err)
	}
	peer := keyTestEndpoint(t).ID()
	for _, s := range []string{s1, s2} {
		if err := auth.Authorize(peer, 0, []byte(s)); err != nil {
			t.Errorf("credential %q refused: %v", s, err)
		}
	}
	for _, s := range []string{"", s1[:len(s1)-1], s1 + "x", "c2VjcmV0LXRva2VuLTI=", "# tokens"} {
		err := auth.Authorize(peer, 0, []byte(s))
		if err == nil {
			t.Errorf("credential %q admitted", s)
		} else if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q echoes the credential", err)
		}
	}
	if err := auth.Authorize(peer, 0, nil); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("no credential: %v", err)
	}
	bad := []struct{ content, where string }{
		{s1 + "\ntab\x01byte\n", ":2:"},
		{s1 + " " + s2 + "\n", ":1:"},
		{"#only comments\n", "lists no credential"},
	}
	for _, tc := range bad {
		p := writeFile(t, "bad_credentials", tc.content, 0o600)
		_, err := remote.ReadCredentials(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.where) {
			t.Errorf("file %q: %v, want an error naming %s and %q", tc.content, err, p, tc.where)
		} else if strings.Contains(err.Error(), s2) {
			t.Errorf("error %q echoes a credential", err)
		}
	}
	if keyModesChecked {
		p := writeFile(t, "loose_credentials", s1+"\n", 0o640)
		if _, err := remote.ReadCredentials(p); err == nil || !strings.Contains(err.Error(), "0640") {
			t.Errorf("group-readable credentials file: %v, want a refusal", err)
		}
	}
}

// TestCredentialsConstructor checks Credentials without a file.
func TestCredentialsConstructor(t *testing.T) {
	auth := remote.Credentials([]byte("alpha"), nil, []byte{}, []byte("beta\x00\xff"))
	for _, c := range [][]byte{[]byte("alpha"), []byte("beta\x00\xff")} {
		if err := auth.Authorize(remote.PeerID{}, 1, c); err != nil {
			t.Errorf("credential %q refused: %v", c, err)
		}
	}
	for _, c := range [][]byte{nil, {}, []byte("alph"), []byte("beta")} {
		if err := auth.Authorize(remote.PeerID{}, 1, c); err == nil {
			t.Errorf("credential %q admitted", c)
		}
	}
	if err := remote.Credentials().Authorize(remote.PeerID{}, 0, []byte("x")); err == nil {
		t.Error("empty Credentials admitted a client")
	}
}

// TestAuthorizersAllOf checks that AllOf admits only what every member
// admits, reports the first refusal, and treats nil as AllowAll.
func TestAuthorizersAllOf(t *testing.T) {
	a, b := keyTestEndpoint(t).ID(), keyTestEndpoint(t).ID()
	keys := remote.AuthorizedKeys(a)
	creds := remote.Credentials([]byte("pw"))
	both := remote.AllOf(keys, nil, creds)
	cases := []struct {
		peer   remote.PeerID
		cred   string
		admit  bool
		reason string
	}{
		{a, "pw", true, ""},
		{a, "wrong", false, "credential"},
		{b, "pw", false, b.String()},
		{b, "wrong", false, b.String()}, // the first refusal: the key's
	}
	for _, tc := range cases {
		err := both.Authorize(tc.peer, 0, []byte(tc.cred))
		if (err == nil) != tc.admit || err != nil && !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("AllOf(keys, nil, creds).Authorize(%s, %q) = %v; want admit %v (%q)", tc.peer, tc.cred, err, tc.admit, tc.reason)
		}
	}
	for _, all := range []remote.PeerAuthorizer{remote.AllOf(), remote.AllOf(nil, nil), remote.AllOf(remote.AllowAll)} {
		if err := all.Authorize(b, 5, nil); err != nil {
			t.Errorf("AllOf of nothing refused: %v", err)
		}
	}
	nested := remote.AllOf(remote.AllOf(keys), remote.AllOf(creds, nil))
	if nested.Authorize(a, 0, []byte("pw")) != nil || nested.Authorize(a, 0, nil) == nil {
		t.Error("nested AllOf differs from the flat one")
	}
}

// FuzzParsePeerID checks that ParsePeerID never panics and is the strict
// inverse of String: whatever it accepts prints back to the same text.
func FuzzParsePeerID(f *testing.F) {
	ep, _ := remote.NewEndpoint(bytes.Repeat([]byte{3}, 32))
	f.Add(ep.ID().String())
	f.Add(strings.Repeat("a", 52))
	f.Add(strings.ToUpper(ep.ID().String()))
	f.Add(ep.ID().String()[:51] + "b")
	f.Add("")
	f.Add(strings.Repeat("7", 52))
	f.Fuzz(func(t *testing.T, s string) {
		id, err := remote.ParsePeerID(s)
		if err != nil {
			if !id.IsZero() {
				t.Fatalf("ParsePeerID(%q) failed but returned %x", s, id)
			}
			return
		}
		if id.String() != s {
			t.Fatalf("ParsePeerID(%q) = %x, which prints as %q", s, id, id.String())
		}
		var back remote.PeerID
		if err := back.UnmarshalText([]byte(s)); err != nil || back != id {
			t.Fatalf("UnmarshalText(%q) = %x, %v", s, back, err)
		}
	})
}

// ExampleParsePeerID prints the id of the endpoint with a fixed seed and
// parses it back.
func ExampleParsePeerID() {
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i)
	}
	ep, _ := remote.NewEndpoint(seed)
	fmt.Println(ep.ID())
	id, err := remote.ParsePeerID("aoqqpp7tzyil4hlq3umoos6atft6jvrqtosq2xy53sdgiesvgg4a")
	fmt.Println(id == ep.ID(), err)
	_, err = remote.ParsePeerID("AOQQPP7TZYIL4HLQ3UMOOS6ATFT6JVRQTOSQ2XY53SDGIESVGG4A")
	fmt.Println(err != nil)
	// Output:
	// aoqqpp7tzyil4hlq3umoos6atft6jvrqtosq2xy53sdgiesvgg4a
	// true <nil>
	// true
}

// ExampleAllOf admits a client only with a listed key and a credential.
func ExampleAllOf() {
	seed := bytes.Repeat([]byte{1}, 32)
	laptop, _ := remote.NewEndpoint(seed)
	stranger, _ := remote.NewEndpoint(bytes.Repeat([]byte{2}, 32))
	auth := remote.AllOf(remote.AuthorizedKeys(laptop.ID()), remote.Credentials([]byte("s3cret")))
	fmt.Println(auth.Authorize(laptop.ID(), 0, []byte("s3cret")))
	fmt.Println(auth.Authorize(laptop.ID(), 0, []byte("guess")))
	fmt.Println(auth.Authorize(stranger.ID(), 0, []byte("s3cret")) != nil)
	// Output:
	// <nil>
	// remote: the client's credential is not accepted
	// true
}

package remote

// NewEndpoint returns the endpoint with the given private key.
func NewEndpoint(key []byte) (*Endpoint, error) { return nil, errQUICMissing }

// GenerateEndpoint returns an endpoint with a fresh random key.
func GenerateEndpoint() (*Endpoint, error) { return nil, errQUICMissing }

// LoadOrCreateEndpoint reads the endpoint key in path, or creates path
// with a fresh key (mode 0600) when it does not exist.
func LoadOrCreateEndpoint(path string) (*Endpoint, error) { return nil, errQUICMissing }

// ID is the endpoint's PeerID (its public key).
func (ep *Endpoint) ID() PeerID { return PeerID{} }

// String prints the PeerID in its text form.
func (id PeerID) String() string { return "" }

// ParsePeerID parses the text form of a PeerID.
func ParsePeerID(s string) (PeerID, error) { return PeerID{}, errQUICMissing }

// ReadAuthorizedKeys reads a file of PeerIDs (one per line, # comments)
// and returns the PeerAuthorizer that admits exactly those peers.
func ReadAuthorizedKeys(path string) (PeerAuthorizer, error) { return nil, errQUICMissing }

// ReadCredentials reads a file of credentials (one per line, # comments)
// and returns the PeerAuthorizer that admits a client presenting one of them.
func ReadCredentials(path string) (PeerAuthorizer, error) { return nil, errQUICMissing }

// AllOf returns the PeerAuthorizer that admits a client only when every
// one of as admits it.
func AllOf(as ...PeerAuthorizer) PeerAuthorizer { return nil }

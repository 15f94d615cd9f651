package remote

import (
	"sync"
	"time"

	"github.com/emberml/ember/backend"
)

// transferTTL is how long an exported tensor waits for its import.
const transferTTL = time.Minute

// transfer is an exported tensor: the backend tensor and the index of the
// device that holds it.
type transfer struct {
	t       backend.Tensor
	device  int
	expires time.Time
}

// transfers is a server's table of exported tensors, by one-time token.
// An export keeps its tensor alive (whatever its session does) until it
// is imported or expires.
type transfers struct {
	mu sync.Mutex
	m  map[[tokenLen]byte]transfer
}

// put stores tr under token, dropping expired entries.
func (ts *transfers) put(token [tokenLen]byte, tr transfer) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := time.Now()
	if ts.m == nil {
		ts.m = map[[tokenLen]byte]transfer{}
	}
	for k, v := range ts.m {
		if now.After(v.expires) {
			delete(ts.m, k)
		}
	}
	tr.expires = now.Add(transferTTL)
	ts.m[token] = tr
}

// take removes and returns the unexpired entry of token.
func (ts *transfers) take(token [tokenLen]byte) (transfer, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tr, ok := ts.m[token]
	delete(ts.m, token)
	if !ok || time.Now().After(tr.expires) {
		return transfer{}, false
	}
	return tr, true
}

// len is the number of entries not imported yet (expired ones included
// until the next export drops them).
func (ts *transfers) len() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.m)
}

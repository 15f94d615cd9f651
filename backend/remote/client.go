package remote

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
	"github.com/fxamacker/cbor/v2"
)

// ClientOptions configure a client. The zero value is valid: every zero
// field takes its default.
type ClientOptions struct {
	// Timeout bounds the handshake and the time the client takes to
	// find a silent or vanished server dead, after which every pending
	// and later call fails (DefaultTimeout). A healthy server may take
	// longer than Timeout to answer a request (a long computation): only
	// a connection that stops answering pings fails.
	Timeout time.Duration
	// BatchTasks and BatchBytes are the number of queued tasks and of
	// queued bytes at which the batch is sent (DefaultBatchTasks,
	// DefaultBatchBytes). Flush, Sync, reads and every other request send
	// it too, and so does an upload of 64 KiB or more (so that its bytes
	// travel while the program builds the ops that use them).
	BatchTasks int
	BatchBytes int
	// QueueFrames is the depth of the send queue (DefaultQueueFrames):
	// with that many batches waiting for the connection, the call that
	// sends the next one blocks until one has left.
	QueueFrames int
	// MaxFrame is the largest frame the client reads (DefaultMaxFrame);
	// the server sends larger reads in parts.
	MaxFrame int
	// Credential is handed to the server's PeerAuthorizer.
	Credential []byte
	// Endpoint is the client's QUIC identity (nil: the process's
	// default endpoint, see DefaultEndpoint). WebSocket ignores it.
	Endpoint *Endpoint
	// HostCacheBytes is the size up to which the client keeps the value
	// of a tensor it uploaded or read, so reading it again needs no round
	// trip (DefaultHostCacheBytes; negative: never).
	HostCacheBytes int
	// GCBytes is the amount of server memory taken by tensors made since
	// the client's last garbage collection at which it starts one, so
	// that the server frees dropped tensors soon (DefaultGCBytes;
	// negative: never).
	GCBytes int64
}

func (o ClientOptions) withDefaults() ClientOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.BatchTasks <= 0 {
		o.BatchTasks = DefaultBatchTasks
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.QueueFrames <= 0 {
		o.QueueFrames = DefaultQueueFrames
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = DefaultMaxFrame
	}
	o.MaxFrame = max(o.MaxFrame, minFrame)
	if o.HostCacheBytes == 0 {
		o.HostCacheBytes = DefaultHostCacheBytes
	}
	if o.GCBytes == 0 {
		o.GCBytes = DefaultGCBytes
	}
	return o
}

// DeviceDesc describes one device a server hosts.
type DeviceDesc struct {
	// Index is the device's index on the server (the N of
	// remote+ws://host:port/N).
	Index int
	// Name is the server-side device name ("cpu", "cuda:0").
	Name string
	// Info is the device's model name and memory in bytes.
	Info backend.DeviceInfo
	// Settings are the device's default dtypes.
	Settings backend.Settings
}

// Stats are a client's traffic counters since it connected.
type Stats struct {
	// BytesSent and BytesReceived count frame bytes (the transport's
	// own framing excluded).
	BytesSent, BytesReceived int64
	// FramesSent and FramesReceived count frames.
	FramesSent, FramesReceived int64
	// Tasks counts the tasks queued (ops, uploads, requests, drops).
	Tasks int64
	// Requests counts the tasks that waited for an answer (reads,
	// syncs, queries, exports).
	Requests int64
}

// Client is the backend of one remote device: a session on an Ember
// server over one connection. Exec never waits: it gives each output a
// number from the session's counter, encodes the op as an ir.Record and
// appends it to the batch; the batch is sent at BatchTasks tasks or
// BatchBytes bytes, and by Flush, Sync, ToData and every query. One
// goroutine writes the queued batches in order, another reads the
// server's replies and hands each to the request that waits for it. An op
// that fails on the server is reported, as an error wrapping
// backend.ErrExecution that names the op, by the next Sync or read; when
// the connection is lost, every pending and later call fails at once
// with an error wrapping ErrClosed that names the device.
//
// Besides backend.Backend it implements backend.DeviceDescriber and
// backend.SettingsReporter (from the handshake), backend.IndexChecker
// (the server checks the indices of Gather, ScatterAdd and IndexSelect
// before it runs them, so the root skips its host-side check and its
// round trip), backend.DivisorChecker (likewise for the divisors of the
// integer divisions) and backend.PeerCopier (tensors move between two devices
// of one server on the server). It is safe for concurrent use.
//
// The model is Burn's burn-remote client: ops as values shipped in order,
// responses by request id.
type Client struct {
	id   backend.DeviceID
	name string
	conn Conn
	opts ClientOptions

	dev            wireDevice
	devices        []wireDevice
	peer           PeerID
	server         [sessionIDLen]byte
	serverMaxFrame int

	ids atomic.Uint64

	mu        sync.Mutex // the batch and the local errors
	tasks     []cbor.RawMessage
	bytes     int
	localErrs []error

	dropMu sync.Mutex // never held while blocking: cleanups take it
	drops  []ir.TensorID

	pendMu  sync.Mutex
	nextReq uint64
	pending map[uint64]*call

	sendq    chan []byte
	inflight atomic.Int64 // frames queued or being written by writeLoop
	done     chan struct{}
	err      error // set before done is closed
	failOnce sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	dtypes [16]atomic.Uint32 // per dtype: 0 unknown, 1 no, 2 yes

	live, gcBase atomic.Int64
	gcBusy       atomic.Bool

	sent, recv, framesSent, framesRecv, tasksQueued, requests atomic.Int64
}

var (
	_ backend.Backend          = (*Client)(nil)
	_ backend.DeviceDescriber  = (*Client)(nil)
	_ backend.SettingsReporter = (*Client)(nil)
	_ backend.IndexChecker     = (*Client)(nil)
	_ backend.DivisorChecker   = (*Client)(nil)
	_ backend.PeerCopier       = (*Client)(nil)
)

// call is a request waiting for its reply.
type call struct {
	ch chan result
	// want is the byte length of a read's value (its parts are appended
	// to buf up to it).
	want int
	buf  []byte
}

type result struct {
	r    reply
	data []byte // a read's bytes, whole or reassembled
	err  error
}

// Connect runs the handshake over conn for the server's device index and
// returns its client, which owns conn from then on (Close closes it). id
// is the DeviceID the client reports (its name appears in every error).
// Errors: a refusal wraps ErrUnauthorized (a PeerAuthorizer's refusal or
// a bad device index), another protocol version ErrVersion, a transport
// failure ErrClosed; each names the device. conn is closed on error.
func Connect(ctx context.Context, conn Conn, id backend.DeviceID, index int, opts ClientOptions) (*Client, error) {
	opts = opts.withDefaults()
	name := id.String()
	w, err := handshake(ctx, conn, name, hello{Device: index, Credential: opts.Credential, MaxFrame: uint64(opts.MaxFrame)}, opts.Timeout)
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(w.Devices) {
		err := &Error{Device: name, Op: "handshake", Msg: fmt.Sprintf("the server hosts %d devices, there is no device %d", len(w.Devices), index), code: codeBadDevice}
		conn.Close(err)
		return nil, err
	}
	c := &Client{
		id: id, name: name, conn: conn, opts: opts,
		dev: w.Devices[index], devices: w.Devices,
		serverMaxFrame: int(min(w.MaxFrame, uint64(maxInt))),
		pending:        map[uint64]*call{},
		sendq:          make(chan []byte, opts.QueueFrames),
		done:           make(chan struct{}),
	}
	copy(c.peer[:], w.Peer)
	copy(c.server[:], w.Server)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(4)
	go c.readLoop()
	go c.writeLoop()
	go c.keepAlive()
	go c.sendDrops()
	return c, nil
}

const maxInt = int(^uint(0) >> 1)

// ListDevices runs a listing handshake over conn: the server answers with
// every device it hosts and closes (no session is opened). conn is
// closed when it returns. Errors as Connect's.
func ListDevices(ctx context.Context, conn Conn, id backend.DeviceID, opts ClientOptions) ([]DeviceDesc, error) {
	opts = opts.withDefaults()
	w, err := handshake(ctx, conn, id.String(), hello{List: true, Credential: opts.Credential, MaxFrame: uint64(opts.MaxFrame)}, opts.Timeout)
	if err != nil {
		return nil, err
	}
	conn.Close(nil)
	out := make([]DeviceDesc, len(w.Devices))
	for i, d := range w.Devices {
		out[i] = d.desc(i)
	}
	return out, nil
}

func (d *wireDevice) desc(i int) DeviceDesc {
	return DeviceDesc{Index: i, Name: d.Name, Info: backend.DeviceInfo{Name: d.Model, MemoryBytes: d.Memory}, Settings: d.Settings.settings()}
}

func (s wireSettings) settings() backend.Settings {
	return backend.Settings{FloatDType: ir.FloatDType(s.Float), IntDType: ir.IntDType(s.Int), BoolDType: ir.BoolDType(s.Bool)}
}

// handshake sends h (with the version and a fresh session id) and reads
// the welcome, within timeout.
func handshake(ctx context.Context, conn Conn, name string, h hello, timeout time.Duration) (*welcome, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h.Version = ProtocolVersion
	h.Session = make([]byte, sessionIDLen)
	rand.Read(h.Session)
	fail := func(err error) (*welcome, error) {
		conn.Close(err)
		return nil, err
	}
	b, err := marshal(&h)
	if err != nil {
		return fail(fmt.Errorf("%s: handshake: %w", name, err))
	}
	if err := conn.WriteFrame(ctx, b); err != nil {
		return fail(fmt.Errorf("%s: handshake: %w", name, err))
	}
	resp, err := conn.ReadFrame(ctx)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: no answer within %v", ErrClosed, timeout)
		}
		return fail(fmt.Errorf("%s: handshake: %w", name, err))
	}
	ver, w, err := decodeWelcome(resp)
	if err != nil {
		return fail(fmt.Errorf("%s: handshake: %w", name, err))
	}
	if ver != ProtocolVersion {
		msg := fmt.Sprintf("the server speaks protocol version %d, this client speaks version %d", ver, ProtocolVersion)
		if why := refusalText(resp); why != "" {
			msg += " (the server says: " + why + ")"
		}
		return fail(&Error{Device: name, Op: "handshake", Msg: msg, code: codeVersion})
	}
	if w.Refusal != nil {
		return fail(w.Refusal.toError(name))
	}
	return w, nil
}

// refusalText reads the message of a refusal from a welcome of another
// version, leniently, for the client's error ("" when it has none).
func refusalText(b []byte) string {
	var p struct {
		Refusal struct {
			Msg string `cbor:"3,keyasint"`
		} `cbor:"2,keyasint"`
	}
	if probeMode.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Refusal.Msg
}

// fail ends the connection with err (the first error wins), failing every
// pending and later call.
func (c *Client) fail(err error) {
	c.failOnce.Do(func() {
		var re *Error
		switch {
		case errors.As(err, &re):
			// The server said why it ended the session.
			c.err = &Error{Device: re.Device, Op: re.Op, Msg: "the server ended the session: " + re.Msg, code: re.code, closed: true}
		case errors.Is(err, ErrClosed):
			c.err = fmt.Errorf("%s: %w", c.name, err)
		default:
			c.err = fmt.Errorf("%s: %w: %w", c.name, ErrClosed, err)
		}
		close(c.done)
		c.cancel()
		// No close handshake can help a failed connection: close it
		// without waiting for the peer.
		go c.conn.Close(nil)
	})
}

// closed returns the connection's error, or nil while it is open.
func (c *Client) closed() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// readLoop reads the server's frames and hands each reply to its call.
func (c *Client) readLoop() {
	defer c.wg.Done()
	for {
		b, err := c.conn.ReadFrame(c.ctx)
		if err != nil {
			c.fail(err)
			return
		}
		c.recv.Add(int64(len(b)))
		c.framesRecv.Add(1)
		f, err := decodeServerFrame(b)
		if err != nil {
			c.fail(err)
			return
		}
		for i := range f.Replies {
			if err := c.dispatch(&f.Replies[i]); err != nil {
				c.fail(err)
				return
			}
		}
		if f.Fatal != nil {
			c.fail(f.Fatal.toError(c.name))
			return
		}
	}
}

// dispatch hands r to the call waiting for it.
func (c *Client) dispatch(r *reply) error {
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	cl := c.pending[r.Req]
	if cl == nil {
		return fmt.Errorf("%w: a reply to request %d, which is not pending", ErrProtocol, r.Req)
	}
	if r.Part != nil {
		if len(cl.buf)+len(r.Part) > cl.want {
			return fmt.Errorf("%w: read %d: parts exceed the tensor's %d bytes", ErrProtocol, r.Req, cl.want)
		}
		cl.buf = append(cl.buf, r.Part...)
		if r.More {
			return nil
		}
	}
	delete(c.pending, r.Req)
	res := result{r: *r}
	switch {
	case r.Err != nil:
		res.err = r.Err.toError(c.name)
	case r.Part != nil:
		res.data = cl.buf
	case r.Data != nil:
		res.data = r.Data.Bytes
	}
	cl.ch <- res
	return nil
}

// writeLoop sends the queued batches in order.
func (c *Client) writeLoop() {
	defer c.wg.Done()
	for {
		select {
		case f := <-c.sendq:
			err := c.conn.WriteFrame(c.ctx, f)
			c.inflight.Add(-1)
			if err != nil {
				c.fail(err)
				return
			}
			c.sent.Add(int64(len(f)))
			c.framesSent.Add(1)
		case <-c.done:
			return
		}
	}
}

// keepAlive pings the server (where the transport can) every fifth of
// the timeout and fails the connection when a ping stays unanswered for
// half of it, so a vanished server is found within the timeout. It runs
// on its own goroutine, which nothing else blocks: a caller blocked by a
// full send queue cannot delay it.
func (c *Client) keepAlive() {
	defer c.wg.Done()
	p, ok := c.conn.(Pinger)
	if !ok {
		return
	}
	tick := time.NewTicker(c.opts.Timeout / 5)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-c.done:
			return
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.Timeout/2)
		err := p.Ping(ctx)
		cancel()
		if err != nil && c.closed() == nil {
			c.fail(fmt.Errorf("the server did not answer a ping within %v: %v", c.opts.Timeout/2, err))
			return
		}
	}
}

// sendDrops sends the drops that wait for a batch every fifth of the
// timeout, so that the server frees dropped tensors of a client that
// issues nothing else.
func (c *Client) sendDrops() {
	defer c.wg.Done()
	tick := time.NewTicker(c.opts.Timeout / 5)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-c.done:
			return
		}
		c.dropMu.Lock()
		n := len(c.drops)
		c.dropMu.Unlock()
		if n > 0 {
			c.Flush()
		}
	}
}

// newCall registers a request and returns its id and call.
func (c *Client) newCall(want int) (uint64, *call) {
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	c.nextReq++
	cl := &call{ch: make(chan result, 1), want: want}
	c.pending[c.nextReq] = cl
	c.requests.Add(1)
	return c.nextReq, cl
}

// forget unregisters a request that was not sent.
func (c *Client) forget(req uint64) {
	c.pendMu.Lock()
	delete(c.pending, req)
	c.pendMu.Unlock()
}

// wait returns cl's result, or the connection's error once it is lost.
func (c *Client) wait(cl *call) result {
	select {
	case r := <-cl.ch:
		return r
	case <-c.done:
		select {
		case r := <-cl.ch:
			return r
		default:
		}
		return result{err: c.err}
	}
}

// encode encodes one task.
func (c *Client) encode(t *task) (cbor.RawMessage, error) {
	b, err := encMode.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", c.name, err)
	}
	return b, nil
}

// enqueue appends a task to the batch, sending the batch when it is full
// (or would outgrow the server's frame limit), and sends it at once when
// now is set.
func (c *Client) enqueue(raw cbor.RawMessage, now bool) {
	c.tasksQueued.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tasks) > 0 && c.bytes+len(raw)+frameOverhead > c.serverMaxFrame {
		c.flushLocked()
	}
	c.tasks = append(c.tasks, raw)
	c.bytes += len(raw)
	if now || len(c.tasks) >= c.opts.BatchTasks || c.bytes >= c.opts.BatchBytes {
		c.flushLocked()
	}
}

// eagerUpload is the size from which an upload is sent at once.
const eagerUpload = 64 << 10

// maxDropsPerTask bounds the ids of one drop task.
const maxDropsPerTask = 1 << 14

// directWrite is the largest frame a request writes itself.
const directWrite = 64 << 10

// flushLocked sends the batch, with the drops queued so far at its end.
// c.mu is held; it blocks while the send queue is full (backpressure),
// and returns at once when the connection is lost. With direct set (a
// request, which waits for its reply anyway) a small frame is written by
// the caller itself when no frame is queued or being written, which saves
// the hand-over to the writer goroutine on the request's path; c.mu keeps
// frames in order (no frame can be queued meanwhile).
func (c *Client) flushLocked(direct ...bool) {
	c.dropMu.Lock()
	drops := c.drops
	c.drops = nil
	c.dropMu.Unlock()
	for len(drops) > 0 {
		n := min(len(drops), maxDropsPerTask)
		if raw, err := c.encode(&task{Drop: drops[:n]}); err == nil {
			c.tasks = append(c.tasks, raw)
			c.bytes += len(raw)
		}
		drops = drops[n:]
	}
	if len(c.tasks) == 0 {
		return
	}
	frame, err := encMode.Marshal(rawTasks{Tasks: c.tasks})
	clear(c.tasks)
	c.tasks, c.bytes = c.tasks[:0], 0
	if err != nil {
		c.fail(fmt.Errorf("encode batch: %w", err))
		return
	}
	if len(direct) > 0 && direct[0] && len(frame) <= directWrite && c.inflight.Load() == 0 {
		if err := c.conn.WriteFrame(c.ctx, frame); err != nil {
			c.fail(err)
			return
		}
		c.sent.Add(int64(len(frame)))
		c.framesSent.Add(1)
		return
	}
	c.inflight.Add(1)
	select {
	case c.sendq <- frame:
	case <-c.done:
	}
}

// Flush sends the queued batch without waiting for its work.
func (c *Client) Flush() {
	c.mu.Lock()
	c.flushLocked()
	c.mu.Unlock()
}

// request sends task t (whose request id is registered as cl) now and
// waits for its reply.
func (c *Client) request(t *task, req uint64, cl *call) result {
	raw, err := c.encode(t)
	if err != nil {
		c.forget(req)
		return result{err: err}
	}
	if err := c.closed(); err != nil {
		c.forget(req)
		return result{err: err}
	}
	c.tasksQueued.Add(1)
	c.mu.Lock()
	if len(c.tasks) > 0 && c.bytes+len(raw)+frameOverhead > c.serverMaxFrame {
		c.flushLocked()
	}
	c.tasks = append(c.tasks, raw)
	c.bytes += len(raw)
	c.flushLocked(true)
	c.mu.Unlock()
	return c.wait(cl)
}

// ID is the device's DeviceID.
func (c *Client) ID() backend.DeviceID { return c.id }

// Supports reports true for every valid kind: the server runs each op
// with ir.Run on its own backend, which lowers the kinds that backend
// lacks, so one op is one record on the wire.
func (c *Client) Supports(k ir.Kind, dt backend.DType) bool { return k.Valid() }

// outputKept reports whether output j of op exists: SGDStep without
// momentum has no momentum buffer; every other output of the kind's
// Spec.NumOutputs does.
func outputKept(op *ir.Op, j int) bool {
	if op.Kind == ir.KindSGDStep && j == 1 {
		return op.Attrs != nil && op.Attrs.Optim.Momentum != 0
	}
	return true
}

// Exec queues op and returns its outputs at once: handles with the op's
// shape and dtype (every output of the multi-output kinds has the first
// one's). It panics with an error wrapping backend.ErrInvalidDevice for
// an input of another device. An op that cannot be sent (the connection
// is lost, the op does not encode) fails its outputs: reading them, or the
// next Sync, returns the error.
func (c *Client) Exec(op ir.Op) ir.Outputs {
	var inErr error
	for i := range op.NumInputs() {
		t := op.Input(i)
		if t == nil {
			continue
		}
		rt, ok := t.(*Tensor)
		if !ok || rt.c != c {
			panic(fmt.Errorf("remote: %s: input %d of %s is a tensor of another device (%T): %w", c.name, i, op.Name(), t, backend.ErrInvalidDevice))
		}
		if rt.err != nil && inErr == nil {
			inErr = rt.err
		}
	}
	nout := ir.SpecOf(op.Kind).NumOutputs
	var outs ir.Outputs
	var ids [ir.MaxOutputs]ir.TensorID
	for j := range nout {
		if outputKept(&op, j) {
			t := c.newTensor(op.Shape, op.DType)
			ids[j], outs[j] = t.id, t
		}
	}
	err := inErr
	if err == nil {
		err = c.closed()
	}
	if err == nil {
		rec := ir.Encode(op, tensorID, ids[:nout])
		var raw cbor.RawMessage
		if raw, err = c.encode(&task{Op: &rec}); err == nil {
			c.enqueue(raw, false)
		} else {
			err = fmt.Errorf("%s: %s: %w", c.name, op.Name(), err)
			c.mu.Lock()
			c.localErrs = append(c.localErrs, err)
			c.mu.Unlock()
		}
	}
	if err != nil {
		for j := range nout {
			if t, ok := outs[j].(*Tensor); ok {
				t.failLocal(err)
			}
		}
	}
	// The inputs stay reachable until the record is queued, so that no
	// drop of theirs can precede it.
	runtime.KeepAlive(op)
	return outs
}

func tensorID(t ir.Tensor) ir.TensorID { return t.(*Tensor).id }

// FromData uploads data: one task, or for a tensor larger than the
// server's frames a begin task and parts. It never waits. Data whose bytes
// do not match its shape and dtype gives a tensor whose reads fail.
func (c *Client) FromData(data *backend.TensorData) backend.Tensor {
	shape := append([]int{}, data.Shape...)
	t := c.newTensor(shape, data.DType)
	if _, err := ir.NewTensorData(shape, data.DType, data.Bytes); err != nil {
		t.failLocal(fmt.Errorf("%s: from_data: %w", c.name, err))
		return t
	}
	if err := c.closed(); err != nil {
		t.failLocal(err)
		return t
	}
	if n := len(data.Bytes); n <= c.opts.HostCacheBytes {
		t.setCached(append(make([]byte, 0, n), data.Bytes...))
	}
	part := c.serverMaxFrame - 2*frameOverhead
	if len(data.Bytes) <= part {
		raw, err := c.encode(&task{Upload: &uploadTask{ID: t.id, Data: &ir.TensorData{Shape: shape, DType: data.DType, Bytes: data.Bytes}}})
		if err != nil {
			t.failLocal(err)
			return t
		}
		// A large upload is sent at once, so that it travels while the
		// program builds the ops that use it.
		c.enqueue(raw, len(raw) >= eagerUpload)
		return t
	}
	raw, err := c.encode(&task{Begin: &beginTask{ID: t.id, Shape: shape, DType: data.DType}})
	if err != nil {
		t.failLocal(err)
		return t
	}
	c.enqueue(raw, false)
	for off := 0; off < len(data.Bytes); off += part {
		raw, err := c.encode(&task{Part: &partTask{ID: t.id, Bytes: data.Bytes[off:min(off+part, len(data.Bytes))]}})
		if err != nil {
			c.fail(err)
			break
		}
		c.enqueue(raw, false)
	}
	return t
}

// ToData reads t from the server (or from the client's copy of a small
// tensor it uploaded or read before). The error names the device; it
// wraps backend.ErrExecution and names the op when t's op, or an earlier
// op of the session that nothing reported yet, failed; it wraps ErrClosed
// when the connection is lost.
func (c *Client) ToData(x backend.Tensor) (*backend.TensorData, error) {
	t, ok := x.(*Tensor)
	if !ok || t.c != c {
		return nil, fmt.Errorf("remote: %s: to_data of a tensor of another device (%T): %w", c.name, x, backend.ErrInvalidDevice)
	}
	if t.err != nil {
		return nil, t.err
	}
	if h := t.cached(); h != nil {
		return &backend.TensorData{Shape: append([]int{}, t.shape...), DType: t.dtype, Bytes: append([]byte{}, h...)}, nil
	}
	want := t.numBytes()
	if want > int64(maxInt) {
		return nil, fmt.Errorf("%s: to_data: a %v tensor of shape %v does not fit in this process's memory", c.name, t.dtype, t.shape)
	}
	req, cl := c.newCall(int(want))
	res := c.request(&task{Read: &idRequest{Req: req, ID: t.id}}, req, cl)
	runtime.KeepAlive(t)
	if res.err != nil {
		return nil, res.err
	}
	if int64(len(res.data)) != want {
		err := fmt.Errorf("%s: to_data: %w: the server sent %d bytes for a %v tensor of shape %v (%d bytes)", c.name, ErrProtocol, len(res.data), t.dtype, t.shape, want)
		c.fail(err)
		return nil, err
	}
	if int(want) <= c.opts.HostCacheBytes {
		t.setCached(append([]byte{}, res.data...))
	}
	return &backend.TensorData{Shape: append([]int{}, t.shape...), DType: t.dtype, Bytes: res.data}, nil
}

// Sync waits until the server has run everything queued before it and
// returns the errors of the ops that failed since the last Sync (wrapping
// backend.ErrExecution, each naming its op), or the connection's error.
func (c *Client) Sync() error {
	req, cl := c.newCall(0)
	res := c.request(&task{Sync: &request{Req: req}}, req, cl)
	c.mu.Lock()
	local := c.localErrs
	c.localErrs = nil
	c.mu.Unlock()
	errs := local
	if res.err != nil {
		errs = append(errs, res.err)
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		if errors.Is(errs[0], backend.ErrExecution) || errors.Is(errs[0], ErrClosed) {
			return errs[0]
		}
		return fmt.Errorf("%w: %w", backend.ErrExecution, errs[0])
	}
	return fmt.Errorf("%w: %w", backend.ErrExecution, errors.Join(errs...))
}

// Seed re-seeds the server device's random generator, in order with the
// ops around it. The generator belongs to the server's device: sessions
// that share a device share it.
func (c *Client) Seed(seed uint64) {
	if raw, err := c.encode(&task{Seed: &seedTask{Seed: seed}}); err == nil && c.closed() == nil {
		c.enqueue(raw, false)
	}
}

// SupportsDType asks the server (once per dtype) whether its device
// stores and computes in dt; false when the connection is lost.
func (c *Client) SupportsDType(dt backend.DType) bool {
	if !dt.Valid() || int(dt) >= len(c.dtypes) {
		return false
	}
	switch c.dtypes[dt].Load() {
	case 1:
		return false
	case 2:
		return true
	}
	req, cl := c.newCall(0)
	res := c.request(&task{DType: &dtypeRequest{Req: req, DType: dt}}, req, cl)
	if res.err != nil {
		return false
	}
	v := uint32(1)
	if res.r.OK {
		v = 2
	}
	c.dtypes[dt].Store(v)
	return res.r.OK
}

// DeviceInfo describes the server's device, as its handshake did: its
// model name ("cpu", "NVIDIA H200") and memory in bytes.
func (c *Client) DeviceInfo() backend.DeviceInfo {
	name := c.dev.Model
	if name == "" {
		name = c.dev.Name
	}
	return backend.DeviceInfo{Name: name, MemoryBytes: c.dev.Memory}
}

// DeviceSettings are the server device's default dtypes.
func (c *Client) DeviceSettings() backend.Settings { return c.dev.Settings.settings() }

// ChecksIndicesOnDevice reports true: the server checks the indices of
// Gather, ScatterAdd and IndexSelect before it runs them; a bad index
// fails the op, reported by the next Sync or read.
func (c *Client) ChecksIndicesOnDevice() bool { return true }

// ChecksDivisorsOnDevice reports true: the server checks the divisors of
// the integer Div, FloorDiv, Rem and Mod (its device does, or the session
// before it runs the op); a zero divisor fails the op, reported by the
// next Sync or read as an error wrapping backend.ErrExecution that names
// the op (backend.DivisorChecker).
func (c *Client) ChecksDivisorsOnDevice() bool { return true }

// ServerDevices lists every device of the client's server, as its
// handshake did.
func (c *Client) ServerDevices() []DeviceDesc {
	out := make([]DeviceDesc, len(c.devices))
	for i := range c.devices {
		out[i] = c.devices[i].desc(i)
	}
	return out
}

// ServerPeer is the server's PeerID (zero over WebSocket).
func (c *Client) ServerPeer() PeerID { return c.peer }

// Stats returns the client's traffic counters.
func (c *Client) Stats() Stats {
	return Stats{
		BytesSent: c.sent.Load(), BytesReceived: c.recv.Load(),
		FramesSent: c.framesSent.Load(), FramesReceived: c.framesRecv.Load(),
		Tasks: c.tasksQueued.Load(), Requests: c.requests.Load(),
	}
}

// Err returns the error the connection ended with, or nil while it is
// open.
func (c *Client) Err() error { return c.closed() }

// Close ends the session: the server runs what was queued, frees the
// session's tensors and closes the connection. Close waits for that at
// most the timeout, then closes the connection itself. Later calls fail
// with an error wrapping ErrClosed.
func (c *Client) Close() error {
	if c.closed() == nil {
		if raw, err := c.encode(&task{Close: true}); err == nil {
			c.enqueue(raw, true)
		}
		select {
		case <-c.done:
		case <-time.After(c.opts.Timeout):
		}
	}
	c.fail(errors.New("closed by the client"))
	c.wg.Wait()
	return nil
}

// newTensor returns a handle with a fresh id of the session, whose
// cleanup queues its drop.
func (c *Client) newTensor(shape []int, dt ir.DType) *Tensor {
	t := &Tensor{c: c, id: ir.TensorID(c.ids.Add(1)), shape: shape, dtype: dt}
	n := t.numBytes()
	t.cleanup = runtime.AddCleanup(t, dropTensor, dropArg{c: c, id: t.id, bytes: n})
	c.account(n)
	return t
}

type dropArg struct {
	c     *Client
	id    ir.TensorID
	bytes int64
}

// dropTensor is a handle's cleanup: it queues the drop (never blocking).
func dropTensor(a dropArg) {
	c := a.c
	c.live.Add(-a.bytes)
	if c.closed() != nil {
		return
	}
	c.dropMu.Lock()
	c.drops = append(c.drops, a.id)
	c.dropMu.Unlock()
}

// account adds n bytes to the server memory held by the client's live
// tensors and starts a garbage collection (in the background) when it
// grew by GCBytes since the last one, so that dead handles' drops reach
// the server.
func (c *Client) account(n int64) {
	live := c.live.Add(n)
	if c.opts.GCBytes < 0 || live-c.gcBase.Load() < c.opts.GCBytes || !c.gcBusy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		runtime.GC()
		c.gcBase.Store(c.live.Load())
		c.gcBusy.Store(false)
	}()
}

// CopyTo copies t to dst on the server when dst is another device of the
// same server (a one-time export token hands the tensor from this
// session to dst's; it never travels through this process). ok is false
// for any other dst.
func (c *Client) CopyTo(x backend.Tensor, dst backend.Backend) (backend.Tensor, bool, error) {
	d, ok := dst.(*Client)
	t, tok := x.(*Tensor)
	if !ok || !tok || t.c != c || d == c || d.server != c.server || d.closed() != nil || c.closed() != nil {
		return nil, false, nil
	}
	if t.err != nil {
		return nil, true, t.err
	}
	req, cl := c.newCall(0)
	res := c.request(&task{Export: &idRequest{Req: req, ID: t.id}}, req, cl)
	runtime.KeepAlive(t)
	if res.err != nil {
		return nil, true, res.err
	}
	out := d.newTensor(t.shape, t.dtype)
	raw, err := d.encode(&task{Import: &importTask{ID: out.id, Token: res.r.Token}})
	if err != nil {
		return nil, true, err
	}
	d.enqueue(raw, true)
	return out, true, nil
}

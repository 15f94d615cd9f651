package remote

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// session is one client's state on the server: its device, its tensor
// table and the errors not reported yet. Only its run goroutine touches
// it (the reader goroutine hands it decoded frames).
type session struct {
	srv       *Server
	conn      Conn
	index     int
	dev       *hosted
	log       *slog.Logger
	clientMax int
	exec      limitExec

	tensors map[ir.TensorID]*entry
	held    int // entries that are tensors or uploads (not failures)
	bytes   int64

	pending []*wireError
	more    int // failures past the ones kept in pending

	out      []reply
	outBytes int

	closing  bool
	started  time.Time
	frames   int
	tasks    int
	failed   int
	bytesIn  int64
	bytesOut int64
	busy     time.Duration
}

// entry is one id of the session's table: a tensor, an upload in
// progress, or the failure of the op that should have made it.
type entry struct {
	t     backend.Tensor
	bytes int64
	err   *wireError
	up    *upload
}

// upload is a tensor arriving in parts.
type upload struct {
	shape []int
	dtype ir.DType
	need  int
	buf   []byte
}

// maxPending bounds the failures a session keeps for its next Sync.
const maxPending = 16

func (s *Server) newSession(conn Conn, index, clientMax int, log *slog.Logger) *session {
	ss := &session{srv: s, conn: conn, index: index, dev: &s.devices[index], log: log, clientMax: clientMax,
		tensors: map[ir.TensorID]*entry{}, started: time.Now()}
	ss.exec = limitExec{b: ss.dev.b, max: s.opts.MaxTensorBytes}
	s.opened.Add(1)
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
	return ss
}

// decoded is a frame from the session's reader.
type decoded struct {
	f   *clientFrame
	n   int
	err error
}

// run serves the session until its client closes it, its connection
// fails, a frame is malformed, or stop is closed (then it runs the frames
// already received and tells the client the server is shutting down).
func (ss *session) run(stop <-chan struct{}) {
	frames := make(chan decoded, 2)
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	go func() {
		for {
			b, err := ss.conn.ReadFrame(rctx)
			var d decoded
			if err != nil {
				d.err = err
			} else {
				d.n = len(b)
				d.f, d.err = decodeClientFrame(b)
			}
			select {
			case frames <- d:
			case <-rctx.Done():
				return
			}
			if d.err != nil {
				return
			}
		}
	}()
	if p, ok := ss.conn.(Pinger); ok {
		go ss.keepAlive(rctx, p)
	}
	for {
		select {
		case d := <-frames:
			if d.err != nil {
				ss.end(d.err)
				return
			}
			ss.bytesIn += int64(d.n)
			ss.frame(d.f)
			if ss.closing {
				ss.end(nil)
				return
			}
		case <-stop:
			ss.drain(frames)
			ss.end(fmt.Errorf("%w", ErrShutdown))
			return
		}
	}
}

// drain runs the frames already received (after a shutdown began).
func (ss *session) drain(frames <-chan decoded) {
	for !ss.closing {
		select {
		case d := <-frames:
			if d.err != nil {
				return
			}
			ss.bytesIn += int64(d.n)
			ss.frame(d.f)
		default:
			return
		}
	}
}

// keepAlive pings the client and closes the connection when it stops
// answering.
func (ss *session) keepAlive(ctx context.Context, p Pinger) {
	t := ss.srv.opts.ClientTimeout
	tick := time.NewTicker(t / 3)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		pctx, cancel := context.WithTimeout(ctx, t/2)
		err := p.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			ss.log.Warn("client does not answer pings", "err", err)
			ss.conn.Close(fmt.Errorf("no answer to a ping within %v", t/2))
			return
		}
	}
}

// end closes the session: a fatal frame for a malformed or oversize
// frame and for shutdown, then the connection; the table is freed.
func (ss *session) end(cause error) {
	var fatal *wireError
	switch {
	case cause == nil:
	case errors.Is(cause, ErrFrameTooLarge):
		fatal = errorf(codeTooLarge, "frame", "%v (the server's limit is %d bytes)", cause, ss.srv.opts.MaxFrame)
	case errors.Is(cause, ErrProtocol):
		fatal = errorf(codeMalformed, "frame", "%v", cause)
	case errors.Is(cause, ErrShutdown):
		fatal = errorf(codeShutdown, "", "the server is shutting down")
	}
	if fatal != nil {
		ss.flush()
		if b, err := marshal(&serverFrame{Fatal: fatal}); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), ss.srv.opts.Timeout)
			ss.conn.WriteFrame(ctx, b)
			cancel()
		}
	}
	ss.conn.Close(cause)
	n, bytes := len(ss.tensors), ss.bytes
	ss.free()
	s := ss.srv
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
	attrs := []any{"tensors_freed", n, "bytes_freed", bytes, "frames", ss.frames, "tasks", ss.tasks, "failed_tasks", ss.failed,
		"bytes_in", ss.bytesIn, "bytes_out", ss.bytesOut, "busy", ss.busy.Round(time.Millisecond), "duration", time.Since(ss.started).Round(time.Millisecond)}
	switch {
	case cause == nil:
		ss.log.Info("session closed", attrs...)
	case errors.Is(cause, ErrClosed), errors.Is(cause, ErrShutdown):
		ss.log.Info("session ended", append(attrs, "reason", cause.Error())...)
	default:
		ss.log.Warn("session ended by an error", append(attrs, "err", cause.Error())...)
	}
}

// free drops the session's table.
func (ss *session) free() {
	ss.srv.tensors.Add(-int64(len(ss.tensors)))
	ss.srv.bytes.Add(-ss.bytes)
	ss.tensors, ss.held, ss.bytes = nil, 0, 0
	ss.pending = nil
}

// frame runs a batch's tasks in order and sends the replies.
func (ss *session) frame(f *clientFrame) {
	start := time.Now()
	defer func() { ss.busy += time.Since(start) }()
	ss.frames++
	for i := range f.Tasks {
		ss.tasks++
		ss.task(&f.Tasks[i])
		if ss.closing {
			break
		}
	}
	ss.flush()
}

// task runs one task, turning a panic into its failure.
func (ss *session) task(t *task) {
	req, name := t.request()
	defer func() {
		if r := recover(); r != nil {
			w := panicError(name, r)
			if req != 0 {
				ss.reply(reply{Req: req, Err: w})
			} else {
				ss.fail(w, t.outputs())
			}
		}
	}()
	switch {
	case t.Op != nil:
		ss.op(t.Op)
	case t.Upload != nil:
		ss.upload(t.Upload)
	case t.Begin != nil:
		ss.begin(t.Begin)
	case t.Part != nil:
		ss.part(t.Part)
	case t.Read != nil:
		ss.read(t.Read)
	case t.Sync != nil:
		ss.sync(t.Sync.Req)
	case t.Seed != nil:
		ss.dev.b.Seed(t.Seed.Seed)
	case t.DType != nil:
		dt := t.DType.DType
		ss.reply(reply{Req: t.DType.Req, OK: dt.Valid() && ss.dev.b.SupportsDType(dt)})
	case len(t.Drop) > 0:
		ss.drop(t.Drop)
	case t.Close:
		ss.closing = true
	case t.Export != nil:
		ss.export(t.Export)
	case t.Import != nil:
		ss.imp(t.Import)
	}
}

// request returns the task's request id (0 for tasks without one) and its
// name for messages.
func (t *task) request() (uint64, string) {
	switch {
	case t.Op != nil:
		return 0, recordName(t.Op)
	case t.Upload != nil, t.Begin != nil, t.Part != nil:
		return 0, "from_data"
	case t.Read != nil:
		return t.Read.Req, "to_data"
	case t.Sync != nil:
		return t.Sync.Req, "sync"
	case t.DType != nil:
		return t.DType.Req, "supports_dtype"
	case t.Export != nil:
		return t.Export.Req, "export"
	case t.Import != nil:
		return 0, "import"
	case len(t.Drop) > 0:
		return 0, "drop"
	}
	return 0, "seed"
}

// outputs returns the ids a task without a request creates.
func (t *task) outputs() []ir.TensorID {
	switch {
	case t.Op != nil:
		return t.Op.Outputs
	case t.Upload != nil:
		return []ir.TensorID{t.Upload.ID}
	case t.Begin != nil:
		return []ir.TensorID{t.Begin.ID}
	case t.Part != nil:
		return []ir.TensorID{t.Part.ID}
	case t.Import != nil:
		return []ir.TensorID{t.Import.ID}
	}
	return nil
}

// recordName is the op's name for messages ("add", "matmul").
func recordName(r *ir.Record) string {
	op := ir.Op{Kind: r.Kind, Sub: r.Sub}
	return op.Name()
}

// panicError converts a recovered panic of task name into its failure.
func panicError(name string, r any) *wireError {
	var le *limitError
	if e, ok := r.(error); ok && errors.As(e, &le) {
		return errorf(codeLimit, name, "%v", le)
	}
	if e, ok := r.(error); ok {
		var rt runtime.Error
		if errors.As(e, &rt) {
			return errorf(codeExecution, name, "internal error on the server: %v", e)
		}
		return errorf(codeExecution, name, "%v", e)
	}
	return errorf(codeExecution, name, "internal error on the server: %v", r)
}

// fail records w for the next Sync and marks ids (those not in use) as
// failed with it.
func (ss *session) fail(w *wireError, ids []ir.TensorID) {
	ss.failed++
	if len(ss.pending) < maxPending {
		ss.pending = append(ss.pending, w)
	} else {
		ss.more++
	}
	ss.poison(w, ids)
}

// poison marks the free ids among ids as failed with w (no new error is
// recorded: the failure that caused it already was). A failed id takes
// no tensor and does not count against MaxTensors; at most MaxTensors of
// them are kept (a later read of one past that reports it unknown).
func (ss *session) poison(w *wireError, ids []ir.TensorID) {
	for _, id := range ids {
		if id == 0 {
			continue
		}
		if e, ok := ss.tensors[id]; ok {
			if e.up != nil { // a failed upload
				ss.remove(id, e)
			} else {
				continue
			}
		}
		if len(ss.tensors)-ss.held >= ss.srv.opts.MaxTensors {
			continue
		}
		ss.tensors[id] = &entry{err: w}
		ss.srv.tensors.Add(1)
	}
}

// put stores a tensor under a free id.
func (ss *session) put(id ir.TensorID, t backend.Tensor) {
	n := tensorBytes(t.Shape(), t.DType())
	ss.tensors[id] = &entry{t: t, bytes: n}
	ss.held++
	ss.bytes += n
	ss.srv.tensors.Add(1)
	ss.srv.bytes.Add(n)
}

// remove deletes an entry.
func (ss *session) remove(id ir.TensorID, e *entry) {
	delete(ss.tensors, id)
	ss.srv.tensors.Add(-1)
	if e.err == nil {
		ss.held--
		ss.bytes -= e.bytes
		ss.srv.bytes.Add(-e.bytes)
	}
}

// tensorBytes is shape × dtype size, saturated at math.MaxInt64.
func tensorBytes(shape []int, dt ir.DType) int64 {
	hi, lo := bits.Mul64(uint64(ir.NumElements(shape)), uint64(dt.Size()))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// claim checks that ids can take n new tensors: each free and not 0 (0
// skipped where skipZero), distinct, within MaxTensors.
func (ss *session) claim(what string, ids []ir.TensorID, skipZero bool) *wireError {
	n := 0
	for i, id := range ids {
		if id == 0 {
			if skipZero {
				continue
			}
			return errorf(codeExecution, what, "tensor id 0 is reserved")
		}
		if _, used := ss.tensors[id]; used {
			return errorf(codeExecution, what, "tensor id %d is already in use in this session", id)
		}
		if slices.Contains(ids[:i], id) {
			return errorf(codeExecution, what, "tensor id %d is given twice", id)
		}
		n++
	}
	if ss.held+n > ss.srv.opts.MaxTensors {
		return errorf(codeLimit, what, "the session holds %d tensors, the server's limit is %d", ss.held, ss.srv.opts.MaxTensors)
	}
	return nil
}

// free ids of ids (for poisoning after a claim failed).
func (ss *session) freeIDs(ids []ir.TensorID) []ir.TensorID {
	var out []ir.TensorID
	for _, id := range ids {
		if _, used := ss.tensors[id]; !used && id != 0 {
			out = append(out, id)
		}
	}
	return out
}

// op runs one op record.
func (ss *session) op(r *ir.Record) {
	name := recordName(r)
	if w := ss.claim(name, r.Outputs, true); w != nil {
		ss.fail(w, ss.freeIDs(r.Outputs))
		return
	}
	var cause *wireError
	op, err := r.Decode(func(id ir.TensorID) (ir.Tensor, bool) {
		e, ok := ss.tensors[id]
		if !ok || e.up != nil {
			return nil, false
		}
		if e.err != nil {
			if cause == nil {
				cause = e.err
			}
			return ir.NewRef(id, nil, 0), true
		}
		return e.t, true
	})
	if err != nil {
		code := codeExecution
		if errors.Is(err, ir.ErrUnknownTensor) {
			code = codeUnknownTensor
			err = fmt.Errorf("%v (not a tensor of this session)", err)
		}
		ss.fail(errorf(code, name, "%v", err), r.Outputs)
		return
	}
	if cause != nil {
		ss.poison(cause, r.Outputs)
		return
	}
	recorded, dt := op.Shape, op.DType
	if err := op.Infer(); err != nil {
		ss.fail(errorf(codeExecution, name, "%v (%s)", err, describeInputs(&op)), r.Outputs)
		return
	}
	if !slices.Equal(op.Shape, recorded) || op.DType != dt {
		ss.fail(errorf(codeExecution, name, "the op's output is %v %v, the record says %v %v", op.DType, op.Shape, dt, recorded), r.Outputs)
		return
	}
	if !ir.SpecOf(op.Kind).View {
		if n := tensorBytes(op.Shape, op.DType); n > ss.srv.opts.MaxTensorBytes {
			ss.fail(errorf(codeLimit, name, "the output %v %v takes %d bytes, more than the server's limit of %d", op.DType, op.Shape, n, ss.srv.opts.MaxTensorBytes), r.Outputs)
			return
		}
	}
	if !ss.dev.checks {
		if w := ss.checkIndices(name, &op); w != nil {
			ss.fail(w, r.Outputs)
			return
		}
	}
	if !ss.dev.checksDivisors {
		if w := ss.checkDivisors(name, &op); w != nil {
			ss.fail(w, r.Outputs)
			return
		}
	}
	outs := ir.Run(&ss.exec, op)
	for j, id := range r.Outputs {
		if id == 0 {
			continue
		}
		if outs[j] == nil {
			ss.fail(errorf(codeExecution, name, "output %d was asked for, the op has none", j), []ir.TensorID{id})
			continue
		}
		ss.put(id, outs[j])
	}
}

// describeInputs formats op's inputs for an inference error.
func describeInputs(op *ir.Op) string {
	var parts []string
	for i := range op.NumInputs() {
		if t := op.Input(i); t != nil {
			parts = append(parts, fmt.Sprintf("%v %v", t.DType(), t.Shape()))
		}
	}
	return "inputs " + strings.Join(parts, ", ")
}

// checkIndices checks the index of Gather, ScatterAdd and IndexSelect
// against the size of their axis, for a backend that does not check them
// itself: an index out of range fails the op here instead of reaching a
// kernel that might not check it.
func (ss *session) checkIndices(name string, op *ir.Op) *wireError {
	switch op.Kind {
	case ir.KindGather, ir.KindScatterAdd, ir.KindIndexSelect:
	default:
		return nil
	}
	x, index := op.In[0], op.In[1]
	size := x.Shape()[op.Axis]
	d, err := ss.dev.b.ToData(index)
	if err != nil {
		return errorf(codeExecution, name, "reading the index: %v", err)
	}
	for i, v := range d.Int64s() {
		if v < 0 || v >= int64(size) {
			return errorf(codeExecution, name, "index %d at flat position %d is out of range for size %d", v, i, size)
		}
	}
	return nil
}

// checkDivisors checks the divisor of an integer Div, FloorDiv, Rem or Mod
// for a backend that does not check divisors itself: a zero fails the op
// here instead of reaching a kernel (or a fusing decorator that would run
// it later) that might not check it.
func (ss *session) checkDivisors(name string, op *ir.Op) *wireError {
	if op.Kind != ir.KindBinary || !op.In[1].DType().IsInt() {
		return nil
	}
	switch ir.BinaryOp(op.Sub) {
	case ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod:
	default:
		return nil
	}
	d, err := ss.dev.b.ToData(op.In[1])
	if err != nil {
		return errorf(codeExecution, name, "reading the divisor: %v", err)
	}
	for i, v := range d.Int64s() {
		if v == 0 {
			return errorf(codeExecution, name, "integer division by zero (%v divisor, zero at flat position %d)", d.DType, i)
		}
	}
	return nil
}

// upload registers a tensor sent whole.
func (ss *session) upload(u *uploadTask) {
	ids := []ir.TensorID{u.ID}
	if w := ss.claim("from_data", ids, false); w != nil {
		ss.fail(w, ss.freeIDs(ids))
		return
	}
	d := u.Data
	if n := tensorBytes(d.Shape, d.DType); n > ss.srv.opts.MaxTensorBytes {
		ss.fail(errorf(codeLimit, "from_data", "a %v tensor of shape %v takes %d bytes, more than the server's limit of %d", d.DType, d.Shape, n, ss.srv.opts.MaxTensorBytes), ids)
		return
	}
	ss.put(u.ID, ss.dev.b.FromData(d))
}

// begin starts an upload in parts.
func (ss *session) begin(b *beginTask) {
	ids := []ir.TensorID{b.ID}
	if w := ss.claim("from_data", ids, false); w != nil {
		ss.fail(w, ss.freeIDs(ids))
		return
	}
	n := tensorBytes(b.Shape, b.DType)
	if n > ss.srv.opts.MaxTensorBytes || n > int64(maxInt) {
		ss.fail(errorf(codeLimit, "from_data", "a %v tensor of shape %v takes %d bytes, more than the server's limit of %d", b.DType, b.Shape, n, ss.srv.opts.MaxTensorBytes), ids)
		return
	}
	// The buffer grows as the parts arrive: nothing is allocated for
	// bytes that are not there yet.
	ss.tensors[b.ID] = &entry{up: &upload{shape: b.Shape, dtype: b.DType, need: int(n)}, bytes: n}
	ss.held++
	ss.bytes += n
	ss.srv.tensors.Add(1)
	ss.srv.bytes.Add(n)
}

// part appends bytes to an upload, registering the tensor when complete.
func (ss *session) part(p *partTask) {
	e, ok := ss.tensors[p.ID]
	switch {
	case !ok:
		ss.fail(errorf(codeUnknownTensor, "from_data", "tensor %d: a part of an upload that was not begun", p.ID), nil)
		return
	case e.up == nil:
		if e.err == nil {
			ss.fail(errorf(codeExecution, "from_data", "tensor %d: a part of an upload that is complete", p.ID), nil)
		}
		return
	}
	u := e.up
	if len(u.buf)+len(p.Bytes) > u.need {
		ss.fail(errorf(codeExecution, "from_data", "tensor %d: %d bytes sent for a %v tensor of shape %v (%d bytes)", p.ID, len(u.buf)+len(p.Bytes), u.dtype, u.shape, u.need), []ir.TensorID{p.ID})
		return
	}
	u.buf = append(u.buf, p.Bytes...)
	if len(u.buf) < u.need {
		return
	}
	ss.remove(p.ID, e)
	ss.put(p.ID, ss.dev.b.FromData(&ir.TensorData{Shape: u.shape, DType: u.dtype, Bytes: u.buf}))
}

// lookup returns a ready tensor, or the failure to report for id.
func (ss *session) lookup(what string, id ir.TensorID) (backend.Tensor, *wireError) {
	e, ok := ss.tensors[id]
	switch {
	case !ok:
		return nil, errorf(codeUnknownTensor, what, "%v %d (not a tensor of this session)", ir.ErrUnknownTensor, id)
	case e.err != nil:
		return nil, e.err
	case e.up != nil:
		return nil, errorf(codeExecution, what, "tensor %d: its upload is not complete", id)
	}
	return e.t, nil
}

// takePending returns the failures not reported yet as one error (nil
// when none) and forgets them.
func (ss *session) takePending() *wireError {
	if len(ss.pending) == 0 {
		return nil
	}
	first := ss.pending[0]
	w := &wireError{Code: first.Code, Op: first.Op, Msg: first.Msg}
	if n := len(ss.pending) - 1 + ss.more; n > 0 {
		var more []string
		for _, p := range ss.pending[1:] {
			more = append(more, p.Op+": "+p.Msg)
		}
		if ss.more > 0 {
			more = append(more, fmt.Sprintf("%d more", ss.more))
		}
		w.Msg += fmt.Sprintf(" (and %d more failed tasks: %s)", n, strings.Join(more, "; "))
	}
	ss.pending, ss.more = nil, 0
	return w
}

// forget removes w from the failures not reported yet.
func (ss *session) forget(w *wireError) {
	kept := ss.pending[:0]
	for _, p := range ss.pending {
		if p != w {
			kept = append(kept, p)
		}
	}
	ss.pending = kept
}

// read answers a read with the tensor's value (in parts when it does not
// fit in one of the client's frames), or with the failure of its op or of
// an earlier one not reported yet.
func (ss *session) read(r *idRequest) {
	t, w := ss.lookup("to_data", r.ID)
	if w == nil {
		w = ss.takePending()
	} else {
		ss.forget(w) // reported now: a later read must not report it again
	}
	if w != nil {
		ss.reply(reply{Req: r.Req, Err: w})
		return
	}
	d, err := ss.dev.b.ToData(t)
	if err != nil {
		ss.reply(reply{Req: r.Req, Err: errorf(codeExecution, "to_data", "%v", err)})
		return
	}
	part := ss.clientMax - 2*frameOverhead
	if len(d.Bytes) <= part {
		ss.reply(reply{Req: r.Req, Data: d})
		return
	}
	ss.flush()
	for off := 0; off < len(d.Bytes); off += part {
		end := min(off+part, len(d.Bytes))
		ss.reply(reply{Req: r.Req, Part: d.Bytes[off:end], More: end < len(d.Bytes)})
		ss.flush()
	}
}

// sync waits for the device and answers with the failures not reported
// yet.
func (ss *session) sync(req uint64) {
	if err := ss.dev.b.Sync(); err != nil {
		ss.fail(errorf(codeExecution, "sync", "%v", err), nil)
	}
	ss.reply(reply{Req: req, Err: ss.takePending()})
}

// drop frees tensors; an id the session does not hold is a failure.
func (ss *session) drop(ids []ir.TensorID) {
	for _, id := range ids {
		e, ok := ss.tensors[id]
		if !ok {
			ss.fail(errorf(codeUnknownTensor, "drop", "%v %d (not a tensor of this session)", ir.ErrUnknownTensor, id), nil)
			continue
		}
		ss.remove(id, e)
	}
}

// export hands a tensor to the server's transfer table under a fresh
// one-time token.
func (ss *session) export(r *idRequest) {
	t, w := ss.lookup("export", r.ID)
	if w != nil {
		ss.reply(reply{Req: r.Req, Err: w})
		return
	}
	token := make([]byte, tokenLen)
	rand.Read(token)
	ss.srv.transfers.put([tokenLen]byte(token), transfer{t: t, device: ss.index})
	ss.reply(reply{Req: r.Req, Token: token})
}

// imp registers the tensor exported under a token, copying it to this
// session's device when it lives on another one of the server.
func (ss *session) imp(im *importTask) {
	ids := []ir.TensorID{im.ID}
	if w := ss.claim("import", ids, false); w != nil {
		ss.fail(w, ss.freeIDs(ids))
		return
	}
	tr, ok := ss.srv.transfers.take([tokenLen]byte(im.Token))
	if !ok {
		ss.fail(errorf(codeExecution, "import", "no tensor is exported under this token (unknown, expired or already imported)"), ids)
		return
	}
	t := tr.t
	if tr.device != ss.index {
		src := ss.srv.devices[tr.device].b
		var copied bool
		if pc, ok := backend.As[backend.PeerCopier](src); ok {
			out, ok, err := pc.CopyTo(t, ss.dev.b)
			if err != nil {
				ss.fail(errorf(codeExecution, "import", "%v", err), ids)
				return
			}
			t, copied = out, ok
		}
		if !copied {
			d, err := src.ToData(t)
			if err != nil {
				ss.fail(errorf(codeExecution, "import", "%v", err), ids)
				return
			}
			t = ss.dev.b.FromData(d)
		}
	}
	ss.put(im.ID, t)
}

// reply queues r, sending the queued replies first when r would make the
// frame larger than the client reads.
func (ss *session) reply(r reply) {
	n := 64 + len(r.Part) + len(r.Token)
	if r.Data != nil {
		n += len(r.Data.Bytes) + 16*len(r.Data.Shape)
	}
	if r.Err != nil {
		n += len(r.Err.Msg) + len(r.Err.Op)
	}
	if len(ss.out) > 0 && ss.outBytes+n > ss.clientMax-frameOverhead {
		ss.flush()
	}
	ss.out = append(ss.out, r)
	ss.outBytes += n
}

// flush sends the queued replies.
func (ss *session) flush() {
	if len(ss.out) == 0 {
		return
	}
	b, err := marshal(&serverFrame{Replies: ss.out})
	clear(ss.out)
	ss.out, ss.outBytes = ss.out[:0], 0
	if err != nil {
		ss.log.Error("encode replies", "err", err)
		return
	}
	// A client that stops reading is dropped by the keep-alive, which
	// closes the connection and so ends this write.
	if err := ss.conn.WriteFrame(context.Background(), b); err != nil {
		ss.log.Debug("write replies", "err", err)
	}
	ss.bytesOut += int64(len(b))
}

// limitExec runs ops on a backend after checking each non-view output
// against the tensor size limit, decompositions' intermediates included.
type limitExec struct {
	b   backend.Backend
	max int64
}

// limitError is the panic value of an op over the limit.
type limitError struct {
	op    string
	shape []int
	dtype ir.DType
	bytes int64
	max   int64
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s: an intermediate %v %v takes %d bytes, more than the server's limit of %d", e.op, e.dtype, e.shape, e.bytes, e.max)
}

// Unwrap returns ErrLimit.
func (e *limitError) Unwrap() error { return ErrLimit }

func (l *limitExec) Supports(k ir.Kind, dt ir.DType) bool { return l.b.Supports(k, dt) }

func (l *limitExec) Exec(op ir.Op) ir.Outputs {
	if !ir.SpecOf(op.Kind).View {
		if n := tensorBytes(op.Shape, op.DType); n > l.max {
			panic(&limitError{op: op.Name(), shape: op.Shape, dtype: op.DType, bytes: n, max: l.max})
		}
	}
	return l.b.Exec(op)
}

package remote

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/ir"
)

// frameSeeds are real frames of every type: handshakes, batches with each
// kind of task (ops of several kinds, uploads whole and in parts, reads,
// syncs, seeds, queries, drops, close, export and import) and server
// frames with each kind of reply.
func frameSeeds(t testing.TB) [][]byte {
	enc := func(v any) []byte {
		b, err := encMode.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	x := ir.NewRef(1, []int{2, 3}, ir.F32)
	w := ir.NewRef(2, []int{3, 4}, ir.F32)
	idx := ir.NewRef(3, []int{2, 3}, ir.I64)
	var ops []ir.Record
	for i, op := range []ir.Op{
		{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), In: [3]ir.Tensor{x, x}},
		{Kind: ir.KindMatmul, In: [3]ir.Tensor{x, w}},
		{Kind: ir.KindGather, Axis: 1, In: [3]ir.Tensor{x, idx}},
		{Kind: ir.KindReduce, Sub: uint8(ir.ReduceSum), Axis: 1, KeepDim: true, In: [3]ir.Tensor{x}},
		{Kind: ir.KindFull, DType: ir.F32, Shape: []int{4}, Scalars: [2]float64{1.5}},
		{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: []ir.Range{{Start: 0, End: 2, Step: 1}, {Start: 1, End: 3, Step: 1}}}, In: [3]ir.Tensor{x}},
		{Kind: ir.KindPermute, Ints: []int{1, 0}, In: [3]ir.Tensor{x}},
	} {
		if err := op.Infer(); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, ir.Encode(op, func(t ir.Tensor) ir.TensorID { return t.(*ir.Ref).ID() }, []ir.TensorID{ir.TensorID(10 + i)}))
	}
	data := ir.FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int{2, 3})
	var tasks []task
	tasks = append(tasks,
		task{Upload: &uploadTask{ID: 1, Data: data}},
		task{Upload: &uploadTask{ID: 2, Data: ir.FromSlice(make([]float32, 12), []int{3, 4})}},
		task{Upload: &uploadTask{ID: 3, Data: ir.FromSlice([]int64{0, 2, 1, 1, 0, 2}, []int{2, 3})}},
		task{Begin: &beginTask{ID: 4, Shape: []int{2}, DType: ir.F64}},
		task{Part: &partTask{ID: 4, Bytes: make([]byte, 8)}},
		task{Part: &partTask{ID: 4, Bytes: make([]byte, 8)}},
	)
	for i := range ops {
		tasks = append(tasks, task{Op: &ops[i]})
	}
	tasks = append(tasks,
		task{Read: &idRequest{Req: 1, ID: 10}},
		task{Sync: &request{Req: 2}},
		task{Seed: &seedTask{Seed: 42}},
		task{DType: &dtypeRequest{Req: 3, DType: ir.BF16}},
		task{Export: &idRequest{Req: 4, ID: 11}},
		task{Import: &importTask{ID: 20, Token: make([]byte, tokenLen)}},
		task{Drop: []ir.TensorID{10, 11, 99}},
		task{Close: true},
	)
	seeds := [][]byte{
		enc(&hello{Version: ProtocolVersion, Session: make([]byte, sessionIDLen), Device: 1, Credential: []byte("k"), MaxFrame: DefaultMaxFrame}),
		enc(&hello{Version: 7, List: true}),
		enc(&welcome{Version: ProtocolVersion, Devices: []wireDevice{{Name: "cpu", Model: "cpu", Memory: 1 << 30, Settings: wireSettings{Float: ir.F32, Int: ir.I64}}},
			Server: make([]byte, sessionIDLen), MaxFrame: DefaultMaxFrame, MaxTensorBytes: 1 << 30, MaxTensors: 1 << 20}),
		enc(&welcome{Version: ProtocolVersion, Refusal: &wireError{Code: codeUnauthorized, Op: "handshake", Msg: "no"}}),
		enc(&clientFrame{Tasks: tasks}),
		enc(&clientFrame{Tasks: tasks[:3]}),
		enc(&serverFrame{Replies: []reply{{Req: 1, Data: data}, {Req: 2}, {Req: 3, OK: true}, {Req: 4, Token: make([]byte, tokenLen)},
			{Req: 5, Part: []byte{1, 2}, More: true}, {Req: 6, Err: &wireError{Code: codeExecution, Op: "add", Msg: "failed"}}}}),
		enc(&serverFrame{Fatal: &wireError{Code: codeShutdown, Msg: "bye"}}),
	}
	for _, tk := range tasks {
		seeds = append(seeds, enc(&clientFrame{Tasks: []task{tk}}))
	}
	return seeds
}

// discardConn is a Conn that reads nothing and drops what it is written.
type discardConn struct{}

func (discardConn) ReadFrame(context.Context) ([]byte, error) { return nil, io.EOF }
func (discardConn) WriteFrame(context.Context, []byte) error  { return nil }
func (discardConn) Peer() PeerID                              { return PeerID{} }
func (discardConn) Close(error) error                         { return nil }

var (
	fuzzSrvOnce sync.Once
	fuzzSrv     *Server
)

// fuzzServer is a server of one cpu device with small limits, for
// running fuzzed batches.
func fuzzServer(t testing.TB) *Server {
	fuzzSrvOnce.Do(func() {
		var err error
		fuzzSrv, err = NewServer(ServerOptions{
			Backends:       []backend.Backend{cpu.New(backend.DeviceID{Type: "cpu"})},
			MaxTensorBytes: 1 << 20, MaxTensors: 64,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	return fuzzSrv
}

// FuzzDecodeFrame decodes arbitrary bytes as every frame type and runs a
// batch that decodes in a fresh session on a cpu device: nothing panics,
// every failure is an error wrapping ErrProtocol (decoding) or a reported
// task failure (running), decoding allocates at most 256 bytes per input
// byte (plus 1 MiB), and the session frees everything it made.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range frameSeeds(f) {
		f.Add(s)
	}
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cf, cerr := decodeClientFrame(b)
		sf, serr := decodeServerFrame(b)
		_, h, herr := decodeHello(b)
		_, w, werr := decodeWelcome(b)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 256*uint64(len(b))+1<<20 {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(b), n)
		}
		for _, err := range []error{cerr, serr, herr, werr} {
			if err != nil && !errors.Is(err, ErrProtocol) {
				t.Fatalf("decode error %v does not wrap ErrProtocol", err)
			}
		}
		if (cerr == nil) != (cf != nil) || (serr == nil) != (sf != nil) || (herr != nil && h != nil) || (werr != nil && w != nil) {
			t.Fatal("a decoder returned both a value and an error")
		}
		if cf == nil {
			return
		}
		ss := srv.newSession(discardConn{}, 0, minFrame, srv.log)
		ss.frame(cf)
		ss.end(nil)
		if st := srv.Stats(); st.Tensors != 0 || st.Bytes != 0 || st.Sessions != 0 {
			t.Fatalf("after the session: %+v", st)
		}
	})
}

package remote_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/remote"
)

// A server hosting the cpu device on loopback, and a program running on
// it through ember.RemoteWebSocket, as `ember serve` and a client on
// another machine would.
func Example() {
	srv, err := remote.NewServer(remote.ServerOptions{
		Backend: "cpu",
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	l, err := remote.ListenWebSocket("127.0.0.1:0", remote.DefaultMaxFrame)
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()

	dev := ember.RemoteWebSocket("ws://"+l.Addr(), 0)
	x := ember.FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, dev)
	y := x.Matmul(x).AddScalar(1) // runs on the server
	fmt.Println(y.Float32s())
	info, _ := dev.Info()
	fmt.Println(info.Name)

	stop()
	fmt.Println(<-served)
	// Output:
	// [8 11 16 23]
	// cpu
	// <nil>
}

// Enumerate lists the devices a server hosts.
func ExampleListServer() {
	srv, err := remote.NewServer(remote.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	l, err := remote.ListenWebSocket("127.0.0.1:0", remote.DefaultMaxFrame)
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go srv.Serve(ctx, l)

	for _, d := range ember.Enumerate(ember.RemoteWebSocketType(l.Addr())) {
		info, _ := d.Info()
		fmt.Println(d.Index(), info.Name, info.MemoryBytes > 0)
	}
	// Output:
	// 0 cpu true
}

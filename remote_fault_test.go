package ember

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember/backend/remote"
)

// TestRemoteHelperServer is not a test: run in a child process by
// startRemoteServerProcess (EMBER_REMOTE_HELPER_LISTEN set), it serves a
// cpu device at that address, prints it and serves until killed.
func TestRemoteHelperServer(t *testing.T) {
	listen := os.Getenv("EMBER_REMOTE_HELPER_LISTEN")
	if listen == "" {
		t.Skip("run as a child process by TestRemoteServerKilledMidTraining")
	}
	srv, err := remote.NewServer(remote.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		var l remote.Listener
		if l, err = remote.ListenWebSocket(listen, remote.DefaultMaxFrame); err == nil {
			fmt.Println("addr", l.Addr())
			srv.Serve(context.Background(), l)
		}
	}
	fmt.Println("error:", err)
	os.Exit(1)
}

// startRemoteServerProcess runs a server at listen in a child process and
// returns its address and the process.
func startRemoteServerProcess(t *testing.T, listen string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemoteHelperServer$")
	cmd.Env = append(os.Environ(), "EMBER_REMOTE_HELPER_LISTEN="+listen)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return a, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("the server process printed no address within 30 s")
	}
	return "", nil
}

// trainSteps trains a small network by SGD on dev (an autodiff device)
// until stop says so or an op fails, returning the error and the losses.
func trainSteps(dev Device, steps int, afterStep func(int)) (losses []float64, err error) {
	rng := newRNG(71)
	x := mk(dev, randRef([]int{32, 16}, F32, nonZero(rng, 0.1, 1)), F32)
	w1 := mk(dev, randRef([]int{16, 32}, F32, nonZero(rng, 0.1, 0.5)), F32).RequireGrad()
	w2 := mk(dev, randRef([]int{32, 4}, F32, nonZero(rng, 0.1, 0.5)), F32).RequireGrad()
	labels := make([]int, 32)
	for i := range labels {
		labels[i] = i % 4
	}
	err = Try(func() {
		for i := range steps {
			loss := mlpLoss(x, w1, w2, labels)
			g := loss.Backward()
			w1 = w1.Sub(g.Of(w1).ToDevice(dev).MulScalar(0.5)).Detach().RequireGrad()
			w2 = w2.Sub(g.Of(w2).ToDevice(dev).MulScalar(0.5)).Detach().RequireGrad()
			losses = append(losses, loss.Item())
			if afterStep != nil {
				afterStep(i)
			}
		}
	})
	return losses, err
}

// TestRemoteServerKilledMidTraining kills the server process (SIGKILL)
// while a client trains on it: the training loop fails with an error
// naming the device, within the 5 s default timeout. The losses before the
// kill are cpu's. Calling the constructor again after a new server came
// up on the same address gives a new device, which works.
func TestRemoteServerKilledMidTraining(t *testing.T) {
	addr, cmd := startRemoteServerProcess(t, "127.0.0.1:0")
	dev := RemoteWebSocket(addr, 0)
	want, err := trainSteps(CPU().Autodiff(), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var killed time.Time
	losses, err := trainSteps(dev.Autodiff(), 1000, func(i int) {
		if i == 2 {
			killed = time.Now()
			cmd.Process.Kill()
		}
	})
	took := time.Since(killed)
	if err == nil || !strings.Contains(err.Error(), dev.String()) {
		t.Fatalf("training past the server's death: %v", err)
	}
	if !errors.Is(err, remote.ErrClosed) {
		t.Errorf("the error %v does not wrap remote.ErrClosed", err)
	}
	if took > remote.DefaultTimeout {
		t.Errorf("the training loop failed %v after the kill, beyond %v", took, remote.DefaultTimeout)
	}
	t.Logf("failed %v after the kill, after %d steps: %v", took, len(losses), err)
	for i := range min(len(losses), 3) {
		if losses[i] != want[i] {
			t.Errorf("step %d: loss %v, cpu's %v", i, losses[i], want[i])
		}
	}
	if err := dev.Sync(); !errors.Is(err, remote.ErrClosed) {
		t.Errorf("Sync on the dead device: %v", err)
	}

	_, cmd2 := startRemoteServerProcess(t, addr)
	defer cmd2.Process.Kill()
	dev2 := RemoteWebSocket(addr, 0)
	if dev2.Equal(dev) {
		t.Fatal("the constructor returned the dead device")
	}
	got, err := trainSteps(dev2.Autodiff(), 3, nil)
	if err != nil {
		t.Fatalf("training on the new device: %v", err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("new device, step %d: loss %v, cpu's %v", i, got[i], want[i])
		}
	}
}

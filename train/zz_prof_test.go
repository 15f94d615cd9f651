package train

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestZZProf(t *testing.T) {
	if os.Getenv("ZZPROF") == "" {
		t.Skip()
	}
	st := time.Now()
	res, err := Run(context.Background(), Config{Model: "cnn", Limit: 6400, TestLimit: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v %v", res.Epochs, time.Since(st))
}

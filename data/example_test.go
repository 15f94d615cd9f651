package data_test

import (
	"fmt"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
)

// A CSV table with a header and named classes becomes a dataset of F32
// features [2] and I64 class indices.
func ExampleReadCSV() {
	const table = `length,width,species
1.4,0.2,setosa
4.7,1.4,versicolor
6.0,2.5,virginica
1.3,0.3,setosa
`
	ds, err := data.ReadCSV(strings.NewReader(table), "flowers.csv", data.CSVOptions{
		Header:     true,
		Target:     data.ClassTarget,
		ClassNames: []string{"setosa", "versicolor", "virginica"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.Len(), "examples:", ds.Schema())
	fmt.Println("features:", ds.FeatureNames, "target:", ds.TargetNames)
	x, y, _ := data.Example(ds, 2)
	fmt.Printf("example 2: %.3f -> class %d\n", x.Float32s(), y.Int64s()[0])

	// A bad value is reported with its file, line and column.
	_, err = data.ReadCSV(strings.NewReader("a,b\n1,2\n3,x\n"), "bad.csv", data.CSVOptions{Header: true})
	fmt.Println(err)
	// Output:
	// 4 examples: features f32[2], targets i64[]
	// features: [length width] target: [species]
	// example 2: [6.000 2.500] -> class 2
	// data: bad.csv:3: column "b" (index 1): malformed data: cannot parse "x" as a number
}

// A Loader cuts a dataset into shuffled batches (the same order for the
// same seed on every run; DropLast drops the partial fifth example) and,
// given a device, places each batch on it from a background goroutine
// while the previous one is in use.
func ExampleLoader() {
	x := []float32{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}
	y := []float32{0, 10, 20, 30, 40}
	ds, err := data.FromSlices(x, []int{5, 2}, y, []int{5, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	l := data.NewLoader(ds, 2, data.LoaderOptions{Shuffle: true, Seed: 2, DropLast: true, Device: ember.Flex()})
	defer l.Close()
	for epoch := range 2 {
		for b := range l.Epoch(epoch) {
			fmt.Printf("epoch %d: examples %v, X %v %.3f, Y %v %.3f\n", epoch, b.Indices, b.X.Shape(), b.X.Float32s(), b.Y.Shape(), b.Y.Float32s())
		}
	}
	// Output:
	// epoch 0: examples [3 0], X [2 2] [3.000 3.000 0.000 0.000], Y [2 1] [30.000 0.000]
	// epoch 0: examples [4 2], X [2 2] [4.000 4.000 2.000 2.000], Y [2 1] [40.000 20.000]
	// epoch 1: examples [3 2], X [2 2] [3.000 3.000 2.000 2.000], Y [2 1] [30.000 20.000]
	// epoch 1: examples [4 0], X [2 2] [4.000 4.000 0.000 0.000], Y [2 1] [40.000 0.000]
}

package data

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
)

// csvRows are the examples of the CSV tables below.
var csvRows = [][]string{
	{"5.1", "3.5", "1.4", "0.2", "setosa"},
	{"7.0", "3.2", "4.7", "1.4", "versicolor"},
	{"6.3", "3.3", "6.0", "2.5", "virginica"},
	{"-1e-3", "0", "1.25e2", "0x1p-2", "setosa"},
}

func csvText(header string, sep string, rows [][]string) string {
	var b strings.Builder
	if header != "" {
		b.WriteString(header + "\n")
	}
	for _, r := range rows {
		b.WriteString(strings.Join(r, sep) + "\n")
	}
	return b.String()
}

// parsed returns field j of every row as float32 values, as strconv
// parses them.
func parsed(t *testing.T, cols ...int) []float32 {
	t.Helper()
	var out []float32
	for _, r := range csvRows {
		for _, c := range cols {
			v, err := strconv.ParseFloat(r[c], 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, float32(v))
		}
	}
	return out
}

func TestReadCSVClassNames(t *testing.T) {
	text := csvText("sepal_len,sepal_wid,petal_len,petal_wid,species", ",", csvRows)
	ds, err := ReadCSV(strings.NewReader(text), "iris.csv", CSVOptions{
		Header: true, Target: ClassTarget, ClassNames: []string{"setosa", "versicolor", "virginica"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 4 || ds.Schema().String() != "features f32[4], targets i64[]" {
		t.Fatalf("Len %d schema %v", ds.Len(), ds.Schema())
	}
	if !slices.Equal(ds.FeatureNames, []string{"sepal_len", "sepal_wid", "petal_len", "petal_wid"}) || !slices.Equal(ds.TargetNames, []string{"species"}) {
		t.Fatalf("names %v %v", ds.FeatureNames, ds.TargetNames)
	}
	b := collect(NewLoader(ds, 10, LoaderOptions{}), 0)[0]
	if !slices.Equal(b.Images, parsed(t, 0, 1, 2, 3)) || !slices.Equal(b.Labels, []int64{0, 1, 2, 0}) {
		t.Fatalf("features %v labels %v", b.Images, b.Labels)
	}
}

func TestReadCSVColumnsAndDTypes(t *testing.T) {
	rows := make([][]string, len(csvRows))
	for i, r := range csvRows {
		rows[i] = r[:4]
	}
	// No header; targets by negative and positive index; features picked
	// and reordered; F64 features and F16 targets; ';' separated with
	// spaces and a comment line.
	text := "# measurements\n" + csvText("", " ; ", rows)
	ds, err := ReadCSV(strings.NewReader(text), "m.csv", CSVOptions{
		Comma: ';', Comment: '#', Targets: []string{"-1", "1"}, Features: []string{"2", "0"},
		FeatureDType: ember.F64, TargetDType: ember.F16,
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Schema().String() != "features f64[2], targets f16[2]" || !slices.Equal(ds.FeatureNames, []string{"column 2", "column 0"}) {
		t.Fatalf("schema %v names %v", ds.Schema(), ds.FeatureNames)
	}
	f, y := make([]byte, 4*16), make([]byte, 4*4)
	if err := ds.Gather([]int{0, 1, 2, 3}, f, y); err != nil {
		t.Fatal(err)
	}
	gf := (&ember.TensorData{Shape: []int{4, 2}, DType: ember.F64, Bytes: f}).Float64s()
	gy := (&ember.TensorData{Shape: []int{4, 2}, DType: ember.F16, Bytes: y}).Float32s()
	for i, r := range rows {
		for k, c := range []int{2, 0} {
			v, _ := strconv.ParseFloat(r[c], 64)
			if gf[2*i+k] != v {
				t.Fatalf("row %d feature %d = %v, want %v", i, k, gf[2*i+k], v)
			}
		}
		for k, c := range []int{3, 1} {
			v, _ := strconv.ParseFloat(r[c], 64)
			if want := ir.F16ToFloat32(ir.F16FromFloat64(v)); gy[2*i+k] != want {
				t.Fatalf("row %d target %d = %v, want %v", i, k, gy[2*i+k], want)
			}
		}
	}
	// One float target column gives per-example targets [1].
	one, err := ReadCSV(strings.NewReader(csvText("", ",", rows)), "m.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if one.Schema().String() != "features f32[3], targets f32[1]" {
		t.Fatalf("schema %v", one.Schema())
	}
	// Class indices without names; quoted fields with CRLF line ends.
	cls, err := ReadCSV(strings.NewReader("a,\"b\",c\r\n1,2,\" 0\"\r\n3,4,7\r\n"), "c.csv", CSVOptions{Header: true, Target: ClassTarget, Targets: []string{"c"}})
	if err != nil {
		t.Fatal(err)
	}
	b := collect(NewLoader(cls, 2, LoaderOptions{}), 0)[0]
	if !slices.Equal(b.Images, []float32{1, 2, 3, 4}) || !slices.Equal(b.Labels, []int64{0, 7}) {
		t.Fatalf("features %v labels %v", b.Images, b.Labels)
	}
}

// TestReadCSVErrors checks that malformed input gives an ErrFormat error
// naming the file, the line and the column.
func TestReadCSVErrors(t *testing.T) {
	header := "x,y,label\n"
	cases := []struct {
		name, text string
		o          CSVOptions
		want       []string
	}{
		{"not a number", header + "1,2,0\n3,abc,1\n", CSVOptions{Header: true, Target: ClassTarget}, []string{"t.csv:3:", `column "y" (index 1)`, `"abc"`}},
		{"empty", header + "1,,0\n", CSVOptions{Header: true, Target: ClassTarget}, []string{"t.csv:2:", `"y"`, "empty"}},
		{"nan", "1,NaN,0\n", CSVOptions{Target: ClassTarget}, []string{"t.csv:1:", "column 1", "finite"}},
		{"inf", "1,2,1e999\n", CSVOptions{}, []string{"t.csv:1:", "column 2", "finite"}},
		{"f32 range", "1,2,1e39\n", CSVOptions{}, []string{"t.csv:1:", "column 2", "range of f32"}},
		{"f16 range", "1,7e4,1\n", CSVOptions{FeatureDType: ember.F16}, []string{"column 1", "range of f16"}},
		{"class", header + "1,2,0\n1,2,-1\n", CSVOptions{Header: true, Target: ClassTarget}, []string{"t.csv:3:", `"label"`, "class index"}},
		{"class float", "1,2,1.5\n", CSVOptions{Target: ClassTarget}, []string{"t.csv:1:", "column 2"}},
		{"class name", header + "1,2,cat\n1,2,dog\n", CSVOptions{Header: true, Target: ClassTarget, ClassNames: []string{"cat"}}, []string{"t.csv:3:", `"dog"`, `"cat"`}},
		{"ragged", header + "1,2,0\n1,2\n", CSVOptions{Header: true}, []string{"t.csv:3:", "number of fields"}},
		{"quote", "1,2\"x,0\n", CSVOptions{}, []string{"t.csv:1:", "quote"}},
		{"no records", "", CSVOptions{}, []string{"t.csv", "no records"}},
		{"header only", header, CSVOptions{Header: true}, []string{"t.csv", "no data"}},
		{"multi-line field", "1,2,3\n\"4\n\",5,6\n7,x,9\n", CSVOptions{}, []string{"t.csv:4:", "column 1"}},
	}
	for _, c := range cases {
		_, err := ReadCSV(strings.NewReader(c.text), "t.csv", c.o)
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.name, err, w)
			}
		}
	}
	// Options that do not fit the file are errors, not format errors.
	bad := map[string]CSVOptions{
		"unknown column": {Header: true, Targets: []string{"z"}},
		"index range":    {Targets: []string{"3"}},
		"name no header": {Targets: []string{"label"}},
		"overlap":        {Header: true, Targets: []string{"x"}, Features: []string{"x", "y"}},
		"twice":          {Header: true, Features: []string{"x", "x"}},
		"no features":    {Header: true, Features: []string{}},
		"two classes":    {Header: true, Target: ClassTarget, Targets: []string{"x", "y"}},
		"dtype":          {FeatureDType: ember.I32},
		"target dtype":   {Target: ClassTarget, TargetDType: ember.F32},
		"names float":    {ClassNames: []string{"a"}},
		"dup names":      {Target: ClassTarget, ClassNames: []string{"a", "a"}},
		"comma":          {Comma: '\n'},
		"comment":        {Comment: ','},
		"kind":           {Target: 7},
	}
	columns := map[string]bool{"unknown column": true, "index range": true, "name no header": true, "overlap": true, "twice": true, "no features": true}
	for name, o := range bad {
		_, err := ReadCSV(strings.NewReader(header+"1,2,0\n"), "t.csv", o)
		if err == nil || errors.Is(err, ErrFormat) || errors.Is(err, ErrColumns) != columns[name] || !strings.Contains(err.Error(), "t.csv") {
			t.Errorf("%s: err %v, want an options error naming the file (ErrColumns: %v)", name, err, columns[name])
		}
	}
}

func TestReadCSVFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(p, []byte("1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := ReadCSVFile(p, CSVOptions{})
	if err != nil || ds.Len() != 2 {
		t.Fatalf("ReadCSVFile: %v, %v", ds, err)
	}
	if _, err := ReadCSVFile(filepath.Join(dir, "missing.csv"), CSVOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestAppendFloatRoundTrip checks the float encoders against ir's
// decoders on values near each dtype's limits.
func TestAppendFloatRoundTrip(t *testing.T) {
	for _, dt := range []ember.DType{ember.F64, ember.F32, ember.F16, ember.BF16} {
		for _, v := range []float64{0, -0.0, 1, -2.5, 1e-8, 65504, 3.3e38, -1e300} {
			b, ok := appendFloat(nil, dt, v)
			want := (&ember.TensorData{Shape: []int{1}, DType: ember.F64, Bytes: mustF64(v)}).Convert(dt)
			if inf := math.IsInf(want.Float64s()[0], 0); ok == inf {
				t.Errorf("%v %v: ok %v, converted %v", dt, v, ok, want.Float64s())
				continue
			}
			if ok && string(b) != string(want.Bytes) {
				t.Errorf("%v %v: bytes %x, Convert gives %x", dt, v, b, want.Bytes)
			}
		}
	}
}

func mustF64(v float64) []byte { return ir.FromSlice([]float64{v}, []int{1}).Bytes }

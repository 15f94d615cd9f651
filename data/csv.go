package data

import (
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
)

// ErrColumns is wrapped by ReadCSV's errors about CSVOptions.Targets and
// Features that do not fit the table: a column it lacks, an index out of
// range, a column listed twice or as both feature and target, no feature
// columns left.
var ErrColumns = errors.New("bad column selection")

// TargetKind says how ReadCSV reads the target columns.
type TargetKind int

const (
	// FloatTarget reads targets as numbers of CSVOptions.TargetDType
	// (regression): k target columns give each example a target array
	// of shape [k], so one column gives batches of targets [B 1], the
	// shape of a model with one output.
	FloatTarget TargetKind = iota
	// ClassTarget reads one target column as a class index, I64 of
	// shape [] (batches [B], as nn.CrossEntropy takes): a non-negative
	// integer, or, with CSVOptions.ClassNames, one of those names.
	ClassTarget
)

// CSVOptions configures ReadCSV. The zero value reads comma-separated
// numbers without a header, the last column as a float target and every
// other column as a feature, all as F32.
type CSVOptions struct {
	// Comma is the field delimiter; 0 means ','.
	Comma rune
	// Comment, when not 0, starts a comment line (skipped).
	Comment rune
	// Header makes the first record the column names, which Targets and
	// Features may then refer to, and which errors quote.
	Header bool
	// Targets names the target columns, each by header name (with
	// Header) or by index counted from 0 (negative: from the end, -1
	// the last column); nil means the last column.
	Targets []string
	// Features names the feature columns in the order they form each
	// example's features, like Targets; nil means every column that is
	// not a target, in file order.
	Features []string
	// Target is how targets are read: FloatTarget (the zero value) or
	// ClassTarget.
	Target TargetKind
	// ClassNames, with ClassTarget, lists the class labels the target
	// column holds; class i is ClassNames[i]. Without it the column
	// holds class indices (non-negative integers).
	ClassNames []string
	// FeatureDType is the dtype of the features: F32 (when 0), F64, F16
	// or BF16.
	FeatureDType ember.DType
	// TargetDType is the dtype of FloatTarget targets: F32 (when 0),
	// F64, F16 or BF16. ClassTarget targets are always I64.
	TargetDType ember.DType
}

// CSVDataset is a TensorDataset read by ReadCSV, with the names of the
// columns it was made of.
type CSVDataset struct {
	*TensorDataset
	// FeatureNames and TargetNames name the feature and target columns
	// in order: their header names, or "column N" (N counted from 0)
	// without a header.
	FeatureNames, TargetNames []string
}

// ReadCSVFile reads the CSV file at path with ReadCSV. Errors name the
// file; a missing file wraps fs.ErrNotExist.
func ReadCSVFile(path string, o CSVOptions) (*CSVDataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return ReadCSV(f, path, o)
}

// ReadCSV reads a table of examples, one per record, from r (parsed by
// encoding/csv: RFC 4180 quoting, every record with as many fields as the
// first) and returns it as an in-memory dataset: features of shape
// [len(Features)], targets as o.Target says. name identifies the source
// in error messages (usually the file path). Fields are trimmed of
// surrounding spaces; numbers are parsed by strconv.ParseFloat and must be
// finite and representable in their dtype.
//
// Errors: invalid options (a dtype that is not F64, F32, F16 or BF16,
// ClassTarget with other than one target column, ...) are reported as
// such, columns that do not fit the table wrap ErrColumns; malformed
// input (a
// CSV syntax error, a record of the wrong length, a value that is not a
// number, not finite or out of range, a class not in ClassNames or not a
// non-negative integer, no data records) wraps ErrFormat and names the
// source, the line, and the column (its header name and index). Errors
// reading r are returned wrapped.
func ReadCSV(r io.Reader, name string, o CSVOptions) (*CSVDataset, error) {
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("data: ReadCSV %s: %w", name, err)
	}
	cr := csv.NewReader(r)
	if o.Comma != 0 {
		cr.Comma = o.Comma
	}
	cr.Comment = o.Comment
	cr.ReuseRecord = true
	rec, err := cr.Read()
	if err == io.EOF {
		return nil, formatErr(name, "no records")
	}
	if err != nil {
		return nil, csvErr(name, err)
	}
	ncol := len(rec)
	names := make([]string, ncol)
	for i := range names {
		names[i] = fmt.Sprintf("column %d", i)
	}
	first := true // rec holds a data record not yet read
	if o.Header {
		copy(names, rec)
		first = false
	}
	cols, err := o.columns(names, ncol)
	if err != nil {
		return nil, fmt.Errorf("data: ReadCSV %s: %w: %v", name, ErrColumns, err)
	}
	p := csvParser{name: name, names: names, header: o.Header, o: o, cr: cr, classes: map[string]int64{}}
	for i, c := range o.ClassNames {
		p.classes[c] = int64(i)
	}
	p.fdt, p.tdt = orDefault(o.FeatureDType), orDefault(o.TargetDType)
	if o.Target == ClassTarget {
		p.tdt = ember.I64
	}
	n := 0
	for {
		if !first {
			rec, err = cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, csvErr(name, err)
			}
		}
		first = false
		if err := p.record(rec, cols); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, formatErr(name, "no data records")
	}
	fshape, tshape := []int{n, len(cols.features)}, []int{n, len(cols.targets)}
	if o.Target == ClassTarget {
		tshape = []int{n}
	}
	ds, err := newTensorDataset([]string{name},
		[]*ember.TensorData{{Shape: fshape, DType: p.fdt, Bytes: p.features}},
		[]*ember.TensorData{{Shape: tshape, DType: p.tdt, Bytes: p.targets}})
	if err != nil {
		return nil, err
	}
	out := &CSVDataset{TensorDataset: ds}
	for _, c := range cols.features {
		out.FeatureNames = append(out.FeatureNames, names[c])
	}
	for _, c := range cols.targets {
		out.TargetNames = append(out.TargetNames, names[c])
	}
	return out, nil
}

// orDefault returns dt, or F32 for the zero DType.
func orDefault(dt ember.DType) ember.DType {
	if dt == 0 {
		return ember.F32
	}
	return dt
}

// csvFloat reports whether ReadCSV can store numbers as dt.
func csvFloat(dt ember.DType) bool {
	switch dt {
	case ember.F64, ember.F32, ember.F16, ember.BF16:
		return true
	}
	return false
}

// check validates the options that do not depend on the file.
func (o CSVOptions) check() error {
	comma := o.Comma
	if comma == 0 {
		comma = ','
	}
	if comma == '\r' || comma == '\n' || comma == '"' || !utf8.ValidRune(comma) || comma == utf8.RuneError {
		return fmt.Errorf("invalid Comma %q", comma)
	}
	if o.Comment != 0 && (o.Comment == comma || o.Comment == '\r' || o.Comment == '\n' || o.Comment == '"' || !utf8.ValidRune(o.Comment) || o.Comment == utf8.RuneError) {
		return fmt.Errorf("invalid Comment %q (Comma is %q)", o.Comment, comma)
	}
	if !csvFloat(orDefault(o.FeatureDType)) {
		return fmt.Errorf("FeatureDType %v: want f32, f64, f16 or bf16", o.FeatureDType)
	}
	switch o.Target {
	case FloatTarget:
		if !csvFloat(orDefault(o.TargetDType)) {
			return fmt.Errorf("TargetDType %v: want f32, f64, f16 or bf16", o.TargetDType)
		}
		if o.ClassNames != nil {
			return errors.New("ClassNames needs Target: ClassTarget")
		}
	case ClassTarget:
		if o.TargetDType != 0 && o.TargetDType != ember.I64 {
			return fmt.Errorf("TargetDType %v: class targets are i64", o.TargetDType)
		}
		if o.Targets != nil && len(o.Targets) != 1 {
			return fmt.Errorf("ClassTarget needs exactly one target column, got %d", len(o.Targets))
		}
		seen := map[string]bool{}
		for _, c := range o.ClassNames {
			if seen[c] {
				return fmt.Errorf("class name %q listed twice", c)
			}
			seen[c] = true
		}
	default:
		return fmt.Errorf("unknown Target kind %d", o.Target)
	}
	return nil
}

// csvColumns are the column indices of the features and the targets.
type csvColumns struct {
	features, targets []int
}

// columns resolves Features and Targets against the header names.
func (o CSVOptions) columns(names []string, ncol int) (csvColumns, error) {
	var c csvColumns
	used := map[int]string{}
	take := func(refs []string, what string) ([]int, error) {
		var out []int
		for _, ref := range refs {
			i, err := resolveColumn(ref, names, o.Header, ncol)
			if err != nil {
				return nil, err
			}
			if prev, ok := used[i]; ok {
				return nil, fmt.Errorf("column %q (index %d) is listed twice (as %s and %s)", names[i], i, prev, what)
			}
			used[i] = what
			out = append(out, i)
		}
		return out, nil
	}
	refs := o.Targets
	if refs == nil {
		refs = []string{"-1"}
	}
	var err error
	if c.targets, err = take(refs, "target"); err != nil {
		return c, err
	}
	if o.Features != nil {
		if c.features, err = take(o.Features, "feature"); err != nil {
			return c, err
		}
	} else {
		for i := range ncol {
			if _, ok := used[i]; !ok {
				c.features = append(c.features, i)
			}
		}
	}
	if len(c.features) == 0 {
		return c, errors.New("no feature columns")
	}
	if len(c.targets) == 0 {
		return c, errors.New("no target columns")
	}
	return c, nil
}

// resolveColumn finds the column ref names: a header name (with a
// header), else an index from 0, negative from the end.
func resolveColumn(ref string, names []string, header bool, ncol int) (int, error) {
	if header {
		if i := slices.Index(names, ref); i >= 0 {
			return i, nil
		}
	}
	i, err := strconv.Atoi(strings.TrimSpace(ref))
	if err != nil {
		if header {
			return 0, fmt.Errorf("no column named %q (columns: %s)", ref, quoteList(names))
		}
		return 0, fmt.Errorf("column %q: without a header, columns are named by index (0..%d, or negative from the end)", ref, ncol-1)
	}
	if i < 0 {
		i += ncol
	}
	if i < 0 || i >= ncol {
		return 0, fmt.Errorf("column index %s out of range for %d columns", ref, ncol)
	}
	return i, nil
}

// quoteList formats names as a quoted, comma-separated list, at most 20.
func quoteList(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == 20 {
			fmt.Fprintf(&b, ", ... (%d in all)", len(names))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	return b.String()
}

// csvParser converts records into feature and target bytes.
type csvParser struct {
	name     string
	names    []string
	header   bool
	o        CSVOptions
	cr       *csv.Reader
	classes  map[string]int64
	fdt, tdt ember.DType
	features []byte
	targets  []byte
}

// record appends one record's features and targets.
func (p *csvParser) record(rec []string, cols csvColumns) error {
	for _, c := range cols.features {
		v, err := p.number(rec, c)
		if err != nil {
			return err
		}
		var ok bool
		if p.features, ok = appendFloat(p.features, p.fdt, v); !ok {
			return p.fieldErr(c, "%s is out of the range of %v", clip(strings.TrimSpace(rec[c])), p.fdt)
		}
	}
	if p.o.Target == ClassTarget {
		c := cols.targets[0]
		k, err := p.class(rec, c)
		if err != nil {
			return err
		}
		p.targets = binary.LittleEndian.AppendUint64(p.targets, uint64(k))
		return nil
	}
	for _, c := range cols.targets {
		v, err := p.number(rec, c)
		if err != nil {
			return err
		}
		var ok bool
		if p.targets, ok = appendFloat(p.targets, p.tdt, v); !ok {
			return p.fieldErr(c, "%s is out of the range of %v", clip(strings.TrimSpace(rec[c])), p.tdt)
		}
	}
	return nil
}

// number parses field c of rec as a finite number.
func (p *csvParser) number(rec []string, c int) (float64, error) {
	s := strings.TrimSpace(rec[c])
	if s == "" {
		return 0, p.fieldErr(c, "empty value (a missing number?)")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, p.fieldErr(c, "cannot parse %s as a number", clip(s))
	}
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, p.fieldErr(c, "%s is not a finite number", clip(s))
	}
	return v, nil
}

// class parses field c of rec as a class index.
func (p *csvParser) class(rec []string, c int) (int64, error) {
	s := strings.TrimSpace(rec[c])
	if p.o.ClassNames != nil {
		k, ok := p.classes[s]
		if !ok {
			return 0, p.fieldErr(c, "class %s is not one of the ClassNames %s", clip(s), quoteList(p.o.ClassNames))
		}
		return k, nil
	}
	k, err := strconv.ParseInt(s, 10, 64)
	if err != nil || k < 0 {
		return 0, p.fieldErr(c, "class %s is not a class index (a non-negative integer; set CSVOptions.ClassNames for named classes)", clip(s))
	}
	return k, nil
}

// fieldErr returns a format error naming the source, the line of field c
// of the current record, and the column.
func (p *csvParser) fieldErr(c int, format string, args ...any) error {
	line, _ := p.cr.FieldPos(c)
	col := fmt.Sprintf("column %d", c)
	if p.header {
		col = fmt.Sprintf("column %s (index %d)", clip(p.names[c]), c)
	}
	return fmt.Errorf("data: %s:%d: %s: %w: %s", p.name, line, col, ErrFormat, fmt.Sprintf(format, args...))
}

// clip quotes s, shortened to at most 40 bytes.
func clip(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

// appendFloat appends v as one element of dt (F64, F32, F16 or BF16) to
// b; it reports false, appending nothing, when v overflows dt.
func appendFloat(b []byte, dt ember.DType, v float64) ([]byte, bool) {
	le := binary.LittleEndian
	switch dt {
	case ember.F64:
		return le.AppendUint64(b, math.Float64bits(v)), true
	case ember.F32:
		f := float32(v)
		if math.IsInf(float64(f), 0) {
			return b, false
		}
		return le.AppendUint32(b, math.Float32bits(f)), true
	case ember.F16:
		h := ir.F16FromFloat64(v)
		if math.IsInf(float64(ir.F16ToFloat32(h)), 0) {
			return b, false
		}
		return le.AppendUint16(b, h), true
	case ember.BF16:
		h := ir.BF16FromFloat64(v)
		if math.IsInf(float64(ir.BF16ToFloat32(h)), 0) {
			return b, false
		}
		return le.AppendUint16(b, h), true
	}
	panic("data: appendFloat: unexpected dtype " + dt.String())
}

// csvErr classifies an error from encoding/csv: a syntax error is a
// format error naming the line and column, anything else a read error.
func csvErr(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("data: %s:%d:%d: %w: %v", name, pe.Line, pe.Column, ErrFormat, pe.Err)
	}
	return fmt.Errorf("data: %s: reading CSV: %w", name, err)
}

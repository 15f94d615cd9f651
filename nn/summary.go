package nn

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/emberml/ember"
)

// ModuleSummary describes a module tree layer by layer, as torchinfo's
// summary or Keras's Model.summary do, without running Forward: it reads
// only the shape, dtype and element count of parameter and buffer tensors,
// never their data, so it works on every device, including capture
// devices (whose tensors may be recorded and not computed) and autodiff
// devices. Summarize builds it; String (and Summary) print it as a table.
type ModuleSummary struct {
	// Model is the root module's description ("Sequential",
	// "Linear(784 → 128)").
	Model string
	// Rows lists the layers in the order of NamedParameters: for a root
	// Sequential its children, depth first (a nested Sequential is a row
	// followed by its own children, one depth deeper); for any other root
	// a single row.
	Rows []SummaryRow
	// Params is the number of trainable parameter elements: the sum of the
	// leaf rows' Params, NumParams(m) for a well-formed tree (a parameter
	// that two layers share counts twice, as there).
	Params int
	// ParamBytes is the memory of those elements: each parameter's element
	// count times its dtype's size.
	ParamBytes int64
	// ParamDTypes lists the parameters' dtypes in order of first appearance.
	ParamDTypes []ember.DType
	// Buffers is the number of buffer elements (NamedBuffers: non-trainable
	// state such as BatchNorm's running statistics).
	Buffers int
	// BufferBytes is the memory of the buffers, as ParamBytes.
	BufferBytes int64
}

// SummaryRow is one layer of a ModuleSummary.
type SummaryRow struct {
	// Path is the module's dotted position in the tree ("0", "3.1"), the
	// prefix of its parameters' names; "" for a root that is not a
	// Sequential.
	Path string
	// Depth is the nesting depth: 0 for the root's children (or the root
	// itself when it is not a Sequential), 1 below a nested Sequential, ...
	Depth int
	// Layer describes the module: its type and key configuration, as
	// "Linear(784 → 128)", "Conv2d(1 → 32, 5×5)", "MaxPool2d(2)",
	// "BatchNorm(64)"; a type outside this package, or one with nothing to
	// describe, reads as its Go type name ("Relu", "main.Block"). A nil
	// module reads "nil" (or "nil *nn.Linear" for a nil pointer).
	Layer string
	// Container is true for a Sequential, whose parameters are its children's.
	Container bool
	// ParamShapes are the shapes of the module's own parameters, in the
	// order of its NamedParameters (nil for a missing one); nil for a
	// container.
	ParamShapes [][]int
	// Params is the number of parameter elements: the module's own for a
	// leaf, the total of its subtree for a container.
	Params int
	// Buffers is the number of buffer elements, counted as Params.
	Buffers int
}

// Summarize describes m (see ModuleSummary). It returns nil when m is nil
// or a nil pointer. It never runs Forward and never reads tensor data. A nil
// child of a Sequential, a nil pointer module, or a parameter whose Param
// or Value is nil (a module its constructor did not make) is reported in
// its row rather than panicking; a panic of a module's own NamedParameters
// or NamedBuffers propagates.
func Summarize(m Module) *ModuleSummary {
	if sumIsNilModule(m) {
		return nil
	}
	s := &ModuleSummary{Model: sumLayerDesc(m)}
	if seq, ok := m.(*Sequential); ok {
		s.addChildren(seq, "", 0)
	} else {
		s.addLeaf(m, "", 0)
	}
	return s
}

// Summary returns a per-layer description of m printed as a table, like
// torchinfo's summary or Keras's Model.summary: one row per layer of a
// Sequential (nested ones recursively, indented by depth) with its path,
// type and configuration ("Linear(784 → 128)"), parameter shapes and
// parameter count, then the totals of trainable parameters, buffers and
// parameter memory. It is Summarize(m).String(); see there. It never runs
// Forward and never reads tensor data, so it works on any device. For a
// nil m (or a nil pointer) it returns a line saying that the module is nil.
func Summary(m Module) string {
	s := Summarize(m)
	if s == nil {
		if m == nil {
			return "nn.Summary: nil module\n"
		}
		return "nn.Summary: nil module (" + reflect.TypeOf(m).String() + ")\n"
	}
	return s.String()
}

// addChildren appends the rows of seq's children at depth, their paths
// prefixed with prefix, and returns the parameter and buffer elements
// they hold.
func (s *ModuleSummary) addChildren(seq *Sequential, prefix string, depth int) (params, buffers int) {
	for i, c := range seq.Modules {
		path := strconv.Itoa(i)
		if prefix != "" {
			path = prefix + "." + path
		}
		var p, b int
		if sub, ok := c.(*Sequential); ok && sub != nil {
			row := len(s.Rows)
			s.Rows = append(s.Rows, SummaryRow{Path: path, Depth: depth, Layer: sumLayerDesc(c), Container: true})
			p, b = s.addChildren(sub, path, depth+1)
			s.Rows[row].Params, s.Rows[row].Buffers = p, b
		} else {
			p, b = s.addLeaf(c, path, depth)
		}
		params += p
		buffers += b
	}
	return params, buffers
}

// addLeaf appends the row of a non-container module and adds its tensors
// to the totals.
func (s *ModuleSummary) addLeaf(m Module, path string, depth int) (params, buffers int) {
	row := SummaryRow{Path: path, Depth: depth, Layer: sumLayerDesc(m)}
	if !sumIsNilModule(m) {
		for _, np := range m.NamedParameters() {
			t := sumParamTensor(np)
			if t == nil {
				row.ParamShapes = append(row.ParamShapes, nil)
				continue
			}
			n := t.NumElements()
			row.ParamShapes = append(row.ParamShapes, t.Shape())
			row.Params += n
			s.ParamBytes += int64(n) * int64(t.DType().Size())
			s.addDType(t.DType())
		}
		for _, nb := range NamedBuffers(m) {
			if t := sumParamTensor(nb); t != nil {
				n := t.NumElements()
				row.Buffers += n
				s.BufferBytes += int64(n) * int64(t.DType().Size())
			}
		}
	}
	s.Params += row.Params
	s.Buffers += row.Buffers
	s.Rows = append(s.Rows, row)
	return row.Params, row.Buffers
}

// addDType records d among the parameters' dtypes.
func (s *ModuleSummary) addDType(d ember.DType) {
	for _, e := range s.ParamDTypes {
		if e == d {
			return
		}
	}
	s.ParamDTypes = append(s.ParamDTypes, d)
}

// sumParamTensor returns np's tensor, nil when its Param or Value is missing.
func sumParamTensor(np NamedParam) *ember.Tensor {
	if np.Param == nil {
		return nil
	}
	return np.Param.Value
}

// String prints the summary as an aligned table: a "Model:" line, one row
// per layer (path indented by depth, layer, parameter shapes, parameter
// count; "--" for a container, whose parameters are counted in its
// children's rows), then the totals of trainable parameters, buffers and
// parameter memory (in B, KiB, MiB, GiB, ..., with the exact bytes and
// the dtypes in parentheses). A nil summary prints "nn.Summary: nil module".
func (s *ModuleSummary) String() string {
	if s == nil {
		return "nn.Summary: nil module\n"
	}
	header := [4]string{"Path", "Layer", "Parameter shapes", "Params"}
	cells := make([][4]string, len(s.Rows))
	width := [4]int{}
	for j, h := range header {
		width[j] = utf8.RuneCountInString(h)
	}
	for i, r := range s.Rows {
		path := r.Path
		if path == "" {
			path = "-"
		}
		count := sumGroupDigits(int64(r.Params))
		if r.Container {
			count = "--"
		}
		cells[i] = [4]string{strings.Repeat("  ", r.Depth) + path, r.Layer, sumFormatShapes(r.ParamShapes), count}
		for j, c := range cells[i] {
			width[j] = max(width[j], utf8.RuneCountInString(c))
		}
	}
	const gap = "   "
	total := width[0] + width[1] + width[2] + width[3] + 3*len(gap)
	var b strings.Builder
	line := func(c [4]string) {
		var l strings.Builder
		for j := range 3 {
			l.WriteString(c[j])
			l.WriteString(strings.Repeat(" ", width[j]-utf8.RuneCountInString(c[j])))
			l.WriteString(gap)
		}
		l.WriteString(strings.Repeat(" ", width[3]-utf8.RuneCountInString(c[3])))
		l.WriteString(c[3])
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Model: %s\n", s.Model)
	b.WriteString(strings.Repeat("=", total) + "\n")
	line(header)
	b.WriteString(strings.Repeat("-", total) + "\n")
	for _, c := range cells {
		line(c)
	}
	b.WriteString(strings.Repeat("=", total) + "\n")

	names := make([]string, len(s.ParamDTypes))
	for i, d := range s.ParamDTypes {
		names[i] = d.String()
	}
	mem := sumHumanBytes(s.ParamBytes) + sumParens(append(sumExactBytes(s.ParamBytes), names...))
	buffers := sumGroupDigits(int64(s.Buffers))
	if s.Buffers > 0 || s.BufferBytes > 0 {
		buffers += sumParens(append([]string{sumHumanBytes(s.BufferBytes)}, sumExactBytes(s.BufferBytes)...))
	}
	fmt.Fprintf(&b, "Trainable parameters:  %s\n", sumGroupDigits(int64(s.Params)))
	fmt.Fprintf(&b, "Non-trainable buffers: %s\n", buffers)
	fmt.Fprintf(&b, "Parameter memory:      %s\n", mem)
	return b.String()
}

// sumFormatShapes prints shapes as "[128, 784], [128]" ("missing" for nil).
func sumFormatShapes(shapes [][]int) string {
	parts := make([]string, len(shapes))
	for i, sh := range shapes {
		if sh == nil {
			parts[i] = "missing"
			continue
		}
		dims := make([]string, len(sh))
		for k, d := range sh {
			dims[k] = strconv.Itoa(d)
		}
		parts[i] = "[" + strings.Join(dims, ", ") + "]"
	}
	return strings.Join(parts, ", ")
}

// sumGroupDigits prints n with commas between groups of three digits.
func sumGroupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// sumHumanBytes prints n bytes in binary units with two decimals: "520 B",
// "397.54 KiB", "1.50 MiB".
func sumHumanBytes(n int64) string {
	if n < 1024 {
		return sumGroupDigits(n) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}

// sumExactBytes returns the exact count "407,080 B" when sumHumanBytes
// rounds it (from 1 KiB on), none otherwise.
func sumExactBytes(n int64) []string {
	if n < 1024 {
		return nil
	}
	return []string{sumGroupDigits(n) + " B"}
}

// sumParens prints notes as " (a, b)", nothing when there are none.
func sumParens(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// sumIsNilModule reports whether m is nil or a nil pointer (or other nil
// reference) behind the interface.
func sumIsNilModule(m Module) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// sumTypeName returns m's Go type without pointers: the bare name for this
// package's types ("Linear"), the package-qualified one otherwise
// ("main.Block").
func sumTypeName(m Module) string {
	t := reflect.TypeOf(m)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == reflect.TypeFor[Sequential]().PkgPath() && t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// sumLayerDesc describes m for a summary row: its type and key
// configuration, read from its fields and its parameters' shapes.
func sumLayerDesc(m Module) string {
	if m == nil {
		return "nil"
	}
	if sumIsNilModule(m) {
		return "nil " + reflect.TypeOf(m).String()
	}
	name := sumTypeName(m)
	var args []string
	switch l := m.(type) {
	case *Linear:
		in, out := l.in, l.out
		if w := sumTensorOf(l.Weight); (in == 0 || out == 0) && w != nil && w.Rank() == 2 {
			out, in = w.Dim(0), w.Dim(1)
		}
		if in > 0 && out > 0 {
			args = append(args, sumArrow(in, out))
		}
	case *Conv2d:
		g := max(l.Opts.Groups, 1)
		if w := sumTensorOf(l.Weight); w != nil && w.Rank() == 4 {
			in := l.in
			if in == 0 {
				in = w.Dim(1) * g
			}
			args = append(args, sumArrow(in, w.Dim(0)), sumDims(w.Shape()[2:]))
		}
		args = append(args, sumConvOpts(l.Opts.Stride[:], l.Opts.Padding[:], l.Opts.Dilation[:], l.Opts.Groups)...)
	case *ConvTranspose2d:
		g := max(l.Opts.Groups, 1)
		if w := sumTensorOf(l.Weight); w != nil && w.Rank() == 4 {
			args = append(args, sumArrow(w.Dim(0), w.Dim(1)*g), sumDims(w.Shape()[2:]))
		}
		args = append(args, sumConvOpts(l.Opts.Stride[:], l.Opts.Padding[:], l.Opts.Dilation[:], l.Opts.Groups)...)
		if p := l.Opts.OutputPadding; p != [2]int{} {
			args = append(args, "output padding "+sumPair(p[:]))
		}
	case *Conv1d:
		g := max(l.Opts.Groups, 1)
		if w := sumTensorOf(l.Weight); w != nil && w.Rank() == 3 {
			args = append(args, sumArrow(w.Dim(1)*g, w.Dim(0)), "kernel "+strconv.Itoa(w.Dim(2)))
		}
		o := l.Opts
		args = append(args, sumConvOpts([]int{o.Stride}, []int{o.Padding}, []int{o.Dilation}, o.Groups)...)
	case *Conv3d:
		g := max(l.Opts.Groups, 1)
		if w := sumTensorOf(l.Weight); w != nil && w.Rank() == 5 {
			args = append(args, sumArrow(w.Dim(1)*g, w.Dim(0)), sumDims(w.Shape()[2:]))
		}
		args = append(args, sumConvOpts(l.Opts.Stride[:], l.Opts.Padding[:], l.Opts.Dilation[:], l.Opts.Groups)...)
	case *MaxPool2d:
		args = sumPoolDesc(l.Opts)
	case *AvgPool2d:
		args = sumPoolDesc(l.Opts)
		if !l.CountIncludePad && l.Opts.Padding != [2]int{} {
			args = append(args, "padding not counted")
		}
	case AdaptiveAvgPool2d:
		args = append(args, sumDims([]int{l.OutH, l.OutW}))
	case *AdaptiveAvgPool2d:
		args = append(args, sumDims([]int{l.OutH, l.OutW}))
	case Upsample:
		args = sumUpsampleDesc(l)
	case *Upsample:
		args = sumUpsampleDesc(*l)
	case *Dropout:
		args = append(args, strconv.FormatFloat(l.P, 'g', -1, 64))
	case *Embedding:
		num, dim := l.num, l.dim
		if w := sumTensorOf(l.Weight); (num == 0 || dim == 0) && w != nil && w.Rank() == 2 {
			num, dim = w.Dim(0), w.Dim(1)
		}
		if num > 0 && dim > 0 {
			args = append(args, strconv.Itoa(num)+", "+strconv.Itoa(dim))
		}
		if l.PaddingIdx != nil {
			args = append(args, "padding "+strconv.Itoa(*l.PaddingIdx))
		}
	case *BatchNorm:
		args = append(args, sumSizeOr(l.channels, l.Weight)...)
		if l.Eps != 1e-5 {
			args = append(args, "eps "+strconv.FormatFloat(l.Eps, 'g', -1, 64))
		}
		if l.Momentum != 0.1 {
			args = append(args, "momentum "+strconv.FormatFloat(l.Momentum, 'g', -1, 64))
		}
	case *LayerNorm:
		args = append(args, sumSizeOr(l.dim, l.Weight)...)
		if l.Eps != 1e-5 {
			args = append(args, "eps "+strconv.FormatFloat(l.Eps, 'g', -1, 64))
		}
	case *RMSNorm:
		args = append(args, sumSizeOr(l.dim, l.Weight)...)
		if l.Eps != 1e-6 {
			args = append(args, "eps "+strconv.FormatFloat(l.Eps, 'g', -1, 64))
		}
	case *GroupNorm:
		args = append(args, sumSizeOr(l.channels, l.Weight)...)
		args = append(args, sumPlural(l.Groups, "group"))
		if l.Eps != 1e-5 {
			args = append(args, "eps "+strconv.FormatFloat(l.Eps, 'g', -1, 64))
		}
	case *MultiHeadAttention:
		embed := l.embed
		if w := sumTensorOf(l.InProj); embed == 0 && w != nil && w.Rank() == 2 {
			embed = w.Dim(1)
		}
		if embed > 0 {
			args = append(args, strconv.Itoa(embed))
		}
		args = append(args, sumPlural(l.Heads, "head"))
	case *LSTM:
		args = sumRnnDesc(l.Layers, l.input, l.hidden, l.BatchFirst)
	case *GRU:
		args = sumRnnDesc(l.Layers, l.input, l.hidden, l.BatchFirst)
	}
	if len(args) == 0 {
		return name
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}

// sumTensorOf returns p's value, nil when p is nil.
func sumTensorOf(p *Param) *ember.Tensor {
	if p == nil {
		return nil
	}
	return p.Value
}

// sumArrow prints "in → out".
func sumArrow(in, out int) string { return strconv.Itoa(in) + " → " + strconv.Itoa(out) }

// sumDims prints sizes joined by "×" ("5×5").
func sumDims(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, "×")
}

// sumPair prints sizes as one number when they are all equal ("2"), as sumDims
// otherwise ("3×2").
func sumPair(s []int) string {
	for _, d := range s[1:] {
		if d != s[0] {
			return sumDims(s)
		}
	}
	return strconv.Itoa(s[0])
}

// sumAllAre reports whether every size in s is one of vals.
func sumAllAre(s []int, vals ...int) bool {
	for _, d := range s {
		ok := false
		for _, v := range vals {
			ok = ok || d == v
		}
		if !ok {
			return false
		}
	}
	return true
}

// sumConvOpts lists a convolution's options that differ from the defaults
// (stride 1, padding 0, dilation 1, groups 1; zero stride, dilation or
// groups mean the default).
func sumConvOpts(stride, padding, dilation []int, groups int) []string {
	var out []string
	if !sumAllAre(stride, 0, 1) {
		out = append(out, "stride "+sumPair(stride))
	}
	if !sumAllAre(padding, 0) {
		out = append(out, "padding "+sumPair(padding))
	}
	if !sumAllAre(dilation, 0, 1) {
		out = append(out, "dilation "+sumPair(dilation))
	}
	if groups > 1 {
		out = append(out, sumPlural(groups, "group"))
	}
	return out
}

// sumPoolDesc lists a pooling's kernel and the options that differ from the
// defaults (stride = kernel, no padding, dilation 1).
func sumPoolDesc(o ember.PoolOptions) []string {
	out := []string{sumPair(o.Kernel[:])}
	stride := o.Stride
	for i := range stride {
		if stride[i] == 0 {
			stride[i] = o.Kernel[i]
		}
	}
	if stride != o.Kernel {
		out = append(out, "stride "+sumPair(stride[:]))
	}
	if !sumAllAre(o.Padding[:], 0) {
		out = append(out, "padding "+sumPair(o.Padding[:]))
	}
	if !sumAllAre(o.Dilation[:], 0, 1) {
		out = append(out, "dilation "+sumPair(o.Dilation[:]))
	}
	return out
}

// sumUpsampleDesc lists an Upsample's size, mode and corner alignment.
func sumUpsampleDesc(u Upsample) []string {
	out := []string{sumDims(u.Size[:]), u.Mode.String()}
	if u.AlignCorners {
		out = append(out, "align corners")
	}
	return out
}

// sumSizeOr returns n, or the first axis of p's value when n is 0 (a module
// written as a literal), as a one-element list; none when neither is known.
func sumSizeOr(n int, p *Param) []string {
	if w := sumTensorOf(p); n == 0 && w != nil && w.Rank() >= 1 {
		n = w.Dim(0)
	}
	if n <= 0 {
		return nil
	}
	return []string{strconv.Itoa(n)}
}

// sumPlural prints "1 group", "32 groups".
func sumPlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// sumRnnDesc describes an LSTM or GRU: "10 → 20, 2 layers[, batch-first]".
func sumRnnDesc(layers []RNNLayer, input, hidden int, batchFirst bool) []string {
	var out []string
	if len(layers) > 0 {
		if w := sumTensorOf(layers[0].WeightIH); input == 0 && w != nil && w.Rank() == 2 {
			input = w.Dim(1)
		}
		if w := sumTensorOf(layers[0].WeightHH); hidden == 0 && w != nil && w.Rank() == 2 {
			hidden = w.Dim(1)
		}
	}
	if input > 0 && hidden > 0 {
		out = append(out, sumArrow(input, hidden))
	}
	out = append(out, sumPlural(len(layers), "layer"))
	if batchFirst {
		out = append(out, "batch-first")
	}
	return out
}

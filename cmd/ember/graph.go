package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"

	"github.com/spf13/cobra"
)

// GraphShowConfig is the configuration of `ember graph show`.
type GraphShowConfig struct {
	// Path is the graph file (written by ember.CapturedGraph.WriteTo).
	Path string
	// Dot prints a Graphviz digraph instead of the listing.
	Dot bool
	// Out is the command's standard output.
	Out io.Writer
}

// runGraphShow carries out `ember graph show`.
var runGraphShow = showGraph

func newGraphCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Inspect captured graphs",
		Long: `Inspect graphs captured with ember.Capture and Device.CaptureScope and
saved with CapturedGraph.WriteTo.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGraphShowCmd())
	return cmd
}

func newGraphShowCmd() *cobra.Command {
	var cfg GraphShowConfig
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "Print a captured graph's ops, or its Graphviz form",
		Long: `Print a captured graph: a header with its inputs, values and outputs
(id, shape, dtype), then one line per op with its index, its name (with
the sub-op, as binary.add or reduce.sum), the ids of its inputs (_ for an
absent optional input), the ids of its outputs, the output shape and
dtype, and the attributes that matter (axis, value, stride, ...).

With --dot, print the graph as a Graphviz digraph instead: one node per
input, value, op and output, one edge per use of a tensor.`,
		Example: `  ember graph show step.graph
  ember graph show --dot step.graph | dot -Tsvg > step.svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Path = args[0]
			cfg.Out = cmd.OutOrStdout()
			return runGraphShow(cfg)
		},
	}
	cmd.Flags().BoolVar(&cfg.Dot, "dot", false, "print a Graphviz digraph")
	return cmd
}

// showGraph reads the graph file and prints it.
func showGraph(cfg GraphShowConfig) error {
	f, err := os.Open(cfg.Path)
	if err != nil {
		return fmt.Errorf("graph show: %w", err)
	}
	defer f.Close()
	g, err := ember.ReadGraph(f)
	if err != nil {
		return fmt.Errorf("graph show %s: %w", cfg.Path, err)
	}
	if cfg.Dot {
		return writeDot(cfg.Out, g)
	}
	return writeListing(cfg.Out, cfg.Path, g)
}

// id formats a tensor id ("%17"), "_" for 0.
func id(t ember.TensorID) string {
	if t == 0 {
		return "_"
	}
	return "%" + strconv.FormatUint(uint64(t), 10)
}

// ids formats a list of ids separated by spaces ("_" for none).
func ids(ts []ember.TensorID) string {
	if len(ts) == 0 {
		return "_"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = id(t)
	}
	return strings.Join(s, " ")
}

// shape formats a shape as "[2 3]" ("[]" for rank 0).
func shape(s []int) string {
	if len(s) == 0 {
		return "[]"
	}
	return fmt.Sprint(s)
}

var distNames = [...]string{"default", "uniform", "normal", "bernoulli"}

// opName is the op's kind with its sub-op: "binary.add", "unary.exp",
// "reduce.sum", "random.normal", or the kind alone ("matmul").
func opName(r *ir.Record) string {
	k := r.Kind.String()
	switch r.Kind {
	case ir.KindUnary:
		return k + "." + ir.UnaryOp(r.Sub).String()
	case ir.KindBinary:
		return k + "." + ir.BinaryOp(r.Sub).String()
	case ir.KindReduce:
		return k + "." + ir.ReduceOp(r.Sub).String()
	case ir.KindRandom:
		if int(r.Sub) < len(distNames) {
			return k + "." + distNames[r.Sub]
		}
	}
	return k
}

// attrs formats the attributes of r that its kind reads, briefly.
func attrs(r *ir.Record) string {
	var a []string
	add := func(format string, args ...any) { a = append(a, fmt.Sprintf(format, args...)) }
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch r.Kind {
	case ir.KindFull:
		add("value=%s", g(r.Scalars[0]))
	case ir.KindArange:
		if len(r.Ints) == 2 {
			add("start=%d step=%d", r.Ints[0], r.Ints[1])
		} else {
			add("start=%s step=%s", g(r.Scalars[0]), g(r.Scalars[1]))
		}
	case ir.KindRandom:
		add("a=%s b=%s", g(r.Scalars[0]), g(r.Scalars[1]))
	case ir.KindReduce, ir.KindCumSum, ir.KindExtremumGrad:
		add("axis=%d", r.Axis)
		if r.KeepDim {
			add("keepdim")
		}
	case ir.KindCat, ir.KindGather, ir.KindScatterAdd, ir.KindIndexSelect:
		add("axis=%d", r.Axis)
	case ir.KindPermute, ir.KindFlip:
		add("axes=%v", r.Ints)
	case ir.KindPad:
		add("widths=%v value=%s", r.Ints, g(r.Scalars[0]))
	}
	if at := r.Attrs; at != nil {
		switch r.Kind {
		case ir.KindConv2d, ir.KindConvTranspose2d, ir.KindConv2dWeightGrad:
			c := at.Conv
			add("stride=%v padding=%v dilation=%v groups=%d", c.Stride, c.Padding, c.Dilation, c.Groups)
		case ir.KindMaxPool2d, ir.KindMaxPool2dGrad:
			p := at.Pool
			add("kernel=%v stride=%v padding=%v dilation=%v", p.Kernel, p.Stride, p.Padding, p.Dilation)
		case ir.KindSlice, ir.KindSliceScatter:
			var rs []string
			for _, x := range at.Ranges {
				rs = append(rs, fmt.Sprintf("%d:%d:%d", x.Start, x.End, x.Step))
			}
			add("ranges=[%s]", strings.Join(rs, " "))
		case ir.KindAdamStep:
			o := at.Optim
			add("lr=%s beta1=%s beta2=%s eps=%s step=%d", g(o.LR), g(o.Beta1), g(o.Beta2), g(o.Eps), o.Step)
			if o.WeightDecay != 0 {
				add("weight_decay=%s", g(o.WeightDecay))
			}
			if o.Decoupled {
				add("decoupled")
			}
		case ir.KindSGDStep:
			o := at.Optim
			add("lr=%s momentum=%s", g(o.LR), g(o.Momentum))
			if o.WeightDecay != 0 {
				add("weight_decay=%s", g(o.WeightDecay))
			}
			if o.Nesterov {
				add("nesterov")
			}
		}
	}
	return strings.Join(a, " ")
}

// writeListing prints the header and one line per op.
func writeListing(w io.Writer, path string, g *ember.CapturedGraph) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "graph %s: %d ops, %d inputs, %d values, %d outputs\n",
		path, len(g.Operations), len(g.Inputs), len(g.Values), len(g.Outputs))
	for i, in := range g.Inputs {
		fmt.Fprintf(tw, "input %d\t%s\t%s %v\n", i, id(in.ID), shape(in.Shape), in.DType)
	}
	for _, vid := range slices.Sorted(maps.Keys(g.Values)) {
		v := g.Values[vid]
		fmt.Fprintf(tw, "value\t%s\t%s %v\n", id(vid), shape(v.Shape), v.DType)
	}
	// The outputs' shapes are their producers'.
	types := map[ember.TensorID]string{}
	for i := range g.Operations {
		r := &g.Operations[i]
		for _, o := range r.Outputs {
			types[o] = shape(r.Shape) + " " + r.DType.String()
		}
	}
	for i, o := range g.Outputs {
		fmt.Fprintf(tw, "output %d\t%s\t%s\n", i, id(o), types[o])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i := range g.Operations {
		r := &g.Operations[i]
		line := fmt.Sprintf("%d\t%s\t%s\t->\t%s\t%s %v", i, opName(r), ids(r.Inputs), ids(r.Outputs), shape(r.Shape), r.DType)
		if a := attrs(r); a != "" {
			line += "\t" + a
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// dotQuote returns s as a quoted Graphviz string.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// writeDot prints the graph as a Graphviz digraph: inputs as ellipses,
// values as dashed boxes, ops as rounded boxes, outputs as double
// octagons, and an edge from each tensor's producer to every op that
// reads it, labelled with the operand's name.
func writeDot(w io.Writer, g *ember.CapturedGraph) error {
	var b strings.Builder
	b.WriteString("digraph ember {\n")
	b.WriteString("  rankdir=TB;\n")
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=10];\n")
	// producer maps a tensor id to its node and, for multi-output ops,
	// which output it is.
	type src struct {
		node string
		out  int
	}
	producer := map[ember.TensorID]src{}
	for i, in := range g.Inputs {
		n := "t" + strconv.FormatUint(uint64(in.ID), 10)
		producer[in.ID] = src{n, -1}
		fmt.Fprintf(&b, "  %s [shape=ellipse, label=%s];\n", n, dotQuote(fmt.Sprintf("input %d %s\n%s %v", i, id(in.ID), shape(in.Shape), in.DType)))
	}
	for _, vid := range slices.Sorted(maps.Keys(g.Values)) {
		v := g.Values[vid]
		n := "t" + strconv.FormatUint(uint64(vid), 10)
		producer[vid] = src{n, -1}
		fmt.Fprintf(&b, "  %s [shape=box, style=dashed, label=%s];\n", n, dotQuote(fmt.Sprintf("value %s\n%s %v", id(vid), shape(v.Shape), v.DType)))
	}
	for i := range g.Operations {
		r := &g.Operations[i]
		n := "op" + strconv.Itoa(i)
		label := fmt.Sprintf("%d: %s\n%s %v", i, opName(r), shape(r.Shape), r.DType)
		if a := attrs(r); a != "" {
			label += "\n" + a
		}
		fmt.Fprintf(&b, "  %s [shape=box, style=rounded, label=%s];\n", n, dotQuote(label))
		operands := ir.SpecOf(r.Kind).Operands
		for k, in := range r.Inputs {
			if in == 0 {
				continue
			}
			p, ok := producer[in]
			if !ok {
				return fmt.Errorf("graph show: op %d reads tensor %d, which nothing defines", i, in)
			}
			name := "#" + strconv.Itoa(k)
			if k < len(operands) {
				name = operands[k]
			}
			if p.out >= 0 {
				name += fmt.Sprintf(" (out %d)", p.out)
			}
			fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", p.node, n, dotQuote(name))
		}
		for j, o := range r.Outputs {
			if o != 0 {
				out := j
				if len(r.Outputs) == 1 {
					out = -1
				}
				producer[o] = src{n, out}
			}
		}
	}
	for i, o := range g.Outputs {
		n := "out" + strconv.Itoa(i)
		fmt.Fprintf(&b, "  %s [shape=doubleoctagon, label=%s];\n", n, dotQuote(fmt.Sprintf("output %d %s", i, id(o))))
		if p, ok := producer[o]; ok {
			fmt.Fprintf(&b, "  %s -> %s;\n", p.node, n)
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

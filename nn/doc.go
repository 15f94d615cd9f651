// Package nn provides neural-network layers, parameter initializers, losses
// and safetensors checkpoints on top of package ember, following PyTorch's
// torch.nn conventions (names, shapes, default initialization).
//
// A Module maps a tensor to a tensor and lists its trainable parameters by
// name ("0.weight", "2.bias", ...). Parameters are *Param cells: an
// optimizer (package optim) replaces Param.Value after each step, and every
// module reads its parameters through the cell, so the module sees the new
// values. Parameters are tracked autodiff leaves (Tensor.RequireGrad) when a
// layer is built on an autodiff device and plain tensors otherwise.
//
// Non-trainable state such as BatchNorm's running statistics is kept in
// buffers: modules that hold some implement BufferOwner, and NamedBuffers
// walks a module tree for them. Buffers are saved and loaded with the
// parameters (Save, Load) but are never returned by NamedParameters, so
// optimizers leave them alone.
//
// Layers with a training mode (BatchNorm, Dropout) implement
// interface{ SetTraining(bool) }; SetTraining walks a tree and switches them.
// New layers start in training mode, as in PyTorch.
//
// Linear stores its weight as [out, in] and Conv2d as [out, in/groups, k, k],
// PyTorch's layouts, so checkpoints exchange with PyTorch state dicts through
// the safetensors format. Save and Load write and read a file strictly
// (every tensor present, nothing extra); SaveTo, SaveFile and SaveTensors
// add metadata and write to any io.Writer or from a map of tensors;
// LoadFrom, LoadFile and LoadStateDict read from an io.Reader or a map,
// optionally non-strict (LoadOptions.NonStrict, PyTorch's strict=False),
// reporting the missing and unexpected tensors and the metadata in a
// LoadResult; SaveSafetensors and LoadSafetensors handle raw tensor data.
//
// A model reads as its PyTorch counterpart:
//
//	dev := ember.CPU().Autodiff() // trainable parameters are tracked leaves
//	model := nn.NewSequential(nn.NewLinear(4, 8, dev), nn.Relu{}, nn.NewLinear(8, 3, dev))
//	y := model.Forward(x)         // x [batch, 4] → y [batch, 3]
//	loss := nn.CrossEntropy(y, labels)
//	fmt.Print(nn.Summary(model))  // layers, parameter shapes and counts
//
// Mixed precision follows PyTorch's autocast: keep the parameters in F32
// and give the model an input on an autocast device
// (ember.Device.Autocast), and Linear and Conv2d run their products in
// BF16 or F16 (their bias cast along, so the output has that dtype) while
// the losses, BatchNorm, LayerNorm, RMSNorm and GroupNorm compute in F32.
// ToDType converts a whole module to another float dtype instead
// (PyTorch's module.double(), module.half()), for training or inference
// wholly in that precision.
//
// The examples are complete programs: ExampleSequential runs a forward
// pass and prints the summary, ExampleLoad saves a model and loads it into
// another, ExampleLoadFrom loads a pretrained body under a new head, and
// package optim's examples train one.
package nn

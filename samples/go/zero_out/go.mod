module kiln.dev/samples/zero_out

go 1.24

require kiln.dev/kiln v0.0.0

replace kiln.dev/kiln => ../../../bindings/go

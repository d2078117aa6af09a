module kiln.dev/kiln

go 1.24

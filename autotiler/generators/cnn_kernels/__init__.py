"""C sources and headers of the CNN basic kernels (package data)."""

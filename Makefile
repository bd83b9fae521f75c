# hympi: the two commands of the README, plus the pieces they are made of.
#   make demo   builds hympi and runs the demo job (4 ranks x 2 threads)
#   make test   builds hympi and runs every test suite
#   make install PREFIX=dir   builds hympi and installs it in dir (relocatable; see README)
#   make install-mpich-abi PREFIX=dir   the same, plus MPICH's ABI in dir/lib/mpich-abi
CARGO ?= cargo
RELEASE := target/release
PREFIX ?= /usr/local

.PHONY: all build deps demo test install install-mpich-abi
all: build

deps:
	@scripts/install-deps build

build: deps
	$(CARGO) build --release

demo: build
	$(RELEASE)/hympicc -O2 -pthread samples/demo.c -o $(RELEASE)/hympi-demo
	$(RELEASE)/hympiexec -n 4 $(RELEASE)/hympi-demo 2

test:
	@scripts/install-deps test
	scripts/test-all

install: build
	scripts/install-prefix $(PREFIX)

install-mpich-abi: build
	scripts/build-mpich-abi
	HYMPI_INSTALL_MPICH_ABI=1 scripts/install-prefix $(PREFIX)

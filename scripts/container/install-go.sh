#!/bin/sh
# install-go VERSION SHA256: the Go toolchain from the Go module proxy (the same zip the go command
# fetches for GOTOOLCHAIN), checked against its sha256, into /usr/local/go.
set -eu
version="$1" sum="$2"
proxy="${GOPROXY_URL:-https://proxy.golang.org}"
curl -fsSL -o /tmp/go.zip "$proxy/golang.org/toolchain/@v/v0.0.1-go${version}.linux-amd64.zip"
echo "$sum  /tmp/go.zip" | sha256sum -c -
rm -rf /tmp/go-unzip && mkdir -p /tmp/go-unzip && unzip -q /tmp/go.zip -d /tmp/go-unzip
rm -rf /usr/local/go && mv "/tmp/go-unzip/golang.org/toolchain@v0.0.1-go${version}.linux-amd64" /usr/local/go
rm -rf /tmp/go.zip /tmp/go-unzip

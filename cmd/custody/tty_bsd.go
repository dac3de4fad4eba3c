//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// ioctlReadTermios is the request that reads a terminal's attributes.
const ioctlReadTermios = unix.TIOCGETA

package main

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// planOpenFlags open a plan file for reading without blocking: a named
// pipe with no writer does not wait for one. mustBeRegular then refuses
// anything but a regular file, so a FIFO, a device such as /dev/zero or a
// directory is never read.
const planOpenFlags = os.O_RDONLY | syscall.O_NONBLOCK

// mustBeRegular returns an *fs.PathError naming f's type unless f is a
// regular file.
func mustBeRegular(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: f.Name(), Err: fmt.Errorf("not a regular file, it is %s", planFileKind(fi.Mode()))}
	}
	return nil
}

// planFileKind names a file type that is not a plan.
func planFileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return fmt.Sprintf("a special file (mode %v)", m.Type())
}

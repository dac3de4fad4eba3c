package main

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openPlanFile opens a plan file for reading without ever blocking: it is
// opened with O_NONBLOCK (a named pipe with no writer does not wait for
// one) and refused unless it is a regular file, so a FIFO, a device such as
// /dev/zero or a directory is never read.
func openPlanFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file, it is %s", planFileKind(fi.Mode()))}
	}
	return f, nil
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

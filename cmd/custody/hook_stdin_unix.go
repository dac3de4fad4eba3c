//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// readWithin reads f to its end, at most limit bytes, for at most d, and
// answers as readAllWithin does: the same bytes, the same error, closed
// false when the time ran out first. It reads on the calling goroutine,
// waiting for each read with poll(2) and the time left, so a hook starts
// no goroutine and no thread to read the few hundred bytes of its payload
// (a thread handed the read, and handing back, costs more than the read).
// A file it cannot poll (closed, or poll itself fails) is read by
// readAllWithin.
func readWithin(f *os.File, limit int, d time.Duration) (b []byte, closed bool, err error) {
	deadline := time.Now().Add(d)
	conn, err := f.SyscallConn()
	if err != nil {
		return readAllWithin(f, nil, limit, d)
	}
	var fd int32 = -1
	if conn.Control(func(u uintptr) { fd = int32(u) }) != nil || fd < 0 {
		return readAllWithin(f, nil, limit, d)
	}
	b = make([]byte, 0, 512)
	for len(b) < limit {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, false, nil
		}
		fds := []unix.PollFd{{Fd: fd, Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int((left+time.Millisecond-1)/time.Millisecond))
		if errors.Is(err, unix.EINTR) || err == nil && n == 0 {
			continue // the loop checks the time left
		}
		if err != nil {
			return readAllWithin(f, b, limit, time.Until(deadline))
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append grow the buffer, as io.ReadAll does
		}
		m, rerr := f.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+m]
		if rerr == io.EOF {
			return b, true, nil
		}
		if rerr != nil {
			return b, true, rerr
		}
	}
	return b, true, nil
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// readResult is what a read of a hook's stdin answered.
type readResult struct {
	b      []byte
	closed bool
	err    error
}

func (r readResult) String() string {
	return fmt.Sprintf("%d bytes %q…, closed %v, err %v", len(r.b), r.b[:min(len(r.b), 16)], r.closed, r.err)
}

// same reports whether two reads answered alike: the same bytes (when the
// input was closed), the same closed flag, the same error text.
func (r readResult) same(o readResult) bool {
	if r.closed != o.closed || fmt.Sprint(r.err) != fmt.Sprint(o.err) || errors.Is(r.err, os.ErrClosed) != errors.Is(o.err, os.ErrClosed) {
		return false
	}
	return !r.closed || bytes.Equal(r.b, o.b)
}

// feed is one way the payload reaches the hook: it returns the file the
// hook reads and what to call once the read is over.
type feed struct {
	name string
	open func(t *testing.T) (*os.File, func())
	// stalls is set when the input never ends: only then does a read
	// wait out its time (a short one), so a busy machine that delays the
	// writer cannot make one read time out and the other not.
	stalls bool
}

// pipeFeed writes chunks into a pipe, pausing between them, and closes it
// unless keepOpen (an agent that never closes stdin).
func pipeFeed(name string, chunks [][]byte, pause time.Duration, keepOpen bool) feed {
	return feed{name: name, stalls: keepOpen, open: func(t *testing.T) (*os.File, func()) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		// The first chunk (all of a feed that stalls) is in the pipe before
		// the read starts; a pipe holds far more than the largest chunk.
		if len(chunks) > 0 {
			if _, err := w.Write(chunks[0]); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, c := range chunks[min(1, len(chunks)):] {
				time.Sleep(pause)
				if _, err := w.Write(c); err != nil {
					return // the reader is gone
				}
			}
			if !keepOpen {
				w.Close()
			}
		}()
		return r, func() {
			w.Close() // ends a read left running by a timeout
			<-done
			r.Close()
		}
	}}
}

// fileFeed gives the hook a regular file holding b.
func fileFeed(name string, b []byte) feed {
	return feed{name: name, open: func(t *testing.T) (*os.File, func()) {
		p := filepath.Join(t.TempDir(), "payload")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		return f, func() { f.Close() }
	}}
}

// TestReadWithinAgreesWithReadAll holds readWithin (poll on the calling
// goroutine) to readAllWithin (io.ReadAll on a goroutine, the way a hook
// read its payload before) on every shape of stdin a hook meets: the same
// bytes, the same closed flag, the same error.
func TestReadWithinAgreesWithReadAll(t *testing.T) {
	t.Parallel()
	const limit = 1000
	odd := []byte("{\"cwd\":\"/tmp/caf\xe9\x00\xff\\u0000\n\t\"}")
	sized := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	dir := t.TempDir() // one directory for both reads: its path is in the error
	feeds := []feed{
		pipeFeed("empty pipe", nil, 0, false),
		pipeFeed("odd bytes", [][]byte{odd}, 0, false),
		pipeFeed("in chunks", [][]byte{odd[:5], odd[5:9], odd[9:]}, 5*time.Millisecond, false),
		pipeFeed("one byte at a time", bytes.SplitAfter(odd, nil), time.Millisecond, false),
		pipeFeed("never closed", [][]byte{odd}, 0, true),
		pipeFeed("nothing, never closed", nil, 0, true),
		fileFeed("regular file", odd),
		fileFeed("empty file", nil),
		{name: "closed file", open: func(t *testing.T) (*os.File, func()) {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			return f, func() {}
		}},
		{name: "/dev/null", open: func(t *testing.T) (*os.File, func()) {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			return f, func() { f.Close() }
		}},
		{name: "a directory", open: func(t *testing.T) (*os.File, func()) {
			f, err := os.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			return f, func() { f.Close() }
		}},
	}
	for _, n := range []int{1, 511, 512, 513, limit - 1, limit, limit + 1, 3 * limit} {
		feeds = append(feeds,
			pipeFeed(fmt.Sprintf("%d bytes in a pipe", n), [][]byte{sized(n)}, 0, false),
			pipeFeed(fmt.Sprintf("%d bytes in a pipe, never closed", n), [][]byte{sized(n)}, 0, true),
			pipeFeed(fmt.Sprintf("%d bytes in two writes", n), [][]byte{sized(n / 2), sized(n - n/2)}, 2*time.Millisecond, false),
			fileFeed(fmt.Sprintf("%d bytes in a file", n), sized(n)))
	}
	read := func(t *testing.T, fd feed, how func(*os.File) readResult) readResult {
		f, done := fd.open(t)
		defer done()
		return how(f)
	}
	for _, fd := range feeds {
		t.Run(fd.name, func(t *testing.T) {
			t.Parallel()
			wait := time.Minute // ends as soon as the input does
			if fd.stalls {
				wait = 150 * time.Millisecond
			}
			fast := read(t, fd, func(f *os.File) readResult {
				b, closed, err := readWithin(f, limit, wait)
				return readResult{b, closed, err}
			})
			slow := read(t, fd, func(f *os.File) readResult {
				b, closed, err := readAllWithin(f, nil, limit, wait)
				return readResult{b, closed, err}
			})
			if !fast.same(slow) {
				t.Errorf("readWithin: %v\nreadAllWithin: %v", fast, slow)
			}
		})
	}
}

// TestReadWithinWaitsOnlyItsTime: an agent that never closes stdin holds
// the read for the time given and no longer.
func TestReadWithinWaitsOnlyItsTime(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	start := time.Now()
	_, closed, err := readWithin(r, 100, 100*time.Millisecond)
	if took := time.Since(start); closed || err != nil || took < 100*time.Millisecond || took > 5*time.Second {
		t.Fatalf("a pipe never closed: closed %v, err %v after %s; want not closed after 100ms", closed, err, took)
	}
}

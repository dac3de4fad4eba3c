// Package safefile reads and writes the small files custody keeps beside a
// repository (custody.toml, the state file's holder note, markers) without
// following a symlink at the final component, without blocking on a FIFO
// or device, and with a bound on what it reads. Errors say what the path is
// (a symlink, a FIFO, too large); they never carry the file's content.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is returned when a path is a symlink, a directory, a FIFO,
// a device or a socket where custody reads or writes only a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned when a file holds more bytes than its reader's
// limit: nothing of it is used.
var ErrTooLarge = errors.New("file too large")

// Kind names what lstat says path is: "a symlink", "a directory", "a FIFO",
// "a device", "a socket", "a regular file", or "" when it cannot be
// lstat'ed.
func Kind(fi fs.FileInfo) string {
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// notRegular is ErrNotRegular naming path and what it is.
func notRegular(path string, fi fs.FileInfo) error {
	return fmt.Errorf("%s is %s: %w", path, Kind(fi), ErrNotRegular)
}

// Read returns the content of the regular file at path, at most limit
// bytes. A symlink at path, or anything that is not a regular file, is
// ErrNotRegular (a FIFO is never opened for a blocking read); a longer
// file is ErrTooLarge. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist).
func Read(path string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink: %w", path, ErrNotRegular)
		}
		return nil, err
	}
	defer f.Close()
	// The path may have been swapped between lstat and open: judge what
	// was opened.
	return readOpened(f, path, limit)
}

// ReadFollowing is Read for a file a person may keep behind a symlink on
// purpose (info/exclude): a symlink at path is followed, but what it leads
// to must be a regular file of at most limit bytes. A FIFO or device
// behind it is ErrNotRegular and is never opened for a blocking read.
func ReadFollowing(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(f, path, limit)
}

// readOpened reads at most limit bytes of the opened f, refusing what is
// not a regular file and what is longer.
func readOpened(f *os.File, path string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	// A buffer the size fstat gives (and room to see the end), not
	// io.ReadAll's doubling: custody reads index files of megabytes.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(fi.Size(), 0), limit)+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, limit+1))
	b := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s holds more than %d bytes: %w", path, limit, ErrTooLarge)
	}
	return b, nil
}

// Write replaces the content of the regular file at path (made with perm
// when missing) with b. It never writes through a symlink at path and
// never opens a FIFO or device there: those are ErrNotRegular and the path
// is left as it is. It is not durable (no fsync): for notes, not records.
func Write(path string, b []byte, perm fs.FileMode) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return notRegular(path, fi)
	}
	f, err := Open(path, os.O_WRONLY|os.O_CREATE, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("%s is a symlink: %w", path, ErrNotRegular)
		}
		return err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi)
	}
	// Written over, then cut to length: truncating to zero first frees
	// the file's block only for the write to take one again, which costs
	// a filesystem journal round each time (the holder note is written on
	// every write transaction).
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

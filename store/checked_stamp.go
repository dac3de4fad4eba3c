package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/custody-sh/custody/observe/safefile"
)

// A walk's result outlives the process that walked: beside the state file,
// the stamp (<state file>.checked) says what the last successful walk
// found sound, and the first open of the next command trusts it as it
// would trust its own earlier walk (checked.trusts: the same device,
// inode, size, both times and meta transaction id, a change time well
// before the walk began). Every custody command opens the state file at
// least once, and an agent runs a hook on every prompt and tool call:
// without the stamp each of them walks the whole file, which grows with
// every record and journal entry ever made. doctor walks whatever the
// stamp says.
//
// The stamp is a cache, never state: a missing, unreadable, damaged,
// oversized or foreign stamp, or one that is not a regular file, is no
// stamp, and the file is walked. Its last field is a digest of the rest,
// so two commands writing it at once (each in place, neither through a
// symlink) cannot leave a mix that reads as a stamp. Anyone who can write
// the stamp can write the state file itself, which the walk was to catch
// damage to, not to keep such a writer out; and no one can set a change
// time back, so a stamp names a file only until it is next written.

// stampVersion opens every stamp.
const stampVersion = "custody-checked/2"

// maxStamp bounds what is read of a stamp.
const maxStamp = 512

// stampPath is the stamp of the state file at path.
func stampPath(path string) string { return path + ".checked" }

// formatStamp is the stamp's one line for c.
func formatStamp(c *checked) string {
	free := 0
	if c.freelist {
		free = 1
	}
	own, quiet := 0, 0
	if c.committed {
		own = 1
	}
	if c.quiet {
		quiet = 1
	}
	body := fmt.Sprintf("%s %d %d %d %d %d %d %d %d %d %d", stampVersion, c.id.dev, c.id.ino, c.id.size, c.id.mtime, c.id.ctime,
		c.txid, free, c.walkedAt.UnixNano(), own, quiet)
	sum := sha256.Sum256([]byte(body))
	return body + " " + hex.EncodeToString(sum[:8]) + "\n"
}

// parseStamp reads a stamp's line; nil for anything but exactly what
// formatStamp writes.
func parseStamp(b []byte) *checked {
	line, ok := strings.CutSuffix(string(b), "\n")
	if !ok || strings.ContainsAny(line, "\n\r") {
		return nil
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return nil
	}
	body, digest := line[:i], line[i+1:]
	sum := sha256.Sum256([]byte(body))
	if digest != hex.EncodeToString(sum[:8]) {
		return nil
	}
	f := strings.Split(body, " ")
	if len(f) != 11 || f[0] != stampVersion || (f[9] != "0" && f[9] != "1") || (f[10] != "0" && f[10] != "1") {
		return nil
	}
	var u [3]uint64
	for k := range u {
		v, err := strconv.ParseUint(f[1+k], 10, 64)
		if err != nil {
			return nil
		}
		u[k] = v
	}
	var n [2]int64
	for k := range n {
		v, err := strconv.ParseInt(f[4+k], 10, 64)
		if err != nil {
			return nil
		}
		n[k] = v
	}
	txid, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil || (f[7] != "0" && f[7] != "1") {
		return nil
	}
	at, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil {
		return nil
	}
	return &checked{id: fileID{dev: u[0], ino: u[1], size: u[2], mtime: n[0], ctime: n[1]}, txid: txid, freelist: f[7] == "1",
		walkedAt: time.Unix(0, at), committed: f[9] == "1", quiet: f[10] == "1"}
}

// readStamp is the stamp beside the state file at path; nil when there is
// none that reads as one.
func readStamp(path string) *checked {
	b, err := safefile.Read(stampPath(path), maxStamp)
	if err != nil {
		return nil
	}
	return parseStamp(b)
}

// writeStamp writes c as the stamp beside the state file at path, never
// through a symlink or into anything but a regular file; a stamp that
// cannot be written (a read-only file system, another user's file) is
// simply not written.
func writeStamp(path string, c *checked) {
	_ = safefile.Write(stampPath(path), []byte(formatStamp(c)), 0o644)
}

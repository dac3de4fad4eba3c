package store

import (
	"testing"
	"time"
)

// TestCheckedTrusts: a walk's result stands for the file only when the
// file is exactly as walked (device, inode, size, both times, the meta's
// transaction id), its change time lies well before the walk (a write in
// the walk's clock tick could leave the same times: git's racily clean
// rule), and, for an open that writes, the freelist was checked too.
func TestCheckedTrusts(t *testing.T) {
	walked := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	old := walked.Add(-time.Hour).UnixNano()
	id := fileID{dev: 1, ino: 2, size: 4096, mtime: old, ctime: old}
	c := &checked{id: id, txid: 7, freelist: true, walkedAt: walked}
	reader := &checked{id: id, txid: 7, walkedAt: walked}
	with := func(f func(*fileID)) fileID { v := id; f(&v); return v }
	for _, tc := range []struct {
		name     string
		c        *checked
		id       fileID
		txid     uint64
		readOnly bool
		want     bool
	}{
		{"unchanged", c, id, 7, false, true},
		{"unchanged, read-only", c, id, 7, true, true},
		{"nothing known", nil, id, 7, true, false},
		{"another transaction", c, id, 8, true, false},
		{"another size", c, with(func(v *fileID) { v.size += 4096 }), 7, true, false},
		{"another inode (replaced)", c, with(func(v *fileID) { v.ino++ }), 7, true, false},
		{"another device", c, with(func(v *fileID) { v.dev++ }), 7, true, false},
		{"changed (ctime)", c, with(func(v *fileID) { v.ctime++ }), 7, true, false},
		{"modified (mtime)", c, with(func(v *fileID) { v.mtime++ }), 7, true, false},
		{"walked read-only, opened to write", reader, id, 7, false, false},
		{"walked read-only, opened to read", reader, id, 7, true, true},
		{"changed just before the walk", &checked{id: with(func(v *fileID) { v.ctime = walked.Add(-racyWindow).UnixNano() }), txid: 7, walkedAt: walked},
			with(func(v *fileID) { v.ctime = walked.Add(-racyWindow).UnixNano() }), 7, true, false},
		{"changed in the walk's tick", &checked{id: with(func(v *fileID) { v.ctime = walked.UnixNano() }), txid: 7, walkedAt: walked},
			with(func(v *fileID) { v.ctime = walked.UnixNano() }), 7, true, false},
		{"changed after the walk began (clock stepped)", &checked{id: with(func(v *fileID) { v.ctime = walked.Add(time.Second).UnixNano() }), txid: 7, walkedAt: walked},
			with(func(v *fileID) { v.ctime = walked.Add(time.Second).UnixNano() }), 7, true, false},
	} {
		if got := tc.c.trusts(tc.id, tc.txid, tc.readOnly); got != tc.want {
			t.Errorf("%s: trusts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package machine_test

import (
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// FuzzAccountContent checks AccountContent's contract on arbitrary
// listings: it never panics, it reports only paths found on disk (a
// directory with "/" appended), never one in skip, and a disk listing that
// is exactly HEAD's files is fully accounted for.
func FuzzAccountContent(f *testing.F) {
	f.Add("a\x00b/c\x00d", "a\x00b/c", "d", byte(3))
	f.Add("x/y/z\x00x", "x/y/z", "", byte(0))
	f.Fuzz(func(t *testing.T, disk, head, skip string, kinds byte) {
		var ds []machine.DiskEntry
		kindOf := []machine.EntryKind{machine.EntryFile, machine.EntrySymlink, machine.EntryDir, machine.EntryOther}
		onDisk := map[string]bool{}
		for i, p := range strings.Split(disk, "\x00") {
			k := kindOf[(int(kinds)>>(2*(i%4)))&3]
			ds = append(ds, machine.DiskEntry{Path: p, Kind: k, OID: "1", Exec: i%2 == 1})
			onDisk[p] = true
		}
		var ts []machine.TrackedEntry
		for _, p := range strings.Split(head, "\x00") {
			ts = append(ts, machine.TrackedEntry{Path: p, Mode: "100644", OID: "1"})
		}
		skips := strings.Split(skip, "\x00")
		for _, u := range machine.AccountContent(ds, ts, skips) {
			p := strings.TrimSuffix(u.Path, "/")
			if !onDisk[p] && !onDisk[u.Path] {
				t.Fatalf("reported %q, which is not on disk", u.Path)
			}
			for _, s := range skips {
				if s == u.Path {
					t.Fatalf("reported %q, which is in skip", u.Path)
				}
			}
		}
		var same []machine.DiskEntry
		for _, tr := range ts {
			same = append(same, machine.DiskEntry{Path: tr.Path, Kind: machine.EntryFile, OID: tr.OID})
		}
		if us := machine.AccountContent(same, ts, nil); len(us) != 0 {
			t.Fatalf("HEAD's own files are unaccounted: %+v", us)
		}
	})
}

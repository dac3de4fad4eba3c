package gitfiles

import (
	"errors"
	"testing"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/google/go-cmp/cmp"
)

// TestParseLsTree: every mode ls-tree -r lists, paths with any byte but
// NUL; anything else is ErrMalformed.
func TestParseLsTree(t *testing.T) {
	t.Parallel()
	in := "100644 blob " + oidA + "\tREADME\x00" +
		"100755 blob " + oidA + "\tbin/run me\x00" +
		"120000 blob " + oidA + "\tlink\twith tab\x00" +
		"160000 commit " + oidA + "\tsub\x00"
	got, err := ParseLsTree([]byte(in))
	want := []TreeEntry{{"100644", oidA, "README"}, {"100755", oidA, "bin/run me"}, {"120000", oidA, "link\twith tab"}, {"160000", oidA, "sub"}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("ParseLsTree = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{
		"100644 blob " + oidA + "\tREADME",  // no NUL
		"040000 tree " + oidA + "\tdir\x00", // not under -r
		"100644 commit " + oidA + "\tx\x00", // type does not fit
		"100644 blob XYZ\tx\x00",            // not an id
		"100644 blob " + oidA + "\t\x00",    // empty path
		"100644  blob " + oidA + "\tx\x00",  // two spaces
		"100644 blob " + oidA + "x\x00",     // no tab
		"\x00",
	} {
		if _, err := ParseLsTree([]byte(bad)); !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("ParseLsTree(%q) = %v; want ErrMalformed", bad, err)
		}
	}
}

// FuzzParseLsTree: never panics; what it accepts has a known mode, a full
// id and a path, and serialises back to the input.
func FuzzParseLsTree(f *testing.F) {
	f.Add([]byte("100644 blob " + oidA + "\tREADME\x00"))
	f.Add([]byte("160000 commit " + oidB + "\ts\x00120000 blob " + oidA + "\tl\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ents, err := ParseLsTree(b)
		if err != nil {
			return
		}
		var back []byte
		for _, e := range ents {
			if lsTreeTypes[e.Mode] == "" || !hostio.IsHexOID(e.OID) || e.Path == "" {
				t.Fatalf("ParseLsTree(%q) accepted %+v", b, e)
			}
			back = append(back, e.Mode+" "+lsTreeTypes[e.Mode]+" "+e.OID+"\t"+e.Path+"\x00"...)
		}
		if string(back) != string(b) {
			t.Fatalf("ParseLsTree(%q) = %+v, which does not give back the input", b, ents)
		}
	})
}

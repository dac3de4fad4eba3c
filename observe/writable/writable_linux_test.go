package writable

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnescapeMount: mountinfo's octal escapes come back as the bytes they
// stand for; anything else is left as it is.
func TestUnescapeMount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`/plain`:            "/plain",
		`/with\040space`:    "/with space",
		`/tab\011and\012nl`: "/tab\tand\nnl",
		`/back\134slash`:    `/back\slash`,
		`/short\04`:         `/short\04`,
		`/not\09octal`:      `/not\09octal`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMountOf: the mount holding a directory is one of its ancestors (or
// itself), as the mount table lists it.
func TestMountOf(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/mountinfo"); err != nil {
		t.Skipf("no mount table to read here: %v", err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := mountOf(dir)
	if m == "" || !within(dir, m) {
		t.Errorf("mountOf(%s) = %q, want an ancestor of it", dir, m)
	}
	if !within("/a/b", "/") || !within("/a", "/a") || within("/ab", "/a") {
		t.Errorf("within is wrong about prefixes")
	}
}

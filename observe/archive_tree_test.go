package observe_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// TestImageNestedRoundTrip: an image is deterministic (the same tree
// images to the same bytes, so its digest is a fingerprint), and reads
// back as the same tree, links and modes included.
func TestImageNestedRoundTrip(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sub := filepath.Join(root, "vendor", "lib")
	for p, data := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", "a.txt": "a\n", "bin/run": "#!/bin/sh\n", "empty": ""} {
		full := filepath.Join(sub, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, mode := range map[string]os.FileMode{"bin/run": 0o755, "bin": 0o755, ".git": 0o755 | os.ModeSetgid} {
		if err := os.Chmod(filepath.Join(sub, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../nowhere", filepath.Join(sub, "dangling")); err != nil {
		t.Fatal(err)
	}
	var one, two bytes.Buffer
	d1, err := observe.ImageNested(root, "vendor/lib", &one)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := observe.ImageNested(root, "vendor/lib", &two)
	if err != nil || d1 != d2 || !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Fatalf("two images of one tree differ: %s %s %v", d1, d2, err)
	}
	if d, err := observe.NestedDigest(root, "vendor/lib"); err != nil || d != d1 {
		t.Errorf("NestedDigest = %s, %v; want %s", d, err, d1)
	}
	got := map[string]string{}
	err = observe.ReadImage(bytes.NewReader(one.Bytes()), func(e machine.ImageEntry, link string, content io.Reader) error {
		b, err := io.ReadAll(content)
		if e.Kind == "symlink" {
			e.Mode = 0 // a link's own bits are the system's
		}
		got[e.Name] = fmt.Sprintf("%s %04o %q %q", e.Kind, e.Mode, link, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		".git":      `dir 2755 "" ""`,
		".git/HEAD": `file 0644 "" "ref: refs/heads/main\n"`,
		"a.txt":     `file 0644 "" "a\n"`,
		"bin":       `dir 0755 "" ""`,
		"bin/run":   `file 0755 "" "#!/bin/sh\n"`,
		"dangling":  `symlink 0000 "../nowhere" ""`,
		"empty":     `file 0644 "" ""`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadImage (-want +got):\n%s", diff)
	}
}

// TestScanTree: files hashed raw with git's modes, links by target, the
// root's .git skipped, a nested repository listed and not entered, empty
// directories listed, special files reported.
func TestScanTree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(p, data string, mode os.FileMode) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(".git", "gitdir: /elsewhere\n", 0o644)
	write("a.txt", "a\r\n", 0o644)
	write("run", "x", 0o755)
	write("nested/.git/HEAD", "ref: x\n", 0o644)
	write("nested/inside", "not scanned", 0o644)
	if err := os.MkdirAll(filepath.Join(root, "empty", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	s, err := observe.ScanTree(root, gitfiles.FormatSHA1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.Files {
		got = append(got, f.Mode+" "+f.Path+" "+f.OID)
	}
	want := []string{
		"100644 a.txt " + gitfiles.BlobID(gitfiles.FormatSHA1, []byte("a\r\n")),
		"120000 link " + gitfiles.BlobID(gitfiles.FormatSHA1, []byte("a.txt")),
		"100755 run " + gitfiles.BlobID(gitfiles.FormatSHA1, []byte("x")),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(s.Nested, ",") != "nested" || strings.Join(s.EmptyDirs, ",") != "empty/deeper" {
		t.Errorf("nested %v, empty dirs %v", s.Nested, s.EmptyDirs)
	}
	if len(s.Unsupported) != 0 {
		t.Errorf("unsupported %v", s.Unsupported)
	}
}

package observe_test

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/observe"
)

// TestImageNestedRoundTrip: an image is deterministic (the same tree
// images to the same bytes, so its digest is a fingerprint), and extracts
// to the same tree, links and modes included.
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
	if err := os.Chmod(filepath.Join(sub, "bin", "run"), 0o755); err != nil {
		t.Fatal(err)
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
	dst := filepath.Join(t.TempDir(), "out")
	if err := observe.ExtractImage(bytes.NewReader(one.Bytes()), dst); err != nil {
		t.Fatal(err)
	}
	if d, err := observe.ImageNested(filepath.Dir(dst), "out", &bytes.Buffer{}); err != nil || d != d1 {
		t.Errorf("the extracted tree images to %s, %v; want %s", d, err, d1)
	}
	if target, err := os.Readlink(filepath.Join(dst, "dangling")); err != nil || target != "../nowhere" {
		t.Errorf("dangling link = %q, %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "bin", "run")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/run = %v, %v; want mode 0755", fi, err)
	}
}

// TestExtractImageStaysInside: an image whose entry names a path outside
// the directory is refused before anything is written there.
func TestExtractImageStaysInside(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"../escape", "/etc/passwd", "a/../../b"} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte("x"))
		tw.Close()
		parent := t.TempDir()
		err := observe.ExtractImage(&b, filepath.Join(parent, "dst"))
		if err == nil || !strings.Contains(err.Error(), "leaves") {
			t.Errorf("entry %q: %v, want a refusal", name, err)
		}
		if _, err := os.Lstat(filepath.Join(parent, "escape")); err == nil {
			t.Errorf("entry %q wrote outside", name)
		}
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
	s, err := observe.ScanTree(root, observe.FormatSHA1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.Files {
		got = append(got, f.Mode+" "+f.Path+" "+f.OID)
	}
	want := []string{
		"100644 a.txt " + observe.BlobID(observe.FormatSHA1, []byte("a\r\n")),
		"120000 link " + observe.BlobID(observe.FormatSHA1, []byte("a.txt")),
		"100755 run " + observe.BlobID(observe.FormatSHA1, []byte("x")),
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

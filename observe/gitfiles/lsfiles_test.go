package gitfiles_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// Object ids captured from git 2.39.
const (
	lsOID1   = "df967b96a579e45a18b8251732d16804b2e56a55"
	lsOID2   = "28ce6a8b26aa170e1de65536fe8abe1832bd3242"
	lsOID3   = "13e7564ea0c889e81bcba6f8e496b2a74cdb32fa"
	lsOID256 = "14f5162e2fe3d240d0d37aaab0f90e4af9a7cfa79639f3bab005b5bfb4174d9f"
)

// lsRecords joins records as `git ls-files -z` prints them, each
// NUL-terminated.
func lsRecords(recs ...string) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		b.WriteString(r)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// formatLsFiles prints entries as `git ls-files -v -s -z` does.
func formatLsFiles(ents []gitfiles.IndexEntry) []byte {
	var b bytes.Buffer
	for _, e := range ents {
		fmt.Fprintf(&b, "%c %s %s %d\t%s\x00", e.Tag, e.Mode, e.OID, e.Stage, e.Path)
	}
	return b.Bytes()
}

func TestParseLsFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want []gitfiles.IndexEntry
	}{
		{name: "empty", in: nil, want: nil},
		{
			// Captured from git 2.39: a conflict, a path with a newline, a
			// skip-worktree and an assume-unchanged entry, non-ASCII.
			name: "captured",
			in: lsRecords(
				"M 100644 "+lsOID1+" 1\tc.txt",
				"M 100644 "+lsOID2+" 2\tc.txt",
				"M 100644 "+lsOID3+" 3\tc.txt",
				"H 100644 c1b0730e0133447badcfd47fd144e254807b06e1 0\tnew\nline",
				"S 100644 b4785957bc986dc39c629de9fac9df46972c00fc 0\tskip",
				"h 100644 78981922613b2afb6025042ff6bd878ac1994e85 0\tsp ace.txt",
				"H 100644 4ae8ef021bf6fcfff43a13be5abfa52bb6fb5dbc 0\tünï"),
			want: []gitfiles.IndexEntry{
				{Tag: 'M', Mode: "100644", OID: lsOID1, Stage: 1, Path: "c.txt"},
				{Tag: 'M', Mode: "100644", OID: lsOID2, Stage: 2, Path: "c.txt"},
				{Tag: 'M', Mode: "100644", OID: lsOID3, Stage: 3, Path: "c.txt"},
				{Tag: 'H', Mode: "100644", OID: "c1b0730e0133447badcfd47fd144e254807b06e1", Path: "new\nline"},
				{Tag: 'S', Mode: "100644", OID: "b4785957bc986dc39c629de9fac9df46972c00fc", Path: "skip"},
				{Tag: 'h', Mode: "100644", OID: "78981922613b2afb6025042ff6bd878ac1994e85", Path: "sp ace.txt"},
				{Tag: 'H', Mode: "100644", OID: "4ae8ef021bf6fcfff43a13be5abfa52bb6fb5dbc", Path: "ünï"},
			},
		},
		{
			name: "gitlink, symlink, executable, both bits",
			in: lsRecords(
				"H 160000 "+lsOID1+" 0\tsub",
				"H 120000 "+lsOID2+" 0\tlink",
				"H 100755 "+lsOID3+" 0\trun.sh",
				"s 100644 "+lsOID1+" 0\tboth"),
			want: []gitfiles.IndexEntry{
				{Tag: 'H', Mode: "160000", OID: lsOID1, Path: "sub"},
				{Tag: 'H', Mode: "120000", OID: lsOID2, Path: "link"},
				{Tag: 'H', Mode: "100755", OID: lsOID3, Path: "run.sh"},
				{Tag: 's', Mode: "100644", OID: lsOID1, Path: "both"},
			},
		},
		{
			// Only the first tab ends the fixed fields.
			name: "path with tabs, spaces and a leading space",
			in:   lsRecords("H 100644 " + lsOID1 + " 0\t a\tb  c \t"),
			want: []gitfiles.IndexEntry{{Tag: 'H', Mode: "100644", OID: lsOID1, Path: " a\tb  c \t"}},
		},
		{
			name: "sha256",
			in:   lsRecords("H 100644 " + lsOID256 + " 0\tx"),
			want: []gitfiles.IndexEntry{{Tag: 'H', Mode: "100644", OID: lsOID256, Path: "x"}},
		},
		{
			name: "other tags git prints",
			in:   lsRecords("C 100644 "+lsOID1+" 0\tc", "R 100644 "+lsOID1+" 0\tr", "K 100644 "+lsOID1+" 0\tk"),
			want: []gitfiles.IndexEntry{
				{Tag: 'C', Mode: "100644", OID: lsOID1, Path: "c"},
				{Tag: 'R', Mode: "100644", OID: lsOID1, Path: "r"},
				{Tag: 'K', Mode: "100644", OID: lsOID1, Path: "k"},
			},
		},
	}
	for _, tc := range tests {
		got, err := gitfiles.ParseLsFiles(tc.in)
		if err != nil {
			t.Errorf("%s: ParseLsFiles: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestIndexEntryFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tag, mode        string
		assume, skip, gl bool
	}{
		{"H", "100644", false, false, false},
		{"h", "100644", true, false, false},
		{"S", "100644", false, true, false},
		{"s", "100644", true, true, false},
		{"M", "100644", false, false, false},
		{"H", "160000", false, false, true},
		{"h", "160000", true, false, true},
	}
	for _, tc := range tests {
		e := gitfiles.IndexEntry{Tag: tc.tag[0], Mode: tc.mode}
		if e.AssumeUnchanged() != tc.assume || e.SkipWorktree() != tc.skip || e.Gitlink() != tc.gl {
			t.Errorf("%s %s: AssumeUnchanged=%v SkipWorktree=%v Gitlink=%v, want %v %v %v", tc.tag, tc.mode,
				e.AssumeUnchanged(), e.SkipWorktree(), e.Gitlink(), tc.assume, tc.skip, tc.gl)
		}
	}
}

func TestParseLsFilesMalformed(t *testing.T) {
	t.Parallel()
	good := "H 100644 " + lsOID1 + " 0\tpath"
	tests := []struct {
		name string
		in   string
	}{
		{"not NUL-terminated", good},
		{"second record truncated", good + "\x00" + good},
		{"empty record", "\x00"},
		{"no tab", "H 100644 " + lsOID1 + " 0 path\x00"},
		{"empty path", "H 100644 " + lsOID1 + " 0\t\x00"},
		{"no stage", "H 100644 " + lsOID1 + "\tpath\x00"},
		{"no tag (ls-files -s without -v)", "100644 " + lsOID1 + " 0\tpath\x00"},
		{"extra field", "H 100644 " + lsOID1 + " 0 0\tpath\x00"},
		{"double space", "H  100644 " + lsOID1 + " 0\tpath\x00"},
		{"leading space", " H 100644 " + lsOID1 + " 0\tpath\x00"},
		{"two-letter tag", "HH 100644 " + lsOID1 + " 0\tpath\x00"},
		{"digit tag", "1 100644 " + lsOID1 + " 0\tpath\x00"},
		{"empty tag", " 100644 " + lsOID1 + " 0\tpath\x00"},
		{"short mode", "H 10064 " + lsOID1 + " 0\tpath\x00"},
		{"long mode", "H 1006444 " + lsOID1 + " 0\tpath\x00"},
		{"mode not octal", "H 100648 " + lsOID1 + " 0\tpath\x00"},
		{"mode not digits", "H 10064x " + lsOID1 + " 0\tpath\x00"},
		{"short oid", "H 100644 " + lsOID1[:39] + " 0\tpath\x00"},
		{"upper-case oid", "H 100644 " + strings.ToUpper(lsOID1) + " 0\tpath\x00"},
		{"oid not hex", "H 100644 " + strings.Repeat("g", 40) + " 0\tpath\x00"},
		{"stage 4", "H 100644 " + lsOID1 + " 4\tpath\x00"},
		{"stage negative", "H 100644 " + lsOID1 + " -1\tpath\x00"},
		{"stage not a number", "H 100644 " + lsOID1 + " x\tpath\x00"},
		{"stage empty", "H 100644 " + lsOID1 + " \tpath\x00"},
		{"good then bad", good + "\x00garbage\x00"},
	}
	for _, tc := range tests {
		got, err := gitfiles.ParseLsFiles([]byte(tc.in))
		if !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", tc.name, err)
		}
		if got != nil {
			t.Errorf("%s: entries = %+v, want none with an error", tc.name, got)
		}
	}
}

// lsFilesRepo builds a repository whose index has every kind of entry: a
// conflict (stages 1-3), a gitlink, a symlink, an executable, the index bits,
// awkward paths. It returns its directory.
func lsFilesRepo(s *gitsandbox.Sandbox, objectFormat string) string {
	dir := filepath.Join(s.Root, "ls-"+objectFormat)
	s.Git(s.Root, "init", "-q", "-b", "main", "--object-format="+objectFormat, dir)
	s.Write(dir, "c.txt", "base\n")
	for _, p := range []string{"sp ace.txt", "new\nline", "ünï/ß.txt", "tab\there", "skip", "both", "assume"} {
		s.Write(dir, p, p+"\n")
	}
	s.Write(dir, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		s.T.Fatal(err)
	}
	if err := os.Symlink("c.txt", filepath.Join(dir, "link")); err != nil {
		s.T.Fatal(err)
	}
	s.CommitAll(dir, "base")
	// A gitlink (a submodule commit), not checked out: an empty directory.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		s.T.Fatal(err)
	}
	s.Git(dir, "update-index", "--add", "--cacheinfo", "160000,"+s.Rev(dir, "HEAD")+",sub")
	s.Git(dir, "commit", "-q", "-m", "gitlink")
	s.Git(dir, "checkout", "-q", "-b", "other")
	s.CommitFile(dir, "c.txt", "other\n")
	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "c.txt", "main\n")
	s.GitFails(dir, "merge", "other")
	s.Git(dir, "update-index", "--assume-unchanged", "assume", "sp ace.txt")
	s.Git(dir, "update-index", "--skip-worktree", "skip", "both")
	s.Git(dir, "update-index", "--assume-unchanged", "both")
	return dir
}

func TestParseLsFilesRealGit(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			s := gitsandbox.NewSandbox(t)
			dir := lsFilesRepo(s, format)
			obj := func(spec string) string { return s.Rev(dir, spec) }
			entry := func(tag byte, mode, path string, stage int) gitfiles.IndexEntry {
				return gitfiles.IndexEntry{Tag: tag, Mode: mode, OID: obj(fmt.Sprintf(":%d:%s", stage, path)), Stage: stage, Path: path}
			}
			want := []gitfiles.IndexEntry{
				entry('h', "100644", "assume", 0),
				entry('s', "100644", "both", 0),
				entry('M', "100644", "c.txt", 1),
				entry('M', "100644", "c.txt", 2),
				entry('M', "100644", "c.txt", 3),
				entry('H', "120000", "link", 0),
				entry('H', "100644", "new\nline", 0),
				entry('H', "100755", "run.sh", 0),
				entry('S', "100644", "skip", 0),
				entry('h', "100644", "sp ace.txt", 0),
				{Tag: 'H', Mode: "160000", OID: obj("HEAD~2"), Path: "sub"},
				entry('H', "100644", "tab\there", 0),
				entry('H', "100644", "ünï/ß.txt", 0),
			}
			// ls-files sorts by path bytes, then stage.
			sort.SliceStable(want, func(i, j int) bool { return want[i].Path < want[j].Path })
			out := s.GitRaw(dir, "ls-files", "-v", "-s", "-z")
			got, err := gitfiles.ParseLsFiles(out)
			if err != nil {
				t.Fatalf("ParseLsFiles: %v\n%q", err, out)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if !bytes.Equal(formatLsFiles(got), out) {
				t.Errorf("entries do not print back as git's output:\n%q\n%q", formatLsFiles(got), out)
			}
		})
	}
}

func FuzzParseLsFiles(f *testing.F) {
	f.Add([]byte(nil))
	f.Add(lsRecords(
		"M 100644 "+lsOID1+" 1\tc.txt",
		"M 100644 "+lsOID2+" 2\tc.txt",
		"M 100644 "+lsOID3+" 3\tc.txt",
		"H 100644 c1b0730e0133447badcfd47fd144e254807b06e1 0\tnew\nline",
		"S 100644 b4785957bc986dc39c629de9fac9df46972c00fc 0\tskip",
		"h 100644 78981922613b2afb6025042ff6bd878ac1994e85 0\tsp ace.txt",
		"s 160000 4ae8ef021bf6fcfff43a13be5abfa52bb6fb5dbc 0\tünï\tx"))
	f.Add(lsRecords("H 100644 " + lsOID256 + " 0\tx"))
	f.Add([]byte("H 100644 " + lsOID1 + " 0\tpath"))
	f.Add([]byte("H 100644 " + lsOID1 + " 9\tpath\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ents, err := gitfiles.ParseLsFiles(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			if ents != nil {
				t.Fatalf("entries with an error: %+v", ents)
			}
			return
		}
		if len(ents) != bytes.Count(b, []byte{0}) {
			t.Fatalf("%d entries from %d records", len(ents), bytes.Count(b, []byte{0}))
		}
		if len(b) > 0 && b[len(b)-1] != 0 {
			t.Fatalf("accepted a last record without NUL: %q", b)
		}
		recs := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
		for i, e := range ents {
			if e.Stage < 0 || e.Stage > 3 {
				t.Fatalf("entry %d: stage %d", i, e.Stage)
			}
			if e.Path == "" || strings.ContainsRune(e.Path, 0) {
				t.Fatalf("entry %d: path %q", i, e.Path)
			}
			if len(e.Mode) != 6 || strings.Trim(e.Mode, "01234567") != "" {
				t.Fatalf("entry %d: mode %q", i, e.Mode)
			}
			if (len(e.OID) != 40 && len(e.OID) != 64) || strings.Trim(e.OID, "0123456789abcdef") != "" {
				t.Fatalf("entry %d: oid %q", i, e.OID)
			}
			// Every byte of the record is accounted for: it prints back the
			// same, but for how the stage number was spelled.
			head, path, _ := bytes.Cut(recs[i], []byte{'\t'})
			fields := strings.Split(string(head), " ")
			if string(path) != e.Path || len(fields) != 4 || fields[0] != string(e.Tag) || fields[1] != e.Mode || fields[2] != e.OID {
				t.Fatalf("entry %d %+v does not match its record %q", i, e, recs[i])
			}
		}
		again, err := gitfiles.ParseLsFiles(formatLsFiles(ents))
		if err != nil {
			t.Fatalf("printed entries do not parse: %v", err)
		}
		if d := cmp.Diff(ents, again); d != "" {
			t.Fatalf("round trip (-first +second):\n%s", d)
		}
	})
}

package proof_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// Well-formed ids; their values are arbitrary.
const (
	pidID1  = "f0d4fda5a4ee0cfd7e8f4b8d3e4a21fd3b7ce2e3"
	pidC1   = "6f3b0e4cde4b3cfbfd0f2d9e7a16f5a16c0c6b5d"
	pidID2  = "0b3c0e1ea3d9bd6f8a1ec4a8a1f2e4b4b1c0a9d1"
	pidC2   = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	pidID64 = "14f5162e2fe3d240d0d37aaab0f90e4af9a7cfa79639f3bab005b5bfb4174d9f"
	pidC64  = "c09df00b34c4829386abb2efa8f5b224ae71f8a18bd6436a4ae201f43427fb55"
)

func formatPatchIDs(ids []proof.PatchID) []byte {
	var b bytes.Buffer
	for _, id := range ids {
		b.WriteString(id.ID + " " + id.Commit + "\n")
	}
	return b.Bytes()
}

func TestParsePatchIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []proof.PatchID
	}{
		{"empty", "", nil},
		{"one line", pidID1 + " " + pidC1 + "\n", []proof.PatchID{{ID: pidID1, Commit: pidC1}}},
		{"no final newline", pidID1 + " " + pidC1, []proof.PatchID{{ID: pidID1, Commit: pidC1}}},
		{"two lines", pidID1 + " " + pidC1 + "\n" + pidID2 + " " + pidC2 + "\n",
			[]proof.PatchID{{ID: pidID1, Commit: pidC1}, {ID: pidID2, Commit: pidC2}}},
		{"same patch twice", pidID1 + " " + pidC1 + "\n" + pidID1 + " " + pidC2 + "\n",
			[]proof.PatchID{{ID: pidID1, Commit: pidC1}, {ID: pidID1, Commit: pidC2}}},
		{"sha256", pidID64 + " " + pidC64 + "\n", []proof.PatchID{{ID: pidID64, Commit: pidC64}}},
	}
	for _, tc := range tests {
		got, err := proof.ParsePatchIDs([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: ParsePatchIDs: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestParsePatchIDsMalformed(t *testing.T) {
	t.Parallel()
	good := pidID1 + " " + pidC1
	tests := []struct {
		name string
		in   string
	}{
		{"blank line at the end", good + "\n\n"},
		{"blank line between", good + "\n\n" + good + "\n"},
		{"blank line first", "\n" + good + "\n"},
		{"one field", pidID1 + "\n"},
		{"three fields", good + " " + pidC2 + "\n"},
		{"tab separator", pidID1 + "\t" + pidC1 + "\n"},
		{"two spaces", pidID1 + "  " + pidC1 + "\n"},
		{"leading space", " " + good + "\n"},
		{"trailing space", good + " \n"},
		{"CRLF", good + "\r\n"},
		{"upper-case id", strings.ToUpper(pidID1) + " " + pidC1 + "\n"},
		{"short commit", pidID1 + " " + pidC1[:39] + "\n"},
		{"not hex", strings.Repeat("z", 40) + " " + pidC1 + "\n"},
		{"diff text instead of ids", "diff --git a/x b/x\n"},
		{"good then bad", good + "\ngarbage\n"},
	}
	for _, tc := range tests {
		got, err := proof.ParsePatchIDs([]byte(tc.in))
		if !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", tc.name, err)
		}
		if got != nil {
			t.Errorf("%s: ids = %+v, want none with an error", tc.name, got)
		}
	}
}

func TestParsePatchIDsRealGit(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			s := gitsandbox.NewSandbox(t)
			dir := filepath.Join(s.Root, "repo")
			s.Git(s.Root, "init", "-q", "-b", "main", "--object-format="+format, dir)
			var want []string // commits with a patch
			c := s.CommitFile(dir, "a.txt", "a\nb\nc\n")
			want = append([]string{c}, want...)
			s.Git(dir, "checkout", "-q", "-b", "side")
			side := s.CommitFile(dir, "side.txt", "s\n")
			s.Git(dir, "checkout", "-q", "main")
			c = s.CommitFile(dir, "a.txt", "a\nB \nc\n") // whitespace matters to --verbatim
			want = append([]string{c}, want...)
			s.Git(dir, "commit", "-q", "--allow-empty", "-m", "empty: no patch, no line")
			s.Write(dir, "bin.dat", "\x00\x01\x02\xff")
			c = s.CommitAll(dir, "binary")
			want = append([]string{c}, want...)
			// The merge shows no patch in `git log -p`: no line either.
			s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge", "side")
			want = append([]string{side}, want...)

			log := s.GitRaw(dir, "log", "-p", "--binary", "--no-color", "--no-renames", "--pretty=medium")
			out := s.GitInput(dir, log, "patch-id", "--verbatim")
			got, err := proof.ParsePatchIDs(out)
			if err != nil {
				t.Fatalf("ParsePatchIDs: %v\n%q", err, out)
			}
			var commits []string
			for _, id := range got {
				commits = append(commits, id.Commit)
				// Each id is the one git gives that commit alone.
				one := s.GitInput(dir, s.GitRaw(dir, "show", "-p", "--binary", "--no-color", "--pretty=medium", id.Commit), "patch-id", "--verbatim")
				if f := strings.Fields(string(one)); len(f) != 2 || f[0] != id.ID || f[1] != id.Commit {
					t.Errorf("patch id of %s = %q, want %s", id.Commit, one, id.ID)
				}
			}
			if d := cmp.Diff(want, commits, gitsandbox.ProofOpts); d != "" {
				t.Errorf("commits with a patch id (-want +got):\n%s", d)
			}
			if !bytes.Equal(formatPatchIDs(got), out) {
				t.Errorf("ids do not print back as git's output:\n%q\n%q", formatPatchIDs(got), out)
			}
			// Empty input (no commit has a patch) is no ids.
			none := s.GitInput(dir, nil, "patch-id", "--verbatim")
			if got, err := proof.ParsePatchIDs(none); err != nil || got != nil {
				t.Errorf("patch-id of nothing: %+v, %v; want nothing", got, err)
			}
		})
	}
}

func FuzzParsePatchIDs(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("\n"))
	f.Add([]byte(pidID1 + " " + pidC1 + "\n" + pidID2 + " " + pidC2 + "\n"))
	f.Add([]byte(pidID64 + " " + pidC64))
	f.Add([]byte(pidID1 + " " + pidC1 + "\n\n"))
	f.Add([]byte(pidID1 + " " + pidC64 + "\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := proof.ParsePatchIDs(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			if ids != nil {
				t.Fatalf("ids with an error: %+v", ids)
			}
			return
		}
		hex := func(s string) bool {
			return (len(s) == 40 || len(s) == 64) && strings.Trim(s, "0123456789abcdef") == ""
		}
		for i, id := range ids {
			if !hex(id.ID) || !hex(id.Commit) {
				t.Fatalf("line %d: %+v is not two object ids", i+1, id)
			}
		}
		// Every byte is accounted for: the ids print back as the input, but
		// for one final newline.
		if got, want := bytes.TrimSuffix(formatPatchIDs(ids), []byte{'\n'}), bytes.TrimSuffix(b, []byte{'\n'}); !bytes.Equal(got, want) {
			t.Fatalf("ids %+v print as %q, input was %q", ids, got, want)
		}
	})
}

package observe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/realgit"
)

// Entries captured from git 2.39 (`git status --porcelain=v2 -z`).
const (
	stDeleted   = "1 .D N... 100644 100644 000000 4bcfe98e640c8284511312660fb8709b0afa888e 4bcfe98e640c8284511312660fb8709b0afa888e del.txt"
	stModified  = "1 MM N... 100644 100644 100644 28ce6a8b26aa170e1de65536fe8abe1832bd3242 191dfc3290bb610fe68848fd125de86d422a5282 mod me.txt"
	stRenamed   = "2 R. N... 100644 100644 100644 b3c5a95f929a50feb06c275ac567cdb1b441d1e2 b3c5a95f929a50feb06c275ac567cdb1b441d1e2 R100 renamed ä.txt"
	stUnmerged  = "u UU N... 100644 100644 100644 100644 f2ad6c76f0115a6ba5b00456a849810e7ec0af20 8e23540ea39504f590ff1dc0b1bbdf678c413628 e45c9c2666d44e0327c1f9c239a74c508336053e conflict.txt"
	stIntent    = "1 .A N... 000000 000000 100644 0000000000000000000000000000000000000000 0000000000000000000000000000000000000000 itn"
	stTypeChg   = "1 .T N... 120000 120000 100644 2e65efe2a145dda7ee51d1741299f848e5bf752e 2e65efe2a145dda7ee51d1741299f848e5bf752e lnk"
	stSubmodule = "1 .M S.MU 160000 160000 160000 2de8b8fbd05f3c157dbeb920823bb9770d22e65c 2de8b8fbd05f3c157dbeb920823bb9770d22e65c subm"
	stAdded     = "1 A. N... 000000 100644 100644 0000000000000000000000000000000000000000 78981922613b2afb6025042ff6bd878ac1994e85 a"
	stSHA256    = "1 M. N... 100644 100644 100644 14f5162e2fe3d240d0d37aaab0f90e4af9a7cfa79639f3bab005b5bfb4174d9f c09df00b34c4829386abb2efa8f5b224ae71f8a18bd6436a4ae201f43427fb55 x"
)

func TestParseStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want machine.Status
	}{
		{name: "empty", in: nil, want: machine.Status{}},
		{name: "headers only", in: realgit.NulLines("# branch.oid (initial)", "# branch.head main", "# stash 2", "# future header"), want: machine.Status{}},
		{
			name: "captured mix",
			in: realgit.NulLines("# branch.oid 9b3dc5c67ea6f872dcb7c043572b7553d6871979", "# branch.head main",
				stDeleted, stModified, stRenamed, "moved.txt", stUnmerged,
				"? nd/deep/f", "? new\nline", "? un tracked.txt", "! build/", "! x.log"),
			want: machine.Status{
				Changed:       []string{"del.txt", "mod me.txt", "renamed ä.txt"},
				Staged:        2,
				StagedDiffers: []string{"mod me.txt"},
				Deleted:       []string{"del.txt"},
				Unmerged:      []string{"conflict.txt"},
				Untracked:     []string{"nd/deep/f", "new\nline", "un tracked.txt"},
				Ignored:       []string{"build/", "x.log"},
			},
		},
		{
			name: "intent to add, type change, submodule",
			in:   realgit.NulLines(stIntent, stTypeChg, stSubmodule),
			want: machine.Status{Changed: []string{"itn", "lnk", "subm"}, Submodules: []string{"subm"}},
		},
		{
			name: "added in an unborn repo and sha256",
			in:   realgit.NulLines(stAdded, stSHA256),
			want: machine.Status{Changed: []string{"a", "x"}, Staged: 2},
		},
		{
			// The original path is the next field, whatever it looks like.
			name: "rename source looks like an entry",
			in:   realgit.NulLines("2 RM N... 100644 100644 100644 "+realgit.FixOID1+" "+realgit.FixOID2+" C75 new name", "? not untracked", "? real"),
			want: machine.Status{Changed: []string{"new name"}, Staged: 1, StagedDiffers: []string{"new name"}, Untracked: []string{"real"}},
		},
		{
			name: "worktree-side rename is not staged",
			in:   realgit.NulLines("2 .R N... 100644 100644 100644 "+realgit.FixOID1+" "+realgit.FixOID1+" R100 b", "a"),
			want: machine.Status{Changed: []string{"b"}},
		},
		{
			name: "paths with many spaces",
			in:   realgit.NulLines("1 M. N... 100644 100644 100644 "+realgit.FixOID1+" "+realgit.FixOID2+"  two  spaces ", "?  lead", "!   "),
			want: machine.Status{Changed: []string{" two  spaces "}, Staged: 1, Untracked: []string{" lead"}, Ignored: []string{"  "}},
		},
		{
			name: "submodule conflict",
			in:   realgit.NulLines("u AA SC.U 000000 160000 160000 160000 " + realgit.FixOIDZero + " " + realgit.FixOID1 + " " + realgit.FixOID2 + " sub dir"),
			want: machine.Status{Unmerged: []string{"sub dir"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseStatus(tt.in)
			if err != nil {
				t.Fatalf("ParseStatus: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStatusMalformed(t *testing.T) {
	t.Parallel()
	ord := "1 M. N... 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2
	tests := []struct {
		name   string
		in     []byte
		offset string
	}{
		{"unknown kind", realgit.NulLines("? ok", "3 x"), "byte 5:"},
		{"space before kind", realgit.NulLines(" 1 x"), "byte 0:"},
		{"empty entry", realgit.NulLines("? ok", ""), "byte 5:"},
		{"unterminated", []byte("? ok\x00? cut"), "byte 5:"},
		{"newline separated", []byte("? a\n? b\n"), "byte 0:"},
		{"untracked without path", realgit.NulLines("?"), "byte 0:"},
		{"untracked with empty path", realgit.NulLines("? "), "byte 0:"},
		{"ignored without space", realgit.NulLines("!x"), "byte 0:"},
		{"ordinary too few fields", realgit.NulLines("1 M. N... 100644 100644 100644 " + realgit.FixOID1), "byte 0:"},
		{"ordinary without path", realgit.NulLines(ord), "byte 0:"},
		{"ordinary with empty path", realgit.NulLines(ord + " "), "byte 0:"},
		{"ordinary kind too long", realgit.NulLines("1x M. N... 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"bad XY", realgit.NulLines("1 M N... 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"bad XY letter", realgit.NulLines("1 Mx N... 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"bad sub", realgit.NulLines("1 M. X... 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"bad sub state", realgit.NulLines("1 M. SCMX 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"bad mode", realgit.NulLines("1 M. N... 100644 10064 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"non-octal mode", realgit.NulLines("1 M. N... 100644 100648 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"short hash", realgit.NulLines("1 M. N... 100644 100644 100644 abc " + realgit.FixOID2 + " p"), "byte 0:"},
		{"rename without source", realgit.NulLines("? ok", "2 R. N... 100644 100644 100644 "+realgit.FixOID1+" "+realgit.FixOID2+" R100 new"), "byte 127:"},
		{"rename with empty source", realgit.NulLines("2 R. N... 100644 100644 100644 "+realgit.FixOID1+" "+realgit.FixOID2+" R100 new", ""), "byte 122:"},
		{"rename bad score", realgit.NulLines("2 R. N... 100644 100644 100644 "+realgit.FixOID1+" "+realgit.FixOID2+" X100 new", "old"), "byte 0:"},
		{"rename missing score", realgit.NulLines("2 R. N... 100644 100644 100644 "+realgit.FixOID1+" "+realgit.FixOID2+" new", "old"), "byte 0:"},
		{"unmerged too few fields", realgit.NulLines("u UU N... 100644 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " p"), "byte 0:"},
		{"unmerged bad hash", realgit.NulLines("u UU N... 100644 100644 100644 100644 " + realgit.FixOID1 + " " + realgit.FixOID2 + " " + strings.ToUpper(realgit.FixOID1) + " p"), "byte 0:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseStatus(tt.in)
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("ParseStatus(%q) = %+v, %v; want ErrMalformed", tt.in, got, err)
			}
			if diff := cmp.Diff(machine.Status{}, got); diff != "" {
				t.Errorf("non-zero status with error:\n%s", diff)
			}
			if !strings.Contains(err.Error(), tt.offset) {
				t.Errorf("error %q does not name %q", err, tt.offset)
			}
		})
	}
}

func TestParseStatusRealGit(t *testing.T) {
	t.Parallel()
	g := realgit.NewParserGit(t)
	root := realgit.ParserRoot(t)
	repo := filepath.Join(root, "repo")
	g.Run(root, "init", "-q", "-b", "main", repo)
	w := func(name, content string) { realgit.WriteParserFile(t, filepath.Join(repo, name), content) }
	w("moved.txt", "one\ntwo\nthree\nfour\nfive\n")
	w("conflict.txt", "base\n")
	w("mod me.txt", "m\n")
	w("del.txt", "d\n")
	w(".gitignore", "*.log\nbuild/\n")
	g.Run(repo, "add", ".")
	g.Run(repo, "commit", "-q", "-m", "init")

	statusArgs := []string{"status", "--porcelain=v2", "-z", "--ignored=matching", "--untracked-files=all"}
	for _, branch := range []bool{false, true} {
		args := statusArgs
		if branch {
			args = append(args[:len(args):len(args)], "--branch")
		}
		got, err := ParseStatus(g.Run(repo, args...))
		if err != nil {
			t.Fatalf("ParseStatus (clean, branch=%v): %v", branch, err)
		}
		if !got.Clean() || got.Staged != 0 {
			t.Errorf("clean repo (branch=%v): %+v", branch, got)
		}
	}

	// A conflict: the same line changed on two branches.
	g.Run(repo, "checkout", "-q", "-b", "other")
	w("conflict.txt", "other\n")
	g.Run(repo, "commit", "-q", "-a", "-m", "other")
	g.Run(repo, "checkout", "-q", "main")
	w("conflict.txt", "main\n")
	g.Run(repo, "commit", "-q", "-a", "-m", "main")
	g.RunMayFail(repo, "merge", "-q", "other")

	g.Run(repo, "mv", "moved.txt", "renamed ä.txt")
	w("mod me.txt", "m\nstaged\n")
	g.Run(repo, "add", "mod me.txt")
	w("mod me.txt", "m\nstaged\nunstaged\n")
	if err := os.Remove(filepath.Join(repo, "del.txt")); err != nil {
		t.Fatal(err)
	}
	w("itn", "intent\n")
	g.Run(repo, "add", "-N", "itn")
	w("un tracked.txt", "u\n")
	w("nd/deep/f", "u\n")
	w("new\nline", "u\n")
	w("x.log", "i\n")
	w("nd/deep/z.log", "i\n")
	w("build/sub/o.o", "i\n")

	want := machine.Status{
		Changed: []string{"del.txt", "itn", "mod me.txt", "renamed ä.txt"},
		Staged:  2, // "R." and "MM"; ".D" and ".A" (intent to add) are not staged
		// "MM": the staged version differs from HEAD and from the file.
		StagedDiffers: []string{"mod me.txt"},
		// ".D": deleted from the working copy.
		Deleted:   []string{"del.txt"},
		Unmerged:  []string{"conflict.txt"},
		Untracked: []string{"nd/deep/f", "new\nline", "un tracked.txt"},
		// --ignored=matching reports an ignored directory once, with a
		// trailing slash, even with --untracked-files=all.
		Ignored: []string{"build/", "nd/deep/z.log", "x.log"},
	}
	// Porcelain v2 leaves the order of tracked entries undefined.
	sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	for _, branch := range []bool{false, true} {
		args := statusArgs
		if branch {
			args = append(args[:len(args):len(args)], "--branch")
		}
		out := g.Run(repo, args...)
		got, err := ParseStatus(out)
		if err != nil {
			t.Fatalf("ParseStatus (branch=%v): %v\n%q", branch, err, out)
		}
		if diff := cmp.Diff(want, got, sorted); diff != "" {
			t.Errorf("status (branch=%v) (-want +got):\n%s\nraw: %q", branch, diff, out)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte{})
	f.Add(realgit.NulLines("# branch.oid (initial)", "# branch.head main"))
	f.Add(realgit.NulLines(stDeleted, stModified, stRenamed, "moved.txt", stUnmerged, "? a b", "! build/"))
	f.Add(realgit.NulLines(stIntent, stTypeChg, stSubmodule, stSHA256))
	f.Add(realgit.NulLines(stRenamed))
	f.Add([]byte(stModified))
	f.Add(realgit.NulLines("3 x"))
	f.Add(realgit.NulLines("?"))
	f.Add(realgit.NulLines("1 M. N... 100644 100644 100644 " + realgit.FixOID1))
	f.Add([]byte("? a\n? b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseStatus(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			if !cmp.Equal(machine.Status{}, got) {
				t.Fatalf("non-zero status with error: %+v", got)
			}
			return
		}
		if got.Staged < 0 || got.Staged > len(got.Changed) {
			t.Fatalf("Staged %d of %d changed", got.Staged, len(got.Changed))
		}
		n := 0
		for _, list := range [][]string{got.Changed, got.Unmerged, got.Untracked, got.Ignored} {
			for _, p := range list {
				if p == "" || strings.IndexByte(p, 0) >= 0 {
					t.Fatalf("bad path %q in %+v", p, got)
				}
				n++
			}
		}
		// Every reported path is one NUL-terminated entry of the input.
		if n > strings.Count(string(b), "\x00") {
			t.Fatalf("%d paths from %d entries", n, strings.Count(string(b), "\x00"))
		}
		if len(b) > 0 && b[len(b)-1] != 0 {
			t.Fatalf("accepted unterminated input %q", b)
		}
	})
}

func TestParseStatusRealGitSubmodule(t *testing.T) {
	t.Parallel()
	g := realgit.NewParserGit(t)
	root := realgit.ParserRoot(t)
	src := filepath.Join(root, "src")
	g.Run(root, "init", "-q", "-b", "main", src)
	realgit.WriteParserFile(t, filepath.Join(src, "s.txt"), "s\n")
	g.Run(src, "add", ".")
	g.Run(src, "commit", "-q", "-m", "src")

	repo := filepath.Join(root, "repo")
	g.Run(root, "init", "-q", "-b", "main", repo)
	realgit.WriteParserFile(t, filepath.Join(repo, "a"), "a\n")
	g.Run(repo, "add", "a")
	g.Run(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub dir")
	g.Run(repo, "commit", "-q", "-m", "with submodule")

	// Tracked and untracked changes inside the submodule: "S.MU".
	realgit.WriteParserFile(t, filepath.Join(repo, "sub dir", "s.txt"), "changed\n")
	realgit.WriteParserFile(t, filepath.Join(repo, "sub dir", "new"), "n\n")
	out := g.Run(repo, "status", "--porcelain=v2", "-z", "--ignored=matching", "--untracked-files=all")
	if !strings.Contains(string(out), " S.MU ") {
		t.Errorf("expected a S.MU submodule entry in %q", out)
	}
	got, err := ParseStatus(out)
	if err != nil {
		t.Fatalf("ParseStatus: %v\n%q", err, out)
	}
	want := machine.Status{Changed: []string{"sub dir"}, Submodules: []string{"sub dir"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s\nraw: %q", diff, out)
	}
}

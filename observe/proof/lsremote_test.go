package proof

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/realgit"
	"github.com/google/go-cmp/cmp"
)

func TestParseLsRemote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []RemoteRef
	}{
		{name: "empty", in: "", want: nil},
		{
			name: "lines",
			in:   realgit.FixOID1 + "\trefs/heads/main\n" + realgit.FixOID2 + "\trefs/tags/v1\n",
			want: []RemoteRef{{Name: "refs/heads/main", Commit: realgit.FixOID1}, {Name: "refs/tags/v1", Commit: realgit.FixOID2}},
		},
		{
			name: "trailing line without newline",
			in:   realgit.FixOID1 + "\trefs/heads/main\n" + realgit.FixOID256 + "\trefs/heads/ä",
			want: []RemoteRef{{Name: "refs/heads/main", Commit: realgit.FixOID1}, {Name: "refs/heads/ä", Commit: realgit.FixOID256}},
		},
		{
			// Only --refs removes HEAD; the parser does not second-guess names.
			name: "HEAD",
			in:   realgit.FixOID1 + "\tHEAD\n",
			want: []RemoteRef{{Name: "HEAD", Commit: realgit.FixOID1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLsRemote([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseLsRemote: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseLsRemote (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLsRemoteMalformed(t *testing.T) {
	t.Parallel()
	ok := realgit.FixOID1 + "\trefs/heads/main\n"
	tests := []struct {
		name string
		in   string
		line string
	}{
		{"no tab", ok + realgit.FixOID1 + " refs/heads/x\n", "line 2:"},
		{"short oid", "abc\trefs/heads/x\n", "line 1:"},
		{"uppercase oid", ok + ok + strings.ToUpper(realgit.FixOID1) + "\trefs/heads/x\n", "line 3:"},
		{"41 digit oid", realgit.FixOID1 + "0\trefs/heads/x\n", "line 1:"},
		{"empty name", ok + realgit.FixOID1 + "\t\n", "line 2:"},
		{"peeled", ok + realgit.FixOID1 + "\trefs/tags/v1^{}\n", "line 2:"},
		{"empty line", ok + "\n" + ok, "line 2:"},
		{"blank trailing line", ok + "\n", "line 2:"},
		{"second tab", realgit.FixOID1 + "\trefs/heads/x\tmore\n", "line 1:"},
		{"CRLF", realgit.FixOID1 + "\trefs/heads/x\r\n", "line 1:"},
		{"space in name", realgit.FixOID1 + "\trefs/heads/a b\n", "line 1:"},
		{"symref line", "ref: refs/heads/main\tHEAD\n", "line 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLsRemote([]byte(tt.in))
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("ParseLsRemote(%q) = %v, %v; want ErrMalformed", tt.in, got, err)
			}
			if got != nil {
				t.Errorf("refs returned with error: %v", got)
			}
			if !strings.Contains(err.Error(), tt.line) {
				t.Errorf("error %q does not name %q", err, tt.line)
			}
		})
	}
}

func TestParseLsRemoteRealGit(t *testing.T) {
	t.Parallel()
	g := realgit.NewParserGit(t)
	root := realgit.ParserRoot(t)
	repo := filepath.Join(root, "repo")
	g.Run(root, "init", "-q", "-b", "main", repo)
	realgit.WriteParserFile(t, filepath.Join(repo, "a.txt"), "a\n")
	g.Run(repo, "add", ".")
	g.Run(repo, "commit", "-q", "-m", "init")
	head := g.Rev(repo, "HEAD")
	g.Run(repo, "branch", "feat/ä")
	g.Run(repo, "tag", "light")
	g.Run(repo, "tag", "-a", "-m", "annotated", "v1")
	tagObject := g.Rev(repo, "refs/tags/v1")
	if tagObject == head {
		t.Fatal("annotated tag object equals its commit")
	}

	bare := filepath.Join(root, "remote.git")
	g.Run(root, "clone", "-q", "--bare", repo, bare)

	got, err := ParseLsRemote(g.Run(repo, "ls-remote", "--refs", bare))
	if err != nil {
		t.Fatalf("ParseLsRemote: %v", err)
	}
	want := []RemoteRef{
		{Name: "refs/heads/feat/ä", Commit: head},
		{Name: "refs/heads/main", Commit: head},
		{Name: "refs/tags/light", Commit: head},
		// --refs reports the tag object, not the commit it peels to.
		{Name: "refs/tags/v1", Commit: tagObject},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ls-remote --refs (-want +got):\n%s", diff)
	}

	// Without --refs git prints HEAD and the peeled tag line, which the
	// parser refuses rather than reporting a ref named "refs/tags/v1^{}".
	if got, err := ParseLsRemote(g.Run(repo, "ls-remote", bare)); !errors.Is(err, hostio.ErrMalformed) || !strings.Contains(err.Error(), "peeled") {
		t.Errorf("ls-remote without --refs: %v, %v; want a peeled-line ErrMalformed", got, err)
	}

	// An empty remote prints nothing.
	empty := filepath.Join(root, "empty.git")
	g.Run(root, "init", "-q", "--bare", empty)
	got, err = ParseLsRemote(g.Run(repo, "ls-remote", "--refs", empty))
	if err != nil || got != nil {
		t.Errorf("empty remote: %v, %v", got, err)
	}

	// A SHA-256 remote has 64 digit object ids.
	s256 := filepath.Join(root, "s256")
	g.Run(root, "init", "-q", "-b", "main", "--object-format=sha256", s256)
	realgit.WriteParserFile(t, filepath.Join(s256, "x"), "x\n")
	g.Run(s256, "add", "x")
	g.Run(s256, "commit", "-q", "-m", "x")
	got, err = ParseLsRemote(g.Run(s256, "ls-remote", "--refs", "."))
	if err != nil {
		t.Fatalf("ParseLsRemote (sha256): %v", err)
	}
	want = []RemoteRef{{Name: "refs/heads/main", Commit: g.Rev(s256, "HEAD")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sha256 ls-remote (-want +got):\n%s", diff)
	}
}

func FuzzParseLsRemote(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(realgit.FixOID1 + "\trefs/heads/main\n" + realgit.FixOID2 + "\trefs/tags/v1\n"))
	f.Add([]byte(realgit.FixOID256 + "\trefs/heads/ä"))
	f.Add([]byte(realgit.FixOID1 + "\trefs/tags/v1^{}\n"))
	f.Add([]byte(realgit.FixOID1 + " refs/heads/x\n"))
	f.Add([]byte("\n\n"))
	f.Add([]byte("ref: refs/heads/main\tHEAD\n"))
	f.Add([]byte(strings.ToUpper(realgit.FixOID1) + "\tx\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseLsRemote(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			if got != nil {
				t.Fatalf("refs returned with error: %v", got)
			}
			return
		}
		var again strings.Builder
		for _, r := range got {
			if !hostio.IsHexOID(r.Commit) {
				t.Fatalf("bad commit %q", r.Commit)
			}
			if r.Name == "" || strings.ContainsAny(r.Name, "\t\n\x00 ") || strings.HasSuffix(r.Name, "^{}") {
				t.Fatalf("bad name %q", r.Name)
			}
			again.WriteString(r.Commit + "\t" + r.Name + "\n")
		}
		if len(got) != strings.Count(string(b), "\n")+1 && len(got) != strings.Count(string(b), "\n") {
			t.Fatalf("%d refs from %d newlines", len(got), strings.Count(string(b), "\n"))
		}
		// Formatting what parsed and parsing again gives the same refs.
		reparsed, err := ParseLsRemote([]byte(again.String()))
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		if diff := cmp.Diff(got, reparsed); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

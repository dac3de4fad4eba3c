package gitfiles_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestReadUpstreamsAsGit: the upstream read from the config file is the
// one git names (for-each-ref %(upstream)) for a branch tracking a remote
// branch, a local one, one with a name of odd bytes, one under a remote
// with two refspecs, and none for a branch without one.
func TestReadUpstreamsAsGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	odd := "caf\xe9\"q\""
	for _, b := range []string{"plain", "local", odd, "other", "none"} {
		s.Git(main, "branch", b)
	}
	s.Git(main, "push", "-q", "origin", "plain", "other")
	s.Git(main, "config", "--add", "remote.origin.fetch", "+refs/heads/other:refs/remotes/theirs/other")
	s.Git(main, "branch", "-q", "--set-upstream-to=origin/plain", "plain")
	s.Git(main, "branch", "-q", "--set-upstream-to=main", "local")
	s.Git(main, "branch", "-q", "--set-upstream-to=origin/plain", odd)
	s.Git(main, "branch", "-q", "--set-upstream-to=origin/other", "other")
	repo := s.Discover(main)
	got, err := gitfiles.ReadUpstreams(repo)
	if err != nil {
		t.Fatal(err)
	}
	out := s.Git(main, "for-each-ref", "--format=%(refname:lstrip=2)%00%(upstream)", "refs/heads/")
	want := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		name, up, _ := strings.Cut(l, "\x00")
		if up != "" {
			want[name] = up
		}
	}
	gotRefs := map[string]string{}
	for name, u := range got {
		gotRefs[name] = u.Ref
	}
	if diff := cmp.Diff(want, gotRefs); diff != "" {
		t.Errorf("upstreams read from the config (-git +custody):\n%s", diff)
	}
	if got["local"].Remote != "." {
		t.Errorf("a local upstream's remote is %q, want .", got["local"].Remote)
	}
}

// TestParseUpstreams: the plain config forms are read; every form custody
// does not read exactly is ErrConfigUnreadable, never a guess.
func TestParseUpstreams(t *testing.T) {
	t.Parallel()
	const remote = "[remote \"origin\"]\n\turl = /o.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	ok := map[string]struct {
		text string
		want map[string]gitfiles.Upstream
	}{
		"one branch": {remote + "[branch \"x\"]\n\tremote = origin\n\tmerge = refs/heads/x\n",
			map[string]gitfiles.Upstream{"x": {Remote: "origin", Merge: "refs/heads/x", Ref: "refs/remotes/origin/x"}}},
		"case and spaces": {remote + "[Branch \"x\"]\n  Remote=origin\nMERGE =  refs/heads/y  \n",
			map[string]gitfiles.Upstream{"x": {Remote: "origin", Merge: "refs/heads/y", Ref: "refs/remotes/origin/y"}}},
		"escaped quote": {remote + "[branch \"a\\\"b\\\\c\"]\n\tremote = origin\n\tmerge = refs/heads/z\n",
			map[string]gitfiles.Upstream{"a\"b\\c": {Remote: "origin", Merge: "refs/heads/z", Ref: "refs/remotes/origin/z"}}},
		"local":        {"[branch \"x\"]\nremote = .\nmerge = refs/heads/main\n", map[string]gitfiles.Upstream{"x": {Remote: ".", Merge: "refs/heads/main", Ref: "refs/heads/main"}}},
		"no refspec":   {"[branch \"x\"]\nremote = up\nmerge = refs/heads/x\n", map[string]gitfiles.Upstream{"x": {Remote: "up", Merge: "refs/heads/x"}}},
		"merge only":   {remote + "[branch \"x\"]\nmerge = refs/heads/x\n", map[string]gitfiles.Upstream{}},
		"comments":     {"# [include]\n; path = x\n" + remote, map[string]gitfiles.Upstream{}},
		"other values": {"[alias]\n\tst = \"status -s\" # quoted\n[core]\n\tbare = false\n", map[string]gitfiles.Upstream{}},
	}
	for name, tt := range ok {
		got, err := gitfiles.ParseUpstreams([]byte(tt.text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", name, diff)
		}
	}
	for name, text := range map[string]string{
		"include":         "[include]\n\tpath = other\n",
		"includeIf":       "[includeIf \"gitdir:/x/\"]\n\tpath = other\n",
		"continued":       "[alias]\n\tx = a \\\n[branch \"y\"]\n",
		"old form":        "[branch.x]\n\tremote = origin\n",
		"unnamed branch":  "[branch]\n\tremote = origin\n",
		"quoted value":    "[branch \"x\"]\n\tremote = \"origin\"\n",
		"commented value": "[branch \"x\"]\n\tremote = origin # here\n",
		"two merges":      "[branch \"x\"]\n\tremote = origin\n\tmerge = refs/heads/a\n\tmerge = refs/heads/b\n",
		"bad escape":      "[branch \"a\\nb\"]\n",
		"unterminated":    "[branch \"x]\n",
		"text after":      "[branch \"x\"] remote = origin\n",
		"bad key":         "[branch \"x\"]\n\tre.mote = origin\n",
	} {
		if _, err := gitfiles.ParseUpstreams([]byte(text)); !errors.Is(err, gitfiles.ErrConfigUnreadable) {
			t.Errorf("%s: %v, want ErrConfigUnreadable", name, err)
		}
	}
}

// FuzzParseUpstreams: no config text makes the parser panic, and every
// upstream it reads names both its remote and its branch.
func FuzzParseUpstreams(f *testing.F) {
	f.Add([]byte("[remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"x\"]\n\tremote = origin\n\tmerge = refs/heads/x\n"))
	f.Add([]byte("[branch \"a\\\"b\"]\nremote=.\nmerge=refs/heads/main\n"))
	f.Add([]byte("[include]\npath=x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ups, err := gitfiles.ParseUpstreams(b)
		if err != nil {
			return
		}
		for name, u := range ups {
			if u.Remote == "" || u.Merge == "" {
				t.Fatalf("branch %q: upstream %+v without its remote or branch", name, u)
			}
		}
	})
}

// TestReadRemoteTipsAsGit: the remote-tracking tips read from the ref
// files are exactly git for-each-ref's (its symbolic HEAD left out), loose
// and packed, a loose one over its packed self.
func TestReadRemoteTipsAsGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	s.Git(main, "push", "-q", "origin", "main:refs/heads/topic", "main:refs/heads/caf\xe9")
	s.Git(main, "fetch", "-q", "origin")
	s.Git(main, "remote", "set-head", "origin", "main")
	s.Git(main, "pack-refs", "--all")
	next := s.CommitFile(main, "n.txt", "n\n")
	s.Git(main, "push", "-q", "origin", "main:refs/heads/topic")
	s.Git(main, "fetch", "-q", "origin")
	repo := s.Discover(main)
	got, err := gitfiles.ReadRemoteTips(repo)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(s.Git(main, "for-each-ref", "--format=%(objectname) %(refname) %(symref)", "refs/remotes/"), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) == 3 && f[2] == "" {
			want[f[1]] = f[0]
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("remote tips (-git +custody):\n%s", diff)
	}
	if got["refs/remotes/origin/topic"] != next {
		t.Errorf("the loose topic %s, want %s", got["refs/remotes/origin/topic"], next)
	}
}

// TestLooseCommitTree: a loose commit gives its tree as git says; a packed
// one, a damaged one and an id that is no commit give none.
func TestLooseCommitTree(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	head := s.CommitFile(main, "l.txt", "loose\n")
	repo := s.Discover(main)
	objects := filepath.Join(repo.CommonDir, "objects")
	tree, ok := gitfiles.LooseCommitTree(objects, head)
	if want := s.Rev(main, "HEAD^{tree}"); !ok || tree != want {
		t.Errorf("loose commit: tree %q, %v; want %s", tree, ok, want)
	}
	if _, ok := gitfiles.LooseCommitTree(objects, s.Rev(main, "HEAD^{tree}")); ok {
		t.Error("a tree read as a commit")
	}
	p := filepath.Join(objects, head[:2], head[2:])
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := gitfiles.LooseCommitTree(objects, head); ok {
		t.Error("a truncated loose commit read")
	}
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
	s.Git(main, "gc", "-q")
	if _, ok := gitfiles.LooseCommitTree(objects, head); ok {
		t.Error("a packed commit read as loose")
	}
}

// TestIndexStatDataAsGit: the stat data read from the index is what git
// ls-files --debug prints of each entry.
func TestIndexStatDataAsGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	s.CommitFile(main, "dir/a.txt", "a\n")
	s.CommitFile(main, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(main, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.Git(main, "add", "run.sh")
	repo := s.Discover(main)
	idx, err := gitfiles.ReadIndexFileWhole(filepath.Join(repo.CommonDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Stats) != len(idx.Ents) {
		t.Fatalf("%d stat data for %d entries", len(idx.Stats), len(idx.Ents))
	}
	// ls-files --debug: the path, then indented lines "ctime: S:N",
	// "mtime: S:N", "dev: D\tino: I", "uid: U\tgid: G", "size: Z\tflags: F".
	out := s.Git(main, "ls-files", "--debug")
	var got, want []string
	for i, e := range idx.Ents {
		sd := idx.Stats[i]
		got = append(got, e.Path, "ctime: "+u(sd.CtimeSec)+":"+u(sd.CtimeNsec), "mtime: "+u(sd.MtimeSec)+":"+u(sd.MtimeNsec),
			"dev: "+u(sd.Dev)+"\tino: "+u(sd.Ino), "uid: "+u(sd.UID)+"\tgid: "+u(sd.GID), "size: "+u(sd.Size))
	}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if size, _, ok := strings.Cut(l, "\tflags:"); ok {
			l = size
		}
		if l != "" {
			want = append(want, l)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stat data (-git +custody):\n%s", diff)
	}
	for i, e := range idx.Ents {
		wantMode := map[string]uint32{"100644": 0o100644, "100755": 0o100755}[e.Mode]
		if idx.Stats[i].Mode != wantMode {
			t.Errorf("%s: mode %o, want %o", e.Path, idx.Stats[i].Mode, wantMode)
		}
	}
}

func u(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

package quarantine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// raceGitfile is the .git file of the trees these tests quarantine.
const raceGitfile = "gitdir: /repo/.git/worktrees/t\n"

// raceFixture makes a quarantine q holding a.txt, d/a.txt, d/b.txt, e/c.txt,
// 20 files in zz/ and a .git file, and the manifest that allows exactly
// them. It returns q, the manifest and a directory outside q.
func raceFixture(t *testing.T) (q string, m Manifest, out string) {
	t.Helper()
	root := t.TempDir()
	q, out = filepath.Join(root, "q"), filepath.Join(root, "outside")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	m = Manifest{".git": {Kind: "gitfile"}}
	files := map[string]string{"a.txt": "a\n", "d/a.txt": "d a\n", "d/b.txt": "d b\n", "e/c.txt": "e c\n"}
	for i := range 20 {
		files[filepath.ToSlash(filepath.Join("zz", string(rune('a'+i))+".txt"))] = strings.Repeat("z", i) + "\n"
	}
	for rel, content := range files {
		raceWrite(t, filepath.Join(q, filepath.FromSlash(rel)), content)
		m[rel] = Entry{Kind: "file", OID: gitfiles.BlobID(gitfiles.FormatSHA1, []byte(content))}
	}
	raceWrite(t, filepath.Join(q, ".git"), raceGitfile)
	return q, m, out
}

func raceWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func raceHas(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// raceRun deletes q against m, calling change once when the deletion
// reaches stage ("" never), holding at most budget directories open (0:
// as many as the process may).
func raceRun(t *testing.T, q string, m Manifest, budget int, stage string, change func()) qresult {
	t.Helper()
	return qdeletion{m: m, idLen: 40, budget: budget, stage: func(s string) {
		if s == stage {
			change()
		}
	}}.run(q)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestQuarantineDeletesOnlyWhatItChecked: with nothing changing, every
// file and directory goes; the .git file last.
func TestQuarantineDeletesOnlyWhatItChecked(t *testing.T) {
	t.Parallel()
	for _, budget := range []int{0, 1, 2} {
		q, m, _ := raceFixture(t)
		quarantineDeletesAll(t, q, m, budget)
	}
}

func quarantineDeletesAll(t *testing.T, q string, m Manifest, budget int) {
	t.Helper()
	var gitLeft []bool
	res := qdeletion{m: m, idLen: 40, budget: budget, stage: func(s string) {
		gitLeft = append(gitLeft, raceHas(filepath.Join(q, ".git")))
	}}.run(q)
	if res.stray != "" || res.err != nil {
		t.Fatalf("stopped at %s: %s %v", res.stray, res.why, res.err)
	}
	if raceHas(q) {
		t.Errorf("%s is still there", q)
	}
	if len(res.deleted) != len(m) {
		t.Errorf("deleted %d files, want %d: %v", len(res.deleted), len(m), res.deleted)
	}
	if !slices.Equal(gitLeft, []bool{true, true, false}) {
		t.Errorf(".git present at checked, files-deleted, gitfiles-deleted: %v, want true, true, false", gitLeft)
	}
	if string(res.gitfiles[".git"]) != raceGitfile {
		t.Errorf("the .git file's bytes were not kept: %q", res.gitfiles[".git"])
	}
}

// TestQuarantineChangedAfterCheck: anything that changes a directory of
// the quarantine after the check read it, and before the first deletion,
// stops the removal with nothing deleted: a file written, renamed in or
// hard-linked into an already checked directory, a directory made there,
// a checked file replaced under its name (other bytes or the same ones),
// moved out or rewritten in place, a checked directory swapped for a
// symlink or for another directory with the same files. What a person
// put outside is never touched.
func TestQuarantineChangedAfterCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(t *testing.T, q, out string)
		stray  string // relative to q
		// someDeleted allows deletions before the stop (the change is
		// found by the file's own verification, right before it goes).
		someDeleted bool
	}{
		{name: "file-written", stray: "d/mine.txt", change: func(t *testing.T, q, _ string) {
			raceWrite(t, filepath.Join(q, "d", "mine.txt"), "mine\n")
		}},
		{name: "file-renamed-in", stray: "d/mine.txt", change: func(t *testing.T, q, out string) {
			raceWrite(t, filepath.Join(out, "mine.txt"), "mine\n")
			must(t, os.Rename(filepath.Join(out, "mine.txt"), filepath.Join(q, "d", "mine.txt")))
		}},
		{name: "hard-link-added", stray: "d/a2.txt", change: func(t *testing.T, q, _ string) {
			must(t, os.Link(filepath.Join(q, "d", "a.txt"), filepath.Join(q, "d", "a2.txt")))
		}},
		{name: "dir-made", stray: "d/new", change: func(t *testing.T, q, _ string) {
			must(t, os.Mkdir(filepath.Join(q, "d", "new"), 0o755))
		}},
		{name: "replaced-other-bytes", stray: "d/a.txt", change: func(t *testing.T, q, out string) {
			raceWrite(t, filepath.Join(out, "new"), "a person's a\n")
			must(t, os.Rename(filepath.Join(out, "new"), filepath.Join(q, "d", "a.txt")))
		}},
		{name: "replaced-same-bytes", stray: "d/a.txt", change: func(t *testing.T, q, out string) {
			raceWrite(t, filepath.Join(out, "new"), "d a\n")
			must(t, os.Rename(filepath.Join(out, "new"), filepath.Join(q, "d", "a.txt")))
		}},
		{name: "moved-out", stray: "d/a.txt", change: func(t *testing.T, q, out string) {
			must(t, os.Rename(filepath.Join(q, "d", "a.txt"), filepath.Join(out, "a.txt")))
		}},
		{name: "dir-swapped-for-symlink", stray: "d", change: func(t *testing.T, q, out string) {
			must(t, os.Rename(filepath.Join(q, "d"), filepath.Join(out, "d")))
			must(t, os.Symlink(filepath.Join(out, "d"), filepath.Join(q, "d")))
		}},
		{name: "dir-swapped-for-a-copy", stray: "d", change: func(t *testing.T, q, out string) {
			must(t, os.Rename(filepath.Join(q, "d"), filepath.Join(out, "d")))
			raceWrite(t, filepath.Join(q, "d", "a.txt"), "d a\n")
			raceWrite(t, filepath.Join(q, "d", "b.txt"), "d b\n")
		}},
		{name: "rewritten-in-place", stray: "d/a.txt", someDeleted: true, change: func(t *testing.T, q, _ string) {
			must(t, os.WriteFile(filepath.Join(q, "d", "a.txt"), []byte("d A\n"), 0o644))
		}},
	} {
		for _, budget := range []int{0, 1} {
			name := c.name
			if budget == 1 {
				name += "/dirs-opened-again"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				q, m, out := raceFixture(t)
				before := raceSnapshot(t, out)
				var after map[string]string
				res := raceRun(t, q, m, budget, "checked", func() {
					c.change(t, q, out)
					after = raceSnapshot(t, out)
				})
				if want := filepath.Join(q, filepath.FromSlash(c.stray)); res.stray != want || res.why == "" || res.err != nil {
					t.Fatalf("stopped at %q (%s, %v), want %s with why", res.stray, res.why, res.err, want)
				}
				if !c.someDeleted && len(res.deleted) > 0 {
					t.Errorf("deleted %v before finding the change", res.deleted)
				}
				for _, rel := range res.deleted {
					if rel == ".git" || m[rel].Kind != "file" {
						t.Errorf("deleted %s", rel)
					}
				}
				if !raceHas(filepath.Join(q, ".git")) {
					t.Errorf("the .git file was deleted")
				}
				if got := raceSnapshot(t, out); !mapsEqual(got, after) {
					t.Errorf("outside the quarantine changed during the deletion: was %v (before the change %v), now %v", after, before, got)
				}
				if c.name == "rewritten-in-place" {
					if b, _ := os.ReadFile(filepath.Join(q, "d", "a.txt")); string(b) != "d A\n" {
						t.Errorf("the rewritten file holds %q", b)
					}
				}
			})
		}
	}
}

// TestQuarantineChangedDuringDeletion: a file written into the quarantine
// after every other file went, before the .git files go, keeps the .git
// file: the tree it moves back to is still one git knows. One written
// after the .git files went stops the removal before the directories go,
// with the .git file's bytes at hand to write back.
func TestQuarantineChangedDuringDeletion(t *testing.T) {
	t.Parallel()
	for _, stage := range []string{"files-deleted", "gitfiles-deleted"} {
		t.Run(stage, func(t *testing.T) {
			t.Parallel()
			q, m, _ := raceFixture(t)
			res := raceRun(t, q, m, 0, stage, func() { raceWrite(t, filepath.Join(q, "d", "mine.txt"), "mine\n") })
			if want := filepath.Join(q, "d", "mine.txt"); res.stray != want || res.err != nil {
				t.Fatalf("stopped at %q (%s, %v), want %s", res.stray, res.why, res.err, want)
			}
			if b, _ := os.ReadFile(res.stray); string(b) != "mine\n" {
				t.Errorf("the file written holds %q", b)
			}
			gitKept := raceHas(filepath.Join(q, ".git"))
			if gitKept != (stage == "files-deleted") || slices.Contains(res.deleted, ".git") == gitKept {
				t.Errorf(".git kept %v, reported deleted %v", gitKept, slices.Contains(res.deleted, ".git"))
			}
			if string(res.gitfiles[".git"]) != raceGitfile {
				t.Errorf("the .git file's bytes were not kept: %q", res.gitfiles[".git"])
			}
			if n := len(m) - 1; len(res.deleted) < n {
				t.Errorf("deleted %d files, want every other file (%d)", len(res.deleted), n)
			}
		})
	}
}

// TestQuarantineNeverFollowsASwappedDirectory: a directory swapped for a
// symlink to a directory outside, holding files of the same names and
// bytes, while the deletion runs (after its first file went), loses
// nothing through the link: the files outside are all still there.
func TestQuarantineNeverFollowsASwappedDirectory(t *testing.T) {
	t.Parallel()
	for _, budget := range []int{0, 1} {
		t.Run(fmt.Sprintf("budget-%d", budget), func(t *testing.T) {
			t.Parallel()
			neverFollows(t, budget)
		})
	}
}

func neverFollows(t *testing.T, budget int) {
	q, m, out := raceFixture(t)
	decoy := filepath.Join(out, "decoy")
	raceWrite(t, filepath.Join(decoy, "c.txt"), "e c\n")
	res := qdeletion{m: m, idLen: 40, budget: budget, afterFirst: func() {
		// On a deleting goroutine: report, never t.Fatal.
		if err := os.Rename(filepath.Join(q, "e"), filepath.Join(out, "e")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(decoy, filepath.Join(q, "e")); err != nil {
			t.Error(err)
		}
	}}.run(q)
	if res.stray == "" {
		t.Fatalf("the removal completed over a swapped directory")
	}
	if b, err := os.ReadFile(filepath.Join(decoy, "c.txt")); err != nil || string(b) != "e c\n" {
		t.Errorf("a file outside was deleted through the symlink: %q, %v", b, err)
	}
	if !raceHas(filepath.Join(q, ".git")) {
		t.Errorf("the .git file was deleted")
	}
}

// TestRestoreDeletedWritesGitfilesBack: a stopped removal writes each
// deleted .git file back with the bytes the check read, never over a
// file there, and reports what it could not put back.
func TestRestoreDeletedWritesGitfilesBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	raceWrite(t, filepath.Join(dir, "sub", ".git"), "a person's\n")
	m := Manifest{".git": {Kind: "gitfile"}, "sub": {Kind: "dir"}, "sub/.git": {Kind: "gitfile"}, "gone/.git": {Kind: "gitfile"}, "node_modules": {Kind: "discard"}}
	tracked, left := restoreDeleted(t.Context(), &Env{}, dir, m, []string{".git", "gone/.git", "node_modules/x.js", "sub/.git"},
		map[string][]byte{".git": []byte(raceGitfile), "sub/.git": []byte("gitdir: ../.git/modules/sub\n"), "gone/.git": []byte("gitdir: x\n")})
	if tracked != 3 || !slices.Equal(left, []string{"gone/.git"}) {
		t.Errorf("restoreDeleted = %d, %v; want 3, [gone/.git]", tracked, left)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git")); string(b) != raceGitfile {
		t.Errorf(".git holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", ".git")); string(b) != "a person's\n" {
		t.Errorf("sub/.git was overwritten: %q", b)
	}
}

func raceSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			got[p] = string(b)
		}
		return nil
	})
	return got
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestQuarantineKeepsAFileSavedOverACheckedOne: a file saved over a
// checked file's name (renamed over it, as editors save) after that
// file's last verification and before its deletion is kept with its
// bytes, and the deletion stops there.
func TestQuarantineKeepsAFileSavedOverACheckedOne(t *testing.T) {
	t.Parallel()
	q, m, out := raceFixture(t)
	sc, stray, why := scanQuarantine(q, m, 40, nil, 0)
	defer sc.close()
	if stray != "" {
		t.Fatalf("check: %s %s", stray, why)
	}
	target := filepath.Join(q, "d", "a.txt")
	i := slices.IndexFunc(sc.files, func(f quarantinedFile) bool { return f.path == target })
	if i < 0 {
		t.Fatalf("%s not among the files checked", target)
	}
	c := &dirCache{sc: sc}
	defer c.close()
	why, err := sc.remove(sc.files[i], func(f quarantinedFile, fi fs.FileInfo) string {
		if w := m.unexpected(f.rel, f.path, fi, 40); w != "" {
			return w
		}
		raceWrite(t, filepath.Join(out, "saved"), "a person's save\n")
		must(t, os.Rename(filepath.Join(out, "saved"), target))
		return ""
	}, c)
	if why == "" || err != nil {
		t.Errorf("remove = %q, %v; want it refused", why, err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "a person's save\n" {
		t.Errorf("the file saved over %s: %q, %v", target, b, err)
	}
	if raceHas(filepath.Join(q, "d", asidePrefix+"a.txt")) {
		t.Errorf("a file renamed aside was left behind")
	}
}

// TestQuarantineSettlesAFileLeftAside: a file a killed deletion renamed
// aside is checked as the file it was: deleted when it still is HEAD's,
// a stray when it is not. A file whose name leaves no room for the
// aside prefix is deleted by its own name.
func TestQuarantineSettlesAFileLeftAside(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, content string
		ok            bool
	}{{"head", "d a\n", true}, {"other", "a person's a\n", false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q, m, _ := raceFixture(t)
			must(t, os.Remove(filepath.Join(q, "d", "a.txt")))
			raceWrite(t, filepath.Join(q, "d", asidePrefix+"a.txt"), c.content)
			res := raceRun(t, q, m, 0, "", nil)
			if c.ok != (res.stray == "") {
				t.Fatalf("stopped at %q (%s, %v), want ok %v", res.stray, res.why, res.err, c.ok)
			}
			if c.ok && (raceHas(q) || !slices.Contains(res.deleted, "d/a.txt")) {
				t.Errorf("quarantine left %v, deleted %v", raceHas(q), res.deleted)
			}
			if !c.ok && len(res.deleted) > 0 {
				t.Errorf("deleted %v with a stray there", res.deleted)
			}
		})
	}
	t.Run("long-name", func(t *testing.T) {
		t.Parallel()
		q, m, _ := raceFixture(t)
		long := strings.Repeat("l", 250)
		raceWrite(t, filepath.Join(q, "d", long), "long\n")
		m["d/"+long] = Entry{Kind: "file", OID: gitfiles.BlobID(gitfiles.FormatSHA1, []byte("long\n"))}
		if res := raceRun(t, q, m, 0, "", nil); res.stray != "" || raceHas(q) {
			t.Errorf("stopped at %q (%s, %v)", res.stray, res.why, res.err)
		}
	})
}

// TestRestoreRetryPastes: the retry a stopped removal gives when some
// deleted files could not be put back, run as printed in a shell on a
// real repository whose path has a space, checks out exactly the tracked
// files missing, keeps a person's edit to another, then runs what
// follows.
func TestRestoreRetryPastes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := filepath.Join(t.TempDir(), "my tree")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(t, os.MkdirAll(dir, 0o755))
	git("init", "-q")
	raceWrite(t, filepath.Join(dir, "a.txt"), "a\n")
	raceWrite(t, filepath.Join(dir, "d", "b.txt"), "b\n")
	raceWrite(t, filepath.Join(dir, "c.txt"), "c\n")
	git("add", ".")
	git("commit", "-qm", "three")
	must(t, os.Remove(filepath.Join(dir, "a.txt")))
	must(t, os.RemoveAll(filepath.Join(dir, "d")))
	raceWrite(t, filepath.Join(dir, "c.txt"), "a person's c\n")
	done := filepath.Join(t.TempDir(), "then ran")
	cmd := exec.Command("sh", "-c", machine.RestoreRetry(dir, "touch "+machine.QuoteArg(done)))
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	for f, want := range map[string]string{"a.txt": "a\n", "d/b.txt": "b\n", "c.txt": "a person's c\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f))); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", f, b, err, want)
		}
	}
	if !raceHas(done) {
		t.Errorf("what follows the restore did not run")
	}
}

// TestPutBackNamesFilesLeftAside: a stopped removal gives a file a killed
// run left aside its own name again, unless something took the name.
func TestPutBackNamesFilesLeftAside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raceWrite(t, filepath.Join(dir, "d", asidePrefix+"a.txt"), "a\n")
	raceWrite(t, filepath.Join(dir, asidePrefix+".git"), raceGitfile)
	raceWrite(t, filepath.Join(dir, asidePrefix+"b.txt"), "b\n")
	raceWrite(t, filepath.Join(dir, "b.txt"), "a person's b\n")
	putBack(dir, map[string]string{"d/a.txt": "d/" + asidePrefix + "a.txt", ".git": asidePrefix + ".git", "b.txt": asidePrefix + "b.txt"}, nil)
	for f, want := range map[string]string{"d/a.txt": "a\n", ".git": raceGitfile, "b.txt": "a person's b\n", asidePrefix + "b.txt": "b\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f))); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", f, b, err, want)
		}
	}
	if raceHas(filepath.Join(dir, "d", asidePrefix+"a.txt")) || raceHas(filepath.Join(dir, asidePrefix+".git")) {
		t.Errorf("a file put back is still aside too")
	}
}

package gitfiles

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
)

// ctGit runs git in dir and returns its trimmed output.
func ctGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// ctRewrite rewrites the index at p with edit applied to everything but
// its checksum, which is made again in format.
func ctRewrite(t *testing.T, p string, format ObjectFormat, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	n := sha1.Size
	if format == FormatSHA256 {
		n = sha256.Size
	}
	body := edit(bytes.Clone(b[:len(b)-n]))
	var sum []byte
	if format == FormatSHA256 {
		s := sha256.Sum256(body)
		sum = s[:]
	} else {
		s := sha1.Sum(body)
		sum = s[:]
	}
	if err := os.WriteFile(p, append(body, sum...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ctCheck reads the index at p and checks its cache tree against its
// entries.
func ctCheck(t *testing.T, p string) (IndexFile, cacheTreeCheck) {
	idx, c, _ := ctCheckDirs(t, p)
	return idx, c
}

// ctCheckDirs is ctCheck also giving what the entries make.
func ctCheckDirs(t *testing.T, p string) (IndexFile, cacheTreeCheck, map[string]dirTree) {
	t.Helper()
	idx, err := ReadIndexFileWhole(p)
	if err != nil {
		t.Fatal(err)
	}
	_, dirs, err := IndexTrees(FormatOf(idx.Ents[0].OID), idx.Ents)
	if err != nil {
		t.Fatal(err)
	}
	return idx, idx.Cache.check(dirs), dirs
}

// TestCacheTreeIsWhatGitWrote: in both object formats and index versions
// 2 to 4, the cache tree custody reads names, for every directory, the
// tree git has for it at HEAD, and the check calls it complete; an entry
// Git updates invalidates its directories (incomplete, nothing stale);
// a blob staged behind the cache tree's back, or a count that lies, makes
// exactly the deepest directory stale, and the status path refuses it.
func TestCacheTreeIsWhatGitWrote(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, format := range []ObjectFormat{FormatSHA1, FormatSHA256} {
		for _, version := range []string{"2", "3", "4"} {
			t.Run(string(format)+"/v"+version, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				if out, err := exec.Command("git", "init", "-q", "--object-format="+string(format), dir).CombinedOutput(); err != nil {
					t.Skipf("this git makes no %s repository: %s", format, out)
				}
				for _, f := range []string{"a.txt", "d/x.txt", "d/e/y.txt", "d/e/z.txt", "f/g/h.txt", "f-g.txt"} {
					p := filepath.Join(dir, filepath.FromSlash(f))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				ctGit(t, dir, "add", ".")
				ctGit(t, dir, "commit", "-q", "-m", "one")
				ctGit(t, dir, "update-index", "--index-version", version)
				index := filepath.Join(dir, ".git", "index")

				idx, c := ctCheck(t, index)
				if !idx.Cache.present || !idx.Cache.regular || !c.complete || len(c.stale) > 0 {
					t.Fatalf("after commit: present %v, regular %v, %+v; want a complete cache tree", idx.Cache.present, idx.Cache.regular, c)
				}
				for _, n := range idx.Cache.nodes {
					if want := ctGit(t, dir, "rev-parse", "HEAD:"+n.path); n.id != want {
						t.Errorf("node %q names %s, HEAD has %s", n.path, n.id, want)
					}
				}
				if len(idx.Cache.nodes) != 5 {
					t.Errorf("%d nodes, want 5 (the root, d, d/e, f, f/g): %+v", len(idx.Cache.nodes), idx.Cache.nodes)
				}
				if hs := StaleIndexView(dir, idx, idx.Ents, machine.Status{}, ""); len(hs) > 0 {
					t.Errorf("a cache tree that tells the truth: %+v", hs)
				}

				// A blob staged behind the cache tree's back.
				old, err := hex.DecodeString(ctGit(t, dir, "rev-parse", ":d/e/y.txt"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "d", "e", "y.txt"), []byte("STAGED!!!\n"), 0o644); err != nil { // as long as HEAD's: git rehashes it
					t.Fatal(err)
				}
				staged, err := hex.DecodeString(ctGit(t, dir, "hash-object", "-w", "d/e/y.txt"))
				if err != nil {
					t.Fatal(err)
				}
				ctRewrite(t, index, format, func(b []byte) []byte { return bytes.Replace(b, old, staged, 1) })
				if st := ctGit(t, dir, "status", "--porcelain"); st != "" {
					t.Fatalf("git status sees through the cache tree: %s", st)
				}
				idx, c = ctCheck(t, index)
				if c.complete || len(c.stale) != 1 || c.stale[0] != "d/e" {
					t.Fatalf("a staged blob behind the cache tree: %+v; want d/e stale", c)
				}
				hs := StaleIndexView(dir, idx, idx.Ents, machine.Status{}, "")
				if len(hs) != 1 || hs[0].Code != machine.CodeStaleCacheTree || hs[0].Path != filepath.Join(dir, "d", "e") {
					t.Fatalf("the status path: %+v; want one %s at d/e", hs, machine.CodeStaleCacheTree)
				}

				// Git updates the entry: its directories are invalidated.
				future := time.Now().Add(time.Hour)
				if err := os.Chtimes(filepath.Join(dir, "d", "e", "y.txt"), future, future); err != nil {
					t.Fatal(err)
				}
				ctGit(t, dir, "update-index", "d/e/y.txt")
				idx, c, dirs := ctCheckDirs(t, index)
				if c.complete || len(c.stale) > 0 {
					t.Fatalf("after update-index: %+v; want incomplete, nothing stale", c)
				}
				if got := idx.Cache.reads(dirs); strings.Join(got, ",") != "d,d/e" {
					t.Errorf("git reads the trees of %q below the root, want d and d/e", got)
				}
				if hs := StaleIndexView(dir, idx, idx.Ents, machine.Status{}, ""); len(hs) > 0 {
					t.Errorf("an invalidated cache tree: %+v", hs)
				}
				ctGit(t, dir, "commit", "-q", "-m", "two")
				if _, c = ctCheck(t, index); !c.complete {
					t.Fatalf("after commit: %+v; want complete", c)
				}

				// A root node that lies misleads commit, not status, which
				// compares the root's entries one by one.
				ctRewrite(t, index, format, func(b []byte) []byte {
					at := bytes.Index(b, []byte("TREE"))
					nl := at + 8 + bytes.IndexByte(b[at+8:], '\n') + 1
					b[nl] ^= 0xff
					return b
				})
				idx, c = ctCheck(t, index)
				if c.complete || len(c.stale) != 1 || c.stale[0] != "" {
					t.Fatalf("a root node that lies: %+v; want the root stale", c)
				}
				if hs := StaleIndexView(dir, idx, idx.Ents, machine.Status{}, ""); len(hs) > 0 {
					t.Errorf("the status path refuses a root node that lies: %+v", hs)
				}
				ctGit(t, dir, "read-tree", "HEAD")

				// A count that lies: f/g covers one entry, not two.
				ctRewrite(t, index, format, func(b []byte) []byte {
					return bytes.Replace(b, []byte("g\x001 0\n"), []byte("g\x002 0\n"), 1)
				})
				if _, c = ctCheck(t, index); c.complete || len(c.stale) != 1 || c.stale[0] != "f/g" {
					t.Fatalf("a count that lies: %+v; want f/g stale", c)
				}
			})
		}
	}
}

// TestParseCacheTreeAsGitReads: a body git would not read is no cache
// tree; one read otherwise than git reads it is present but irregular,
// so nothing takes it as proof; invalidated nodes carry no id.
func TestParseCacheTreeAsGitReads(t *testing.T) {
	t.Parallel()
	id := bytes.Repeat([]byte{0xab}, sha1.Size)
	node := func(name, counts string, withID bool) []byte {
		b := []byte(name + "\x00" + counts + "\n")
		if withID {
			b = append(b, id...)
		}
		return b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		name             string
		body             []byte
		present, regular bool
		nodes            int
	}{
		{"root only", node("", "2 0", true), true, true, 1},
		{"invalidated root", cat(node("", "-1 1", false), node("d", "1 0", true)), true, true, 2},
		{"root with a name", node("x", "1 0", true), false, false, 0},
		{"truncated id", node("", "1 0", false), false, false, 0},
		{"missing subtree", node("", "1 1", true), false, false, 0},
		{"no newline", []byte("\x001 0"), false, false, 0},
		{"counts strtol reads", node("", " 1 0", true), true, false, 0},
		{"a child twice", cat(node("", "2 2", true), node("d", "1 0", true), node("d", "1 0", true)), true, false, 3},
		{"a child with a slash", cat(node("", "1 1", true), node("d/e", "1 0", true)), true, false, 2},
		{"an empty child name", cat(node("", "1 1", true), node("", "1 0", true)), true, false, 2},
	} {
		got := parseCacheTree(c.body, sha1.Size)
		if got.present != c.present || got.regular != c.regular || len(got.nodes) != c.nodes {
			t.Errorf("%s: present %v regular %v, %d nodes; want %v %v %d", c.name, got.present, got.regular, len(got.nodes), c.present, c.regular, c.nodes)
		}
		root := map[string]dirTree{"": {id: hex.EncodeToString(id), entries: 2}}
		if complete := got.check(root).complete; complete != (c.name == "root only") {
			t.Errorf("%s: complete %v against a root of two entries", c.name, complete)
		}
	}
}

// TestStaleIndexViewHoldsGitsEntriesToHEAD: when custody read no cache
// tree, entries git listed that make another tree than HEAD's, under a
// status that reports no change, are refused; a status that reports one,
// an unknown HEAD tree, or entries that make HEAD's tree, are not.
func TestStaleIndexViewHoldsGitsEntriesToHEAD(t *testing.T) {
	t.Parallel()
	ents := []IndexEntry{{Tag: 'H', Mode: "100644", OID: strings.Repeat("1", 40), Path: "a.txt"}}
	head, err := IndexTreeID(FormatSHA1, ents)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("2", 40)
	if hs := StaleIndexView("/t", IndexFile{}, ents, machine.Status{}, other); len(hs) != 1 || hs[0].Code != machine.CodeStaleCacheTree || hs[0].Path != "/t" {
		t.Errorf("entries that are not HEAD's under a clean status: %+v", hs)
	}
	for name, hs := range map[string][]machine.Hidden{
		"HEAD's tree":     StaleIndexView("/t", IndexFile{}, ents, machine.Status{}, head),
		"unknown HEAD":    StaleIndexView("/t", IndexFile{}, ents, machine.Status{}, ""),
		"a change status": StaleIndexView("/t", IndexFile{}, ents, machine.Status{Changed: []string{"a.txt"}}, other),
		"no entries read": StaleIndexView("/t", IndexFile{}, nil, machine.Status{}, other),
	} {
		if len(hs) > 0 {
			t.Errorf("%s: %+v", name, hs)
		}
	}
}

// TestLooseTreeIntact: a tree git wrote loose is intact; the same bytes
// emptied, with one byte changed, or packed away are not, and neither is a
// blob, nor an id of the other format.
func TestLooseTreeIntact(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := func() string {
		dir := t.TempDir()
		ctGit(t, dir, "init", "-q")
		for _, f := range []string{"a/x.txt", "b/y.txt", "c/z.txt"} {
			p := filepath.Join(dir, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctGit(t, dir, "add", ".")
		ctGit(t, dir, "commit", "-q", "-m", "one")
		return dir
	}
	packed := repo()
	ctGit(t, packed, "repack", "-a", "-d", "-q")
	ctGit(t, packed, "prune-packed")
	if looseTreeIntact(filepath.Join(packed, ".git", "objects"), FormatSHA1, ctGit(t, packed, "rev-parse", "HEAD:a")) {
		t.Error("a packed tree is taken for a loose one")
	}
	dir := repo()
	objects := filepath.Join(dir, ".git", "objects")
	obj := func(id string) string { return filepath.Join(objects, id[:2], id[2:]) }
	a, b, c := ctGit(t, dir, "rev-parse", "HEAD:a"), ctGit(t, dir, "rev-parse", "HEAD:b"), ctGit(t, dir, "rev-parse", "HEAD:c")
	if !looseTreeIntact(objects, FormatSHA1, a) {
		t.Fatalf("the loose tree %s is not intact", a)
	}
	if looseTreeIntact(objects, FormatSHA1, ctGit(t, dir, "rev-parse", "HEAD:a/x.txt")) {
		t.Error("a blob is taken for a tree")
	}
	if looseTreeIntact(objects, FormatSHA256, a) || looseTreeIntact(objects, FormatSHA1, strings.Repeat("0", 40)) {
		t.Error("an id of the other format, or of no object, is taken for a tree")
	}
	bb, err := os.ReadFile(obj(b))
	if err != nil {
		t.Fatal(err)
	}
	bb[len(bb)-1] ^= 1
	for _, w := range []struct {
		id   string
		body []byte
	}{{b, bb}, {c, nil}} {
		if err := os.Chmod(obj(w.id), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(obj(w.id), w.body, 0o644); err != nil {
			t.Fatal(err)
		}
		if looseTreeIntact(objects, FormatSHA1, w.id) {
			t.Errorf("a loose tree of %d bytes that git cannot read is intact", len(w.body))
		}
	}
}

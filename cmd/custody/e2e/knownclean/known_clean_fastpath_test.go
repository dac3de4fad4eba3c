//go:build unix

package knownclean

// Plan observes a finished tree that is exactly its HEAD without git
// status (decision 0185); apply always runs status. These tests put real
// trees into states next to that fast path and hold plan and apply to one
// honest outcome: plan observes each tree as the status path does (the
// same action and fingerprint as a plan made with status for every tree),
// a removal plan proposes is one apply carries out (never a stale refusal,
// which would make "custody plan" advice that loops), and a tree holding
// bytes HEAD lacks is never removed. Every helper is prefixed kcr.

import (
	"bytes"
	"crypto/sha1"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// kcrCase is one state of a finished, merged tree.
type kcrCase struct {
	name string
	// work adds to the tree's own commit (before it is committed, pushed
	// and finished); w.txt is always in it.
	work func(t *testing.T, r *fixtures.Repo, path string)
	// amend, when set, runs once the work is committed, before it is
	// pushed (it may make another HEAD).
	amend func(t *testing.T, r *fixtures.Repo, path string)
	// state puts the finished tree into the state under test.
	state func(t *testing.T, r *fixtures.Repo, id, path string)
	// foreign says the tree then holds bytes HEAD lacks: it must be kept.
	foreign bool
	// env, when set, is added to plan's and apply's environment.
	env func(r *fixtures.Repo) []string
	// fast says plan must observe the tree without status: the fast path
	// does not grow narrower for the trees it is for.
	fast bool
	// finding, when set, is a known disagreement: while it reproduces the
	// case skips, naming it and what plan and apply did; once it does not,
	// the case fails until the finding is dropped.
	finding string
}

// kcrOld is an mtime every touched file gets: stat data that no longer
// matches the index, with bytes that still do.
var kcrOld = time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)

func kcrTouch(t *testing.T, p string) {
	t.Helper()
	if err := os.Chtimes(p, kcrOld, kcrOld); err != nil {
		t.Fatal(err)
	}
}

func kcrChown(t *testing.T, p string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a path another owner")
	}
	if err := os.Lchown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Lchown(p, 0, 0) })
}

// kcrCRLF commits crlf.txt with CRLF line ends, no conversion on the way.
func kcrCRLF(content string) func(*testing.T, *fixtures.Repo, string) {
	return func(t *testing.T, r *fixtures.Repo, path string) {
		r.GitIn(path, "config", "core.autocrlf", "false")
		clitest.WriteMode(t, filepath.Join(path, "crlf.txt"), []byte(content), 0o644)
	}
}

// kcrConfig sets each key, value pair in the repository's configuration
// and touches every named file of the tree.
func kcrConfig(kv []string, touch ...string) func(*testing.T, *fixtures.Repo, string, string) {
	return func(t *testing.T, r *fixtures.Repo, _, path string) {
		for i := 0; i+1 < len(kv); i += 2 {
			r.Git("config", kv[i], kv[i+1])
		}
		for _, f := range touch {
			kcrTouch(t, filepath.Join(path, f))
		}
	}
}

// kcrStaleSize checks w.txt out again with core.autocrlf=true (CRLF on disk,
// their size in the index's stat data), then writes HEAD's own bytes (LF)
// back, the way an editor or dos2unix would: the bytes are exactly HEAD's,
// but the size git recorded is not theirs, and git status takes a size
// change for a change without reading the file. keep leaves
// core.autocrlf=true set, else it is unset again.
func kcrStaleSize(keep bool) func(*testing.T, *fixtures.Repo, string, string) {
	return func(t *testing.T, r *fixtures.Repo, _, path string) {
		p := filepath.Join(path, "w.txt")
		head, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r.Git("config", "core.autocrlf", "true")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		r.GitIn(path, "checkout", "--", "w.txt")
		if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte("\r\n")) {
			t.Fatalf("checkout wrote %q, want CRLF", b)
		}
		if !keep {
			r.Git("config", "--unset", "core.autocrlf")
		}
		clitest.WriteMode(t, p, head, 0o644)
	}
}

// kcrAttrSource writes a tree holding only a .gitattributes that passes
// every .txt file through an upper-casing clean filter (configured here),
// touches w.txt, and returns the tree's id. It skips the test when this git
// does not read attributes from a tree by how (the environment variable
// "GIT_ATTR_SOURCE=" or the setting "attr.tree=").
func kcrAttrSource(t *testing.T, r *fixtures.Repo, path, how string) string {
	t.Helper()
	blob := kcrHashObject(t, r, path, "*.txt filter=upper\n")
	tree := kcrMktree(t, r, path, "100644 blob "+blob+"\t.gitattributes\n")
	cmd := exec.Command("git", "check-attr", "filter", "w.txt")
	cmd.Dir, cmd.Env = path, r.Env()
	if k, ok := strings.CutSuffix(how, "="); ok && strings.HasPrefix(how, "GIT_") {
		cmd.Env = append(cmd.Env, k+"="+tree)
	} else {
		cmd.Args = []string{"git", "-c", k + "=" + tree, "check-attr", "filter", "w.txt"}
	}
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "filter: upper") {
		t.Skipf("this git reads no attributes from a tree named by %s (%s)", how, out)
	}
	r.Git("config", "filter.upper.clean", "tr a-z A-Z")
	kcrTouch(t, filepath.Join(path, "w.txt"))
	return tree
}

func kcrHashObject(t *testing.T, r *fixtures.Repo, dir, content string) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, r.Env(), strings.NewReader(content)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func kcrRead(r *fixtures.Repo, name string) string {
	b, err := os.ReadFile(filepath.Join(r.Root, name))
	if err != nil {
		r.TB.Fatal(err)
	}
	return string(b)
}

// kcrMktree writes the tree listing (ls-tree's format) describes.
func kcrMktree(t *testing.T, r *fixtures.Repo, dir, listing string) string {
	t.Helper()
	cmd := exec.Command("git", "mktree")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, r.Env(), strings.NewReader(listing)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git mktree: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// kcrEditCacheTree rewrites the tree's index with the body of its cache
// tree (the TREE extension) passed through edit, which keeps its length,
// and the checksum made again.
func kcrEditCacheTree(t *testing.T, r *fixtures.Repo, id string, edit func(body []byte) []byte) {
	t.Helper()
	idx := filepath.Join(r.Dir, ".git", "worktrees", id, "index")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte("TREE\x00\x00"))
	if at < 0 {
		t.Fatal("the index has no cache tree")
	}
	n := int(b[at+6])<<8 | int(b[at+7])
	body := b[at+8 : at+8+n]
	edited := edit(bytes.Clone(body))
	if len(edited) != n || bytes.Equal(edited, body) {
		t.Fatalf("the cache tree edit changed its length or nothing: %q -> %q", body, edited)
	}
	copy(body, edited)
	sum := sha1.Sum(b[:len(b)-sha1.Size])
	copy(b[len(b)-sha1.Size:], sum[:])
	clitest.WriteMode(t, idx, b, 0o644)
}

// kcrCacheTreeNode is the cache tree node of directory d (a child of the
// root) as the index holds it: its name, NUL, its entry count, a space,
// its number of subtrees and a newline.
func kcrCacheTreeNode(d string, entries int) []byte {
	return []byte(d + "\x00" + strconv.Itoa(entries) + " 0\n")
}

func kcrCases() []kcrCase {
	return []kcrCase{
		{name: "Clean", fast: true},
		{name: "ReadTreeHead", fast: true, work: func(t *testing.T, r *fixtures.Repo, path string) {
			r.WriteFile(path, "d/x.txt", "in HEAD\n")
		}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.GitIn(path, "read-tree", "HEAD") // no stat data, a cache tree primed from HEAD
		}},
		{name: "ResetMixed", fast: true, work: func(t *testing.T, r *fixtures.Repo, path string) {
			r.WriteFile(path, "d/x.txt", "in HEAD\n")
		}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.WriteFile(path, "d/x.txt", "staged, then unstaged and put back\n")
			r.GitIn(path, "add", "d/x.txt")
			r.GitIn(path, "reset", "-q")
			r.GitIn(path, "checkout", "--", "d/x.txt")
		}},
		{name: "StashPushPop", fast: true, work: func(t *testing.T, r *fixtures.Repo, path string) {
			r.WriteFile(path, "d/x.txt", "in HEAD\n")
		}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.WriteFile(path, "d/x.txt", "stashed\n")
			r.GitIn(path, "stash", "-q")
			r.GitIn(path, "stash", "drop", "-q")
		}},
		{name: "StatDirtySameBytes", fast: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			kcrTouch(t, filepath.Join(path, "w.txt"))
		}},
		{name: "HardlinkSameBytes", fast: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			p := filepath.Join(path, "w.txt")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(r.Root, "outside-w.txt")
			clitest.WriteMode(t, other, b, 0o644)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(other, p); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "AutocrlfTrueCRLFBlob", fast: true, work: kcrCRLF("a\r\nb\r\n"), state: kcrConfig([]string{"core.autocrlf", "true"}, "crlf.txt")},
		{name: "AutocrlfInputCRLFBlob", fast: true, work: kcrCRLF("a\r\nb\r\n"), state: kcrConfig([]string{"core.autocrlf", "input"}, "crlf.txt")},
		{name: "AutocrlfSafecrlfMixedBlob", fast: true, work: kcrCRLF("a\r\nb\nc\r"), state: kcrConfig([]string{"core.autocrlf", "true", "core.safecrlf", "true"}, "crlf.txt")},
		{name: "AutocrlfTrueLFBlob", fast: true, state: kcrConfig([]string{"core.autocrlf", "true", "core.eol", "crlf"}, "w.txt")},
		{name: "CheckedOutCRLFNowHEADsBytes", state: kcrStaleSize(true)},
		{name: "CheckedOutCRLFNowHEADsBytesAutocrlfOff", state: kcrStaleSize(false)},
		{name: "EolCRLFNoAttributes", fast: true, state: kcrConfig([]string{"core.eol", "crlf"}, "w.txt")},
		{name: "IgnorecaseCaseTwins", fast: true, work: func(t *testing.T, r *fixtures.Repo, path string) {
			r.WriteFile(path, "Case.txt", "upper\n")
			r.WriteFile(path, "case.txt", "lower\n")
		}, state: kcrConfig([]string{"core.ignorecase", "true"}, "Case.txt", "case.txt")},
		{name: "SymlinksFalseRealLink", fast: true, work: func(t *testing.T, r *fixtures.Repo, path string) {
			if err := os.Symlink("w.txt", filepath.Join(path, "link")); err != nil {
				t.Fatal(err)
			}
		}, state: kcrConfig([]string{"core.symlinks", "false"}, "w.txt")},
		{name: "FileModeFalseExec", fast: true, work: func(t *testing.T, r *fixtures.Repo, path string) {
			clitest.WriteMode(t, filepath.Join(path, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
		}, state: kcrConfig([]string{"core.fileMode", "false"}, "run.sh")},
		{name: "CheckStatMinimal", fast: true, state: kcrConfig([]string{"core.checkStat", "minimal", "core.trustctime", "false"}, "w.txt")},
		{name: "SplitIndex", state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.GitIn(path, "update-index", "--split-index")
		}},
		{name: "IndexVersion4", fast: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.GitIn(path, "update-index", "--index-version", "4")
			kcrTouch(t, filepath.Join(path, "w.txt"))
		}},
		{name: "UntrackedCache", fast: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.Git("config", "core.untrackedCache", "true")
			r.GitIn(path, "update-index", "--untracked-cache")
			r.GitIn(path, "status", "--porcelain")
		}},
		{name: "FsmonitorHookSaysNothing", state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			hook := filepath.Join(r.Root, "fsmonitor-nothing")
			clitest.WriteMode(t, hook, []byte("#!/bin/sh\nprintf 'token\\0'\n"), 0o755)
			r.Git("config", "core.fsmonitor", hook)
			r.GitIn(path, "status", "--porcelain")
			kcrTouch(t, filepath.Join(path, "w.txt"))
		}},
		{name: "SparseCheckoutEverything", state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.GitIn(path, "sparse-checkout", "set", "--no-cone", "/*")
		}},
		{name: "UninitialisedSubmodule", work: func(t *testing.T, r *fixtures.Repo, path string) {
			r.UninitSubmodule(path, "sub")
		}},
		{name: "DetachedAtHead", fast: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.GitIn(path, "checkout", "-q", "--detach")
		}},
		{name: "UnbornBranch", state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.GitIn(path, "symbolic-ref", "HEAD", "refs/heads/never-born")
		}},
		{name: "GitFileRelative", fast: true, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
			rel, err := filepath.Rel(path, filepath.Join(r.Dir, ".git", "worktrees", id))
			if err != nil {
				t.Fatal(err)
			}
			clitest.WriteMode(t, filepath.Join(path, ".git"), []byte("gitdir: "+rel+"\n"), 0o644)
		}},
		{name: "GitFileCRLF", fast: true, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
			clitest.WriteMode(t, filepath.Join(path, ".git"), []byte("gitdir: "+filepath.Join(r.Dir, ".git", "worktrees", id)+"\r\n"), 0o644)
		}},
		{name: "GitFileSecondLine", fast: true, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
			clitest.WriteMode(t, filepath.Join(path, ".git"), []byte("gitdir: "+filepath.Join(r.Dir, ".git", "worktrees", id)+"\n# moved\n"), 0o644)
		}},
		{name: "CoreWorktreeInCommonConfig", state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			r.Git("config", "core.worktree", r.Dir)
			kcrTouch(t, filepath.Join(path, "w.txt"))
		}},
		{name: "WorktreeConfigWithoutExtension", state: func(t *testing.T, r *fixtures.Repo, id, path string) {
			clitest.WriteMode(t, filepath.Join(r.Dir, ".git", "worktrees", id, "config.worktree"), []byte("[core]\n\tautocrlf = true\n"), 0o644)
		}},
		{name: "IncludedAttributesFile", state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			inc := filepath.Join(r.Root, "included.config")
			attrs := filepath.Join(r.Root, "attrs")
			clitest.WriteMode(t, attrs, []byte("*.txt filter=upper\n"), 0o644)
			clitest.WriteMode(t, inc, []byte("[core]\n\tattributesFile = "+attrs+"\n"), 0o644)
			r.Git("config", "filter.upper.clean", "tr a-z A-Z")
			r.Git("config", "include.path", inc)
			kcrTouch(t, filepath.Join(path, "w.txt"))
		}},
		{name: "AttributesFileFromEnvironment", env: func(r *fixtures.Repo) []string {
			return []string{"GIT_CONFIG_PARAMETERS='core.attributesfile'='" + filepath.Join(r.Root, "attrs") + "' 'filter.upper.clean'='tr a-z A-Z'"}
		},
			state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				clitest.WriteMode(t, filepath.Join(r.Root, "attrs"), []byte("*.txt filter=upper\n"), 0o644)
				kcrTouch(t, filepath.Join(path, "w.txt"))
			}},
		{name: "AttrSourceEnvironment",
			env: func(r *fixtures.Repo) []string {
				return []string{"GIT_ATTR_SOURCE=" + kcrRead(r, "attr-source")}
			}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				src := kcrAttrSource(t, r, path, "GIT_ATTR_SOURCE=")
				clitest.WriteMode(t, filepath.Join(r.Root, "attr-source"), []byte(src), 0o644)
			}},
		{name: "AttrTreeConfig",
			state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				r.Git("config", "attr.tree", kcrAttrSource(t, r, path, "attr.tree="))
			}},
		{name: "IgnoredFileInfoExclude", foreign: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			clitest.WriteMode(t, filepath.Join(r.Dir, ".git", "info", "exclude"), []byte("*.log\n"), 0o644)
			clitest.WriteMode(t, filepath.Join(path, "debug.log"), []byte("mine\n"), 0o644)
		}},
		{name: "NestedIgnoredDirs", foreign: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			clitest.WriteMode(t, filepath.Join(r.Dir, ".git", "info", "exclude"), []byte("/out/\ninner/\n"), 0o644)
			clitest.WriteMode(t, filepath.Join(path, "out", "inner", "deep", "x.bin"), []byte("mine\n"), 0o644)
		}},
		{name: "IndexLockPresent", fast: true, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
			clitest.WriteMode(t, filepath.Join(r.Dir, ".git", "worktrees", id, "index.lock"), nil, 0o644)
		}},
		{name: "IndexMissing", state: func(t *testing.T, r *fixtures.Repo, id, path string) {
			if err := os.Remove(filepath.Join(r.Dir, ".git", "worktrees", id, "index")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "DubiousOwnershipTree",
			state: func(t *testing.T, r *fixtures.Repo, _, path string) { kcrChown(t, path) }},
		{name: "DubiousOwnershipGitFile",
			state: func(t *testing.T, r *fixtures.Repo, _, path string) { kcrChown(t, filepath.Join(path, ".git")) }},
		{name: "DubiousOwnershipAdminDir",
			state: func(t *testing.T, r *fixtures.Repo, id, _ string) {
				kcrChown(t, filepath.Join(r.Dir, ".git", "worktrees", id))
			}},
		{name: "CommonDirMissing", state: func(t *testing.T, r *fixtures.Repo, id, _ string) {
			clitest.WriteMode(t, filepath.Join(r.Dir, ".git", "worktrees", id, "commondir"), []byte(filepath.Join(r.Root, "nowhere")+"\n"), 0o644)
		}},
		{name: "HEADWithEmptySubtree", amend: func(t *testing.T, r *fixtures.Repo, path string) {
			empty := r.GitIn(path, "mktree") // stdin is empty: the empty tree
			listing := r.GitIn(path, "ls-tree", "HEAD")
			tree := kcrMktree(t, r, path, listing+"\n040000 tree "+empty+"\tempty\n")
			commit := r.GitIn(path, "commit-tree", "-p", "HEAD", "-m", "an empty directory", tree)
			r.GitIn(path, "update-ref", "HEAD", commit)
		}},
		{name: "SubtreeObjectMissing",
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				sub := r.GitIn(path, "rev-parse", "HEAD:d")
				obj := filepath.Join(r.Dir, ".git", "objects", sub[:2], sub[2:])
				if err := os.Remove(obj); err != nil {
					t.Skipf("the subtree is not a loose object: %v", err)
				}
				kcrTouch(t, filepath.Join(path, "d", "x.txt"))
				r.GitIn(path, "update-index", "d/x.txt") // the cache tree forgets d
			}},
		{name: "IndexChecksumZero", fast: true, state: func(t *testing.T, r *fixtures.Repo, id, _ string) {
			idx := filepath.Join(r.Dir, ".git", "worktrees", id, "index")
			b, err := os.ReadFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			copy(b[len(b)-sha1.Size:], make([]byte, sha1.Size))
			clitest.WriteMode(t, idx, b, 0o644)
		}},
		{name: "TrackedFileNowFIFO", foreign: true, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
			p := filepath.Join(path, "w.txt")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "LyingCacheTree", foreign: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: clitest.LyingCacheTree},
		{name: "LyingCacheTreeRootFile", foreign: true,
			state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				// The root's node lies, but status compares the root's
				// entries one by one: it sees the change.
				clitest.StageBehindCacheTree(t, r, id, path, "w.txt", false)
			}},
		{name: "LyingCacheTreeIndexVersion4", foreign: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				r.GitIn(path, "update-index", "--index-version", "4")
				clitest.LyingCacheTree(t, r, id, path)
			}},
		{name: "LyingCacheTreeSplitIndex", foreign: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				clitest.LyingCacheTree(t, r, id, path)
				r.GitIn(path, "update-index", "--split-index")
				if st := r.GitIn(path, "status", "--porcelain=v2"); st != "" {
					t.Fatalf("git status sees the staged change in a split index:\n%s", st)
				}
			}},
		{name: "LyingCacheTreeSparseIndex", foreign: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				r.GitIn(path, "config", "index.sparse", "true")
				r.GitIn(path, "sparse-checkout", "set", "--cone", "--sparse-index", "d")
				clitest.LyingCacheTree(t, r, id, path)
			}},
		{name: "ReplacedHeadTree",
			state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				// git replace makes git read another tree wherever it reads
				// HEAD's root tree; its id, and the index's, stay the same.
				// Custody runs git with GIT_NO_REPLACE_OBJECTS=1, so its
				// status reads the tree plan's question named.
				listing := r.GitIn(path, "ls-tree", "HEAD")
				blob := kcrHashObject(t, r, path, "replaced\n")
				other := kcrMktree(t, r, path, listing+"\n100644 blob "+blob+"\tzz-replaced.txt\n")
				r.GitIn(path, "replace", r.GitIn(path, "rev-parse", "HEAD^{tree}"), other)
			}},
		{name: "LyingCacheTreeOffsetTables", foreign: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				// The end-of-entries and offset-table extensions, after the
				// cache tree.
				r.GitIn(path, "-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true", "-c", "index.threads=2",
					"update-index", "--index-version", "4")
				b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "worktrees", id, "index"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(b, []byte("EOIE")) || !bytes.Contains(b, []byte("IEOT")) {
					t.Fatal("the index has no EOIE or IEOT extension")
				}
				clitest.LyingCacheTree(t, r, id, path)
			}},
		{name: "LyingCacheTreeSplitIndexReplacedEntry", foreign: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			},
			amend: func(t *testing.T, r *fixtures.Repo, path string) {
				// d/x.txt committed again in a split index: its entry is
				// one of the split index's own, replacing the shared one's
				// (with no path of its own).
				r.GitIn(path, "update-index", "--split-index")
				r.Commit(path, "d/x.txt", "in HEAD.\n")
			},
			state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "worktrees", id, "index"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(b, []byte("link")) || bytes.Contains(b, []byte("d/x.txt")) {
					t.Fatal("the index is not split, or names d/x.txt in its own file")
				}
				clitest.LyingCacheTree(t, r, id, path)
			}},
		{name: "LyingCacheTreeChecksumZero", foreign: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				// What index.skipHash writes: no checksum, which git does not
				// verify as it reads.
				clitest.LyingCacheTree(t, r, id, path)
				idx := filepath.Join(r.Dir, ".git", "worktrees", id, "index")
				b, err := os.ReadFile(idx)
				if err != nil {
					t.Fatal(err)
				}
				copy(b[len(b)-sha1.Size:], make([]byte, sha1.Size))
				clitest.WriteMode(t, idx, b, 0o644)
			}},
		{name: "CacheTreeCountTooLarge",
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				kcrEditCacheTree(t, r, id, func(b []byte) []byte {
					return bytes.Replace(b, kcrCacheTreeNode("d", 1), kcrCacheTreeNode("d", 2), 1)
				})
			}},
		{name: "CacheTreeNamesAnotherTree",
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, id, path string) {
				other := clitest.Unhex(t, r.GitIn(path, "rev-parse", "HEAD^{tree}"))
				kcrEditCacheTree(t, r, id, func(b []byte) []byte {
					node := kcrCacheTreeNode("d", 1)
					i := bytes.Index(b, node)
					if i < 0 {
						t.Fatalf("no node for d in %q", b)
					}
					copy(b[i+len(node):], other)
					return b
				})
			}},
		{name: "CacheTreeInvalidated", fast: true, // d is a loose tree, intact
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				kcrTouch(t, filepath.Join(path, "d", "x.txt"))
				r.GitIn(path, "update-index", "d/x.txt") // the cache tree forgets d and the root
			}},
		{name: "CacheTreeInvalidatedTreesPacked",
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				r.Git("repack", "-a", "-d", "-q")
				r.Git("prune-packed")
				kcrTouch(t, filepath.Join(path, "d", "x.txt"))
				r.GitIn(path, "update-index", "d/x.txt") // git reads HEAD:d, from the pack
			}},
		{name: "SubtreeObjectEmpty",
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				// What a crash can leave of a loose object: git cannot read it.
				sub := r.GitIn(path, "rev-parse", "HEAD:d")
				obj := filepath.Join(r.Dir, ".git", "objects", sub[:2], sub[2:])
				if err := os.Chmod(obj, 0o644); err != nil {
					t.Skipf("the subtree is not a loose object: %v", err)
				}
				clitest.WriteMode(t, obj, nil, 0o644)
				kcrTouch(t, filepath.Join(path, "d", "x.txt"))
				r.GitIn(path, "update-index", "d/x.txt")
			}},
		{name: "SubtreeObjectMissingCacheTreeValid", fast: true,
			work: func(t *testing.T, r *fixtures.Repo, path string) {
				r.WriteFile(path, "d/x.txt", "in HEAD\n")
			}, state: func(t *testing.T, r *fixtures.Repo, _, path string) {
				sub := r.GitIn(path, "rev-parse", "HEAD:d")
				obj := filepath.Join(r.Dir, ".git", "objects", sub[:2], sub[2:])
				if err := os.Remove(obj); err != nil {
					t.Skipf("the subtree is not a loose object: %v", err)
				}
			}},
	}
}

// kcrStatusKey makes a plan ask git status of every tree while it is set
// in the repository's config: a conditional include, though it never
// applies, could set attributes for some trees
// (observe.AttributesFromOutside), and it overrides no setting.
const kcrStatusKey = "includeIf.onbranch:kcr-never/**.path"

// kcrStatusPlan runs plan with kcrStatusKey set, then unsets it.
func kcrStatusPlan(t *testing.T, r *fixtures.Repo, env []string, args ...string) clitest.Result {
	t.Helper()
	r.Git("config", kcrStatusKey, "/dev/null/never")
	defer r.Git("config", "--unset", kcrStatusKey)
	return clitest.RunBin(t, clitest.Bin(), r, r.Dir, env, args...)
}

// TestKnownCleanFastPathMatchesStatus: over every state, plan's item for the tree is the
// one a plan asking status of every tree makes (action and fingerprint),
// apply carries out every removal plan proposes, and a tree holding bytes
// HEAD lacks is kept.
func TestKnownCleanFastPathMatchesStatus(t *testing.T) {
	t.Parallel()
	for _, c := range kcrCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "kcr")
			r.WriteFile(path, "w.txt", "work\n")
			if c.work != nil {
				c.work(t, r, path)
			}
			r.CommitAll(path, "work")
			if c.amend != nil {
				c.amend(t, r, path)
			}
			r.Push(path, "topic/"+id)
			clitest.FinishAll(t, r, id)
			if c.state != nil {
				c.state(t, r, id, path)
			}
			var env []string
			if c.env != nil {
				env = c.env(r)
			}
			slow := kcrStatusPlan(t, r, env, "plan", "--json", "--debug")
			file := filepath.Join(r.Root, "p.json")
			fast := clitest.RunBin(t, clitest.Bin(), r, r.Dir, env, "plan", "-o", file, "--json", "--debug")
			for _, p := range []clitest.Result{slow, fast} {
				if p.Code != 0 && p.Code != 3 {
					t.Fatalf("plan: %s", p)
				}
			}
			want := clitest.PlanItem(t, clitest.DecodeResult[machine.Plan](t, slow, "plan"), id)
			got := clitest.PlanItem(t, clitest.DecodeResult[machine.Plan](t, fast, "plan"), id)
			fastPath := clitest.GitRuns(fast.Stderr, "-c core.fsmonitor=false") == 0
			if os.Getenv("KCR_DEBUG") != "" {
				t.Logf("slow plan stderr:\n%s", slow.Stderr)
			}
			t.Logf("fast path taken: %v (status runs with every tree asked: %d); plan: %s %v", fastPath, clitest.GitRuns(slow.Stderr, "-c core.fsmonitor=false"), got.Action, clitest.RefusalCodes(got.Refusals))
			var problems []string
			if c.fast && !fastPath {
				problems = append(problems, "plan asked git status of a tree that is exactly its HEAD")
			}
			if got.Action != want.Action || got.Fingerprint != want.Fingerprint {
				problems = append(problems, "plan "+string(got.Action)+" "+strings.Join(clitest.RefusalCodes(got.Refusals), ",")+
					", a plan asking status of every tree "+string(want.Action)+" "+strings.Join(clitest.RefusalCodes(want.Refusals), ",")+
					" (fingerprints equal: "+boolWord(got.Fingerprint == want.Fingerprint)+")")
			}
			if c.foreign && got.Action != machine.ActionKeep {
				problems = append(problems, "plan "+string(got.Action)+"s a tree holding bytes HEAD lacks")
			}
			ap := clitest.RunBin(t, clitest.Bin(), r, r.Dir, env, "apply", file, "--json")
			if ap.Code != 0 && ap.Code != 3 {
				t.Fatalf("apply: %s", ap)
			}
			res := clitest.DecodeResult[steps.ApplyResult](t, ap, "apply")
			var out *steps.Outcome
			for i := range res.Items {
				if res.Items[i].ID == id {
					out = &res.Items[i]
				}
			}
			_, statErr := os.Lstat(path)
			switch {
			case got.Action == machine.ActionKeep && out != nil:
				problems = append(problems, "apply acted on a kept item: "+string(out.Outcome))
			case got.Action != machine.ActionKeep && (out == nil || out.Outcome != "removed"):
				what := "nothing"
				if out != nil {
					what = string(out.Outcome)
					if out.Refusal != nil {
						what += " [" + string(out.Refusal.Code) + "] " + out.Refusal.Message
					}
				}
				if out != nil {
					// Is the advice a loop? The next plan, on the tree as apply left it.
					again := clitest.RunBin(t, clitest.Bin(), r, r.Dir, env, "plan", "--json")
					if again.Code == 0 || again.Code == 3 {
						next := clitest.PlanItem(t, clitest.DecodeResult[machine.Plan](t, again, "plan"), id)
						what += "; the next plan: " + string(next.Action)
					}
				}
				problems = append(problems, "plan "+string(got.Action)+"s the tree, apply: "+what)
			}
			if c.foreign && statErr != nil {
				problems = append(problems, "a tree holding bytes HEAD lacks is gone: "+statErr.Error())
			}
			if len(problems) == 0 {
				if c.finding != "" {
					t.Errorf("the finding %q no longer reproduces: drop it", c.finding)
				}
				return
			}
			if c.finding != "" {
				t.Skip("finding: " + c.finding + ": " + strings.Join(problems, "; "))
			}
			t.Errorf("%s\nplan:\n%s\napply:\n%s", strings.Join(problems, "\n"), fast.Stdout, ap.Stdout)
		})
	}
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

//go:build unix

package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
)

func arObjects(t *testing.T, r *fixtures.Repo) string {
	t.Helper()
	out := r.Git("count-objects", "-v")
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "count:") || strings.HasPrefix(l, "in-pack:") || strings.HasPrefix(l, "packs:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " ")
}

// TestArchiveRoundTrip is the round trip of What must hold: a tree with
// every kind of content is archived (the repository gaining no ref and no
// object, the tree's index unchanged), restored into a new directory with
// identical bytes and modes, and restored again after the tree and the
// whole repository are deleted.
func TestArchiveRoundTrip(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "spike")
	clitest.FillEveryKind(t, r, wt)
	before := clitest.SnapDisk(t, wt)

	refs, objects := r.Git("for-each-ref"), arObjects(t, r)
	indexFile := strings.TrimSpace(r.GitIn(wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	index, err := os.ReadFile(indexFile)
	if err != nil {
		t.Fatal(err)
	}

	res := clitest.CreateArchive(t, r, id)
	if len(res.Commits) != 3 || !slices.Equal(res.Nested, []string{"vendor/nested"}) {
		t.Fatalf("archive create = %+v, want 3 commits and vendor/nested", res)
	}
	if got := r.Git("for-each-ref"); got != refs {
		t.Errorf("archive create changed the refs:\n%s\nwant:\n%s", got, refs)
	}
	if got := arObjects(t, r); got != objects {
		t.Errorf("archive create changed the object count: %s, want %s", got, objects)
	}
	if got, _ := os.ReadFile(indexFile); !bytes.Equal(got, index) {
		t.Errorf("archive create rewrote the tree's index")
	}
	fi, err := os.Stat(res.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(filepath.Dir(res.Dir)) != filepath.Join(r.Home, ".local", "share", "custody", "archives") {
		t.Fatalf("archive dir %s: %v %v, want mode 0700 under $XDG_DATA_HOME/custody/archives/<repository-id>/", res.Dir, fi, err)
	}
	if parent, err := os.Stat(filepath.Dir(res.Dir)); err != nil || parent.Mode().Perm() != 0o700 {
		t.Errorf("the repository's archives directory is not 0700: %v %v", parent, err)
	}
	if c := arVerify(t, r, res.ID); c.Fresh != "equal" || c.Pack != "checked" || len(c.Problems) != 0 {
		t.Errorf("archive verify of a fresh archive: %+v", c)
	}
	if got := clitest.SnapDisk(t, wt); !cmp.Equal(got, before) {
		t.Fatalf("archive create changed the tree: %s", cmp.Diff(before, got))
	}

	head := r.Head(wt)
	restore := func(name string) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), name)
		out := clitest.DecodeResult[archive.ArchiveRestored](t, clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "--json", "archive", "restore", res.Dir, dst), "archive restore")
		if out.Head != head || out.Files == 0 || out.Nested != 1 {
			t.Fatalf("restore = %+v, want HEAD %s with files and one nested repository", out, head)
		}
		return dst
	}
	dst := restore("restored")
	if diff := cmp.Diff(before, clitest.SnapDisk(t, dst)); diff != "" {
		t.Errorf("restored tree differs (-archived +restored):\n%s", diff)
	}
	if got := r.Head(dst); got != head {
		t.Errorf("restored HEAD %s, want %s", got, head)
	}
	if got, want := strings.TrimSpace(r.GitIn(dst, "symbolic-ref", "HEAD")), strings.TrimSpace(r.GitIn(wt, "symbolic-ref", "HEAD")); got != want {
		t.Errorf("restored branch %s, want %s", got, want)
	}

	// Delete the tree and the whole repository; the remote stays.
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(r.Dir); err != nil {
		t.Fatal(err)
	}
	if rs := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "archive", "list"); rs.Code != 0 || !strings.Contains(rs.Stdout, res.ID) {
		t.Errorf("archive list without the repository:\n%s", rs)
	}
	// Verified without any repository: the digests hold; the pack check
	// says it could not run (no repository holds what the bundle stands on).
	vr := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "--json", "archive", "verify", res.Dir)
	if c := clitest.DecodeResult[archive.ArchiveCheck](t, vr, "archive verify"); vr.Code != 0 || len(c.Problems) != 0 || !strings.HasPrefix(c.Pack, "not checked: ") || c.Fresh != "" {
		t.Errorf("archive verify without the repository: %+v\n%s", c, vr)
	}
	dst = restore("after-the-repository-is-gone")
	if diff := cmp.Diff(before, clitest.SnapDisk(t, dst)); diff != "" {
		t.Errorf("restored tree after the repository was deleted differs (-archived +restored):\n%s", diff)
	}
	if got := r.Head(dst); got != head {
		t.Errorf("restored HEAD %s, want %s", got, head)
	}
}

func arVerify(t *testing.T, r *fixtures.Repo, ref string) archive.ArchiveCheck {
	t.Helper()
	res := clitest.Custody(t, r, "--json", "archive", "verify", ref)
	return clitest.DecodeResult[archive.ArchiveCheck](t, res, "archive verify")
}

func arCodes(c archive.ArchiveCheck) []string {
	var out []string
	for _, p := range c.Problems {
		out = append(out, string(p.Code))
	}
	return out
}

// TestArchiveVerifyRefusals: each damage of What must hold is named by its
// code: a flipped byte in any archived file, a missing bundle, a bundle
// without parents, a file added after the archive, a symlinked archive
// dir, a manifest naming paths outside it, content it does not name.
func TestArchiveVerifyRefusals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string // returns the ref to verify
		code   machine.Code
	}{
		{"flipped byte in the patch", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			arFlip(t, filepath.Join(a.Dir, machine.ArchivePatchName))
			return a.ID
		}, machine.CodeArchiveDigestMismatch},
		{"flipped byte in the bundle", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			arFlip(t, filepath.Join(a.Dir, machine.ArchiveBundleName))
			return a.Dir
		}, machine.CodeArchiveDigestMismatch},
		{"flipped byte in the manifest", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			p := filepath.Join(a.Dir, machine.ArchiveManifestName)
			b, _ := os.ReadFile(p)
			b = bytes.Replace(b, []byte(`"record": "`), []byte(`"record":  "`), 1) // still valid JSON, other bytes
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return a.ID
		}, machine.CodeArchiveDigestMismatch},
		{"missing bundle", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			if err := os.Remove(filepath.Join(a.Dir, machine.ArchiveBundleName)); err != nil {
				t.Fatal(err)
			}
			return a.ID
		}, machine.CodeArchiveIncomplete},
		{"bundle without parents", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			// A bundle that names HEAD but stands on its unpublished
			// parent, with the manifest's digest made to match.
			bundle := filepath.Join(a.Dir, machine.ArchiveBundleName)
			if err := os.Remove(bundle); err != nil {
				t.Fatal(err)
			}
			r.GitIn(wt, "bundle", "create", "-q", bundle, "HEAD", "^HEAD~1")
			arReseal(t, a.Dir, machine.ArchiveBundleName)
			return a.Dir
		}, machine.CodeArchiveBundleInvalid},
		{"a file added after the archive", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			r.WriteFile(wt, "later.txt", "written after the capture\n")
			return a.ID
		}, machine.CodeArchiveStale},
		{"symlinked archive dir", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			moved := a.Dir + "-real"
			if err := os.Rename(a.Dir, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, a.Dir); err != nil {
				t.Fatal(err)
			}
			return a.Dir
		}, machine.CodeArchiveInvalid},
		{"manifest names a path outside it", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			p := filepath.Join(a.Dir, machine.ArchiveManifestName)
			b, _ := os.ReadFile(p)
			b = bytes.Replace(b, []byte(`"name": "dirty.patch"`), []byte(`"name": "../dirty.patch"`), 1)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return a.Dir
		}, machine.CodeArchiveInvalid},
		{"content the manifest does not name", func(t *testing.T, r *fixtures.Repo, wt string, a archive.ArchiveCreated) string {
			if err := os.WriteFile(filepath.Join(a.Dir, "extra"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			return a.Dir
		}, machine.CodeArchiveInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, wt, a := clitest.Archived(t)
			if c := arVerify(t, r, a.ID); len(c.Problems) != 0 {
				t.Fatalf("the fresh archive does not verify: %+v", c)
			}
			ref := tt.damage(t, r, wt, a)
			res := clitest.Custody(t, r, "--json", "archive", "verify", ref)
			if res.Code != 3 {
				t.Fatalf("verify of a damaged archive: want exit 3\n%s", res)
			}
			c := clitest.DecodeResult[archive.ArchiveCheck](t, res, "archive verify")
			if codes := arCodes(c); len(codes) == 0 || codes[0] != string(tt.code) {
				t.Errorf("verify = %v, want %s first: %+v", codes, tt.code, c.Problems)
			}
			// A damaged archive is never restored.
			if rs := clitest.Custody(t, r, "archive", "restore", a.Dir, filepath.Join(t.TempDir(), "dst")); rs.Code == 0 && tt.code != machine.CodeArchiveStale {
				t.Errorf("restore of a damaged archive succeeded:\n%s", rs)
			}
		})
	}
}

// arFlip flips one byte in the middle of p.
func arFlip(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || len(b) == 0 {
		t.Fatalf("read %s: %v", p, err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// arReseal rewrites the manifest's record of name to the file's digest
// now, as a forger would.
func arReseal(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, machine.ArchiveManifestName)
	m, problems := machine.ParseArchiveManifest(dir, mustRead(t, p))
	if problems != nil {
		t.Fatal(problems)
	}
	b := mustRead(t, filepath.Join(dir, name))
	sum := sha256.Sum256(b)
	for i := range m.Files {
		if m.Files[i].Name == name {
			m.Files[i].SHA256, m.Files[i].Size = hex.EncodeToString(sum[:]), int64(len(b))
		}
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestArchiveCreateRefusesUnsupported: a fifo in the tree cannot be
// restored byte for byte, so the tree is not archived and nothing is
// written.
func TestArchiveCreateRefusesUnsupported(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "fifo")
	if err := syscall.Mkfifo(filepath.Join(wt, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	res := clitest.Custody(t, r, "--json", "archive", "create", id)
	if e := clitest.DecodeError(t, res); e.Code != string(machine.CodeArchiveUnsupported) || e.Path != filepath.Join(wt, "pipe") {
		t.Errorf("archive create with a fifo: %+v, want archive-unsupported at the fifo", e)
	}
	if ents, _ := os.ReadDir(filepath.Join(r.Home, ".local", "share", "custody", "archives")); len(ents) > 0 {
		ids, _ := os.ReadDir(filepath.Join(r.Home, ".local", "share", "custody", "archives", ents[0].Name()))
		if len(ids) > 0 {
			t.Errorf("a refused capture left %v", ids)
		}
	}
}

// TestArchiveCrash kills a capture at each of its failpoints; resume then
// converges: either the sealed archive verifies (killed after the rename)
// or nothing of it is left (never a half archive that counts), and a new
// capture succeeds.
func TestArchiveCrash(t *testing.T) {
	t.Parallel()
	for _, point := range steps.Failpoints() {
		if !strings.HasPrefix(point, "archive/") || strings.HasPrefix(point, "archive/prune-") || strings.HasPrefix(point, "archive/strip-") {
			continue // TestArchivePruneCrash kills prune, TestArchiveStripCrash a strip
		}
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitSpacedRepo(t, fixtures.Options{})
			id, wt := clitest.NewTree(t, r, "crash")
			r.Commit(wt, "a.txt", "one\n")
			r.WriteFile(wt, "untracked.txt", "only here\n")
			res := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=" + point}, "archive", "create", id)
			if res.Code != -1 {
				t.Fatalf("the capture was not killed at %s:\n%s", point, res)
			}
			root := filepath.Join(r.Home, ".local", "share", "custody", "archives")
			rs := clitest.DecodeResult[steps.ResumeResult](t, clitest.MustCustody(t, r, 0, "--json", "resume"), "resume")
			sealed := point == "archive/after-rename" || point == "archive/before-seal"
			want := map[bool]machine.Outcome{true: machine.OutcomeActivated, false: machine.OutcomeDiscarded}[sealed]
			if len(rs.Items) != 1 || rs.Items[0].Kind != machine.KindArchive || rs.Items[0].Outcome != want {
				t.Errorf("resume after %s = %+v, want one archive %s", point, rs.Items, want)
			}
			list := clitest.DecodeResult[output.ArchiveListResult](t, clitest.MustCustody(t, r, 0, "--json", "archive", "list"), "archive list")
			if sealed != (len(list.Archives) == 1) {
				t.Errorf("after %s and resume: archives %+v, want sealed=%v", point, list.Archives, sealed)
			}
			repos, _ := os.ReadDir(root)
			for _, rd := range repos {
				ents, _ := os.ReadDir(filepath.Join(root, rd.Name()))
				for _, en := range ents {
					if strings.HasPrefix(en.Name(), ".scratch-") {
						t.Errorf("resume left the scratch %s", en.Name())
					}
				}
			}
			if rs := clitest.DecodeResult[steps.ResumeResult](t, clitest.MustCustody(t, r, 0, "--json", "resume"), "resume"); len(rs.Items) != 0 {
				t.Errorf("a second resume still found work: %+v", rs.Items)
			}
			clitest.CreateArchive(t, r, id)
		})
	}
}

// TestFinishArchive: finish --archive finishes the tree and archives it;
// the archive verifies and names the record, its path and HEAD.
func TestFinishArchive(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "spike")
	r.Commit(wt, "a.txt", "one\n")
	r.WriteFile(wt, "notes.txt", "only here\n")
	res := clitest.DecodeResult[output.FinishArchiveResult](t, clitest.MustCustody(t, r, 0, "--json", "finish", "--archive", id), "finish")
	if len(res.Items) != 1 || res.Items[0].State != machine.StateFinished || len(res.Archives) != 1 || res.Archives[0].Record != id ||
		res.Archives[0].Path != wt || res.Archives[0].Head != r.Head(wt) || len(res.Archives[0].Commits) != 1 {
		t.Fatalf("finish --archive = %+v", res)
	}
	if c := arVerify(t, r, res.Archives[0].ID); len(c.Problems) != 0 || c.Record != id || c.Fresh != "equal" {
		t.Errorf("verify after finish --archive: %+v", c)
	}
	if got := clitest.ListRecord(t, r, id).State; got != machine.StateFinished {
		t.Errorf("record %s is %s, want finished", id, got)
	}
	// show names the archive that covers the tree.
	if v := clitest.ShowRecord(t, r, id).Verdict; v == nil || v.Action != machine.ActionRemove || v.Proof == nil ||
		v.Proof.Kind != machine.ProofArchive || v.Proof.Ref != res.Archives[0].ID {
		t.Errorf("show after finish --archive: verdict %+v, want removable on archive %s", v, res.Archives[0].ID)
	}
}

// apPrunable makes an archive prune may delete: its one commit pushed
// since, its tree clean when archived and removed since.
func apPrunable(t *testing.T, r *fixtures.Repo, name string, edit func(wt string)) archive.ArchiveCreated {
	t.Helper()
	id, wt := clitest.NewTree(t, r, name)
	r.Commit(wt, "a.txt", "one\n")
	if edit != nil {
		edit(wt)
	}
	a := clitest.CreateArchive(t, r, id)
	r.GitIn(wt, "push", "-q", "origin", "HEAD:refs/heads/"+name)
	r.Git("worktree", "remove", "--force", wt)
	return a
}

func apPrune(t *testing.T, r *fixtures.Repo, want int, args ...string) archive.ArchivePruneResult {
	t.Helper()
	return clitest.DecodeResult[archive.ArchivePruneResult](t, clitest.MustCustody(t, r, want, append([]string{"--json", "archive", "prune"}, args...)...), "archive prune")
}

func apItem(t *testing.T, res archive.ArchivePruneResult, name string) archive.ArchivePruneItem {
	t.Helper()
	for _, it := range res.Items {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("prune lists no %s: %+v", name, res.Items)
	return archive.ArchivePruneItem{}
}

// TestArchivePrune: prune never deletes an archive whose tree is present,
// whose commits a remote lacks, which holds content the manifest does not
// name, a symlinked archive dir, a manifest naming paths outside it, nested
// repositories or uncommitted changes; it deletes exactly the one named
// that may go, its files, the manifest last, and the directory.
func TestArchivePrune(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	keep := map[string]machine.Code{}
	ok := apPrunable(t, r, "ok", nil)

	id, wt := clitest.NewTree(t, r, "present")
	r.Commit(wt, "a.txt", "one\n")
	keep[clitest.CreateArchive(t, r, id).ID] = machine.CodeArchiveTreePresent

	id, wt = clitest.NewTree(t, r, "unpushed")
	r.Commit(wt, "a.txt", "one\n")
	keep[clitest.CreateArchive(t, r, id).ID] = machine.CodeUnpushedCommits
	r.Git("worktree", "remove", "--force", wt)

	a := apPrunable(t, r, "extra", nil)
	if err := os.WriteFile(filepath.Join(a.Dir, "notes"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keep[a.ID] = machine.CodeArchiveInvalid

	a = apPrunable(t, r, "symlinked", nil)
	if err := os.Rename(a.Dir, filepath.Join(r.Root, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(r.Root, "moved"), a.Dir); err != nil {
		t.Fatal(err)
	}
	keep[a.ID] = machine.CodeArchiveInvalid

	a = apPrunable(t, r, "outside", nil)
	p := filepath.Join(a.Dir, machine.ArchiveManifestName)
	if err := os.WriteFile(p, bytes.Replace(mustRead(t, p), []byte(`"name": "dirty.patch"`), []byte(`"name": "../../dirty.patch"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	keep[a.ID] = machine.CodeArchiveInvalid

	keep[apPrunable(t, r, "nested", func(wt string) { r.NestedRepo(wt, "sub") }).ID] = machine.CodeArchiveNested
	keep[apPrunable(t, r, "dirty", func(wt string) { r.WriteFile(wt, "untracked.txt", "x\n") }).ID] = machine.CodeArchiveUncommitted

	res := apPrune(t, r, 0)
	if it := apItem(t, res, ok.ID); it.Action != machine.ActionRemove || it.Refusal != nil {
		t.Errorf("prunable archive: %+v", it)
	}
	for name, code := range keep {
		if it := apItem(t, res, name); it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != code {
			t.Errorf("%s: %+v, want kept [%s]", name, it, code)
		}
	}
	if _, err := os.Lstat(ok.Dir); err != nil {
		t.Fatalf("prune without --apply deleted %s: %v", ok.Dir, err)
	}

	// --apply deletes exactly the named one that may go.
	names := []string{"--apply", ok.ID}
	for name := range keep {
		names = append(names, "--apply", name)
	}
	res = apPrune(t, r, 3, names...)
	if it := apItem(t, res, ok.ID); it.Outcome != machine.OutcomeRemoved {
		t.Errorf("--apply %s: %+v", ok.ID, it)
	}
	if _, err := os.Lstat(ok.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there: %v", ok.Dir, err)
	}
	for name, code := range keep {
		it := apItem(t, res, name)
		if it.Outcome != machine.OutcomeRefused || it.Refusal == nil || it.Refusal.Code != code {
			t.Errorf("--apply %s: %+v, want refused [%s]", name, it, code)
		}
		if _, err := os.Lstat(it.Dir); err != nil {
			t.Errorf("--apply deleted the kept %s: %v", it.Dir, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(r.Root, "moved", machine.ArchiveManifestName)); err != nil {
		t.Errorf("prune followed the symlinked archive dir: %v", err)
	}
	// The pruned archive's record is tombstoned; pruning again is a refusal.
	if res := apPrune(t, r, 3, "--apply", ok.ID); apItem(t, res, ok.ID).Refusal == nil {
		t.Errorf("pruning a pruned archive again: %+v", res)
	}
}

// TestArchivePruneCrash kills prune at each of its failpoints: resume
// finishes the deletion, and the archive's record is settled.
func TestArchivePruneCrash(t *testing.T) {
	t.Parallel()
	for _, point := range steps.Failpoints() {
		if !strings.HasPrefix(point, "archive/prune-") {
			continue
		}
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitSpacedRepo(t, fixtures.Options{})
			a := apPrunable(t, r, "ok", nil)
			killed := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=" + point}, "archive", "prune", "--apply", a.ID)
			if killed.Code != -1 {
				t.Fatalf("prune was not killed at %s:\n%s", point, killed)
			}
			rs := clitest.DecodeResult[steps.ResumeResult](t, clitest.MustCustody(t, r, 0, "--json", "resume"), "resume")
			if len(rs.Items) != 1 || rs.Items[0].Outcome != machine.OutcomeRemoved {
				t.Errorf("resume after %s: %+v", point, rs.Items)
			}
			if _, err := os.Lstat(a.Dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("after %s and resume %s is still there: %v", point, a.Dir, err)
			}
			if rs := clitest.DecodeResult[steps.ResumeResult](t, clitest.MustCustody(t, r, 0, "--json", "resume"), "resume"); len(rs.Items) != 0 {
				t.Errorf("a second resume still found work: %+v", rs.Items)
			}
		})
	}
}

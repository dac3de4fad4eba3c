package records

// Names are bytes (decision 0220): repository paths, file and directory
// names and branch names made of random bytes go through plan, apply,
// archive, restore, list and the journal's export and verify, and come
// back byte for byte.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
	steparchive "github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/store"
)

// bytesRounds is how many random repositories TestNamesAreBytes makes:
// CUSTODY_BYTES_ROUNDS sets it (the default keeps the test short on a
// busy machine).
func bytesRounds(t *testing.T) int {
	if s := os.Getenv("CUSTODY_BYTES_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CUSTODY_BYTES_ROUNDS=%q: want a positive number", s)
		}
		return n
	}
	return 2
}

// randomBytesName is prefix and 1–8 random bytes, every byte but NUL and
// '/', at least one of them not UTF-8 on its own.
func randomBytesName(r *rand.Rand, prefix string) string {
	for {
		n := 1 + r.IntN(8)
		b := []byte(prefix)
		for len(b) < len(prefix)+n {
			if c := byte(r.IntN(256)); c != 0 && c != '/' {
				b = append(b, c)
			}
		}
		if !utf8.Valid(b) {
			return string(b)
		}
	}
}

// randomBranch is a branch name git accepts with random bytes that are
// not UTF-8 in it (check-ref-format refuses controls, space and ~^:?*[\).
func randomBranch(r *rand.Rand) string {
	const ascii = "abcxyz019-_."
	for {
		b := []byte("b")
		for i := 0; i < 2+r.IntN(6); i++ {
			if r.IntN(2) == 0 {
				b = append(b, byte(0x80+r.IntN(0x80)))
			} else {
				b = append(b, ascii[r.IntN(len(ascii))])
			}
		}
		s := string(b)
		if !utf8.ValidString(s) && !strings.Contains(s, "..") && !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, ".lock") {
			return s
		}
	}
}

func TestNamesAreBytes(t *testing.T) {
	t.Parallel()
	for round := range bytesRounds(t) {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			namesAreBytesRound(t, rand.New(rand.NewPCG(uint64(round), 220)))
		})
	}
}

func namesAreBytesRound(t *testing.T, rng *rand.Rand) {
	repoName := randomBytesName(rng, "r")
	if rng.IntN(2) == 0 {
		repoName += "\nline" // a newline in every path git writes into .git files
	}
	r := fixtures.New(t, fixtures.Options{Name: repoName})
	clitest.MustCustody(t, r, 0, "init")
	t.Logf("repository %q", r.Dir)

	// pushed: committed and published names under a random directory.
	dirName, fileName := randomBytesName(rng, "d"), randomBytesName(rng, "f")
	pushedID, pushed := clitest.NewTree(t, r, "pushed")
	if pushed != filepath.Join(r.Dir, ".worktrees", pushedID) {
		t.Fatalf("new printed %q, not a path under %q", pushed, r.Dir)
	}
	r.Commit(pushed, dirName+"/"+fileName, "published\n")
	r.Push(pushed, "pushed")

	// kept: an untracked file with a random name.
	untracked := randomBytesName(rng, "u")
	keptID, kept := clitest.NewTree(t, r, "kept")
	r.WriteFile(kept, untracked, "only here\n")

	// archived: an untracked file and an empty directory, archived.
	archFile, archDir := randomBytesName(rng, "a"), randomBytesName(rng, "e")
	archID, arch := clitest.NewTree(t, r, "archived")
	r.WriteFile(arch, archFile, "archived bytes\n")
	if err := os.Mkdir(filepath.Join(arch, archDir), 0o755); err != nil {
		t.Fatal(err)
	}

	// adopted: a tree on a branch with a random name at a random path.
	branch := randomBranch(rng)
	adopted := filepath.Join(r.Root, randomBytesName(rng, "w"))
	r.Git("worktree", "add", "-q", "-b", branch, adopted)
	r.Commit(adopted, "adopted.txt", "adopted\n")
	r.GitIn(adopted, "push", "-q", "origin", "HEAD:refs/heads/adopted")
	clitest.MustCustody(t, r, 0, "adopt", adopted)
	adoptedID := ""
	for _, rec := range clitest.ListRecords(t, r, false) {
		if rec.Path == adopted {
			adoptedID = rec.ID
		}
	}
	if adoptedID == "" {
		t.Fatalf("list does not show the adopted tree at %q byte for byte: %+v", adopted, clitest.ListRecords(t, r, false))
	}

	clitest.MustCustody(t, r, 0, "finish", pushedID, keptID, adoptedID)
	fa := clitest.DecodeResult[output.FinishArchiveResult](t, clitest.MustCustody(t, r, 0, "--json", "finish", "--archive", archID), "finish")
	if len(fa.Archives) != 1 || fa.Archives[0].Path != arch {
		t.Fatalf("finish --archive: %+v", fa)
	}
	archive := fa.Archives[0]

	for _, rec := range clitest.ListRecords(t, r, false) {
		want := map[string]string{pushedID: pushed, keptID: kept, archID: arch, adoptedID: adopted}[rec.ID]
		if rec.Path != want {
			t.Errorf("list: %s at %q, want %q", rec.ID, rec.Path, want)
		}
	}

	planFile := filepath.Join(r.Root, "plan.json")
	plan := clitest.PlanTo(t, r, planFile, 0)
	byID := map[string]machine.PlanItem{}
	for _, it := range plan.Items {
		byID[it.ID] = it
	}
	for id, want := range map[string]machine.Action{pushedID: machine.ActionRemove, archID: machine.ActionRemove, adoptedID: machine.ActionRemove, keptID: machine.ActionKeep} {
		if got := byID[id].Action; got != want {
			t.Errorf("plan: %s is %q, want %q (%+v)", id, got, want, byID[id])
		}
	}
	if it := byID[adoptedID]; it.Path != adopted || it.Branch != branch {
		t.Errorf("plan: adopted tree at %q on %q, want %q on %q", it.Path, it.Branch, adopted, branch)
	}
	if ref := byID[keptID].Refusal; ref == nil || ref.Code != machine.CodeUntrackedFiles || !strings.Contains(ref.Message, untracked) && !strings.Contains(ref.Retry, machine.ShellWord(untracked)) {
		t.Errorf("plan: kept tree's refusal does not name %q exactly: %+v", untracked, ref)
	}

	res := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, r, 0, "apply", "--allow-external-retirement", planFile, "--json"), "apply")
	for _, it := range res.Items {
		if it.Outcome != "removed" {
			t.Errorf("apply: %s %s (%+v)", it.ID, it.Outcome, it)
		}
	}
	for _, p := range []string{pushed, arch, adopted} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%q is still there after apply (%v)", p, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(kept, untracked)); err != nil || string(b) != "only here\n" {
		t.Errorf("the kept tree's file %q: %q, %v", untracked, b, err)
	}
	if tip := r.BranchTip(branch); tip == "" {
		t.Errorf("the adopted tree's branch %q is gone: custody did not create it", branch)
	}

	// The archive gives back exactly the names it captured.
	dst := filepath.Join(r.Root, "restored")
	out := clitest.DecodeResult[steparchive.ArchiveRestored](t, clitest.MustCustody(t, r, 0, "--json", "archive", "restore", archive.ID, dst), "archive restore")
	if out.Dir != dst {
		t.Errorf("archive restore says it restored to %q, want %q", out.Dir, dst)
	}
	if b, err := os.ReadFile(filepath.Join(dst, archFile)); err != nil || string(b) != "archived bytes\n" {
		t.Errorf("restored %q: %q, %v", archFile, b, err)
	}
	if fi, err := os.Lstat(filepath.Join(dst, archDir)); err != nil || !fi.IsDir() {
		t.Errorf("restored empty directory %q: %v", archDir, err)
	}

	// The journal names every path exactly, and its export verifies.
	paths := map[string]bool{}
	for _, e := range clitest.JournalEntries(t, r) {
		collectStrings(t, e, paths)
	}
	for _, p := range []string{pushed, kept, arch, adopted} {
		if !paths[p] {
			t.Errorf("no journal entry names %q byte for byte", p)
		}
	}
	exported := filepath.Join(r.Root, "journal.jsonl")
	clitest.MustCustody(t, r, 0, "journal", "export", "--redact", "-o", exported)
	clitest.MustCustody(t, r, 0, "journal", "verify", "--redacted", exported)
	if b, err := os.ReadFile(exported); err != nil || !utf8.Valid(b) {
		t.Errorf("the redacted export is not UTF-8 text (%v)", err)
	}
	if b, err := os.ReadFile(planFile); err != nil || !utf8.Valid(b) || bytes.Contains(b, []byte("\ufffd")) {
		t.Errorf("the plan file is not exact UTF-8 JSON (%v)", err)
	}
}

// collectStrings adds every string e holds, at any depth, to into.
func collectStrings(t *testing.T, e store.Entry, into map[string]bool) {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			into[v] = true
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
}

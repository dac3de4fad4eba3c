package migrate_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/steps/custody"
	"github.com/custody-sh/custody/steps/migrate"
	"github.com/custody-sh/custody/store"
)

// mgEnv is the environment of a command in l's main checkout after custody
// init, built by the one constructor the custody command uses
// (custody.NewEnv, every feature registered). Every process custody runs
// sees l's environment (its private HOME and XDG_DATA_HOME, where archives
// go).
func mgEnv(t *testing.T, l *fixtures.Legacy) *steps.Env {
	t.Helper()
	for _, kv := range l.Env() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			t.Setenv(k, v)
		}
	}
	ctx := context.Background()
	g := hostio.NewGit(&hostio.Runner{})
	site, err := custody.Locate(ctx, g, l.Dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenContext(ctx, site.StatePath(), 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	e := custody.NewEnv(site, st, custody.Wiring{Git: g, Actor: "test", Wait: time.Second})
	if err := e.EnsureRoot(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ExcludeRoot(); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestMigrateArchivesADirtyTree drives a legacy layout through the
// migration without the binary: discover finds every linked tree as a
// candidate, plan proposes the archive disposition for the tree with
// uncommitted work, and apply of that one approved candidate captures the
// archive, removes the tree on it, and leaves the archive as the sole
// copy of the work (the archive feature reached through the core's
// Archives seam). The other trees are untouched.
func TestMigrateArchivesADirtyTree(t *testing.T) {
	l := fixtures.NewLegacy(t)
	e := mgEnv(t, l)
	ctx := context.Background()

	d, err := migrate.MigrateDiscover(ctx, e, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Candidates != len(l.Trees) {
		t.Errorf("discover found %d candidates, want %d (one per linked tree)", d.Candidates, len(l.Trees))
	}

	plan, err := migrate.MigratePlan(ctx, e, migrate.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dirty := l.Trees["dirty"]
	var cand *machine.MigrateCandidate
	for i, c := range plan.Candidates {
		if c.Audit.Path == dirty {
			cand = &plan.Candidates[i]
		}
	}
	if cand == nil {
		t.Fatalf("the plan has no candidate for the dirty tree %s: %+v", dirty, plan.Candidates)
	}
	if cand.Proposal.Disposition != machine.DispositionArchive {
		t.Fatalf("the dirty tree is proposed %q, want %q", cand.Proposal.Disposition, machine.DispositionArchive)
	}
	if _, err := migrate.MigrateDispose(ctx, e, cand.Audit.ID, true, "", "", cand.Digest); err != nil {
		t.Fatal(err)
	}

	res, err := migrate.MigrateApply(ctx, e, plan, migrate.MigrateOptions{Only: []string{cand.Audit.ID}, AllowExternalRetirement: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 {
		t.Fatalf("apply of one candidate did %d items: %+v", len(res.Items), res.Items)
	}
	it := res.Items[0]
	if it.Refusal != nil || it.Archive == "" {
		t.Fatalf("apply of the dirty tree: %+v, want it removed on an archive", it)
	}
	if _, err := os.Lstat(dirty); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dirty tree %s is still there after its archive disposition: %v", dirty, err)
	}
	a, err := archive.LoadArchive(e, it.Archive)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != machine.StateFinished {
		t.Errorf("archive %s is %s, want %s: its tree is gone and it is the sole copy", a.ID, a.State, machine.StateFinished)
	}
	for role, p := range l.Trees {
		if role == "dirty" || role == "missing" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(p, ".git")); err != nil {
			t.Errorf("%s (%s) changed though only the dirty tree was applied: %v", role, p, err)
		}
	}
}

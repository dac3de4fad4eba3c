package records

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestTrustResumeCompletion: custody new killed after git made the tree,
// before any resource; custody.toml then changes to a content never
// approved. Resume refuses to complete the creation with the new file's
// commands (config-untrusted, the record kept provisioning with its intent,
// the tree as it was, no command run); once the person approves the new
// content, resume completes it with exactly that content's command.
func TestTrustResumeCompletion(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	log := filepath.Join(r.Root, "ran")
	clitest.WriteTrusted(t, r, "[resources.db]\ncreate = '''echo approved >> "+log+"'''\ndestroy = 'true'\n")
	clitest.MustCustody(t, r, 0, "init")
	res := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=new/after-add"}, "new", "crashed")
	if res.Code != -1 {
		t.Fatalf("new was not killed at new/after-add: %s", res)
	}
	r.WriteFile(r.Dir, "custody.toml", "[resources.db]\ncreate = '''echo unapproved >> "+log+"'''\ndestroy = 'true'\n")

	res = clitest.Custody(t, r, "resume", "--json")
	if res.Code != 3 || !strings.Contains(res.Stdout, `"code": "config-untrusted"`) || !strings.Contains(res.Stdout, `"retry": "custody trust"`) {
		t.Errorf("resume with an unapproved custody.toml: want exit 3 refusing config-untrusted with retry custody trust, got\n%s", res)
	}
	if _, err := os.Stat(log); err == nil {
		b, _ := os.ReadFile(log)
		t.Fatalf("a resource command ran before approval: %q", b)
	}
	recs := clitest.ListRecords(t, r, true)
	if len(recs) != 1 || recs[0].State != machine.StateProvisioning || recs[0].Intent == nil {
		t.Fatalf("after the refused resume: %+v, want one provisioning record that keeps its intent", recs)
	}
	if _, err := os.Stat(recs[0].Path); err != nil {
		t.Errorf("the tree of the refused resume is gone: %v", err)
	}

	clitest.MustCustody(t, r, 0, "trust")
	clitest.MustCustody(t, r, 0, "resume")
	if b, err := os.ReadFile(log); err != nil || string(b) != "unapproved\n" {
		t.Errorf("after approval, resume ran %q (%v), want the newly approved command once", b, err)
	}
	if rec := clitest.ListRecord(t, r, recs[0].ID); rec.State != machine.StateActive {
		t.Errorf("after approval the record is %s, want active", rec.State)
	}
}

// TestTrustHolderSymlink: state.db.holder planted as a symlink to a file
// outside the repository is never written through by a command that takes
// the write lock, and the symlink is left as it is.
func TestTrustHolderSymlink(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	outside := filepath.Join(r.Root, "victim")
	r.WriteFile(r.Root, "victim", "a person's file\n")
	holder := filepath.Join(r.Dir, ".git", "custody", "state.db.holder")
	if err := os.Remove(holder); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, holder); err != nil {
		t.Fatal(err)
	}
	clitest.NewTree(t, r, "locked")
	clitest.MustCustody(t, r, 0, "trust")
	if b, err := os.ReadFile(outside); err != nil || string(b) != "a person's file\n" {
		t.Errorf("the file behind the holder symlink holds %q (%v): written through", b, err)
	}
	if fi, err := os.Lstat(holder); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the holder symlink was replaced: %v %v", fi, err)
	}
}

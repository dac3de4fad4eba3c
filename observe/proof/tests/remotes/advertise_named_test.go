package remotes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// TestAdvertiseNamedAsksOnlyThose: asking the remotes a plan's proofs name
// leaves every other remote unasked (a hung one costs nothing), and a name
// the configuration lacks falls back to asking every remote.
func TestAdvertiseNamedAsksOnlyThose(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	log := filepath.Join(t.TempDir(), "asked.log")
	s.Git(dir, "remote", "add", "hung", "ssh://hung.example.invalid/repo.git")
	s.Git(dir, "config", "core.sshCommand", "echo asked >>'"+log+"'; sleep 60 #")
	repo := s.Discover(dir)
	asked := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "asked")
	}

	g := *s.G
	g.RemoteTimeout = time.Second
	v, err := proof.AdvertiseNamed(context.Background(), &g, repo, []string{"origin"})
	if err != nil {
		t.Fatalf("AdvertiseNamed(origin): %v", err)
	}
	if n := asked(); n != 0 {
		t.Errorf("the hung remote was asked %d times; only origin was named", n)
	}
	if strings.Join(v.Remotes, ",") != "origin" || len(v.Failures) != 0 {
		t.Errorf("view remotes %q failures %+v; want origin alone, answered", v.Remotes, v.Failures)
	}
	if p := s.Prove(repo, s.Rev(dir, "main"), v); p == nil || p.Remote != "origin" {
		t.Errorf("main is on origin; proof %+v", p)
	}

	// A name the configuration lacks (a remote removed since plan): every
	// remote is asked, and the hung one is named.
	v, err = proof.AdvertiseNamed(context.Background(), &g, repo, []string{"origin", "gone"})
	if err != nil {
		t.Fatalf("AdvertiseNamed(origin, gone): %v", err)
	}
	if n := asked(); n != 1 {
		t.Errorf("the hung remote was asked %d times; a name the config lacks must ask every remote", n)
	}
	if strings.Join(v.Remotes, ",") != "origin,hung" && strings.Join(v.Remotes, ",") != "hung,origin" {
		t.Errorf("view remotes %q; want both", v.Remotes)
	}
	if len(v.Failures) != 1 || v.Failures[0].Remote != "hung" {
		t.Errorf("failures %+v; want hung named", v.Failures)
	}
}

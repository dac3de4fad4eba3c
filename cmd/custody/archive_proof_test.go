//go:build unix

package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps/archive"
)

// TestArchiveProof: a fresh sealed archive proves its tree (proof kind
// archive, naming the archive and the commits it holds); the same tree
// with a file added after the capture is kept [archive-stale]; a tree no
// archive covers gets no archive proof.
func TestArchiveProof(t *testing.T) {
	r, wt, a := clitest.Archived(t)
	for _, kv := range r.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	app := &App{Globals: &Globals{LockTimeout: 5 * time.Second, RemoteTimeout: time.Minute}, Ctx: context.Background(), Dir: r.Dir,
		Stdout: io.Discard, Stderr: io.Discard}
	e, err := app.env(false)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := e.Store.Get(a.Record)
	if err != nil {
		t.Fatal(err)
	}
	v, err := proof.Advertise(app.Ctx, e.Git, e.Repo)
	if err != nil {
		t.Fatal(err)
	}
	p, ref, err := archive.ArchiveProof(app.Ctx, e, rec, a.Head, v)
	if err != nil || ref != nil || p == nil || p.Kind != machine.ProofArchive || p.Ref != a.ID || !p.Covers(a.Head) || len(p.Commits) != 2 {
		t.Fatalf("ArchiveProof of a fresh archive = %+v, %v, %v", p, ref, err)
	}
	r.WriteFile(wt, "later.txt", "after the capture\n")
	if p, ref, err := archive.ArchiveProof(app.Ctx, e, rec, a.Head, v); err != nil || p != nil || ref == nil || ref.Code != machine.CodeArchiveStale {
		t.Errorf("ArchiveProof after a file was added = %+v, %v, %v; want archive-stale", p, ref, err)
	}
	if p, ref, err := archive.ArchiveProof(app.Ctx, e, machine.Record{ID: "other-123456", Path: wt}, a.Head, v); err != nil || p != nil || ref != nil {
		t.Errorf("ArchiveProof of a tree no archive covers = %+v, %v, %v; want nothing", p, ref, err)
	}
}

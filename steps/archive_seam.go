package steps

import (
	"context"
	"errors"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps/quarantine"
)

// Archives is what removal asks of the archive feature (package
// steps/archive), which custody.Register registers in Env.Archives: the core
// declares it and never imports the feature. Assess asks it for proof kind
// archive, quarantine for what a tree removed on that proof may hold, and
// a removal completes by recording the archive as the sole copy.
type Archives interface {
	// Proof looks for proof kind archive of rec at head against view: the
	// proof, or the refusal of an archive that is there and does not
	// cover the tree, or neither.
	Proof(ctx context.Context, e *Env, rec machine.Record, head string, view *proof.RemoteView) (*machine.Proof, *machine.Refusal, error)
	// Archived is the set of record ids some active archive is of, read
	// once for a whole plan; nil when it could not be read.
	Archived(e *Env) map[string]bool
	// Contents lists what a tree removed on the archive proof p may hold.
	Contents(ctx context.Context, e *Env, p *machine.Proof) (quarantine.Manifest, error)
	// SoleCopy records, once a tree removed on proof kind archive is gone,
	// that its archive is now the only copy of its work.
	SoleCopy(ctx context.Context, e *Env, rec machine.Record) error
	// Capture archives the tree of record id as custody archive create
	// does, so that its archive may prove it (Retire with Archive set).
	Capture(ctx context.Context, e *Env, id string) (CapturedArchive, error)
}

// CapturedArchive is an archive Archives.Capture sealed: its id, its
// directory, the HEAD it holds, the commits its bundle carries and how
// many files it holds.
type CapturedArchive struct {
	ID      string   `json:"id"`
	Dir     string   `json:"dir"`
	Head    string   `json:"head"`
	Commits []string `json:"commits"`
	Files   int      `json:"files"`
}

// archives is e.Archives, or, when none is registered, one that proves
// nothing (a tree an archive would cover is kept) and refuses to carry
// out a removal that an archive proved.
func (e *Env) archives() Archives {
	if e.Archives != nil {
		return e.Archives
	}
	return noArchives{}
}

// errNoArchives is the error of carrying out an archive-backed removal
// with no archive feature registered.
var errNoArchives = errors.New("internal: the removal rests on an archive, and no archive feature is registered (Env.Archives)")

// noArchives is Env.archives without a registered feature.
type noArchives struct{}

// Proof finds none: the tree is kept unless another proof holds.
func (noArchives) Proof(context.Context, *Env, machine.Record, string, *proof.RemoteView) (*machine.Proof, *machine.Refusal, error) {
	return nil, nil, nil
}

// Archived is empty: no record has an archive.
func (noArchives) Archived(*Env) map[string]bool { return map[string]bool{} }

// Contents always refuses: only an archive feature proves by archive.
func (noArchives) Contents(context.Context, *Env, *machine.Proof) (quarantine.Manifest, error) {
	return nil, errNoArchives
}

// SoleCopy refuses for a removal that rests on an archive.
func (noArchives) SoleCopy(_ context.Context, _ *Env, rec machine.Record) error {
	if rec.Intent == nil || rec.Intent.Proof == nil || rec.Intent.Proof.Kind != machine.ProofArchive {
		return nil
	}
	return errNoArchives
}

// errNoCapture is the error of asking for an archive with no archive
// feature registered.
var errNoCapture = errors.New("internal: an archive was asked for, and no archive feature is registered (Env.Archives)")

// Capture refuses: only an archive feature captures.
func (noArchives) Capture(context.Context, *Env, string) (CapturedArchive, error) {
	return CapturedArchive{}, errNoCapture
}

// Assess is machine.Assess, then, when the tree is kept only for reasons
// an archive answers, the archive proof looked for fresh against view
// (machine.CoverByArchive). An archive that cannot be checked keeps the
// tree with the error as a proof-failed refusal.
func (e *Env) Assess(ctx context.Context, rec machine.Record, obs machine.WorktreeObservation, view *proof.RemoteView, now time.Time) machine.Verdict {
	v := machine.Assess(rec, obs, e.Policy, now)
	if !machine.ArchiveCanCover(v) || obs.Head == "" || view == nil {
		return v
	}
	p, r, err := e.archives().Proof(ctx, e, rec, obs.Head, view)
	if err != nil {
		r = machine.ArchiveProofFailedRefusal(rec, err)
		p = nil
	}
	return machine.CoverByArchive(v, p, r)
}

// assessKnowing is e.Assess for a plan that already knows which records
// have an archive (Archives.Archived): a tree without one is assessed
// without asking the store again, which is what e.Assess gives when it
// finds no covering archive (machine.CoverByArchive of no proof and no
// refusal).
func (e *Env) assessKnowing(ctx context.Context, archived map[string]bool, rec machine.Record, obs machine.WorktreeObservation, view *proof.RemoteView, now time.Time) machine.Verdict {
	if archived != nil && !archived[rec.ID] {
		return machine.Assess(rec, obs, e.Policy, now)
	}
	return e.Assess(ctx, rec, obs, view, now)
}

// quarantineEnv is what a quarantine of this command needs: the
// repository, its git, the approved disposable patterns, the registered
// archive feature's contents of an archive proof, durable writes and the
// process scan (with this command's requesters excused).
func (e *Env) quarantineEnv() *quarantine.Env {
	return &quarantine.Env{Repo: e.Repo, Git: e.Git, Disposable: e.Disposable, WriteFile: WriteFile, Processes: e.ScanProcesses,
		Contents: func(ctx context.Context, p *machine.Proof) (quarantine.Manifest, error) {
			return e.archives().Contents(ctx, e, p)
		}}
}

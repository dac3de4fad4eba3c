package steps

import (
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// DeclaredResource is one resource custody.toml declares, with its commands
// as written (before any @token@ is expanded).
type DeclaredResource struct {
	Name    string `json:"name"`
	Create  string `json:"create"`
	Destroy string `json:"destroy"`
	Ensure  string `json:"ensure,omitempty"`
}

// Approval is one custody.toml content a person approved with `custody
// trust`, stored in the approvals bucket under its digest and journaled as
// an "approval" event.
type Approval struct {
	// Digest is the hex sha256 of the file's bytes.
	Digest string `json:"digest"`
	// Path is the file approved.
	Path string `json:"path"`
	// Resources is what the file declares, as the person saw it.
	Resources []DeclaredResource `json:"resources"`
	// Disposable are the [cleanup] disposable patterns it declares.
	Disposable []string `json:"disposable,omitempty"`
	// LandCheck is the [land] check command it declares.
	LandCheck string `json:"land_check,omitempty"`
	// At and Actor say when and by whom.
	At    string `json:"at"`
	Actor string `json:"actor"`
}

// TrustResult is what `custody trust` reports.
type TrustResult struct {
	Path   string `json:"path"`
	Digest string `json:"digest,omitempty"`
	// Present is false when there is no custody.toml.
	Present bool `json:"present"`
	// NeedsApproval is false when the file declares no command: it runs
	// nothing, so it needs no approval.
	NeedsApproval bool `json:"needs_approval"`
	// Approved says whether the content is approved after the command.
	Approved bool `json:"approved"`
	// Changed says whether the command changed the approvals (false when
	// it was approved, or revoked, already).
	Changed   bool               `json:"changed"`
	Resources []DeclaredResource `json:"resources"`
	// Disposable are the [cleanup] disposable patterns, which count only
	// while the content is approved.
	Disposable []string `json:"disposable,omitempty"`
	// LandCheck is the [land] check command custody land runs in a tree
	// first, which runs only while the content is approved.
	LandCheck string `json:"land_check,omitempty"`
}

// Pending reports nothing pending: approving or revoking either happened
// or was already so.
func (TrustResult) Pending() bool { return false }

// Declared lists the commands cfg declares, in document order.
func Declared(cfg machine.Config) []DeclaredResource {
	out := []DeclaredResource{}
	for _, r := range cfg.Resources {
		out = append(out, DeclaredResource{Name: r.Name, Create: r.Create, Destroy: r.Destroy, Ensure: r.Ensure})
	}
	return out
}

// needsApproval reports whether cfg declares any command (a resource has
// at least create and destroy) or anything a removal may discard ([cleanup]
// disposable) or the pre-land check ([land] check).
func needsApproval(cfg machine.Config) bool {
	return len(cfg.Resources) > 0 || len(cfg.Disposable) > 0 || cfg.LandCheck != ""
}

// approved reports whether the digest of the configuration in force is
// approved.
func (e *Env) approved() (bool, error) { return e.approvedDigest(e.ConfigSource.Digest) }

// approvedDigest reports whether the custody.toml content of digest was
// approved ("" is no file: never approved).
func (e *Env) approvedDigest(digest string) (bool, error) {
	if digest == "" {
		return false, nil
	}
	var a Approval
	return e.Store.GetValue(store.NameApprovals, digest, &a)
}

// RequireTrusted refuses, with CodeConfigUntrusted, to go on when
// custody.toml declares commands and its exact content was never approved.
// Every step that would run a command taken from the current file (the
// create of a new worktree's resources, and resume completing one) calls it
// first, before it makes anything. Frozen commands in the ledger do not
// depend on the current file (docs/decisions/0015).
func (e *Env) RequireTrusted() error {
	if len(e.Config.Resources) == 0 {
		return nil
	}
	ok, err := e.approved()
	if err != nil || ok {
		return err
	}
	return machine.ConfigUntrustedRefusal(e.ConfigSource.Path, e.ConfigSource.Digest)
}

// RequireLandCheckTrusted refuses, with CodeConfigUntrusted, to run the
// [land] check of custody.toml while its exact content is not approved.
func (e *Env) RequireLandCheckTrusted() error {
	if e.Config.LandCheck == "" {
		return nil
	}
	ok, err := e.approved()
	if err != nil || ok {
		return err
	}
	return machine.ConfigUntrustedRefusal(e.ConfigSource.Path, e.ConfigSource.Digest)
}

// Trust approves the current custody.toml's exact content: its digest and
// what it declares are stored in the approvals bucket, journaled as an
// "approval" event in the same transaction. Approving an approved content
// again changes nothing. A file that declares no command needs no approval
// and is not recorded.
func Trust(e *Env) (TrustResult, error) {
	res := e.trustResult()
	if !res.Present || !res.NeedsApproval {
		return res, nil
	}
	ok, err := e.approved()
	if err != nil {
		return res, err
	}
	if ok {
		res.Approved = true
		return res, nil
	}
	a := Approval{Digest: res.Digest, Path: res.Path, Resources: res.Resources, Disposable: res.Disposable, LandCheck: res.LandCheck, At: e.Now().UTC().Format("2006-01-02T15:04:05Z"), Actor: e.Actor}
	if err := e.Store.AppendEvent(store.Event{Event: "approval", At: e.Now().UTC(), Detail: a, Actor: e.Actor},
		store.PutValue(store.NameApprovals, res.Digest, a)); err != nil {
		return res, fmt.Errorf("record the approval of %s: %w", res.Path, err)
	}
	res.Approved, res.Changed = true, true
	return res, nil
}

// Revoke withdraws the approval of the current custody.toml's content,
// journaled as a "revocation" event. Revoking what is not approved changes
// nothing.
func Revoke(e *Env) (TrustResult, error) {
	res := e.trustResult()
	if !res.Present {
		return res, nil
	}
	ok, err := e.approved()
	if err != nil || !ok {
		return res, err
	}
	detail := map[string]string{"digest": res.Digest, "path": res.Path}
	if err := e.Store.AppendEvent(store.Event{Event: "revocation", At: e.Now().UTC(), Detail: detail, Actor: e.Actor},
		store.DeleteValue(store.NameApprovals, res.Digest)); err != nil {
		return res, fmt.Errorf("revoke the approval of %s: %w", res.Path, err)
	}
	res.Changed = true
	return res, nil
}

// trustResult describes the configuration in force.
func (e *Env) trustResult() TrustResult {
	return TrustResult{Path: e.ConfigSource.Path, Digest: e.ConfigSource.Digest, Present: e.ConfigSource.Present,
		NeedsApproval: needsApproval(e.Config), Resources: Declared(e.Config), Disposable: e.Config.Disposable, LandCheck: e.Config.LandCheck}
}

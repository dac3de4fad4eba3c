package machine

import (
	"fmt"
	"slices"
	"strings"
)

// Disposition is where a candidate's work goes.
type Disposition string

// The dispositions of migrate. Each is terminal for the migration: after
// it, nothing of the candidate is left for the migration to do.
const (
	// DispositionLand pushes the candidate's HEAD to a named branch for
	// review; the tree is kept.
	DispositionLand Disposition = "land"
	// DispositionArchive archives the tree (a verified local archive) and
	// then removes it with the archive as its proof.
	DispositionArchive Disposition = "archive"
	// DispositionAdoptRelocate puts the tree in custody and moves it into
	// the managed root (non-forced git worktree move).
	DispositionAdoptRelocate Disposition = "adopt-and-relocate"
	// DispositionRetire removes the tree in place once a fresh proof shows
	// its HEAD published; it needs --allow-external-retirement.
	DispositionRetire Disposition = "retire"
	// DispositionReject leaves the tree untouched, with a person's reason.
	DispositionReject Disposition = "reject"
	// DispositionRelease settles a candidate whose tree is gone and whose
	// HEAD a remote custody reads already holds (its proof): nothing is
	// pushed, moved or removed; the outcome records the proof.
	DispositionRelease Disposition = "release"
)

// Dispositions lists every disposition.
func Dispositions() []Disposition {
	return []Disposition{DispositionLand, DispositionArchive, DispositionAdoptRelocate, DispositionRetire, DispositionRelease, DispositionReject}
}

// MigrateAudit is the immutable audit of one admitted candidate: every
// fact its disposition rests on. Its digest binds approvals to it.
type MigrateAudit struct {
	ID        string       `json:"id"`
	Class     MigrateClass `json:"class"`
	Path      string       `json:"path"`
	AdminKey  string       `json:"admin_key"`
	Branch    string       `json:"branch,omitempty"`
	Head      string       `json:"head,omitempty"`
	Detached  bool         `json:"detached,omitempty"`
	Locked    bool         `json:"locked,omitempty"`
	PathState PathState    `json:"path_state"`
	Dev       uint64       `json:"dev,omitempty"`
	Ino       uint64       `json:"ino,omitempty"`
	// Observation is the tree's fingerprint (status, index, untracked and
	// ignored entries, hidden state, content), without custody's marker.
	Observation string `json:"observation"`
	Status      Status `json:"status"`
	// Hidden is state git status does not show: per-worktree refs,
	// operations in progress, submodules, index flags.
	Hidden []Hidden `json:"hidden,omitempty"`
	// Unpushed counts HEAD's commits no advertised ref holds (bounded by
	// UnpushedBound; UnpushedBound+1 means "more").
	Unpushed int `json:"unpushed"`
	// Stashes are the stash entries made on this tree's branch or HEAD.
	Stashes []string  `json:"stashes,omitempty"`
	InUse   []Process `json:"in_use,omitempty"`
	// Proof is the fresh proof of HEAD, if one holds.
	Proof *Proof `json:"proof,omitempty"`
	// Removable says the ordinary assessment would remove the tree.
	Removable bool `json:"removable"`
	// Refusals are why the ordinary assessment keeps it.
	Refusals []Refusal `json:"refusals,omitempty"`
}

// UnpushedBound caps how many unpushed commits an audit counts.
const UnpushedBound = 1000

// Digest is the sha256 of the audit's canonical JSON.
func (a MigrateAudit) Digest() string { return bodyDigest(a, "migrate audit") }

// MigrateProposal is what custody proposes for one candidate. Only a
// person approves it (or another of Allowed).
type MigrateProposal struct {
	// Disposition is empty when custody proposes nothing it could carry
	// out (a locked tree, a tree in use); Reason says why.
	Disposition Disposition   `json:"disposition,omitempty"`
	Reason      string        `json:"reason"`
	Allowed     []Disposition `json:"allowed"`
}

func (a MigrateAudit) hasCode(c Code) bool {
	if slices.ContainsFunc(a.Hidden, func(h Hidden) bool { return h.Code == c }) {
		return true
	}
	return slices.ContainsFunc(a.Refusals, func(r Refusal) bool { return r.Code == c })
}

// holdsSubmodules says the tree holds submodule repositories.
func (a MigrateAudit) holdsSubmodules() bool { return a.hasCode(CodeSubmodules) }

// dirty says the tree holds work no commit does.
func (a MigrateAudit) dirty() bool {
	return !a.Status.Clean() || len(a.Stashes) > 0 || len(a.Hidden) > 0 ||
		a.hasCode(CodeUntrackedContent) || a.hasCode(CodeContentDiffers)
}

// AllowedDispositions lists the dispositions the audit permits.
func AllowedDispositions(a MigrateAudit) []Disposition {
	present := a.PathState == PathPresent
	// A tree holding submodule repositories is one git moves or removes
	// only by force, which custody never uses.
	blocked := a.Locked || len(a.InUse) > 0 || a.holdsSubmodules()
	var out []Disposition
	if a.Head != "" && a.Proof == nil {
		out = append(out, DispositionLand)
	}
	if present && !blocked {
		out = append(out, DispositionArchive)
		// Relocation moves only a clean tree (DESIGN §4's relocate guard).
		if !a.dirty() {
			out = append(out, DispositionAdoptRelocate)
		}
	}
	if present && !blocked && a.Removable {
		out = append(out, DispositionRetire)
	}
	if a.PathState == PathAbsent && a.Proof != nil {
		out = append(out, DispositionRelease)
	}
	return append(out, DispositionReject)
}

// Propose decides the proposed disposition of an audit.
func Propose(a MigrateAudit) MigrateProposal {
	p := MigrateProposal{Allowed: AllowedDispositions(a)}
	set := func(d Disposition, format string, args ...any) MigrateProposal {
		p.Disposition, p.Reason = d, fmt.Sprintf(format, args...)
		return p
	}
	switch {
	case a.PathState == PathAbsent && a.Proof != nil:
		return set(DispositionRelease, "the tree is gone and its HEAD %s is published (%s): nothing is left to push or move; release it", Abbrev(a.Head, ShortCommit), ProofWhere(*a.Proof))
	case a.PathState == PathAbsent && a.Head != "" && a.Unpushed > UnpushedBound:
		return set(DispositionLand, "the tree is gone and more than %d commits of its HEAD %s are on no advertised ref: push it for review", UnpushedBound, Abbrev(a.Head, ShortCommit))
	case a.PathState == PathAbsent && a.Head != "" && a.Unpushed > 0:
		return set(DispositionLand, "the tree is gone and %d commit(s) of its HEAD %s are on no advertised ref: push it for review", a.Unpushed, Abbrev(a.Head, ShortCommit))
	case a.PathState == PathAbsent && a.Head != "":
		return set(DispositionLand, "the tree is gone and no remote custody reads proves its HEAD %s: push it for review", Abbrev(a.Head, ShortCommit))
	case a.PathState != PathPresent:
		return set("", "the tree is gone and its HEAD is unknown; nothing can be moved")
	case a.Locked:
		return set("", "the tree is locked (git worktree lock); unlock it and plan again, or reject it to keep it as it is")
	case a.holdsSubmodules():
		return set("", "the tree holds submodule repositories, which git moves or removes only by force and custody never forces; push their commits and reject it to keep it, or retire it yourself")
	case len(a.InUse) > 0:
		return set("", "a process works inside the tree (%s); plan again when it ends", a.InUse[0].Command)
	case a.Removable:
		return set(DispositionRetire, "clean and its HEAD is published (%s): retire it in place", a.Proof.Kind)
	case a.dirty():
		return set(DispositionArchive, "it holds work no commit has (changes, untracked or ignored entries, stashes or hidden state): archive it")
	case a.Unpushed > 0 || (a.Head != "" && a.Proof == nil):
		return set(DispositionLand, "clean, but %d commit(s) are on no advertised ref: push them for review", a.Unpushed)
	}
	r := "the ordinary assessment keeps it"
	if len(a.Refusals) > 0 {
		r += ": " + a.Refusals[0].Message
	}
	return set("", "%s", r)
}

// Permits reports whether d is one of the proposal's allowed dispositions.
func (p MigrateProposal) Permits(d Disposition) bool { return slices.Contains(p.Allowed, d) }

// ProofWhere names where proof p found its head: the kind, and the remote
// and ref it rests on when it names them.
func ProofWhere(p Proof) string {
	w := string(p.Kind)
	if p.Remote != "" || p.Ref != "" {
		w += " on " + strings.TrimSpace(p.Remote+" "+p.Ref)
	}
	return w
}

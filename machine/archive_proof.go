package machine

import "fmt"

// ArchiveProofObservation is everything the archive proof of one tree
// rests on, observed fresh.
type ArchiveProofObservation struct {
	// Archive is the record of the newest archive of the tree, and
	// Manifest its manifest as read now.
	Archive  Archive
	Manifest ArchiveManifest
	// Problems is CheckArchive over its directory, with the pack check.
	Problems []Refusal
	// Head is the tree's HEAD now; Fresh is CheckArchiveFresh of the tree
	// now (nil when it equals the archive).
	Head  string
	Fresh *Refusal
	// PrerequisitesPublished is true when every commit the bundle stands
	// on is an ancestor of a ref a remote advertises now.
	PrerequisitesPublished bool
}

// DecideArchiveProof is proof kind archive (DESIGN §5): a sealed archive
// whose manifest names this record, path and HEAD, whose digests and pack
// check hold, whose bundle stands only on published commits, and whose
// fingerprint equals the tree now. It returns the proof, or the refusal
// that keeps the tree.
func DecideArchiveProof(rec Record, obs ArchiveProofObservation) (*Proof, *Refusal) {
	a, m := obs.Archive, obs.Manifest
	retry := CommandOn([]string{"custody", "archive", "create"}, rec.ID)
	no := func(code Code, format string, args ...any) (*Proof, *Refusal) {
		r := refuse(code, rec.Path, retry, format, args...)
		return nil, &r
	}
	switch {
	case len(obs.Problems) > 0:
		r := obs.Problems[0]
		return nil, &r
	case a.State != StateActive:
		return no(CodeArchiveInvalid, "archive %s of %s is %s, not sealed", a.ID, rec.ID, a.State)
	case m.ID != a.ID || m.Record != rec.ID || m.Path != rec.Path:
		return no(CodeArchiveInvalid, "archive %s names record %s at %s, not %s at %s", a.ID, m.Record, m.Path, rec.ID, rec.Path)
	case m.Head != obs.Head:
		return no(CodeArchiveStale, "archive %s holds HEAD %s; %s is at %s now", a.ID, Abbrev(m.Head, ShortCommit), rec.Path, Abbrev(obs.Head, ShortCommit))
	case obs.Fresh != nil:
		r := *obs.Fresh
		return nil, &r
	case !obs.PrerequisitesPublished:
		return no(CodeArchiveBundleInvalid, "archive %s's bundle stands on commits no remote advertises now (%s)", a.ID, fmt.Sprint(m.Prerequisites))
	}
	return &Proof{Kind: ProofArchive, Ref: a.ID, Head: obs.Head, Commits: m.Commits}, nil
}

// archiveCovers lists the refusals an archive proof answers: the work
// they keep is in the archive, byte for byte. Everything else (a lease, a
// lock, a process inside, staged content, index flags, an operation in
// progress, an unknown remote) still keeps the tree.
var archiveCovers = map[Code]bool{
	CodeTrackedChanges: true, CodeUntrackedFiles: true, CodeIgnoredFiles: true, CodeUntrackedContent: true,
	CodeContentDiffers: true, CodeNestedGit: true, CodeUnpushedCommits: true, CodeDetachedHead: true,
}

// ArchiveCanCover reports whether v keeps the tree only for reasons an
// archive proof answers.
func ArchiveCanCover(v Verdict) bool {
	if v.Action != ActionKeep || len(v.Refusals) == 0 {
		return false
	}
	for _, r := range v.Refusals {
		if !archiveCovers[r.Code] {
			return false
		}
	}
	return true
}

// CoverByArchive is the verdict on a tree Assess kept, given what the
// archive proof found: removal with proof kind archive when the archive
// answers every reason the tree was kept, else the same verdict, with the
// archive's own refusal added when one covers the tree but does not count.
func CoverByArchive(v Verdict, p *Proof, r *Refusal) Verdict {
	if !ArchiveCanCover(v) {
		return v
	}
	if p != nil {
		return Verdict{Action: ActionRemove, Proof: p}
	}
	if r != nil {
		v.Refusals = AddRefusals(v.Refusals, *r)
	}
	return v
}

// supersededByCapture lists the refusals an archive of the tree, made
// now, leaves behind: each says that an archive made earlier no longer
// fits the tree (or cannot be read), and the proof is looked for in the
// newest archive of the tree, which a capture now would be.
var supersededByCapture = map[Code]bool{
	CodeArchiveStale: true, CodeArchiveInvalid: true, CodeArchiveIncomplete: true,
	CodeArchiveDigestMismatch: true, CodeArchiveBundleInvalid: true,
}

// CaptureCovers reports whether an archive captured now would answer
// every reason rs keeps a tree for (custody remove --archive): each is a
// reason an archive proof answers, or one that an earlier archive of the
// tree no longer fits. A tree kept for anything else (a lease, a process
// inside, staged content, an unknown remote) gains nothing from a capture,
// so none is made; and a tree kept for nothing is not kept.
func CaptureCovers(rs []Refusal) bool {
	covered := false
	for _, r := range rs {
		switch {
		case archiveCovers[r.Code]:
			covered = true
		case supersededByCapture[r.Code]:
		default:
			return false
		}
	}
	return covered
}

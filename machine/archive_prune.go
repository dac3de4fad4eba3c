package machine

import "fmt"

// ArchivePruneObservation is one observation of an archive directory for
// prune, and the two observations injected into it: whether the archived
// tree's path exists, and (asked only once every local check passed) what
// the remotes hold.
type ArchivePruneObservation struct {
	Dir ArchiveDirObservation
	// TreePresent is whether the manifest's tree path exists (lstat);
	// TreeErr is why that is unknown.
	TreePresent bool
	TreeErr     string
	// Remote is nil until the remotes were asked.
	Remote *ArchivePruneRemote
}

// ArchivePruneRemote is what the remotes said of the archive's commits:
// plain ancestry of each recorded commit against the advertised tips.
type ArchivePruneRemote struct {
	// Unavailable names the remotes that did not answer.
	Unavailable []string
	// NotOnRemote lists the recorded commits no advertised ref contains.
	NotOnRemote []string
}

// ArchivePruneNeedsRemote reports whether every local check of prune
// passed, so the remotes are to be asked.
func ArchivePruneNeedsRemote(obs ArchivePruneObservation) bool {
	obs.Remote = nil
	_, r := DecideArchivePrune(obs)
	return r != nil && r.Code == CodeRemoteUnavailable && obs.Remote == nil
}

// DecideArchivePrune decides whether an archive may be deleted, checking in
// a fixed order: a valid manifest whose digests hold and nothing
// unrecorded in the directory (CheckArchive, no pack check), the tree no
// longer present, no nested repositories, no uncommitted state, the
// remotes answered, and every recorded commit on an advertised ref by
// plain ancestry (never patch equivalence: an archive whose commits are on
// a remote only as rebased copies is the sole copy of those commits). It
// returns the manifest and nil when the archive may go.
func DecideArchivePrune(obs ArchivePruneObservation) (ArchiveManifest, *Refusal) {
	d := obs.Dir
	retry := "custody archive prune"
	m, problems := CheckArchive(d)
	if len(problems) > 0 {
		r := problems[0]
		r.Retry = "custody archive verify " + QuotePath(d.Dir)
		return m, &r
	}
	no := func(code Code, format string, args ...any) (ArchiveManifest, *Refusal) {
		r := refuse(code, d.Dir, retry, "%s", fmt.Sprintf(format, args...))
		return m, &r
	}
	switch {
	case obs.TreeErr != "":
		return no(CodePathUnknown, "archive %s: whether its tree %s exists is unknown: %s", m.ID, m.Path, obs.TreeErr)
	case obs.TreePresent:
		return no(CodeArchiveTreePresent, "archive %s: its tree %s still exists", m.ID, m.Path)
	case len(m.Nested) > 0:
		return no(CodeArchiveNested, "archive %s holds %d nested repositories (%s); their commits are nowhere else custody can check", m.ID, len(m.Nested), m.Nested[0].Path)
	}
	for _, f := range m.Files {
		if f.Name == ArchivePatchName && f.Size > 0 {
			return no(CodeArchiveUncommitted, "archive %s holds uncommitted changes (%s, %d bytes)", m.ID, ArchivePatchName, f.Size)
		}
	}
	if len(m.EmptyDirs) > 0 {
		return no(CodeArchiveUncommitted, "archive %s holds %d empty directories", m.ID, len(m.EmptyDirs))
	}
	switch {
	case obs.Remote == nil:
		return no(CodeRemoteUnavailable, "archive %s: the remotes were not asked", m.ID)
	case len(obs.Remote.Unavailable) > 0:
		return no(CodeRemoteUnavailable, "archive %s: remote %s did not answer, so whether its commits are published is unknown", m.ID, obs.Remote.Unavailable[0])
	case len(obs.Remote.NotOnRemote) > 0:
		return no(CodeUnpushedCommits, "archive %s holds %d commits no advertised ref contains (%s)", m.ID, len(obs.Remote.NotOnRemote), listSome(obs.Remote.NotOnRemote, 3))
	}
	return m, nil
}

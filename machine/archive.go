package machine

import (
	"context"
	"time"

	"github.com/qmuntal/stateless"
)

// Triggers of the archive machine (DESIGN §4).
const (
	// TriggerCapture commits the capture intent (none → provisioning)
	// before anything is written: the intent names the scratch directory
	// the capture writes into and the directory it will be sealed as.
	TriggerCapture Trigger = "capture"
	// TriggerSeal records an archive whose manifest was written last and
	// whose directory verifies (provisioning → active).
	TriggerSeal Trigger = "seal"
	// TriggerSoleCopy records that the archived tree is gone, so the
	// archive is the only copy of its work (active → finished).
	TriggerSoleCopy Trigger = "sole-copy"
	// TriggerPrune commits the prune intent before an archive is deleted.
	TriggerPrune Trigger = "prune"
	// TriggerPruned records an archive directory verified absent.
	TriggerPruned Trigger = "pruned"
	// TriggerStrip commits the strip intent (active or finished →
	// relocating) before a new patch without build output is written
	// into the scratch directory the intent names.
	TriggerStrip Trigger = "strip"
	// TriggerStripped records the new patch and manifest swapped into
	// place and verified (relocating → finished).
	TriggerStripped Trigger = "stripped"
	// TriggerStripAbandoned records a strip undone before its swap: the
	// scratch removed, the archive as it was, verified (relocating →
	// finished).
	TriggerStripAbandoned Trigger = "strip-abandoned"
)

// Intent kinds of archives.
const (
	IntentArchiveCapture IntentKind = "archive-capture"
	IntentArchivePrune   IntentKind = "archive-prune"
	IntentArchiveStrip   IntentKind = "archive-strip"
)

// Archive is the persisted record of one archive of a worktree's
// unpublished work. The archive itself lives in Dir, outside the
// repository; its manifest is self-describing, and the record is what the
// repository's store knows of it.
type Archive struct {
	// ID is the archive's id, also Dir's basename.
	ID    string `json:"id"`
	State State  `json:"state"`
	Rev   uint64 `json:"rev"`
	// Record is the worktree record the archive covers, Path its tree and
	// Head the commit HEAD named when it was captured.
	Record string `json:"record"`
	Path   string `json:"path"`
	Head   string `json:"head"`
	// Dir is the sealed archive directory.
	Dir string `json:"dir"`
	// Manifest is the SHA-256 of manifest.json as sealed.
	Manifest string         `json:"manifest,omitempty"`
	Intent   *ArchiveIntent `json:"intent,omitempty"`
	// Outcome is the trigger that settled the archive's last intent.
	Outcome   string    `json:"outcome,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ArchiveIntent is committed before a capture writes anything, or before a
// prune deletes anything.
type ArchiveIntent struct {
	Kind   IntentKind `json:"kind"`
	Holder Holder     `json:"holder"`
	At     time.Time  `json:"at"`
	// Scratch is the directory a capture writes into; only resume removes
	// it, and only while the archive is provisioning.
	Scratch string `json:"scratch,omitempty"`
	// Dir is the directory the capture renames Scratch to once its
	// manifest is written, or the one a prune deletes.
	Dir string `json:"dir"`
}

// RowKind is KindArchive.
func (a Archive) RowKind() Kind { return KindArchive }

// RowID is the archive id.
func (a Archive) RowID() string { return a.ID }

// RowState is the stored state.
func (a Archive) RowState() State { return a.State }

// RowRev is the stored revision.
func (a Archive) RowRev() uint64 { return a.Rev }

// RowPath is the archive directory.
func (a Archive) RowPath() string { return a.Dir }

// RowIntent returns the archive's intent, if any.
func (a Archive) RowIntent() (IntentKind, Holder, bool) {
	if a.Intent == nil {
		return "", Holder{}, false
	}
	return a.Intent.Kind, a.Intent.Holder, true
}

// RowIntentAt is when the archive's intent was committed (zero for none).
func (a Archive) RowIntentAt() time.Time {
	if a.Intent == nil {
		return time.Time{}
	}
	return a.Intent.At
}

// ArchiveFiring is the argument of every archive trigger: the record, the
// injected time, the intent a trigger commits, and what was observed.
type ArchiveFiring struct {
	Arc    Archive
	Now    time.Time
	Intent *ArchiveIntent
	// Verified is true when the sealed directory was just read back and
	// every digest and the pack check held (CheckArchive found nothing).
	Verified bool
	// Manifest is the SHA-256 of the verified manifest.json.
	Manifest string
	// ScratchGone is true when the capture's scratch directory and its
	// would-be archive directory are both verified absent.
	ScratchGone bool
	// TreeGone is true when the archived tree's path is verified absent.
	TreeGone bool
	// DirGone is true when the archive directory is verified absent.
	DirGone bool
}

func archiveFiringOf(args []any) (ArchiveFiring, bool) {
	if len(args) != 1 {
		return ArchiveFiring{}, false
	}
	f, ok := args[0].(ArchiveFiring)
	return f, ok
}

// captureIntentNamesScratch holds when the capture intent names a scratch
// directory distinct from the archive directory.
func captureIntentNamesScratch(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.Intent != nil && f.Intent.Kind == IntentArchiveCapture && f.Intent.Scratch != "" &&
		f.Intent.Dir != "" && f.Intent.Scratch != f.Intent.Dir
}

// archiveVerified holds when the sealed directory was read back and
// verified, and its manifest digest is known.
func archiveVerified(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.Verified && f.Manifest != ""
}

// scratchRemoved holds when nothing of an unfinished capture is left.
func scratchRemoved(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.ScratchGone
}

// archivedTreeGone holds when the archived tree is absent and the archive
// still verifies: it is now the sole copy.
func archivedTreeGone(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.TreeGone && f.Verified
}

// pruneIntentNamesDir holds when the prune intent names the record's own
// directory.
func pruneIntentNamesDir(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.Intent != nil && f.Intent.Kind == IntentArchivePrune && f.Intent.Dir != "" && f.Intent.Dir == f.Arc.Dir
}

// stripIntentNamesScratch holds when the strip intent names the record's
// own directory and a scratch directory distinct from it.
func stripIntentNamesScratch(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.Intent != nil && f.Intent.Kind == IntentArchiveStrip && f.Intent.Dir != "" && f.Intent.Dir == f.Arc.Dir &&
		f.Intent.Scratch != "" && f.Intent.Scratch != f.Intent.Dir
}

// stripSettled holds when the archive directory verifies with the
// manifest whose digest the firing carries, the scratch is gone, and the
// archived tree is absent.
func stripSettled(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.Verified && f.Manifest != "" && f.ScratchGone && f.TreeGone
}

// archiveDirGone holds when the archive directory is verified absent.
func archiveDirGone(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	return ok && f.DirGone
}

// archiveIntentHeld holds when the record carries an intent and the firing
// hands the same intent to a new holder.
func archiveIntentHeld(_ context.Context, args ...any) bool {
	f, ok := archiveFiringOf(args)
	if !ok || f.Arc.Intent == nil || f.Intent == nil {
		return false
	}
	a, b := *f.Arc.Intent, *f.Intent
	a.Holder, b.Holder = Holder{}, Holder{}
	return a == b
}

// ArchiveSpec is the archive kind's machine (DESIGN §4): provisioning
// (capture into scratch) → active (sealed) → finished (its tree is gone;
// the archive is the sole copy) → removing (prune intent) → tombstoned;
// relocating while a strip rewrites the patch, back to finished.
func ArchiveSpec() Spec[Archive] {
	return Spec[Archive]{Kind: KindArchive, Configure: configureArchive, Noun: "archive ",
		Retry: func(a Archive) string {
			if a.ID == "" {
				return "custody archive list"
			}
			return CommandOn([]string{"custody", "archive", "verify"}, a.ID)
		}}
}

func configureArchive(sm *stateless.StateMachine) {
	sm.Configure(StateNone).
		Permit(TriggerCapture, StateProvisioning, captureIntentNamesScratch)
	sm.Configure(StateProvisioning).
		PermitReentry(TriggerTakeOver, archiveIntentHeld).
		Permit(TriggerSeal, StateActive, archiveVerified).
		Permit(TriggerDiscard, StateTombstoned, scratchRemoved)
	sm.Configure(StateActive).
		Permit(TriggerSoleCopy, StateFinished, archivedTreeGone).
		Permit(TriggerPrune, StateRemoving, pruneIntentNamesDir).
		Permit(TriggerStrip, StateRelocating, stripIntentNamesScratch)
	sm.Configure(StateFinished).
		Permit(TriggerPrune, StateRemoving, pruneIntentNamesDir).
		Permit(TriggerStrip, StateRelocating, stripIntentNamesScratch)
	sm.Configure(StateRelocating).
		PermitReentry(TriggerTakeOver, archiveIntentHeld).
		Permit(TriggerStripped, StateFinished, stripSettled).
		Permit(TriggerStripAbandoned, StateFinished, stripSettled)
	sm.Configure(StateRemoving).
		PermitReentry(TriggerTakeOver, archiveIntentHeld).
		Permit(TriggerPruned, StateTombstoned, archiveDirGone)
	sm.Configure(StateTombstoned)
}

// NextArchive returns a after trigger t took it to `to` over f: the
// intent a capture, prune or take-over commits, cleared by every other
// trigger, which records itself as the outcome.
func NextArchive(a Archive, to State, t Trigger, f ArchiveFiring) Archive {
	n := a
	n.State, n.Rev, n.UpdatedAt = to, a.Rev+1, f.Now
	switch t {
	case TriggerCapture:
		n.Intent, n.CreatedAt, n.Dir = f.Intent, f.Now, f.Intent.Dir
	case TriggerPrune, TriggerTakeOver, TriggerStrip:
		n.Intent = f.Intent
	case TriggerSeal, TriggerStripped, TriggerStripAbandoned:
		n.Intent, n.Outcome, n.Manifest = nil, string(t), f.Manifest
	default:
		n.Intent, n.Outcome = nil, string(t)
	}
	return n
}

// ArchiveResumeObservation is what resume sees of an archive that carries
// an intent.
type ArchiveResumeObservation struct {
	// ScratchPresent and DirPresent say whether the intent's scratch and
	// archive directories exist (lstat); unknown is never absent, so an
	// lstat that failed otherwise is an error before this is made.
	ScratchPresent bool
	DirPresent     bool
	// Problems is CheckArchive over the archive directory, when present.
	Problems []Refusal
	// StripReady is whether a strip's scratch holds its new manifest,
	// written completely (renamed into the scratch after its fsync).
	StripReady bool
}

// Resume decisions of the archive kind.
const (
	ArchiveResumeSeal    = "seal"
	ArchiveResumeDiscard = "discard"
	ArchiveResumePrune   = "prune"
	ArchiveResumePruned  = "pruned"
	// ArchiveResumeSwap finishes a strip whose new manifest was written:
	// the swap is redone (each rename idempotent) and verified.
	ArchiveResumeSwap = "strip-swap"
	// ArchiveResumeUnstrip abandons a strip whose new manifest was never
	// completed: the scratch goes, the archive stays as it is.
	ArchiveResumeUnstrip = "strip-abandon"
)

// DecideArchiveResume picks the one resume rule for an archive that
// carries an intent. A capture whose directory was renamed into place and
// verifies is sealed; one whose directory does not exist is discarded
// (its scratch, if any, removed: never a half archive that counts). A
// directory in place that does not verify is refused: custody will not
// guess which of its files to trust.
func DecideArchiveResume(a Archive, obs ArchiveResumeObservation) (string, *Refusal) {
	retry := CommandOn([]string{"custody", "archive", "verify"}, a.ID)
	switch {
	case a.Intent == nil:
	case a.State == StateProvisioning && a.Intent.Kind == IntentArchiveCapture:
		if !obs.DirPresent {
			return ArchiveResumeDiscard, nil
		}
		if len(obs.Problems) == 0 {
			return ArchiveResumeSeal, nil
		}
		r := obs.Problems[0]
		r.Retry = retry
		r.Message = "an interrupted capture left " + a.Dir + " in place, and it does not verify: " + r.Message
		return "", &r
	case a.State == StateRelocating && a.Intent.Kind == IntentArchiveStrip:
		if obs.StripReady {
			return ArchiveResumeSwap, nil
		}
		return ArchiveResumeUnstrip, nil
	case a.State == StateRemoving && a.Intent.Kind == IntentArchivePrune:
		if !obs.DirPresent {
			return ArchiveResumePruned, nil
		}
		return ArchiveResumePrune, nil
	}
	r := refuse(CodeResumeUnmatched, a.Dir, retry, "archive %s is %s with %s; no resume rule fits", a.ID, a.State, intentName(a.Intent))
	return "", &r
}

func intentName(in *ArchiveIntent) string {
	if in == nil {
		return "no intent"
	}
	return "a " + string(in.Kind) + " intent"
}

// ArchiveGraph returns the archive machine as a DOT graph, for docs/.
func ArchiveGraph() string { return Graph(ArchiveSpec()) }

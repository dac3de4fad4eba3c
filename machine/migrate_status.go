package machine

import (
	"fmt"
	"sort"
)

// The journal events of a migration, in the order a candidate meets them.
const (
	// EventMigrateDiscovery lists every place one discovery classified.
	EventMigrateDiscovery = "migrate-discovery"
	// EventMigrateObservation is one candidate's audit (digest, proposal).
	EventMigrateObservation = "migrate-observation"
	// EventMigrateDisposition is a person's approval or rejection, bound
	// to one audit digest.
	EventMigrateDisposition = "migrate-disposition"
	// EventMigrateAct is written before apply acts on a candidate.
	EventMigrateAct = "migrate-act"
	// EventMigrateOutcome is what the act ended with.
	EventMigrateOutcome = "migrate-outcome"
)

// MigrateEvent is the detail of one migration journal event.
type MigrateEvent struct {
	Event       string      `json:"event"`
	Candidate   string      `json:"candidate"`
	Path        string      `json:"path,omitempty"`
	Digest      string      `json:"digest"`
	PlanID      string      `json:"plan_id,omitempty"`
	Disposition Disposition `json:"disposition,omitempty"`
	// Approved is true for an approval, false for a rejection
	// (EventMigrateDisposition).
	Approved bool   `json:"approved,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Proposal is the proposed disposition (EventMigrateObservation).
	Proposal *MigrateProposal `json:"proposal,omitempty"`
	Outcome  Outcome          `json:"outcome,omitempty"`
	Code     Code             `json:"code,omitempty"`
	// Branch and Head are, on an outcome that removed or released a tree
	// on a proof, the legacy branch the tree had checked out and the
	// commit the proof covers; Proof is that proof, where it was found.
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
	Proof  string `json:"proof,omitempty"`
	// PlanFile is, on an observation migrate plan journaled, the file the
	// plan holding this audit was written to (an absolute path): the file
	// a disposition of the audit is applied from. Empty on an observation
	// migrate apply journaled for a candidate that changed: no plan file
	// holds that audit.
	PlanFile string `json:"plan_file,omitempty"`
}

// MigrateState is where a candidate stands in the migration.
type MigrateState string

// The states migrate status reports.
const (
	// MigratePending: a disposition is missing, or approved and not yet
	// carried out, or an act began and no outcome was recorded.
	MigratePending MigrateState = "pending"
	// MigrateRefused: the last act was refused; re-running may settle it.
	MigrateRefused MigrateState = "refused"
	// MigrateRetained: settled with the tree kept (landed, rejected,
	// adopted).
	MigrateRetained MigrateState = "retained"
	// MigrateRemoved: settled with the tree removed after its proof.
	MigrateRemoved MigrateState = "removed"
)

// MigrateCandidateStatus is one candidate's standing.
type MigrateCandidateStatus struct {
	ID          string       `json:"id"`
	Path        string       `json:"path"`
	State       MigrateState `json:"state"`
	Digest      string       `json:"digest"`
	Disposition Disposition  `json:"disposition,omitempty"`
	Outcome     Outcome      `json:"outcome,omitempty"`
	Code        Code         `json:"code,omitempty"`
	Why         string       `json:"why"`
	// Interrupted says an act began and no outcome was recorded (a run
	// killed midway).
	Interrupted bool `json:"interrupted,omitempty"`
	// Branch and Head are, once the tree was removed or released on a
	// proof, the legacy branch it had checked out and the commit the
	// proof covers (MigrateEvent.Branch).
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
	// Proposed is the disposition the newest audit proposes ("" when it
	// proposes none).
	Proposed Disposition `json:"proposed,omitempty"`
	// PlanFile is the migrate plan file holding the newest audit, "" when
	// none does (MigrateEvent.PlanFile).
	PlanFile string `json:"plan_file,omitempty"`
	// Next is the command that moves the candidate on, runnable as it is:
	// the disposition a person approves, or the apply that carries it out;
	// "" once it is settled.
	Next string `json:"next,omitempty"`
}

// Migration outcomes that keep the tree.
const (
	OutcomeLanded   Outcome = "landed"
	OutcomeRejected Outcome = "rejected"
	OutcomeAdopted  Outcome = "adopted"
	// OutcomeReleased settles a gone tree whose HEAD a remote custody
	// reads holds: nothing was pushed, moved or removed.
	OutcomeReleased Outcome = "released"
)

// FoldMigration replays a migration's events, in journal order, into
// each candidate's standing, sorted by id. A candidate whose newest audit
// has no disposition bound to its digest is pending, as is one whose act
// has no outcome (a killed run): nothing short of a recorded outcome
// counts as done.
func FoldMigration(events []MigrateEvent) []MigrateCandidateStatus {
	type acc struct {
		st      MigrateCandidateStatus
		digest  string
		decided map[string]MigrateEvent
		acting  bool
		last    *MigrateEvent
		// proposal and planFile are the newest audit's.
		proposal *MigrateProposal
		planFile string
	}
	by := map[string]*acc{}
	get := func(id string) *acc {
		a := by[id]
		if a == nil {
			a = &acc{decided: map[string]MigrateEvent{}}
			a.st.ID = id
			by[id] = a
		}
		return a
	}
	for _, ev := range events {
		a := get(ev.Candidate)
		if ev.Path != "" {
			a.st.Path = ev.Path
		}
		switch ev.Event {
		case EventMigrateObservation:
			if ev.Digest != a.digest {
				a.digest = ev.Digest
				a.last = nil
				a.planFile = ""
			}
			if ev.Proposal != nil {
				a.proposal = ev.Proposal
			}
			if ev.PlanFile != "" {
				a.planFile = ev.PlanFile
			}
		case EventMigrateDisposition:
			a.decided[ev.Digest] = ev
		case EventMigrateAct:
			a.acting = true
			a.last = nil
			if a.digest == "" {
				a.digest = ev.Digest
			}
		case EventMigrateOutcome:
			a.acting = false
			e := ev
			a.last = &e
			a.digest = ev.Digest
		}
	}
	out := make([]MigrateCandidateStatus, 0, len(by))
	for _, a := range by {
		st := a.st
		st.Digest = a.digest
		st.PlanFile = a.planFile
		if a.proposal != nil {
			st.Proposed = a.proposal.Disposition
		}
		d, decided := a.decided[a.digest]
		if decided {
			st.Disposition = d.Disposition
		}
		switch {
		case a.acting:
			st.State, st.Interrupted, st.Why = MigratePending, true, "an act began and no outcome was recorded (interrupted): apply it again"
		case a.last != nil && a.last.Outcome == OutcomeRemoved:
			st.State, st.Outcome, st.Why = MigrateRemoved, a.last.Outcome, "removed after its proof"
			if a.last.Proof != "" {
				st.Why += " (" + a.last.Proof + ")"
			}
		case a.last != nil && MigrateSettled(a.last.Outcome):
			st.State, st.Outcome, st.Why = MigrateRetained, a.last.Outcome, "settled: "+string(a.last.Outcome)
			if a.last.Proof != "" {
				st.Why += " (its HEAD is published: " + a.last.Proof + ")"
			}
		case a.last != nil:
			st.State, st.Outcome, st.Code = MigrateRefused, a.last.Outcome, a.last.Code
			st.Why = "refused [" + string(a.last.Code) + "]: " + a.last.Reason + " (apply it again once that is settled)"
		case decided:
			st.State, st.Why = MigratePending, "disposition "+string(d.Disposition)+" approved; not applied yet"
		default:
			st.State, st.Why = MigratePending, "needs a disposition"
		}
		if a.last != nil && MigrateSettled(a.last.Outcome) {
			st.Branch, st.Head = a.last.Branch, a.last.Head
		}
		st.Next = MigrateNext(st, st.PlanFile)
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// MigrateNext is the command that moves candidate s on, with planFile
// standing for s.PlanFile as the person is to type it (relative to where
// they are): a candidate without a disposition is approved as custody
// proposes (reject when it proposes nothing: kept as it is), one approved,
// refused or interrupted is applied again from its plan file; "" once it
// is settled.
func MigrateNext(s MigrateCandidateStatus, planFile string) string {
	switch {
	case s.State != MigratePending && s.State != MigrateRefused:
		return ""
	case s.State == MigratePending && s.Disposition == "" && s.Outcome == "":
		return MigrateDisposeRetry(s.ID, s.Digest, s.Proposed)
	}
	return MigrateApplyNext(s.ID, planFile)
}

// MigrateDisposeRetry approves the disposition proposed (reject when
// proposed is empty: the tree is kept as it is) of candidate id's audit
// digest.
func MigrateDisposeRetry(id, digest string, proposed Disposition) string {
	if proposed == "" {
		proposed = DispositionReject
	}
	return CommandOn([]string{"custody", "migrate", "dispose", "--approve", "--disposition", string(proposed), "--digest", digest}, id)
}

// MigrateApplyNext applies the migrate plan file planFile for candidate
// id ("" for every candidate); with no plan file (no file holds the
// candidate's newest audit: migrate apply journaled it when the candidate
// changed), it plans afresh into migrate.json first.
func MigrateApplyNext(id, planFile string) string {
	if planFile == "" {
		return MigratePlanRetry("") + " && " + migrateApply(id, "")
	}
	return migrateApply(id, planFile)
}

// migrateApply is custody migrate apply of planFile (migrate.json when
// empty), --only id when id is set.
func migrateApply(id, planFile string) string {
	if id == "" {
		return Command("custody", "migrate", "apply", migratePlanFileOr(planFile))
	}
	return MigrateApplyRetry(id, planFile)
}

// MigrateSettled reports whether an act's outcome o settles its candidate,
// for migrate status and migrate apply alike: kept for good (landed,
// rejected, adopted), or any outcome that ends an item with nothing left
// to do (Outcome.Settled: removed, relocated, abandoned, ...). Anything
// else (refused, stale, an outcome custody does not know) leaves the
// candidate to be applied again.
func MigrateSettled(o Outcome) bool {
	switch o {
	case OutcomeLanded, OutcomeRejected, OutcomeAdopted, OutcomeReleased:
		return true
	}
	return o.Settled()
}

// MigrateLedger is what a migration's journal says apply has to go on,
// keyed by candidate id and audit digest ("<id> <digest>"): the latest
// disposition bound to each audit, and the settling outcome of each audit
// no later act reopened.
type MigrateLedger struct {
	Decided map[string]MigrateEvent
	Settled map[string]MigrateEvent
}

// MigrateKey is the ledger's key of candidate id's audit digest.
func MigrateKey(id, digest string) string { return id + " " + digest }

// FoldMigrateLedger replays a migration's events, in journal order, into
// the ledger apply reads: an act begun after a settling outcome (a run
// repeated) reopens the audit until its own outcome settles it again.
func FoldMigrateLedger(events []MigrateEvent) MigrateLedger {
	l := MigrateLedger{Decided: map[string]MigrateEvent{}, Settled: map[string]MigrateEvent{}}
	for _, ev := range events {
		key := MigrateKey(ev.Candidate, ev.Digest)
		switch ev.Event {
		case EventMigrateDisposition:
			l.Decided[key] = ev
		case EventMigrateAct:
			delete(l.Settled, key)
		case EventMigrateOutcome:
			if MigrateSettled(ev.Outcome) {
				l.Settled[key] = ev
			}
		}
	}
	return l
}

// MigrationComplete reports whether every candidate is settled.
func MigrationComplete(st []MigrateCandidateStatus) bool {
	for _, s := range st {
		if s.State == MigratePending || s.State == MigrateRefused {
			return false
		}
	}
	return true
}

// LegacyBranchDelete deletes legacy branch b only while it is still at
// commit (git's compare-and-swap): the branch a tree retired or released
// on a proof of commit had checked out. custody never deletes a branch it
// did not create; it names the command.
func LegacyBranchDelete(b, commit string) string {
	return Command("git", "update-ref", "-d", "refs/heads/"+b, commit)
}

// MigrationIncomplete says, for a migration some candidate of st is
// pending or refused in, how many are and why the first one is, and the
// command that moves that one on (custody migrate status when none is
// printed for it).
func MigrationIncomplete(st []MigrateCandidateStatus) (what, fix string) {
	var open []MigrateCandidateStatus
	for _, s := range st {
		if s.State == MigratePending || s.State == MigrateRefused {
			open = append(open, s)
		}
	}
	if len(open) == 0 {
		return "", ""
	}
	first := open[0]
	what = fmt.Sprintf("the migration is incomplete: %d of %d candidate(s) pending or refused; %s is %s: %s", len(open), len(st), EscapeControl(first.ID), first.State, first.Why)
	fix = MigrateNext(first, first.PlanFile)
	if fix == "" {
		fix = "custody migrate status"
	}
	return what, fix
}

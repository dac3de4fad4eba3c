package machine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// ReportEntry is one journal entry as the auditor's report reads it: the
// store's entry with its intent and detail still raw, and whether the
// chain vouches for it.
type ReportEntry struct {
	Seq         uint64
	At          time.Time
	Record      string
	Kind        string
	From, To    string
	Trigger     string
	Intent      json.RawMessage
	Proof       *Proof
	Observation string
	Outcome     string
	Actor       string
	Event       string
	Detail      json.RawMessage
	Hash        string
	// Redacted lists what a redacted export replaced in this entry.
	Redacted []string
	// Unverified is set on the first entry that does not verify and on
	// every entry after it: the chain no longer vouches for them.
	Unverified bool
}

// ReportRow is one line of a record's timeline.
type ReportRow struct {
	Seq         uint64    `json:"seq"`
	At          time.Time `json:"at"`
	From        string    `json:"from,omitempty"`
	To          string    `json:"to,omitempty"`
	Trigger     string    `json:"trigger,omitempty"`
	Event       string    `json:"event,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	Actor       string    `json:"actor,omitempty"`
	Observation string    `json:"observation,omitempty"`
	Hash        string    `json:"hash"`
	Unverified  bool      `json:"unverified,omitempty"`
}

// ReportRemoval is everything the journal says about one removal: the
// intent committed before it, the proof that allowed it, the branch and
// what was kept under recovery refs.
type ReportRemoval struct {
	IntentSeq uint64 `json:"intent_seq"`
	Path      string `json:"path,omitempty"`
	Commit    string `json:"commit,omitempty"`
	AdminKey  string `json:"admin_key,omitempty"`
	Proof     *Proof `json:"proof,omitempty"`
	// ProofFields is every member of the proof as journaled, in order,
	// including those of kinds this custody does not type (an archive's
	// id and digests), so the report renders any proof kind.
	ProofFields [][2]string `json:"proof_fields,omitempty"`
	Fingerprint string      `json:"fingerprint,omitempty"`
	PlanID      string      `json:"plan_id,omitempty"`
	Observation string      `json:"observation,omitempty"`
	// RemovedSeq is the entry that completed the removal (0 while none
	// did: the intent is still open).
	RemovedSeq uint64 `json:"removed_seq,omitempty"`
	// RemovedObservation is the observation digest the completion
	// recorded (the tree absent and unregistered).
	RemovedObservation string `json:"removed_observation,omitempty"`
	Branch             string `json:"branch,omitempty"`
	// BranchOutcome is "deleted" when the journal holds custody's
	// deletion of the branch, else "kept"; BranchCommit is the commit it
	// pointed at.
	BranchOutcome string         `json:"branch_outcome,omitempty"`
	BranchCommit  string         `json:"branch_commit,omitempty"`
	Recovered     []RecoveredRef `json:"recovered,omitempty"`
	RecoveredFile []string       `json:"recovered_files,omitempty"`
	// Discarded is the build output the removal deleted with the tree,
	// as its intent listed it (absent from intents written before it was
	// journaled).
	Discarded []DiscardedDir `json:"discarded,omitempty"`
}

// ReportSection is one record's part of the report: what it came to and
// the facts its timeline holds. Its rows are not kept here: Audit.Add
// hands each row back for the caller to keep (on disk, in journal order),
// and the section is rendered once, whole, with them.
type ReportSection struct {
	Record string `json:"record"`
	Kind   string `json:"kind"`
	// Operation is what the record came to, as its kind names it
	// (ReportKind.Operation): the group of the page it is shown in.
	Operation string `json:"operation"`
	// FirstSeq is the seq of the record's first entry; Entries counts its
	// rows.
	FirstSeq uint64          `json:"first_seq"`
	Entries  int             `json:"entries"`
	Rows     []ReportRow     `json:"rows,omitempty"`
	State    string          `json:"state"`
	Removals []ReportRemoval `json:"removals,omitempty"`
	// Abandoned is the commit a person acknowledged as unrecoverable when
	// the record was abandoned: the one outcome without a proof.
	Abandoned    string `json:"abandoned,omitempty"`
	AbandonedSeq uint64 `json:"abandoned_seq,omitempty"`
	Discarded    bool   `json:"discarded,omitempty"`
	Adopted      bool   `json:"adopted,omitempty"`
	Unverified   bool   `json:"unverified,omitempty"`
	// Commands are a resource's frozen commands, each as its intent
	// first carried it.
	Commands []ReportCommand `json:"commands,omitempty"`
	// Migration is set on a legacy tree's section: what migration
	// audited, who approved which disposition, and the outcome.
	Migration *ReportMigration `json:"migration,omitempty"`
}

// ReportMigration is what the journal says of one migration candidate:
// its newest audit, the disposition approved for it, and the outcome of
// the act that carried it out.
type ReportMigration struct {
	Path string `json:"path,omitempty"`
	// Digest is the audit digest the outcome (else the newest audit) is
	// bound to.
	Digest string `json:"digest"`
	PlanID string `json:"plan_id,omitempty"`
	// Proposed is the disposition custody proposed for that audit, and
	// why.
	Proposed       Disposition `json:"proposed,omitempty"`
	ProposedReason string      `json:"proposed_reason,omitempty"`
	// Disposition is the one a person decided for the digest; Approved
	// is false for a rejection; ApprovedBy is the actor who decided, at
	// ApprovedSeq.
	Disposition Disposition `json:"disposition,omitempty"`
	Approved    bool        `json:"approved,omitempty"`
	ApprovedBy  string      `json:"approved_by,omitempty"`
	ApprovedSeq uint64      `json:"approved_seq,omitempty"`
	// ActSeq is the act's entry (written before it started).
	ActSeq uint64 `json:"act_seq,omitempty"`
	// Outcome is what the last act ended with, at OutcomeSeq; Code and
	// Reason say why when it was refused.
	Outcome    Outcome `json:"outcome,omitempty"`
	OutcomeSeq uint64  `json:"outcome_seq,omitempty"`
	Code       Code    `json:"code,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	// Settled is set when the outcome settles the candidate
	// (MigrateSettled).
	Settled bool `json:"settled,omitempty"`
	// Head and Proof are, on an outcome that landed, removed or released
	// a tree, the commit the proof covers and the proof (for a land, the
	// remote and the ref it pushed to); Branch is the legacy branch.
	Head   string `json:"head,omitempty"`
	Proof  string `json:"proof,omitempty"`
	Branch string `json:"branch,omitempty"`
	// Decided holds the disposition decided for each audit digest, so
	// the outcome binds to the one it carried out (kept with the section
	// while the audit goes on).
	Decided map[string]ReportDecision `json:"decided,omitempty"`
}

// ReportDecision is one disposition a person decided for an audit digest:
// which, approved or rejected, by whom, at which entry.
type ReportDecision struct {
	Disposition Disposition `json:"disposition"`
	Approved    bool        `json:"approved,omitempty"`
	Actor       string      `json:"actor,omitempty"`
	Seq         uint64      `json:"seq"`
}

// ReportCommand is one frozen command a resource's intent carried.
type ReportCommand struct {
	Seq     uint64 `json:"seq"`
	Intent  string `json:"intent"`
	Command string `json:"command"`
}

// ReportSummary counts what the report covers. It is a versioned surface
// (docs/schemas/report-summary.json).
type ReportSummary struct {
	Format         string    `json:"format"`
	Entries        int       `json:"entries"`
	FirstSeq       uint64    `json:"first_seq"`
	LastSeq        uint64    `json:"last_seq"`
	FirstAt        time.Time `json:"first_at,omitzero"`
	LastAt         time.Time `json:"last_at,omitzero"`
	Head           string    `json:"head"`
	TreesCreated   int       `json:"trees_created"`
	TreesAdopted   int       `json:"trees_adopted"`
	TreesRemoved   int       `json:"trees_removed"`
	TreesKept      int       `json:"trees_kept"`
	TreesAbandoned int       `json:"trees_abandoned"`
	TreesDiscarded int       `json:"trees_discarded"`
	// TreesArchived counts trees whose work an archive sealed (the
	// archive kind's seal: one archive holds one tree's work).
	TreesArchived int `json:"trees_archived"`
	// TreesMigrated counts the legacy trees a migration settled, by the
	// disposition carried out (sorted by disposition); MigrationsOpen
	// those it has not settled (no disposition, not applied, refused).
	TreesMigrated      []ReportCount `json:"trees_migrated"`
	MigrationsOpen     int           `json:"migrations_open"`
	ResourcesMade      int           `json:"resources_made"`
	ResourcesDestroyed int           `json:"resources_destroyed"`
	// Archives counts archives sealed (the archive kind's seal),
	// ArchivesUsed the removals a sealed archive proved (a worktree removed
	// on proof kind archive) and ArchivesPruned archives deleted once their
	// work was published (the archive kind's pruned).
	Archives       int `json:"archives"`
	ArchivesUsed   int `json:"archives_used_as_proof"`
	ArchivesPruned int `json:"archives_pruned"`
	// BuildOutputDirs counts the build output directories removals
	// deleted with their trees, BuildOutputBytes their size.
	BuildOutputDirs  int    `json:"build_output_dirs"`
	BuildOutputBytes int64  `json:"build_output_bytes"`
	RecoveryRefs     int    `json:"recovery_refs"`
	Resumed          int    `json:"resumed"`
	Redacted         int    `json:"redacted"`
	CustodyVersion   string `json:"custody_version"`
	Records          int    `json:"records"`
}

// ReportCount is one count of a breakdown (TreesMigrated: by disposition).
type ReportCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// ReportSummaryFormat names the summary's shape.
const ReportSummaryFormat = "custody.report-summary/1"

// ReportKind is what one record kind tells the auditor's report: how its
// entries count in the summary, what each record came to (its operation,
// the group the page shows it in) and how that counts. The report asks
// each kind it is given (ReportKinds) and switches on none: a new kind
// adds its ReportKind.
type ReportKind struct {
	Kind Kind
	// Title heads the kind's groups ("Worktrees").
	Title string
	// Counts are the entries of the kind that add to the summary, each
	// with what it adds.
	Counts []ReportRule
	// Operation names what a record of the kind came to, from its
	// section as the whole journal left it.
	Operation func(s ReportSection) string
	// Operations lists the operations in the order the page shows their
	// groups; an operation not listed follows them, by name.
	Operations []string
	// Ended adds a record's outcome to the summary once its section is
	// complete (trees still kept, legacy trees migrated); nil when the
	// kind counts nothing there.
	Ended func(s ReportSection, sum *ReportSummary)
}

// ReportRule is one summary count a kind's entry adds to when Match holds.
type ReportRule struct {
	Match func(e ReportEntry) bool
	Count func(sum *ReportSummary)
}

// ReportGroup is one group of the page: the records of one kind that came
// to one operation, in the order their first entries were journaled.
type ReportGroup struct {
	Kind      string          `json:"kind"`
	Operation string          `json:"operation"`
	Title     string          `json:"title"`
	Sections  []ReportSection `json:"sections"`
}

// The operations the report groups records by.
const (
	OperationRemoved    = "removed"
	OperationSettled    = "settled"
	OperationAbandoned  = "abandoned"
	OperationDiscarded  = "discarded"
	OperationKept       = "kept"
	OperationDestroyed  = "destroyed"
	OperationPruned     = "pruned"
	OperationMigrated   = "migrated: "
	OperationMigrating  = "migration not settled"
	OperationRepository = "repository events"
)

func onTrigger(t Trigger) func(ReportEntry) bool {
	return func(e ReportEntry) bool { return e.Trigger == string(t) }
}

func onEdge(from, to State) func(ReportEntry) bool {
	return func(e ReportEntry) bool { return e.From == from.String() && e.To == to.String() && e.Event == "" }
}

// ReportKinds is the report's view of every kind custody keeps, in the
// order the page shows them.
func ReportKinds() []ReportKind {
	return []ReportKind{WorktreeReport(), ResourceReport(), ArchiveReport()}
}

// WorktreeReport is the worktree kind's part in the report. A legacy
// tree's migration is journaled under the worktree kind (its candidate
// id), so its groups are the worktree kind's, one per disposition.
func WorktreeReport() ReportKind {
	ops := []string{OperationRemoved, OperationSettled, OperationAbandoned, OperationDiscarded, OperationKept}
	for _, d := range []Disposition{DispositionLand, DispositionArchive, DispositionRetire, DispositionAdoptRelocate, DispositionReject} {
		ops = append(ops, OperationMigrated+string(d))
	}
	return ReportKind{Kind: KindWorktree, Title: "Worktrees", Operations: append(ops, OperationMigrating),
		Counts: []ReportRule{
			{Match: onTrigger(TriggerCreated), Count: func(s *ReportSummary) { s.TreesCreated++ }},
			{Match: onTrigger(TriggerAdopt), Count: func(s *ReportSummary) { s.TreesAdopted++ }},
			{Match: onTrigger(TriggerRemoved), Count: func(s *ReportSummary) { s.TreesRemoved++ }},
			{Match: onTrigger(TriggerAbandon), Count: func(s *ReportSummary) { s.TreesAbandoned++ }},
			{Match: onTrigger(TriggerDiscard), Count: func(s *ReportSummary) { s.TreesDiscarded++ }},
		},
		Operation: func(s ReportSection) string {
			switch {
			case s.Migration != nil && s.Migration.Settled && s.Migration.Disposition != "":
				return OperationMigrated + string(s.Migration.Disposition)
			case s.Migration != nil && s.State == "":
				return OperationMigrating
			case s.AbandonedSeq != 0:
				return OperationAbandoned
			case s.Discarded:
				return OperationDiscarded
			case s.State == StateTombstoned.String() && slices.ContainsFunc(s.Removals, func(r ReportRemoval) bool { return r.RemovedSeq != 0 }):
				return OperationRemoved
			case s.State == StateTombstoned.String():
				return OperationSettled
			}
			return OperationKept
		},
		Ended: func(s ReportSection, sum *ReportSummary) {
			switch {
			case s.Migration != nil && s.Migration.Settled && s.Migration.Disposition != "":
				sum.addMigrated(string(s.Migration.Disposition))
			case s.Migration != nil && s.State == "":
				sum.MigrationsOpen++
			case s.State != "" && s.State != StateTombstoned.String():
				sum.TreesKept++
			}
		},
	}
}

// ResourceReport is the resource kind's part in the report.
func ResourceReport() ReportKind {
	return ReportKind{Kind: KindResource, Title: "Resources", Operations: []string{OperationDestroyed, OperationDiscarded, OperationKept},
		Counts: []ReportRule{
			{Match: onEdge(StateProvisioning, StateActive), Count: func(s *ReportSummary) { s.ResourcesMade++ }},
			{Match: onEdge(StateRemoving, StateTombstoned), Count: func(s *ReportSummary) { s.ResourcesDestroyed++ }},
		},
		Operation: func(s ReportSection) string {
			switch {
			case s.Discarded:
				return OperationDiscarded
			case s.State == StateTombstoned.String():
				return OperationDestroyed
			}
			return OperationKept
		},
	}
}

// ArchiveReport is the archive kind's part in the report (decision 0110:
// sealed, pruned; used as proof is counted from the removals).
func ArchiveReport() ReportKind {
	return ReportKind{Kind: KindArchive, Title: "Archives", Operations: []string{OperationPruned, OperationDiscarded, OperationKept},
		Counts: []ReportRule{
			{Match: onTrigger(TriggerSeal), Count: func(s *ReportSummary) { s.Archives++; s.TreesArchived++ }},
			{Match: onTrigger(TriggerPruned), Count: func(s *ReportSummary) { s.ArchivesPruned++ }},
		},
		Operation: func(s ReportSection) string {
			switch {
			case s.Discarded:
				return OperationDiscarded
			case s.State == StateTombstoned.String():
				return OperationPruned
			}
			return OperationKept
		},
	}
}

func (s *ReportSummary) addMigrated(name string) {
	for i := range s.TreesMigrated {
		if s.TreesMigrated[i].Name == name {
			s.TreesMigrated[i].Count++
			return
		}
	}
	s.TreesMigrated = append(s.TreesMigrated, ReportCount{Name: name, Count: 1})
	slices.SortFunc(s.TreesMigrated, func(a, b ReportCount) int { return strings.Compare(a.Name, b.Name) })
}

// Audit gathers journal entries into one section per record in one pass.
// It keeps each record's facts (bounded per record: its state, removals,
// migration, commands), never its rows: Add hands each row back for the
// caller to keep. After SetAside it also hands back the section of each
// record an entry tombstones, for the caller to keep until the end (and to
// give back with Reopen should a later entry name the record), so what it
// holds is the records still open, not every record the journal names
// (decision 0254). Close groups the sections by kind and operation.
type Audit struct {
	kinds    map[Kind]ReportKind
	order    []Kind
	recs     map[string]*ReportSection
	sum      ReportSummary
	removal  map[string]*ReportRemoval // open removal intents, by record
	setAside bool
}

// NewAudit starts an audit that asks kinds (ReportKinds when nil) how
// entries count and records group.
func NewAudit(version string, kinds []ReportKind) *Audit {
	if kinds == nil {
		kinds = ReportKinds()
	}
	a := &Audit{kinds: map[Kind]ReportKind{}, recs: map[string]*ReportSection{}, removal: map[string]*ReportRemoval{},
		sum: ReportSummary{Format: ReportSummaryFormat, CustodyVersion: version, TreesMigrated: []ReportCount{}}}
	for _, k := range kinds {
		a.kinds[k.Kind] = k
		a.order = append(a.order, k.Kind)
	}
	return a
}

// intentView is what the report reads of a worktree intent.
type intentView struct {
	Kind        string          `json:"kind"`
	Path        string          `json:"path"`
	Branch      string          `json:"branch"`
	Commit      string          `json:"commit"`
	AdminKey    string          `json:"admin_key"`
	Proof       *Proof          `json:"proof"`
	RawProof    json.RawMessage `json:"-"`
	Fingerprint string          `json:"fingerprint"`
	PlanID      string          `json:"plan_id"`
	Command     string          `json:"command"`
	Discarded   []DiscardedDir  `json:"discarded"`
}

// proofFields lists a journaled proof's members in their order, each value
// as text (a list joined by ", ").
func proofFields(raw json.RawMessage) [][2]string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out [][2]string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return out
		}
		var v any
		if dec.Decode(&v) != nil {
			return out
		}
		key, _ := k.(string)
		out = append(out, [2]string{key, fieldText(v)})
	}
	return out
}

func fieldText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, x := range t {
			parts = append(parts, fieldText(x))
		}
		return strings.Join(parts, ", ")
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// SetAside makes Add hand back the section of each record an entry
// tombstones (with no removal intent left open) instead of keeping it.
func (a *Audit) SetAside() { a.setAside = true }

// Reopen gives back a section Add handed back, before an entry of its
// record is added: the section goes on where it stopped, and its record
// is not counted again.
func (a *Audit) Reopen(s ReportSection) {
	a.recs[s.Record] = &s
}

// ReportRecord is the record whose timeline e joins: its own, or the one a
// branch deletion names (it is journaled beside the record, not under it).
func ReportRecord(e ReportEntry) string {
	if e.Event == EventBranchDeleting {
		var d BranchDeletingDetail
		if json.Unmarshal(e.Detail, &d) == nil && d.Record != "" {
			return d.Record
		}
	}
	return e.Record
}

func (a *Audit) section(e ReportEntry, record string) *ReportSection {
	if s, ok := a.recs[record]; ok {
		return s
	}
	s := &ReportSection{Record: record, Kind: e.Kind, FirstSeq: e.Seq}
	if record == "" {
		s.Kind = ""
	} else {
		a.sum.Records++
	}
	a.recs[record] = s
	return s
}

// Add takes the next entry and returns the row it adds to the timeline of
// record (ReportRecord): the caller keeps the row and hands the section
// its rows when it renders it. After SetAside, done is the section of a
// record e tombstoned, which the audit no longer holds.
func (a *Audit) Add(e ReportEntry) (record string, row ReportRow, done *ReportSection) {
	record, row = a.add(e)
	if s := a.recs[record]; a.setAside && record != "" && s != nil && s.State == StateTombstoned.String() && a.removal[record] == nil {
		delete(a.recs, record)
		return record, row, s
	}
	return record, row, nil
}

func (a *Audit) add(e ReportEntry) (record string, row ReportRow) {
	a.count(e)
	record = ReportRecord(e)
	if e.Event == EventBranchDeleting {
		var d BranchDeletingDetail
		if json.Unmarshal(e.Detail, &d) == nil && d.Record != "" {
			if r := a.removal[d.Record]; r != nil {
				r.BranchOutcome, r.Branch, r.BranchCommit = "deleted", d.Branch, d.Commit
			}
		}
	}
	s := a.section(e, record)
	row = ReportRow{Seq: e.Seq, At: e.At, From: e.From, To: e.To, Trigger: e.Trigger, Event: e.Event,
		Outcome: e.Outcome, Actor: e.Actor, Observation: e.Observation, Hash: e.Hash, Unverified: e.Unverified}
	s.Entries++
	s.Unverified = s.Unverified || e.Unverified
	if e.To != "" {
		s.State = e.To
	}
	if strings.HasPrefix(e.Event, "migrate-") && e.Event != EventMigrateDiscovery {
		if ev, ok := a.migrate(s, e); ok {
			row.Outcome, row.Observation = migrateRowText(ev), ev.Digest
		}
		return record, row
	}
	switch e.Event {
	case EventLandIntent, EventLanded, EventLandAbandoned:
		var ev LandIntent
		if json.Unmarshal(e.Detail, &ev) == nil {
			row.Outcome = landRowText(e.Event, ev)
		}
		return record, row
	}
	var in intentView
	if len(e.Intent) > 0 && string(e.Intent) != "null" {
		_ = json.Unmarshal(e.Intent, &in)
		var raw struct {
			Proof json.RawMessage `json:"proof"`
		}
		if json.Unmarshal(e.Intent, &raw) == nil {
			in.RawProof = raw.Proof
		}
	}
	if in.Command != "" {
		if n := len(s.Commands); n == 0 || s.Commands[n-1].Intent != in.Kind || s.Commands[n-1].Command != in.Command {
			s.Commands = append(s.Commands, ReportCommand{Seq: e.Seq, Intent: in.Kind, Command: in.Command})
		}
	}
	switch {
	case e.Event == EventRecovered:
		var d RecoveredDetail
		if json.Unmarshal(e.Detail, &d) == nil {
			if r := a.removal[record]; r != nil {
				r.Recovered = append(r.Recovered, d.Refs...)
				r.RecoveredFile = append(r.RecoveredFile, d.Files...)
			}
		}
	case e.Trigger == string(TriggerRemove) && in.Kind == string(IntentRemoval):
		proof := in.Proof
		if proof == nil {
			proof = e.Proof
		}
		a.removal[record] = &ReportRemoval{IntentSeq: e.Seq, Path: in.Path, Commit: in.Commit, AdminKey: in.AdminKey,
			Proof: proof, ProofFields: proofFields(in.RawProof), Fingerprint: in.Fingerprint, PlanID: in.PlanID, Observation: e.Observation,
			Branch: in.Branch, BranchOutcome: "kept", BranchCommit: in.Commit, Discarded: in.Discarded}
	case e.Trigger == string(TriggerRemoved):
		r := a.removal[record]
		if r == nil {
			r = &ReportRemoval{Proof: e.Proof}
		}
		r.RemovedSeq, r.RemovedObservation = e.Seq, e.Observation
		if r.Proof == nil {
			r.Proof = e.Proof
		}
		if r.Proof != nil && r.Proof.Kind == ProofArchive {
			a.sum.ArchivesUsed++
		}
		for _, d := range r.Discarded {
			a.sum.BuildOutputDirs++
			a.sum.BuildOutputBytes += d.Bytes
		}
		s.Removals = append(s.Removals, *r)
		delete(a.removal, record)
	case e.Trigger == string(TriggerAbandon):
		s.Abandoned, s.AbandonedSeq = acknowledged(e, in), e.Seq
	case e.Trigger == string(TriggerDiscard):
		s.Discarded = true
	case e.Trigger == string(TriggerAdopt):
		s.Adopted = true
	}
	return record, row
}

// migrate folds one migration event into s's migration, as
// FoldMigration does for migrate status: the outcome binds to the
// disposition decided for its digest.
func (a *Audit) migrate(s *ReportSection, e ReportEntry) (MigrateEvent, bool) {
	var ev MigrateEvent
	if json.Unmarshal(e.Detail, &ev) != nil {
		return ev, false
	}
	m := s.Migration
	if m == nil {
		m = &ReportMigration{}
		s.Migration = m
	}
	if ev.Path != "" {
		m.Path = ev.Path
	}
	if ev.PlanID != "" {
		m.PlanID = ev.PlanID
	}
	switch ev.Event {
	case EventMigrateObservation:
		if ev.Digest != m.Digest {
			m.Outcome, m.OutcomeSeq, m.Code, m.Reason, m.Settled, m.ActSeq = "", 0, "", "", false, 0
			m.Head, m.Proof, m.Branch = "", "", ""
		}
		m.Digest = ev.Digest
		if ev.Proposal != nil {
			m.Proposed, m.ProposedReason = ev.Proposal.Disposition, ev.Proposal.Reason
		}
		m.bind()
	case EventMigrateDisposition:
		if m.Decided == nil {
			m.Decided = map[string]ReportDecision{}
		}
		m.Decided[ev.Digest] = ReportDecision{Disposition: ev.Disposition, Approved: ev.Approved, Actor: e.Actor, Seq: e.Seq}
		if m.Digest == "" {
			m.Digest = ev.Digest
		}
		m.bind()
	case EventMigrateAct:
		m.Digest, m.ActSeq = ev.Digest, e.Seq
		m.Outcome, m.OutcomeSeq, m.Code, m.Reason, m.Settled = "", 0, "", "", false
		m.Head, m.Proof, m.Branch = "", "", ""
		m.bind()
	case EventMigrateOutcome:
		m.Digest = ev.Digest
		m.Outcome, m.OutcomeSeq, m.Code, m.Reason, m.Settled = ev.Outcome, e.Seq, ev.Code, ev.Reason, MigrateSettled(ev.Outcome)
		m.Head, m.Proof, m.Branch = ev.Head, ev.Proof, ev.Branch
		m.bind()
		if ev.Disposition != "" {
			m.Disposition = ev.Disposition
		}
	}
	return ev, true
}

// bind sets the disposition decided for the current digest (none when
// none was).
func (m *ReportMigration) bind() {
	d, ok := m.Decided[m.Digest]
	if !ok {
		m.Disposition, m.Approved, m.ApprovedBy, m.ApprovedSeq = "", false, "", 0
		return
	}
	m.Disposition, m.Approved, m.ApprovedBy, m.ApprovedSeq = d.Disposition, d.Approved, d.Actor, d.Seq
}

// landRowText is a landing event's row: the method, the ref of the
// remote, the tip integrated against and the tip pushed (and, abandoned,
// why it did not land).
func landRowText(event string, ev LandIntent) string {
	what := fmt.Sprintf("%s onto %s %s: %s → %s", ev.Method, ev.Remote, ev.Ref, Abbrev(ev.Old, ShortCommit), Abbrev(ev.New, ShortCommit))
	switch event {
	case EventLandIntent:
		return "about to push " + what
	case EventLanded:
		if ev.Resumed {
			return "landed " + what + " (found landed by a later run)"
		}
		return "landed " + what
	}
	return "not landed " + what + ": " + ev.Why
}

// migrateRowText is a migration event's row: what it says, with its
// disposition and outcome.
func migrateRowText(ev MigrateEvent) string {
	switch ev.Event {
	case EventMigrateObservation:
		if ev.Proposal == nil {
			return "audited"
		}
		if ev.Proposal.Disposition == "" {
			return "audited: proposes nothing (" + ev.Proposal.Reason + ")"
		}
		return "audited: proposes " + string(ev.Proposal.Disposition) + " (" + ev.Proposal.Reason + ")"
	case EventMigrateDisposition:
		what := "approved " + string(ev.Disposition)
		if !ev.Approved {
			what = "rejected (" + string(ev.Disposition) + ")"
		}
		if ev.Reason != "" {
			what += ": " + ev.Reason
		}
		return what
	case EventMigrateAct:
		return "acting: " + string(ev.Disposition)
	case EventMigrateOutcome:
		what := string(ev.Outcome)
		if ev.Disposition != "" {
			what = string(ev.Disposition) + " → " + what
		}
		if ev.Code != "" {
			what += " [" + string(ev.Code) + "]: " + ev.Reason
		}
		return what
	}
	return ""
}

// acknowledged reads the commit an abandonment acknowledged: from its
// outcome ("abandoned: <commit>", as the record's evidence says it) or the
// intent it cleared.
func acknowledged(e ReportEntry, in intentView) string {
	for _, f := range strings.Fields(e.Outcome) {
		if IsFullCommit(f) {
			return f
		}
	}
	return in.Commit
}

// count adds e to the summary: the counts every entry adds, then the
// rules of e's kind.
func (a *Audit) count(e ReportEntry) {
	s := &a.sum
	if s.Entries == 0 {
		s.FirstSeq, s.FirstAt = e.Seq, e.At
	}
	s.Entries++
	s.LastSeq, s.LastAt, s.Head = e.Seq, e.At, e.Hash
	if len(e.Redacted) > 0 {
		s.Redacted++
	}
	if e.Event == EventRecovered {
		var d RecoveredDetail
		if json.Unmarshal(e.Detail, &d) == nil {
			s.RecoveryRefs += len(d.Refs)
		}
	}
	if strings.Contains(e.Outcome, "resum") {
		s.Resumed++
	}
	for _, r := range a.kinds[Kind(e.Kind)].Counts {
		if r.Match(e) {
			r.Count(s)
		}
	}
}

// End sets what s came to (its Operation, as its kind names it) and adds
// that to the summary (ReportKind.Ended). Close ends the sections the
// audit holds; a caller ends each section Add handed back, once, after the
// last entry and before Close.
func (a *Audit) End(s *ReportSection) {
	k, known := a.kinds[Kind(s.Kind)]
	switch {
	case s.Record == "":
		s.Operation = OperationRepository
	case known && k.Operation != nil:
		s.Operation = k.Operation(*s)
	case s.State == StateTombstoned.String():
		s.Operation = "ended"
	default:
		s.Operation = OperationKept
	}
	if known && k.Ended != nil && s.Record != "" {
		k.Ended(*s, &a.sum)
	}
}

// Group is the group an ended section is shown in, without its sections.
func (a *Audit) Group(s ReportSection) ReportGroup {
	if s.Record == "" {
		return ReportGroup{Operation: OperationRepository, Title: "Repository events"}
	}
	title := "Records of kind " + s.Kind
	if k, ok := a.kinds[Kind(s.Kind)]; ok {
		title = k.Title
	}
	return ReportGroup{Kind: s.Kind, Operation: s.Operation, Title: title + " " + s.Operation}
}

// GroupBefore reports whether group x is shown before group y: kinds in
// the order the audit was given them, then kinds it was not given, by
// name, the repository's own events last; within a kind, its operations
// in its order, then the rest by name.
func (a *Audit) GroupBefore(x, y ReportGroup) bool {
	kindRank := func(kind string) int {
		if kind == "" {
			return len(a.order) + 1
		}
		if i := slices.Index(a.order, Kind(kind)); i >= 0 {
			return i
		}
		return len(a.order)
	}
	opRank := func(kind, op string) int {
		ops := a.kinds[Kind(kind)].Operations
		if i := slices.Index(ops, op); i >= 0 {
			return i
		}
		return len(ops)
	}
	if rx, ry := kindRank(x.Kind), kindRank(y.Kind); rx != ry {
		return rx < ry
	}
	if x.Kind != y.Kind {
		return x.Kind < y.Kind
	}
	if rx, ry := opRank(x.Kind, x.Operation), opRank(y.Kind, y.Operation); rx != ry {
		return rx < ry
	}
	return x.Operation < y.Operation
}

// Close ends the audit: it ends every section it holds (a removal intent
// still open is shown with its record) and returns the summary and those
// sections in their groups, in page order (GroupBefore), each group in
// the order its records began. Sections Add handed back must be ended
// (End) before Close, so the summary counts them.
func (a *Audit) Close() (ReportSummary, []ReportGroup) {
	type key struct{ kind, op string }
	groups := map[key]*ReportGroup{}
	for id, s := range a.recs {
		if r := a.removal[id]; r != nil {
			s.Removals = append(s.Removals, *r)
		}
		a.End(s)
		g := a.Group(*s)
		gk := key{g.Kind, g.Operation}
		if groups[gk] == nil {
			groups[gk] = &g
		}
		groups[gk].Sections = append(groups[gk].Sections, *s)
	}
	out := make([]ReportGroup, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g.Sections, func(i, j int) bool { return g.Sections[i].FirstSeq < g.Sections[j].FirstSeq })
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return a.GroupBefore(out[i], out[j]) })
	return a.sum, out
}

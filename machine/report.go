package machine

import (
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
}

// ReportSection is one record's part of the report: its timeline, in
// journal order, and what it came to.
type ReportSection struct {
	Record string `json:"record"`
	Kind   string `json:"kind"`
	// Continued is set on a section that does not begin with the
	// record's creation: a timeline that outgrew MaxReportRows, or
	// entries after the record was tombstoned, go on in a later section.
	Continued bool            `json:"continued,omitempty"`
	Rows      []ReportRow     `json:"rows"`
	State     string          `json:"state"`
	Removals  []ReportRemoval `json:"removals,omitempty"`
	// Abandoned is the commit a person acknowledged as unrecoverable when
	// the record was abandoned: the one outcome without a proof.
	Abandoned    string `json:"abandoned,omitempty"`
	AbandonedSeq uint64 `json:"abandoned_seq,omitempty"`
	Discarded    bool   `json:"discarded,omitempty"`
	Unverified   bool   `json:"unverified,omitempty"`
	// Commands are a resource's frozen commands, each as its intent
	// first carried it.
	Commands []ReportCommand `json:"commands,omitempty"`
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
	Format             string    `json:"format"`
	Entries            int       `json:"entries"`
	FirstSeq           uint64    `json:"first_seq"`
	LastSeq            uint64    `json:"last_seq"`
	FirstAt            time.Time `json:"first_at,omitzero"`
	LastAt             time.Time `json:"last_at,omitzero"`
	Head               string    `json:"head"`
	TreesCreated       int       `json:"trees_created"`
	TreesRemoved       int       `json:"trees_removed"`
	TreesKept          int       `json:"trees_kept"`
	TreesAbandoned     int       `json:"trees_abandoned"`
	TreesDiscarded     int       `json:"trees_discarded"`
	ResourcesMade      int       `json:"resources_made"`
	ResourcesDestroyed int       `json:"resources_destroyed"`
	// Archives counts archives sealed (the archive kind's seal),
	// ArchivesUsed the removals a sealed archive proved (a worktree removed
	// on proof kind archive) and ArchivesPruned archives deleted once their
	// work was published (the archive kind's pruned).
	Archives       int    `json:"archives"`
	ArchivesUsed   int    `json:"archives_used_as_proof"`
	ArchivesPruned int    `json:"archives_pruned"`
	RecoveryRefs   int    `json:"recovery_refs"`
	Resumed        int    `json:"resumed"`
	Redacted       int    `json:"redacted"`
	CustodyVersion string `json:"custody_version"`
	Records        int    `json:"records"`
}

// ReportSummaryFormat names the summary's shape.
const ReportSummaryFormat = "custody.report-summary/1"

// MaxReportRows bounds the rows one section holds in memory: a longer
// timeline is continued in a next section, so the report's memory is
// bounded per record whatever the journal holds.
const MaxReportRows = 256

// Audit groups journal entries into per-record sections in one pass. It
// holds only the records still open (not yet tombstoned), each with at most
// MaxReportRows rows: Add hands back each section as soon as it is
// complete, and Close the rest, so the caller renders them as they come.
type Audit struct {
	open    map[string]*ReportSection
	sum     ReportSummary
	removal map[string]*ReportRemoval // open removal intents, by record
}

// NewAudit starts an audit.
func NewAudit(version string) *Audit {
	return &Audit{open: map[string]*ReportSection{}, removal: map[string]*ReportRemoval{},
		sum: ReportSummary{Format: ReportSummaryFormat, CustodyVersion: version}}
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

func (a *Audit) section(e ReportEntry, record string) *ReportSection {
	if s, ok := a.open[record]; ok {
		return s
	}
	s := &ReportSection{Record: record, Kind: e.Kind, Continued: record != "" && e.Record == record && e.From != StateNone.String()}
	if !s.Continued && record != "" {
		a.sum.Records++
	}
	a.open[record] = s
	return s
}

// Add takes the next entry and returns the sections it completed, to be
// rendered now and forgotten.
func (a *Audit) Add(e ReportEntry) []ReportSection {
	a.count(e)
	record := e.Record
	if e.Event == EventBranchDeleting {
		var d BranchDeletingDetail
		if json.Unmarshal(e.Detail, &d) == nil && d.Record != "" {
			record = d.Record
			if r := a.removal[d.Record]; r != nil {
				r.BranchOutcome, r.Branch, r.BranchCommit = "deleted", d.Branch, d.Commit
			}
		}
	}
	s := a.section(e, record)
	s.Rows = append(s.Rows, ReportRow{Seq: e.Seq, At: e.At, From: e.From, To: e.To, Trigger: e.Trigger, Event: e.Event,
		Outcome: e.Outcome, Actor: e.Actor, Observation: e.Observation, Hash: e.Hash, Unverified: e.Unverified})
	s.Unverified = s.Unverified || e.Unverified
	if e.To != "" {
		s.State = e.To
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
	if in.Command != "" && Kind(e.Kind) == KindResource {
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
			Branch: in.Branch, BranchOutcome: "kept", BranchCommit: in.Commit}
	case e.Trigger == string(TriggerRemoved):
		r := a.removal[record]
		if r == nil {
			r = &ReportRemoval{Proof: e.Proof}
		}
		r.RemovedSeq, r.RemovedObservation = e.Seq, e.Observation
		if r.Proof == nil {
			r.Proof = e.Proof
		}
		if Kind(e.Kind) == KindWorktree && r.Proof != nil && r.Proof.Kind == ProofArchive {
			a.sum.ArchivesUsed++
		}
		s.Removals = append(s.Removals, *r)
		delete(a.removal, record)
	case e.Trigger == string(TriggerAbandon):
		s.Abandoned, s.AbandonedSeq = acknowledged(e, in), e.Seq
	case e.Trigger == string(TriggerDiscard):
		s.Discarded = true
	}
	var done []ReportSection
	if s.State == StateTombstoned.String() || len(s.Rows) >= MaxReportRows {
		if r := a.removal[record]; r != nil && s.State != StateTombstoned.String() {
			// An open removal is carried into the next part.
			s.Removals = append(s.Removals, *r)
		}
		done = append(done, *s)
		delete(a.open, record)
	}
	return done
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
	kind := Kind(e.Kind)
	switch {
	case kind == KindWorktree && e.Trigger == string(TriggerCreated):
		s.TreesCreated++
	case kind == KindWorktree && e.Trigger == string(TriggerRemoved):
		s.TreesRemoved++
	case kind == KindWorktree && e.Trigger == string(TriggerAbandon):
		s.TreesAbandoned++
	case kind == KindWorktree && e.Trigger == string(TriggerDiscard):
		s.TreesDiscarded++
	case kind == KindResource && e.From == StateProvisioning.String() && e.To == StateActive.String():
		s.ResourcesMade++
	case kind == KindResource && e.To == StateTombstoned.String() && e.From == StateRemoving.String():
		s.ResourcesDestroyed++
	case kind == KindArchive && e.Trigger == string(TriggerSeal):
		s.Archives++
	case kind == KindArchive && e.Trigger == string(TriggerPruned):
		s.ArchivesPruned++
	case e.Event == EventRecovered:
		var d RecoveredDetail
		if json.Unmarshal(e.Detail, &d) == nil {
			s.RecoveryRefs += len(d.Refs)
		}
	}
	if strings.Contains(e.Outcome, "resum") {
		s.Resumed++
	}
}

// Close ends the audit: the summary, and every section still open (records
// not tombstoned), in the order their sections began. Worktree sections
// left open count as kept trees.
func (a *Audit) Close() (ReportSummary, []ReportSection) {
	var out []ReportSection
	for id, s := range a.open {
		if r := a.removal[id]; r != nil {
			s.Removals = append(s.Removals, *r)
		}
		if Kind(s.Kind) == KindWorktree && s.Record != "" && s.State != StateTombstoned.String() && s.State != "" {
			a.sum.TreesKept++
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rows[0].Seq < out[j].Rows[0].Seq })
	return a.sum, out
}

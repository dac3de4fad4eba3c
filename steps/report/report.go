package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"sync"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/store"
)

// ReportOptions says what Report reads and how it renders.
type ReportOptions struct {
	// Format is "html" (default) or "md".
	Format string
	// Record limits the report to one record's entries.
	Record string
	// Redact, when set, redacts every entry before it is rendered.
	Redact *store.Redactor
	// Verify is how the chain is checked as it is read; a report of a
	// live store sets AllowGaps only with Record.
	Verify store.VerifyOptions
	// Signature, when set, checks the chain head the report ends at
	// against a signature before the report is written.
	Signature *SignatureCheck
	// Kinds are the record kinds the summary and the groups ask
	// (machine.ReportKinds when nil).
	Kinds []machine.ReportKind
	// Version is custody's version, named in the summary.
	Version string
	// Source says where the entries came from (a file name, or "the
	// live store").
	Source string
}

// ReportResult is what Report found. It is a command result: it is
// pending (exit 3) when the journal did not verify.
type ReportResult struct {
	Summary      machine.ReportSummary `json:"summary"`
	Verification Verification          `json:"verification"`
}

// Pending reports whether the journal failed to verify.
func (r ReportResult) Pending() bool { return !r.Verification.ChainVerified }

// Verification is the report's banner: what was checked and how it came out.
type Verification struct {
	ChainVerified bool `json:"chain_verified"`
	// FirstBad names the first entry that does not verify, and why.
	FirstBad    string `json:"first_bad,omitempty"`
	FirstBadSeq uint64 `json:"first_bad_seq,omitempty"`
	HeadPinned  bool   `json:"head_pinned"`
	// SignatureChecked is set when a signature over the head verified;
	// Signer is the principal it names.
	SignatureChecked bool   `json:"signature_checked"`
	Signer           string `json:"signer,omitempty"`
	// Redacted counts the entries that came redacted; ContentChecked those
	// of them whose content was checked with the values put back.
	Redacted       int `json:"redacted"`
	ContentChecked int `json:"content_checked"`
	// ContentFrom is the seq of the first committed entry: from it on,
	// every value shown was checked against the chain, redacted or not
	// (0: no entry is committed).
	ContentFrom uint64 `json:"content_authenticated_from,omitempty"`
	// RedactedFields counts the values redaction replaced by their
	// commitments, by kind (path, host, user, url, secret).
	RedactedFields map[string]int `json:"redacted_fields,omitempty"`
	Filtered       bool           `json:"filtered,omitempty"`
	Source         string         `json:"source"`
}

// EntrySource calls fn with every journal line, in order. The store's
// Journal and store.ReadLines over an export both fit it.
type EntrySource func(fn func(line []byte) error) error

// Report renders the auditor's report of the journal src streams, in one
// pass: each entry is verified, counted and its row written to a spill
// file chained by record (rowSpill), while machine.Audit keeps each
// record's facts. Once the pass ends the page is written: the banner, the
// summary, then one group per record kind and operation, each record's
// section whole with its timeline read back from the spill. A journal
// that does not verify still gives a report, whose banner names the first
// bad entry (ReportResult.Pending); a signature or pinned head that does
// not match is an error and writes nothing.
func Report(ctx context.Context, src EntrySource, w io.Writer, opts ReportOptions) (ReportResult, error) {
	var res ReportResult
	r, err := rendererFor(opts.Format)
	if err != nil {
		return res, err
	}
	spill, err := newRowSpill()
	if err != nil {
		return res, err
	}
	defer spill.close()

	v := store.NewVerifier(opts.Verify)
	audit := machine.NewAudit(opts.Version, opts.Kinds)
	audit.SetAside()
	ver := Verification{Filtered: opts.Verify.AllowGaps, Source: opts.Source, HeadPinned: opts.Verify.Head != ""}
	var bad error
	err = src(func(line []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if bad == nil {
			if err := v.Line(line); err != nil {
				bad = err
			}
		}
		if opts.Redact != nil {
			red, err := opts.Redact.Line(line)
			if err != nil {
				return err // never render an entry unredacted
			}
			line = red
		}
		for _, r := range store.RedactedValues(line) {
			if ver.RedactedFields == nil {
				ver.RedactedFields = map[string]int{}
			}
			ver.RedactedFields[r.Kind]++
		}
		e, ok := reportEntry(line)
		if !ok {
			// Not an entry at all: the banner names it; there is
			// nothing to render.
			return nil
		}
		if opts.Record != "" && e.Record != opts.Record && !aboutRecord(e, opts.Record) {
			return nil
		}
		e.Unverified = bad != nil
		sec, shelved, err := spill.take(machine.ReportRecord(e))
		if err != nil {
			return err
		}
		if shelved {
			audit.Reopen(sec)
		}
		rec, row, done := audit.Add(e)
		if err := spill.put(rec, row); err != nil {
			return err
		}
		if done != nil {
			return spill.shelve(*done)
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrJournalBroken) {
		return res, err
	}
	if err != nil && bad == nil {
		bad = err // a line ReadLines could not read (too long, empty)
	}
	rep, headErr := v.Finish()
	ver.Redacted, ver.ContentChecked, ver.ContentFrom = rep.Redacted, rep.ContentChecked, rep.ContentFrom
	switch {
	case bad != nil:
		ver.FirstBad = bad.Error()
		ver.FirstBadSeq = firstBadSeq(bad)
	case headErr != nil:
		return res, headErr
	default:
		ver.ChainVerified = true
	}
	if opts.Signature != nil {
		if bad != nil {
			return res, fmt.Errorf("%w; its head cannot be checked against the signature %s", bad, opts.Signature.Signature)
		}
		signer, err := opts.Signature.Check(ctx, rep.Head)
		if err != nil {
			return res, err
		}
		ver.SignatureChecked, ver.Signer = true, signer
	}
	// Every record's group: the shelved sections are ended one by one,
	// read back from the spill; the open ones by Close.
	var groups []machine.ReportGroup
	groupOf := func(g machine.ReportGroup) int32 {
		for i, h := range groups {
			if h.Kind == g.Kind && h.Operation == g.Operation {
				return int32(i)
			}
		}
		groups = append(groups, g)
		return int32(len(groups) - 1)
	}
	if err := spill.eachShelved(func(sec machine.ReportSection) error {
		audit.End(&sec)
		spill.setGroup(sec.Record, groupOf(audit.Group(sec)))
		return nil
	}); err != nil {
		return res, err
	}
	sum, open := audit.Close()
	held := map[string]machine.ReportSection{}
	for _, g := range open {
		i := groupOf(machine.ReportGroup{Kind: g.Kind, Operation: g.Operation, Title: g.Title})
		for _, sec := range g.Sections {
			held[sec.Record] = sec
			spill.setGroup(sec.Record, i)
		}
	}
	order := make([]int32, len(groups))
	for i := range order {
		order[i] = int32(i)
	}
	sort.SliceStable(order, func(i, j int) bool { return audit.GroupBefore(groups[order[i]], groups[order[j]]) })
	res = ReportResult{Summary: sum, Verification: ver}
	if err := r.head(w, res); err != nil {
		return res, err
	}
	for _, gi := range order {
		members := spill.members(gi)
		if err := r.group(w, groups[gi], len(members)); err != nil {
			return res, err
		}
		for _, rec := range members {
			sec, ok := held[rec]
			if !ok {
				var err error
				if sec, _, err = spill.shelved(rec); err != nil {
					return res, err
				}
			}
			if err := r.sectionStart(w, sec); err != nil {
				return res, err
			}
			if err := spill.rows(rec, func(row machine.ReportRow) error { return r.row(w, row) }); err != nil {
				return res, err
			}
			if err := r.sectionEnd(w); err != nil {
				return res, err
			}
		}
	}
	return res, r.tail(w, res)
}

// badSeq finds the sequence number a verification error names.
var badSeq = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`entry seq ([0-9]+) \(line`) })

// firstBadSeq is the sequence number the verifier's error names (0 when
// it names only a line).
func firstBadSeq(err error) uint64 {
	m := badSeq().FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}

// aboutRecord reports whether an event names record in its detail (a
// branch deletion is journaled beside the record, not under it).
func aboutRecord(e machine.ReportEntry, record string) bool {
	var d struct {
		Record string `json:"record"`
	}
	return len(e.Detail) > 0 && json.Unmarshal(e.Detail, &d) == nil && d.Record == record
}

// reportEntry reads one line as the report needs it.
func reportEntry(line []byte) (machine.ReportEntry, bool) {
	var e struct {
		store.Entry
		Redacted []string `json:"redacted"`
	}
	if err := json.Unmarshal(store.DisplayLine(line), &e); err != nil {
		return machine.ReportEntry{}, false
	}
	if red := store.RedactedValues(line); len(red) > 0 && len(e.Redacted) == 0 {
		seen := map[string]bool{}
		for _, r := range red {
			if !seen[r.Kind] {
				seen[r.Kind] = true
				e.Redacted = append(e.Redacted, r.Kind)
			}
		}
	}
	intent := e.Intent
	if len(intent) == 0 || string(intent) == "null" {
		intent = e.LegacyResourceIntent
	}
	return machine.ReportEntry{Seq: e.Seq, At: e.At, Record: e.Record, Kind: e.Kind, From: e.From, To: e.To,
		Trigger: e.Trigger, Intent: intent, Proof: e.Proof, Observation: e.Observation, Outcome: e.Outcome,
		Actor: e.Actor, Event: e.Event, Detail: e.Detail, Hash: e.Hash, Redacted: e.Redacted}, true
}

// renderer writes one format of the report, in the order the page is
// read: the head, then each group's heading, each of its sections' start,
// rows and end, then the tail. Rows come one at a time: a section's
// timeline is never held whole.
type renderer interface {
	head(w io.Writer, res ReportResult) error
	group(w io.Writer, g machine.ReportGroup, records int) error
	sectionStart(w io.Writer, s machine.ReportSection) error
	row(w io.Writer, r machine.ReportRow) error
	sectionEnd(w io.Writer) error
	tail(w io.Writer, res ReportResult) error
}

func rendererFor(format string) (renderer, error) {
	switch format {
	case "", "html":
		return htmlReport{t: reportTemplate()}, nil
	case "md":
		return mdReport{}, nil
	}
	return nil, fmt.Errorf("unknown report format %q (want html or md)", format)
}

package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// The report's words, shared by the HTML and markdown renderers.

func bannerTitle(v Verification) string {
	if v.ChainVerified {
		return "Chain verified: every entry's hash matches its content and chains to the one before it."
	}
	return "The chain does NOT verify: " + v.FirstBad
}

func bannerLines(res ReportResult) []string {
	v := res.Verification
	var out []string
	if !v.ChainVerified {
		at := "the line named above"
		if v.FirstBadSeq != 0 {
			at = "entry seq " + strconv.FormatUint(v.FirstBadSeq, 10)
		}
		out = append(out, "First bad entry: "+at+". It and every entry after it are marked unverified; the chain vouches for none of them.")
	}
	out = append(out, "Source: "+v.Source)
	if v.HeadPinned {
		out = append(out, "Head pinned: the export ends at the pinned head "+res.Summary.Head+".")
	} else {
		out = append(out, "Head not pinned: entries dropped from the end would not show (pin it with --head from custody journal head).")
	}
	if v.SignatureChecked {
		out = append(out, "Signature checked: the head is signed by "+v.Signer+" (namespace custody-journal).")
	} else {
		out = append(out, "Signature not checked: who exported this is not established (custody journal sign; then --signature and --allowed-signers).")
	}
	if v.Filtered {
		out = append(out, "Filtered to one record: the chain links between its entries are not checked, each entry's own hash is.")
	}
	switch {
	case v.ContentFrom == 1:
		out = append(out, "Content authenticated from seq 1: every value shown, redacted or not, is checked against the chain.")
	case v.ContentFrom > 1:
		out = append(out, fmt.Sprintf("Content authenticated from seq %d: every value shown from that entry on, redacted or not, is checked against the chain; a redacted entry before it is checked by chain only, unless --home, --root and --host give back what it replaced.", v.ContentFrom))
	}
	if v.Redacted > 0 {
		line := fmt.Sprintf("%d redacted entries: %d checked by content", v.Redacted, v.ContentChecked)
		if v.ContentChecked < v.Redacted {
			line += fmt.Sprintf(", %d by chain only", v.Redacted-v.ContentChecked)
		}
		out = append(out, line+".")
	}
	if len(v.RedactedFields) > 0 {
		out = append(out, "Redacted by structure, each value replaced by its commitment: "+RedactedFields(v.RedactedFields)+".")
	}
	return out
}

func summaryRows(s machine.ReportSummary) [][2]string {
	span := "(no entries)"
	if s.Entries > 0 {
		span = s.FirstAt.UTC().Format("2006-01-02 15:04:05") + " to " + s.LastAt.UTC().Format("2006-01-02 15:04:05") + " UTC"
	}
	n := strconv.Itoa
	return [][2]string{
		{"trees created", n(s.TreesCreated)},
		{"trees adopted", n(s.TreesAdopted)},
		{"trees removed", n(s.TreesRemoved)},
		{"trees archived", n(s.TreesArchived)},
		{"trees migrated (by disposition)", migratedText(s)},
		{"migrations not settled", n(s.MigrationsOpen)},
		{"trees kept (still in custody)", n(s.TreesKept)},
		{"trees abandoned", n(s.TreesAbandoned)},
		{"trees discarded (nothing made)", n(s.TreesDiscarded)},
		{"build output deleted with trees", fmt.Sprintf("%d directories, %s", s.BuildOutputDirs, bytesText(s.BuildOutputBytes))},
		{"resources made", n(s.ResourcesMade)},
		{"resources destroyed", n(s.ResourcesDestroyed)},
		{"archives sealed", n(s.Archives)},
		{"archives used as proof", n(s.ArchivesUsed)},
		{"archives pruned", n(s.ArchivesPruned)},
		{"recovery refs written", n(s.RecoveryRefs)},
		{"interrupted intents resumed", n(s.Resumed)},
		{"records", n(s.Records)},
		{"entries", fmt.Sprintf("%d (seq %d to %d)", s.Entries, s.FirstSeq, s.LastSeq)},
		{"time span", span},
		{"chain head", s.Head},
		{"report by", "custody " + s.CustodyVersion},
	}
}

// migratedText is the migration count with its breakdown by disposition.
func migratedText(s machine.ReportSummary) string {
	total := 0
	var parts []string
	for _, c := range s.TreesMigrated {
		total += c.Count
		parts = append(parts, c.Name+" "+strconv.Itoa(c.Count))
	}
	if total == 0 {
		return "0"
	}
	return strconv.Itoa(total) + " (" + strings.Join(parts, ", ") + ")"
}

// bytesText writes a size in bytes with thousands separated.
func bytesText(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " byte"
	}
	return s + " bytes"
}

func groupTitle(g machine.ReportGroup, records int) string {
	return fmt.Sprintf("%s (%d)", g.Title, records)
}

func sectionTitle(s machine.ReportSection) string {
	if s.Record == "" {
		return "repository events"
	}
	return s.Record
}

// kindLine is what heads a section: the record's kind and state.
func kindLine(s machine.ReportSection) (kind, state string) {
	if s.Migration != nil && s.State == "" {
		return "legacy worktree", "migration " + migrationWord(*s.Migration)
	}
	return s.Kind, stateWord(s.State)
}

func migrationWord(m machine.ReportMigration) string {
	switch {
	case m.Settled:
		return "settled"
	case m.Outcome != "":
		return string(m.Outcome)
	case m.ActSeq != 0:
		return "interrupted"
	}
	return "pending"
}

// migrationLines says what migration did with one legacy tree: its audit,
// the disposition approved for it and by whom, and the outcome.
func migrationLines(m machine.ReportMigration) []string {
	out := []string{"Legacy tree: " + orNone(m.Path), "Audit digest: " + orNone(m.Digest)}
	if m.Proposed != "" {
		out = append(out, "Proposed: "+string(m.Proposed)+" — "+m.ProposedReason)
	} else if m.ProposedReason != "" {
		out = append(out, "Proposed: nothing — "+m.ProposedReason)
	}
	switch {
	case m.Disposition != "" && m.Approved:
		out = append(out, fmt.Sprintf("Disposition: %s, approved by %s (seq %d).", m.Disposition, orNone(m.ApprovedBy), m.ApprovedSeq))
	case m.Disposition != "":
		out = append(out, fmt.Sprintf("Disposition: %s, rejected by %s (seq %d): the tree stays as it is.", m.Disposition, orNone(m.ApprovedBy), m.ApprovedSeq))
	default:
		out = append(out, "Disposition: none decided for this audit digest.")
	}
	switch {
	case m.Outcome != "" && m.Code != "":
		out = append(out, fmt.Sprintf("Outcome: %s at seq %d [%s]: %s", m.Outcome, m.OutcomeSeq, m.Code, m.Reason))
	case m.Outcome != "":
		settled := "not settled: apply it again"
		if m.Settled {
			settled = "settled"
		}
		out = append(out, fmt.Sprintf("Outcome: %s at seq %d (%s).", m.Outcome, m.OutcomeSeq, settled))
		if m.Proof != "" {
			out = append(out, fmt.Sprintf("Proof: %s; head %s.", m.Proof, orNone(m.Head)))
		}
		if m.Branch != "" {
			out = append(out, "Legacy branch: "+m.Branch+".")
		}
	case m.ActSeq != 0:
		out = append(out, fmt.Sprintf("Outcome: none recorded; the act of seq %d was interrupted.", m.ActSeq))
	default:
		out = append(out, "Outcome: not applied.")
	}
	if m.PlanID != "" {
		out = append(out, "Migrate plan: "+m.PlanID)
	}
	return out
}

// anchor is the section's HTML id: the record's id with every byte but
// ASCII letters, digits, '.', '_' and '-' written %XX, so it holds no
// space (an id may not) and no two records share one.
func anchor(s machine.ReportSection) string {
	id := "record-" + anchorText(s.Record)
	if s.Record == "" {
		id = "repository"
	}
	return id + "-" + strconv.FormatUint(s.FirstSeq, 10)
}

func anchorText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func stateWord(state string) string {
	if state == "" {
		return "(no transition)"
	}
	return state
}

// removalLines says why one removal was allowed, line by line.
func removalLines(r machine.ReportRemoval) []string {
	var out []string
	if r.RemovedSeq != 0 {
		out = append(out, fmt.Sprintf("Removed at seq %d, after the removal intent of seq %d.", r.RemovedSeq, r.IntentSeq))
	} else {
		out = append(out, fmt.Sprintf("Removal intent of seq %d is still open: the removal has not completed.", r.IntentSeq))
	}
	if r.Path != "" {
		out = append(out, "Path: "+r.Path)
	}
	switch {
	case len(r.ProofFields) > 0:
		kind := ""
		var rest []string
		for _, f := range r.ProofFields {
			if f[0] == "kind" {
				kind = f[1]
				continue
			}
			if f[1] != "" {
				rest = append(rest, f[0]+" "+f[1])
			}
		}
		out = append(out, "Proof: "+orNone(kind)+" — "+strings.Join(rest, "; "))
		if kind == string(machine.ProofArchive) {
			out = append(out, archiveLine(r.Proof))
		}
	case r.Proof != nil:
		p := r.Proof
		line := "Proof: " + string(p.Kind) + " — remote " + orNone(p.Remote) + "; ref " + orNone(p.Ref) + "; tip " + orNone(p.Tip) + "; head " + orNone(p.Head)
		if len(p.Commits) > 0 {
			line += "; commits " + strings.Join(p.Commits, ", ")
		}
		if p.Base != "" {
			line += "; base " + p.Base
		}
		out = append(out, line)
		if p.Kind == machine.ProofArchive {
			out = append(out, archiveLine(p))
		}
	default:
		out = append(out, "Proof: none journaled")
	}
	out = append(out, "Plan: "+orNone(r.PlanID))
	out = append(out, "Fingerprint: "+orNone(r.Fingerprint))
	out = append(out, "Observation at the intent: "+orNone(r.Observation))
	if r.RemovedObservation != "" {
		out = append(out, "Observation at completion: "+r.RemovedObservation)
	}
	if r.Branch != "" {
		what := "kept: no deletion was journaled"
		if r.BranchOutcome == "deleted" {
			what = "deleted by compare-and-swap"
		}
		out = append(out, fmt.Sprintf("Branch %s %s; it pointed at %s.", r.Branch, what, orNone(r.BranchCommit)))
	}
	if len(r.Discarded) == 0 {
		out = append(out, "Build output deleted with the tree: none listed in the intent.")
	}
	for _, d := range r.Discarded {
		out = append(out, "Build output deleted with the tree: "+d.Path+" ("+string(d.Kind)+", "+bytesText(d.Bytes)+")")
	}
	if len(r.Recovered) == 0 && len(r.RecoveredFile) == 0 {
		out = append(out, "Recovery refs: none were needed.")
	}
	for _, ref := range r.Recovered {
		out = append(out, "Recovery ref: "+ref.Ref+" at "+ref.Commit)
	}
	for _, f := range r.RecoveredFile {
		out = append(out, "Recovered file: "+f)
	}
	return out
}

// archiveLine names the archive an archive-backed removal stood on: the
// only copy of the tree's unpublished work once the tree is gone.
func archiveLine(p *machine.Proof) string {
	id, head := "", ""
	if p != nil {
		id, head = p.Ref, p.Head
	}
	return "Archive: " + orNone(id) + " holds this tree's unpublished work at " + orNone(head) +
		" (its own section shows it sealed; restore with " + machine.Command("custody", "archive", "restore", orNone(id), "DIR") + ")."
}

func abandonLine(s machine.ReportSection) string {
	return fmt.Sprintf("Abandoned at seq %d WITHOUT a proof: the one outcome that loses work, taken only because a person acknowledged commit %s as unrecoverable.",
		s.AbandonedSeq, orNone(s.Abandoned))
}

func commandLine(c machine.ReportCommand) string {
	return fmt.Sprintf("%s (seq %d): %s", c.Intent, c.Seq, c.Command)
}

func rowWhat(r machine.ReportRow) string {
	if r.Event != "" {
		return "event " + r.Event
	}
	return r.From + " → " + r.To + " (" + r.Trigger + ")"
}

func shortDigest(d string) string {
	return machine.Abbrev(strings.TrimPrefix(d, "sha256:"), machine.ShortDigest)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// mdReport renders the report as markdown, from the same words.
type mdReport struct{}

func (mdReport) head(w io.Writer, res ReportResult) error {
	var b strings.Builder
	b.WriteString("# custody journal report\n\n")
	b.WriteString("**" + mdText(bannerTitle(res.Verification)) + "**\n\n")
	for _, l := range bannerLines(res) {
		b.WriteString("- " + mdText(l) + "\n")
	}
	b.WriteString("\n## Summary\n\n| | |\n|---|---|\n")
	for _, kv := range summaryRows(res.Summary) {
		b.WriteString("| " + mdText(kv[0]) + " | " + mdText(kv[1]) + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (mdReport) group(w io.Writer, g machine.ReportGroup, records int) error {
	_, err := io.WriteString(w, "\n## "+mdText(groupTitle(g, records))+"\n")
	return err
}

func (mdReport) sectionStart(w io.Writer, s machine.ReportSection) error {
	var b strings.Builder
	kind, state := kindLine(s)
	b.WriteString("\n### " + mdText(sectionTitle(s)) + "\n\n")
	b.WriteString(mdText(kind) + " **" + mdText(state) + "**")
	if s.Unverified {
		b.WriteString(" (holds entries the chain does not vouch for)")
	}
	b.WriteString("\n\n")
	if s.Migration != nil {
		for _, l := range migrationLines(*s.Migration) {
			b.WriteString("> " + mdText(l) + "\n")
		}
		b.WriteString("\n")
	}
	for _, r := range s.Removals {
		for _, l := range removalLines(r) {
			b.WriteString("> " + mdText(l) + "\n")
		}
		b.WriteString("\n")
	}
	if s.AbandonedSeq != 0 {
		b.WriteString("> **" + mdText(abandonLine(s)) + "**\n\n")
	}
	for _, c := range s.Commands {
		b.WriteString(mdText(commandLine(c)) + "\n\n")
	}
	b.WriteString("| seq | at (UTC) | transition or event | outcome | actor | observation |\n|---|---|---|---|---|---|\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (mdReport) row(w io.Writer, r machine.ReportRow) error {
	mark := ""
	if r.Unverified {
		mark = " (unverified)"
	}
	_, err := fmt.Fprintf(w, "| %d%s | %s | %s | %s | %s | %s |\n", r.Seq, mark, r.At.UTC().Format("2006-01-02 15:04:05"),
		mdText(rowWhat(r)), mdText(r.Outcome), mdText(r.Actor), mdText(shortDigest(r.Observation)))
	return err
}

func (mdReport) sectionEnd(io.Writer) error { return nil }

func (mdReport) tail(w io.Writer, res ReportResult) error {
	_, err := fmt.Fprintf(w, "\nend of report: %d entries, head %s\n", res.Summary.Entries, mdText(res.Summary.Head))
	return err
}

// mdText keeps a value on one line and out of markdown's syntax
// (machine.MarkdownText). Every string the page shows goes through it.
func mdText(s string) string { return machine.MarkdownText(s) }

// RedactedFields says what redaction replaced: "3 paths, 1 host".
func RedactedFields(n map[string]int) string {
	var out []string
	for _, k := range []string{"path", "host", "user", "url", "command", "secret"} {
		if c := n[k]; c > 0 {
			name := k
			if c > 1 {
				name += "s"
			}
			out = append(out, fmt.Sprintf("%d %s", c, name))
		}
	}
	return strings.Join(out, ", ")
}
